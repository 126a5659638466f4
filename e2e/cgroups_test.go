//go:build e2e

package e2e

// Pod cgroups end to end (runner/cgroups.go), on the node's shape
// (nodeshape.go: cgroup v1 or v2, the runtime's cgroupfs or systemd
// driver, which podrun finds on its own): the pod cgroup under
// --cgroup-root by QoS class with the pod-level limits while the pod runs,
// the container's own limits as the container sees them, and nothing left
// once the pod is gone.

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs2"
	v1 "k8s.io/api/core/v1"
)

// expectCgroup fails the test unless the host cgroup rel holds each limit,
// in the files of the node's cgroup version.
func expectCgroup(t *testing.T, rel string, limits ...cgroupLimit) {
	t.Helper()
	for _, m := range cgroupMismatches(rel, limits...) {
		t.Error(m)
	}
}

// cgroupMismatches describes each file of the host cgroup rel that does
// not hold its limit.
func cgroupMismatches(rel string, limits ...cgroupLimit) []string {
	var out []string
	for _, f := range shape.files(limits...) {
		file := shape.path(rel, f)
		b, err := os.ReadFile(file)
		if err != nil {
			out = append(out, fmt.Sprintf("reading host cgroup file (%s): %v", shape, err))
		} else if got := strings.TrimSpace(string(b)); !f.holds(got) {
			out = append(out, fmt.Sprintf("host %s = %q, want %s (%s)", file, got, strings.Join(f.Texts, " or "), shape))
		}
	}
	return out
}

// expectCgroupGone fails the test while the cgroup rel exists in any
// hierarchy.
func expectCgroupGone(t *testing.T, rel string) {
	t.Helper()
	if rel == "" {
		t.Fatal("expectCgroupGone of the hierarchies' root")
	}
	for _, dir := range shape.cgroupDirs(rel) {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("cgroup %s left behind", dir)
		}
	}
}

// expectContainerSaw fails the test unless a container that printed its
// own cgroup (testdata/e2e/cgroups/guaranteed.yaml: "<file>=<text>" for
// each control file there, "cgroup <line>" for each line of
// /proc/self/cgroup) saw each limit and sat in the pod cgroup podRel.
func expectContainerSaw(t *testing.T, r result, podRel string, limits ...cgroupLimit) {
	t.Helper()
	seen := map[string]string{}
	var self []string
	for _, l := range lines(r.stdout) {
		if c, ok := strings.CutPrefix(l, "cgroup "); ok {
			self = append(self, c)
		} else if file, text, ok := strings.Cut(l, "="); ok {
			seen[file] = text
		}
	}
	for _, f := range shape.files(limits...) {
		if got, ok := seen[f.rel(shape.V2)]; !ok || !f.holds(got) {
			t.Errorf("the container saw %s = %q, want %s (%s)\n%s", f.rel(shape.V2), got, strings.Join(f.Texts, " or "), shape, r)
		}
	}
	if !shape.inPodCgroup(strings.Join(self, "\n"), podRel) {
		t.Errorf("the container's /proc/self/cgroup does not show it in /%s (%s)\n%s", podRel, shape, r)
	}
}

// cgroupsWithProcesses counts the child cgroups of dir that hold a
// process.
func cgroupsWithProcesses(dir string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, en := range entries {
		if b, err := os.ReadFile(filepath.Join(dir, en.Name(), "cgroup.procs")); en.IsDir() && err == nil && len(strings.TrimSpace(string(b))) > 0 {
			n++
		}
	}
	return n
}

