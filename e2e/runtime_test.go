//go:build e2e

package e2e

// The testbed's runtime: which one it is (containerd or CRI-O, asked once
// by TestMain), what a test expects of each where the two really differ
// (docs/cri-o.md's table), and what this host lets it do.
//
// A test that expects a runtime's own words or behaviour picks them with
// byRuntime: the expectation of each runtime is as tight as the one it
// replaces, and a runtime the tests do not know fails the test, naming it.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The CRI Version's RuntimeName of the runtimes the tests know.
const (
	runtimeContainerd = "containerd"
	runtimeCRIO       = "cri-o"
)

// runtimeName is the testbed runtime's CRI RuntimeName, asked once by
// TestMain (podrun writes it as the scheme of container IDs).
var runtimeName string

// runtimeVersion is its CRI RuntimeVersion (containerd's "1.6.20~ds1",
// "v2.4.2").
var runtimeVersion string

// onContainerd1 reports whether the testbed's runtime is a containerd
// before 2.0.
func onContainerd1() bool {
	return runtimeName == runtimeContainerd && strings.HasPrefix(strings.TrimPrefix(runtimeVersion, "v"), "1.")
}

// onCRIO reports whether the testbed's runtime is CRI-O.
func onCRIO() bool { return runtimeName == runtimeCRIO }

// byRuntime is containerd's value on containerd and crio's on CRI-O; on any
// other runtime it fails the test: what the test expects there is not
// known.
func byRuntime[T any](t *testing.T, containerd, crio T) T {
	t.Helper()
	switch runtimeName {
	case runtimeContainerd:
		return containerd
	case runtimeCRIO:
		return crio
	}
	t.Fatalf("the testbed's runtime is %q: this test knows what to expect of %s and %s only", runtimeName, runtimeContainerd, runtimeCRIO)
	panic("unreachable")
}

// containerIDOf is the runtime's ID of a container in podrun's status: its
// ContainerID without the scheme, which must be the runtime's name, as the
// kubelet writes it (containerd://ID, cri-o://ID).
func containerIDOf(t *testing.T, cs v1.ContainerStatus) string {
	t.Helper()
	id, ok := strings.CutPrefix(cs.ContainerID, runtimeName+"://")
	if !ok || id == "" {
		t.Fatalf("container %s: containerID %q, want %s://<id> (the runtime's name as the scheme)", cs.Name, cs.ContainerID, runtimeName)
	}
	return id
}

// lowerOOMScoreAdjForbidden is set by TestMain when the runtime is CRI-O
// and this host does not let a process lower its oom_score_adj
// (oomScoreAdjCannotBeLowered).
var lowerOOMScoreAdjForbidden bool

// oomScoreAdjCannotBeLowered reports whether a child process of this one
// is refused lowering its oom_score_adj to -998, what CRI-O asks runc to
// set for a sandbox's infra container (the kubelet gives Guaranteed and
// node-critical containers -997). Some machines (these test machines among
// them: no CAP_SYS_RESOURCE) forbid it even to root; containerd's testbed
// config sets restrict_oom_score_adj for them (no container below
// containerd's own score), and CRI-O has no such option, so there runc
// fails the container: "failed to update /proc/self/oom_score_adj:
// Permission denied".
func oomScoreAdjCannotBeLowered() (bool, error) {
	out, err := exec.Command("/bin/sh", "-c", "echo -998 >/proc/self/oom_score_adj").CombinedOutput()
	if err == nil {
		return false, nil
	}
	if _, ok := err.(*exec.ExitError); ok {
		return true, nil
	}
	return false, fmt.Errorf("checking whether this host lets a process lower its oom_score_adj: %v %s", err, out)
}

// requireLowerOOMScoreAdj fails the test, saying why, when it runs a pod
// whose runtime must lower an oom_score_adj (why says which and how) on a
// host that forbids it: a limit of this machine, not podrun's. Never a
// skip: the test fails loudly where it cannot check what it checks (make
// e2e-crio leaves these tests out on such a host; docs/cri-o.md lists
// them).
func requireLowerOOMScoreAdj(t *testing.T, why string) {
	t.Helper()
	if lowerOOMScoreAdjForbidden {
		t.Fatalf("this host forbids lowering oom_score_adj, which CRI-O (no restrict_oom_score_adj) needs for Guaranteed pods: run them in the guest (%s)", why)
	}
}

// The reasons the tests give requireLowerOOMScoreAdj.
const (
	oomGuaranteed = "a Guaranteed pod: the kubelet gives its containers oom_score_adj -997"
	oomCritical   = "a node-critical pod (priorityClassName system-node-critical): the kubelet gives its containers oom_score_adj -997"
	oomInfra      = "shareProcessNamespace: CRI-O makes the sandbox's infra container, with oom_score_adj -998"
)

// checkRuntime asks the runtime's name and, on CRI-O, whether this host
// lets it lower oom_score_adj (TestMain).
func checkRuntime(name string) error {
	runtimeName = name
	if name != runtimeCRIO {
		return nil
	}
	forbidden, err := oomScoreAdjCannotBeLowered()
	if err != nil {
		return err
	}
	lowerOOMScoreAdjForbidden = forbidden
	if forbidden {
		fmt.Fprintf(os.Stderr, "e2e: this host forbids lowering oom_score_adj: the tests of Guaranteed and node-critical pods, and of shareProcessNamespace, fail on CRI-O here\n")
	}
	return nil
}

// crioRegistriesConfDir is where the testbed's CRI-O reads the drop-ins of
// containers-registries.conf(5), short-name aliases among them: the
// system's, since hack/crio.sh gives crio no --registries-conf-dir.
const crioRegistriesConfDir = "/etc/containers/registries.conf.d"

// crioAlias is the image a short name resolves to by an alias of CRI-O's
// drop-ins ("fedora" = "registry.fedoraproject.org/fedora" in
// containers-common's shortnames.conf), "" without one. containerd knows
// no aliases: a short name is docker.io/library's. (A line-wise read of
// the [aliases] tables, enough for the files containers-common ships; the
// last file, in name order, wins, as in containers/image.)
func crioAlias(name string) (string, error) {
	files, err := filepath.Glob(filepath.Join(crioRegistriesConfDir, "*.conf"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	alias := ""
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.TrimSpace(k) == strconv.Quote(name) {
				alias, _ = strconv.Unquote(strings.TrimSpace(v))
			}
		}
	}
	return alias, nil
}

// crioAliasSkip is the reason a conformance row that pulls the short name
// cannot run on the testbed's CRI-O, "" where it can: an alias sends the
// short name to a registry the testbed does not mirror (the mirror has
// docker.io's; without its own registries.conf.d, hack/crio.sh's CRI-O
// reads the system's aliases). Where the aliases cannot be read, the row
// runs and tells.
func crioAliasSkip(name string) string {
	if !onCRIO() {
		return ""
	}
	alias, err := crioAlias(name)
	if err != nil || alias == "" || strings.HasPrefix(alias, "docker.io/") {
		return ""
	}
	return skipNoImage + alias + ": CRI-O resolves the short name " + name + " by the alias in " + crioRegistriesConfDir +
		" (containerd pulls docker.io/library/" + name + ")"
}