// makeCgroup makes the cgroup rel as podrun (the cgroup library) would,
// in the hierarchies of controllers on v1, and removes it after the test
// unless gone by then: directories with cgroupfs (on v2 with the
// controllers enabled down to it, as the library's Apply does), the
// slice unit with systemd (systemctl start; stopped after).
func makeCgroup(t *testing.T, rel string, controllers ...string) {
	t.Helper()
	if shape.Driver == driverSystemd {
		unit := path.Base(rel)
		if out, err := exec.Command("systemctl", "start", unit).CombinedOutput(); err != nil {
			t.Fatalf("systemctl start %s: %v\n%s", unit, err, out)
		}
		t.Cleanup(func() { exec.Command("systemctl", "stop", unit).Run() })
		return
	}
	var dirs []string
	for _, ctl := range controllers {
		if dir := shape.controllerDir(ctl, rel); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	for _, dir := range dirs {
		var err error
		if shape.V2 {
			err = fs2.CreateCgroupPath(dir, &cgroups.Cgroup{Resources: &cgroups.Resources{}})
		} else {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
	}
}

// TestE2ECgroupGuaranteed: a Guaranteed pod's container sees its memory and
// cpu limits in its own cgroup; the pod cgroup is /podrun/pod<uid> (with
// systemd /podrun.slice/podrun-pod<uid>.slice) with the pod-level values
// while the pod runs, and is gone after the run.
func TestE2ECgroupGuaranteed(t *testing.T) {
	t.Parallel()
	requireLowerOOMScoreAdj(t, oomGuaranteed)
	e := newEnv(t)
	uid := "e2e-cgroup-" + randomSuffix(t)
	p := e.startPodrun([]string{"-f", fromTemplate(t, "cgroups/guaranteed.yaml", "UID", uid)}, "")
	p.waitStdout("done-e2e-cgroup-g", 60*time.Second)

	// 500m and 128Mi, requests and limits, of the pod and its one
	// container alike.
	const shares, quota, period, memory = 512, 50000, 100000, 128 << 20

	// While the container sleeps: the pod cgroup on the host.
	pod := shape.podCgroup("/podrun", v1.PodQOSGuaranteed, uid)
	expectCgroup(t, pod, cpuShares(shares), cpuQuota(quota, period), memoryLimit(memory))
	// The sandbox's and the container's cgroups below it, each holding
	// its process (on v2 the container cannot tell: its cgroup namespace
	// starts at its own).
	if n := cgroupsWithProcesses(shape.controllerDir("memory", pod)); n != 2 {
		t.Errorf("%d cgroups with processes below the pod cgroup %s, want 2: the sandbox's and the container's", n, pod)
	}
	r := p.result(defaultRunTimeout)
	expectCode(t, r, 0)

	// What the container saw: its own cgroup, below the pod's.
	expectContainerSaw(t, r, pod, containerCPUShares(shares), cpuQuota(quota, period), memoryLimit(memory))
	expectCgroupGone(t, pod)
}

// TestE2ECgroupQOSClasses: a Burstable and a BestEffort pod land under
// burstable/ and besteffort/ of --cgroup-root, with the kubelet's shares on
// the pods and the QoS cgroups; the whole root is gone after the run, as it
// lies in podrun's own hierarchy (/podrun/..., with systemd
// /podrun.slice/podrun-<root>.slice).
func TestE2ECgroupQOSClasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	suffix := randomSuffix(t)
	root := "/podrun/e2e-" + suffix
	bUID, eUID := "e2e-burstable-"+suffix, "e2e-besteffort-"+suffix
	m := fromTemplate(t, "cgroups/qos.yaml", "BURSTABLE_UID", bUID, "BESTEFFORT_UID", eUID)
	p := e.startPodrun([]string{"--cgroup-root", root, "-f", m}, "")
	p.waitStdout("done-e2e-cgroup-b", 60*time.Second)
	p.waitStdout("done-e2e-cgroup-e", 30*time.Second)

	// Burstable (100m requested, a 64Mi limit): shares from the request,
	// no quota (no cpu limit), the memory limit (every container has
	// one); its QoS cgroup the shares of the one pod in it.
	const request = 100
	expectCgroup(t, shape.podCgroup(root, v1.PodQOSBurstable, bUID),
		cpuShares(milliCPUToShares(request)), cpuQuota(-1, 100000), memoryLimit(64<<20))
	expectCgroup(t, shape.qosCgroup(root, v1.PodQOSBurstable), burstableShares(request))
	// BestEffort: shares 2 and no memory limit on the pod, shares 2 on
	// its QoS cgroup.
	expectCgroup(t, shape.podCgroup(root, v1.PodQOSBestEffort, eUID), cpuShares(2), memoryLimit(-1))
	expectCgroup(t, shape.qosCgroup(root, v1.PodQOSBestEffort), cpuShares(2))
	expectCode(t, p.result(defaultRunTimeout), 0)
	expectCgroupGone(t, shape.rootCgroup(root))
}

// TestE2ECgroupQOSCorpus runs the corpus row pods/qos/qos-pod.yaml (read in
// place) in qos-example: Guaranteed, its pod cgroup directly under /podrun
// with the pod's limits while it runs detached, gone after `podrun down`.
func TestE2ECgroupQOSCorpus(t *testing.T) {
	t.Parallel()
	requireLowerOOMScoreAdj(t, oomGuaranteed)
	e := newEnv(t)
	e.downOnCleanup("qos-example/qos-demo")
	r := e.runPodrun([]string{"-d", "-q", "-o", "json", "--timeout", "60s", "-f", corpusPod(t, "pods/qos/qos-pod.yaml")}, "")
	expectCode(t, r, 0)
	pod := parsePod(t, r.stdout)
	if pod.Namespace != "qos-example" || pod.Status.QOSClass != v1.PodQOSGuaranteed {
		t.Fatalf("pod %s/%s qosClass %q, want qos-example and Guaranteed", pod.Namespace, pod.Name, pod.Status.QOSClass)
	}
	// 700m and 200Mi.
	rel := shape.podCgroup("/podrun", v1.PodQOSGuaranteed, string(pod.UID))
	expectCgroup(t, rel, cpuShares(716), cpuQuota(70000, 100000), memoryLimit(200<<20))
	expectCode(t, e.runPodrun([]string{"down", "qos-example/qos-demo"}, ""), 0)
	expectCgroupGone(t, rel)
}

// TestE2ECgroupConcurrentRuns: podruns running side by side share the root
// and QoS cgroups, and each removes them once they look empty to it; a
// podrun making its pod cgroup while another one's teardown removes the
// QoS cgroup still runs its pod. Several podruns each run short BestEffort
// pods back to back under one root; every run succeeds and the root is
// gone at the end.
func TestE2ECgroupConcurrentRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	procs, rounds := 6, 6
	if timeoutScale > 1 {
		// An emulated machine (hack/guest.sh): three podruns side by side
		// still race on the shared parents; 36 runs take half an hour.
		procs, rounds = 3, 2
	}
	root := "/podrun/e2e-concurrent-" + randomSuffix(t)
	errs := make(chan string, procs*rounds)
	done := make(chan struct{}, procs)
	for i := range procs {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range rounds {
				name := fmt.Sprintf("e2e-cgroup-conc-%d-%d", i, j)
				m := fromTemplate(t, "cgroups/concurrent.yaml", "NAME", name)
				r := e.startPodrun([]string{"-q", "--cgroup-root", root, "-f", m}, "").result(defaultRunTimeout)
				if r.code != 0 {
					errs <- fmt.Sprintf("%s: exit %d\n%s", name, r.code, r)
				}
			}
		}()
	}
	for range procs {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	expectCgroupGone(t, shape.rootCgroup(root))
}

// TestE2ECgroupReclaimedWithoutSandbox: a podrun killed after making a pod's
// data dir and cgroup, before its sandbox, leaves a cgroup no sandbox
// names. The next run reclaims the data dir (its owner is gone) and, from
// the owner record, the cgroup too. The leftovers are made by hand as that
// podrun would have left them.
func TestE2ECgroupReclaimedWithoutSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := "e2e-reclaim-cg-" + randomSuffix(t)
	rel := shape.podCgroup("/podrun", v1.PodQOSBestEffort, uid)
	makeCgroup(t, rel, "cpu", "memory")
	dead := 0
	for pid := 4194000; pid > 1000; pid-- {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			dead = pid
			break
		}
	}
	dir := filepath.Join(e.root, "pods", uid)
	if err := os.MkdirAll(filepath.Join(dir, "volumes"), 0o750); err != nil {
		t.Fatal(err)
	}
	record := fmt.Sprintf(`{"RunID":"dead","PID":%d,"PIDStart":1,"namespace":"default","name":"gone","cgroup":"/%s"}`, dead, rel)
	if err := os.WriteFile(filepath.Join(dir, "podrun-owner.json"), []byte(record), 0o640); err != nil {
		t.Fatal(err)
	}
	expectCode(t, e.runPodrun([]string{"-q", "-f", testdata("run/exit0.yaml")}, ""), 0)
	expectCgroupGone(t, rel)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the dead podrun's data dir %s is left", dir)
	}
}

// TestE2ECgroupOOMKilled: a container that allocates past its memory limit
// is killed by the kernel inside its pod's cgroup and ends as on a
// kubelet: terminated, reason OOMKilled, exit code 137; the pod Failed
// (restartPolicy Never); podrun exits with the container's 137; the pod
// cgroup is gone after the run.
func TestE2ECgroupOOMKilled(t *testing.T) {
	t.Parallel()
	requireLowerOOMScoreAdj(t, oomGuaranteed)
	e := newEnv(t)
	uid := "e2e-oom-" + randomSuffix(t)
	r := e.runPodrun([]string{"-o", "json", "-f", fromTemplate(t, "cgroups/oom.yaml", "UID", uid)}, "")
	expectCode(t, r, 137)
	if strings.Contains(r.stdout, "survived 67108864") { // the command's own text is in the JSON
		t.Errorf("the container outlived its memory limit:\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if pod.Status.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", pod.Status.Phase)
	}
	term := containerStatus(t, pod, "hog").State.Terminated
	if term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Errorf("container state %+v, want terminated OOMKilled with exit code 137", containerStatus(t, pod, "hog").State)
	}
	expectCgroupGone(t, shape.podCgroup("/podrun", v1.PodQOSGuaranteed, uid))
}
