//go:build e2e

package e2e

// The harness of the end-to-end tests (see doc.go).
//
// TestMain refuses to run (exit 1, never a skip) when CONTAINER_RUNTIME_ENDPOINT
// is unset or the runtime does not answer: the end-to-end tier must not pass
// silently without a testbed.
//
// Every test runs podrun with its own --root-dir and its own $TMPDIR and,
// after the test, checks that nothing of its runs is left (see newEnv): no
// sandbox or container of that root dir or of a podrun process the test
// started in the runtime; no pod data dir, pod log dir or podrun temp file in
// the root dir and no mount below it; no file in the $TMPDIR; and, for every
// pod the test's manifests hold, no pod cgroup (in any hierarchy, under
// every --cgroup-root the test gave, where the node's cgroup driver puts
// it: nodeshape.go) and no cached CNI result.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
)

var (
	podrunBin   string      // the binary under test
	rtClient    *cri.Client // the testbed's runtime, for the cleanliness checks
	rtEndpoint  string      // CONTAINER_RUNTIME_ENDPOINT
	repoRoot    string      // the repository, absolute
	manifestDir string      // testdata/e2e, absolute
	shape       nodeShape   // the node's cgroups and the runtime's cgroup driver (nodeshape.go)
)

// binaryEnv names a podrun binary to test instead of building one (make e2e
// sets it to the bin/podrun that make build made).
const binaryEnv = "PODRUN_E2E_BINARY"

// defaultRunTimeout bounds every podrun invocation unless a test says otherwise.
const defaultRunTimeout = 90 * time.Second

// timeoutScaleEnv names a factor for the harness's waits (a podrun's end,
// a line of its output): 1 by default; the guest of hack/guest.sh, a
// machine emulated about twenty times slower, sets more. It scales only
// how long the harness waits for what must happen, never a duration a
// test checks or a timeout podrun is given.
const timeoutScaleEnv = "PODRUN_E2E_TIMEOUT_SCALE"

// timeoutScale is $PODRUN_E2E_TIMEOUT_SCALE, read by TestMain.
var timeoutScale = 1.0

// scaled is a harness wait scaled by timeoutScale.
func scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * timeoutScale) }

func TestMain(m *testing.M) {
	os.Exit(e2eMain(m))
}

func e2eMain(m *testing.M) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: "+format+"\n", args...)
		return 1
	}
	if v := os.Getenv(timeoutScaleEnv); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 1 {
			return fail("$%s %q: want a factor of at least 1", timeoutScaleEnv, v)
		}
		timeoutScale = f
	}
	rtEndpoint = os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
	if rtEndpoint == "" {
		return fail("CONTAINER_RUNTIME_ENDPOINT is not set: the e2e tests need the testbed.\n" +
			"  bash hack/testbed.sh up && set -a && eval \"$(bash hack/testbed.sh env)\" && set +a")
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	repoRoot = filepath.Dir(wd)
	manifestDir = filepath.Join(repoRoot, "testdata", "e2e")

	if podrunBin = os.Getenv(binaryEnv); podrunBin != "" {
		if podrunBin, err = filepath.Abs(podrunBin); err != nil {
			return fail("%v", err)
		}
		if fi, err := os.Stat(podrunBin); err != nil || fi.Mode()&0o111 == 0 {
			return fail("$%s: %s is not an executable (%v): make build, or unset it to have the test build podrun", binaryEnv, podrunBin, err)
		}
	} else {
		tmp, err := os.MkdirTemp("", "podrun-e2e-bin-")
		if err != nil {
			return fail("%v", err)
		}
		defer os.RemoveAll(tmp)
		podrunBin = filepath.Join(tmp, "podrun")
		build := exec.Command("go", "build", "-o", podrunBin, ".")
		build.Dir = repoRoot
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fail("building podrun: %v", err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rtClient, err = cri.Dial(ctx, rtEndpoint)
	if err != nil {
		return fail("the testbed's runtime at %s does not answer (bash hack/testbed.sh up?): %v", rtEndpoint, err)
	}
	defer rtClient.Close()
	if err := rtClient.CheckReady(ctx, true); err != nil {
		return fail("the testbed's runtime at %s is not ready: %v", rtEndpoint, err)
	}
	runtimeVersion = rtClient.DialVersion().GetRuntimeVersion()
	if err := checkRuntime(rtClient.DialVersion().GetRuntimeName()); err != nil {
		return fail("%v", err)
	}
	if shape, err = readNodeShape(); err != nil {
		return fail("%v", err)
	}
	if err := checkRuntimeDriver(ctx, shape.Driver); err != nil {
		return fail("%v", err)
	}
	sweepKilledRuns(os.Stderr)
	return m.Run()
}

// checkRuntimeDriver checks that the runtime uses the cgroup driver the
// testbed says (cgroupDriverEnv), which the tests expect podrun to pick,
// where the runtime reports it (CRI RuntimeConfig). A runtime that does
// not (containerd 1.6 and 1.7) is not second-guessed here: podrun reads
// its status info, and the tests check where its pod cgroups land.
func checkRuntimeDriver(ctx context.Context, driver string) error {
	reported, err := rtClient.CgroupDriver(ctx)
	switch {
	case errors.Is(err, cri.ErrUnimplemented) || err == nil && reported == "":
		return nil
	case err != nil:
		return fmt.Errorf("asking the runtime at %s for its cgroup driver: %v", rtEndpoint, err)
	case reported != driver:
		return fmt.Errorf("$%s is %s (unset: cgroupfs), but the runtime at %s reports the %s cgroup driver: the testbed's env and its containerd disagree", cgroupDriverEnv, driver, rtEndpoint, reported)
	}
	return nil
}

// ------------------------------------------------------------ environment --

// env is one test's podrun environment: its root dir, its $TMPDIR, the
// podrun processes it started, and the pods and cgroup roots of their runs.
type env struct {
	t      *testing.T
	root   string
	tmpDir string // $TMPDIR of every podrun the test starts

	mu          sync.Mutex
	pids        map[int]bool
	uids        map[string]bool // pod UIDs of the manifests the test ran
	cgroupRoots map[string]bool // the --cgroup-root of each run ("" for none)
}

// liveRoots are the root dirs of the tests running in this process, for
// telling a pod cgroup another test has just made (the same manifest run
// by two tests one after the other) from one left behind.
var liveRoots sync.Map

// newEnv makes a root dir for the test (not yet created: podrun creates
// it) and a $TMPDIR, and registers the cleanliness check, which runs after
// every cleanup the test registers later (a `podrun down` of its detached
// pods, say).
func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, root: filepath.Join(dir, "root"), tmpDir: filepath.Join(dir, "tmp"),
		pids: map[int]bool{}, uids: map[string]bool{}, cgroupRoots: map[string]bool{}}
	if err := os.Mkdir(e.tmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	liveRoots.Store(e.root, true)
	t.Cleanup(func() {
		e.checkClean(e.root)
		e.checkNodeClean()
		liveRoots.Delete(e.root)
	})
	return e
}

// otherRoot makes a second root dir for the test, checked clean as well.
func (e *env) otherRoot() string {
	root := filepath.Join(e.t.TempDir(), "root2")
	liveRoots.Store(root, true)
	e.t.Cleanup(func() {
		e.checkClean(root)
		liveRoots.Delete(root)
	})
	return root
}

// checkClean fails the test when the runtime holds a sandbox or container
// of root or of a podrun the test ran, or root holds a pod or log dir, a
// temp file of podrun's, or a mount.
func (e *env) checkClean(root string) {
	e.t.Helper()
	for _, l := range e.leftovers(root) {
		e.t.Errorf("left behind: %s", l)
	}
}

// checkNodeClean fails the test when the host holds something of the
// test's runs outside its root dirs (nodeLeftovers).
func (e *env) checkNodeClean() {
	e.t.Helper()
	for _, l := range e.nodeLeftovers() {
		e.t.Errorf("left behind: %s", l)
	}
}

// leftovers describes what the test's runs left of root: sandboxes and
// containers of root or of a podrun the test ran, pod and log dirs and
// podrun's temp files in root, mounts below it.
func (e *env) leftovers(root string) []string {
	t := e.t
	t.Helper()
	var out []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.mu.Lock()
	pids := map[string]bool{}
	for pid := range e.pids {
		pids[strconv.Itoa(pid)] = true
	}
	e.mu.Unlock()

	managed := map[string]string{runner.LabelManaged: "true"}
	sbs, err := rtClient.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: managed})
	if err != nil {
		t.Errorf("cleanliness check: listing sandboxes: %v", err)
		return nil
	}
	left := map[string]bool{}
	for _, sb := range sbs {
		if sb.Annotations[runner.AnnotationRootDir] == root || pids[sb.Labels[runner.LabelPID]] {
			left[sb.Id] = true
			out = append(out, fmt.Sprintf("in the runtime: sandbox %s of pod %s/%s (state %s, podrun pid %s, root %s)",
				short(sb.Id), sb.Labels["io.kubernetes.pod.namespace"], sb.Labels["io.kubernetes.pod.name"],
				sb.State, sb.Labels[runner.LabelPID], sb.Annotations[runner.AnnotationRootDir]))
		}
	}
	ctrs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: managed})
	if err != nil {
		t.Errorf("cleanliness check: listing containers: %v", err)
		return out
	}
	for _, c := range ctrs {
		if left[c.PodSandboxId] || pids[c.Labels[runner.LabelPID]] {
			out = append(out, fmt.Sprintf("in the runtime: container %s %q of pod %s (state %s, podrun pid %s)",
				short(c.Id), c.GetMetadata().GetName(), c.Labels["io.kubernetes.pod.name"], c.State, c.Labels[runner.LabelPID]))
		}
	}
	for _, sub := range []string{"pods", "logs"} {
		entries, err := os.ReadDir(filepath.Join(root, sub))
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("cleanliness check: %v", err)
		}
		for _, en := range entries {
			out = append(out, "in the root dir: "+filepath.Join(root, sub, en.Name()))
		}
	}
	// podrun's temp files (os.CreateTemp beside the file it replaces) are
	// dot files.
	entries, _ := os.ReadDir(root)
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), ".") {
			out = append(out, "in the root dir: temp file "+filepath.Join(root, en.Name()))
		}
	}
	for _, m := range mountsUnder(t, root) {
		out = append(out, "mount "+m)
	}
	return out
}

// nodeLeftovers describes what the test's runs left on the host outside
// their root dirs: a file in their $TMPDIR, and, for a pod of the manifests
// the test ran that no other test or podrun runs now, a pod cgroup (in any
// hierarchy, under any --cgroup-root the test gave) or a cached CNI result.
func (e *env) nodeLeftovers() []string {
	t := e.t
	t.Helper()
	var out []string
	entries, err := os.ReadDir(e.tmpDir)
	if err != nil {
		t.Errorf("cleanliness check: %v", err)
	}
	for _, en := range entries {
		out = append(out, "in podrun's $TMPDIR: "+filepath.Join(e.tmpDir, en.Name()))
	}
	e.mu.Lock()
	uids, roots := slices.Sorted(maps.Keys(e.uids)), slices.Sorted(maps.Keys(e.cgroupRoots))
	e.mu.Unlock()
	if len(uids) == 0 {
		return out
	}
	results := cniResults(t)
	for _, uid := range uids {
		if inUseElsewhere(t, e, uid) {
			continue
		}
		for _, root := range roots {
			if root == "" {
				continue
			}
			out = append(out, podCgroupsLeft(root, uid)...)
		}
		for _, f := range results[uid] {
			out = append(out, fmt.Sprintf("CNI result %s of pod UID %s", f, uid))
		}
	}
	return out
}

// inUseElsewhere reports whether another test of this process, or another
// podrun on the node, runs the pod uid now: the same manifest run by two
// tests one after the other has one UID.
func inUseElsewhere(t *testing.T, e *env, uid string) bool {
	t.Helper()
	found := false
	liveRoots.Range(func(root, _ any) bool {
		if root.(string) != e.root {
			if _, err := os.Stat(filepath.Join(root.(string), "pods", uid)); err == nil {
				found = true
			}
		}
		return !found
	})
	if found {
		return true
	}
	// Sandboxes of this test's runs were reported by checkClean.
	return len(sandboxesLabelled(t, "io.kubernetes.pod.uid", uid)) > 0
}

// podCgroupsLeft describes the pod cgroups of the pod uid, of any QoS
// class, that exist under the --cgroup-root root, in any hierarchy: where
// podrun makes them with the node's driver (nodeShape.podCgroup).
// podCgroupsOf is the pod cgroup of pod uid in every hierarchy it is in,
// under any cgroup root of e's runs.
func podCgroupsOf(e *env, uid string) []string {
	e.mu.Lock()
	roots := slices.Sorted(maps.Keys(e.cgroupRoots))
	e.mu.Unlock()
	var out []string
	for _, root := range roots {
		for _, qos := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
			for _, dir := range shape.cgroupDirs(shape.podCgroup(root, qos, uid)) {
				if _, err := os.Stat(dir); err == nil {
					out = append(out, dir)
				}
			}
		}
	}
	return out
}

func podCgroupsLeft(root, uid string) []string {
	var out []string
	for _, qos := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		for _, dir := range shape.cgroupDirs(shape.podCgroup(root, qos, uid)) {
			if _, err := os.Stat(dir); err == nil {
				out = append(out, "pod cgroup "+dir)
			}
		}
	}
	return out
}

// cniResultsDir is where libcni caches the result of each ADD (the runtime
// gives it no other dir): "<network>-<sandbox ID>-<ifname>", JSON with the
// CNI args, K8S_POD_UID among them; DEL removes it.
const cniResultsDir = "/var/lib/cni/results"

// cniResults lists the cached CNI results by pod UID.
func cniResults(t *testing.T) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(cniResultsDir)
	if err != nil && !os.IsNotExist(err) {
		t.Errorf("cleanliness check: %v", err)
	}
	out := map[string][]string{}
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(cniResultsDir, en.Name()))
		if err != nil {
			continue // removed meanwhile
		}
		var res struct {
			CNIArgs [][2]string `json:"cniArgs"`
		}
		if json.Unmarshal(b, &res) != nil {
			continue
		}
		for _, kv := range res.CNIArgs {
			if kv[0] == "K8S_POD_UID" {
				out[kv[1]] = append(out[kv[1]], filepath.Join(cniResultsDir, en.Name()))
			}
		}
	}
	return out
}

// mountsUnder lists the mount points at or below dir.
// processesWithArg lists the processes with arg among their command line's
// arguments.
func processesWithArg(t *testing.T, arg string) []int {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Errorf("listing processes: %v", err)
		return nil
	}
	var out []int
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out = append(out, pid)
		}
	}
	return out
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Errorf("cleanliness check: %v", err)
		return nil
	}
	var out []string
	for _, l := range lines(string(b)) {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		// Spaces and the like are octal escapes (\040) in mountinfo.
		mp := f[4]
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// notePods records the pods a podrun run with args will run (their UIDs,
// as podrun derives them from the same sources, node name and content) and
// its cgroup root, for checkNodeClean. Sources other than local files,
// directories and stdin (URLs, FIFOs) are skipped: reading them again could
// block or differ.
func (e *env) notePods(args []string, stdin string) {
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "--image" || strings.HasPrefix(a, "--image=") || a == "--env" || strings.HasPrefix(a, "--env=")
	}) {
		e.notePodsByDryRun(args, stdin)
		return
	}
	var specs []string
	node, _ := os.Hostname()
	root := "/podrun"
	run, static := false, false
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if name == "--static-pod-names" {
			static = !hasValue || value == "true"
			continue
		}
		switch name {
		case "-f", "--filename", "--node-name", "--cgroup-root":
		default:
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		switch name {
		case "--node-name":
			node = value
		case "--cgroup-root":
			root = value
		default:
			run = true
			if value == "-" {
				specs = append(specs, value)
			} else if fi, err := os.Stat(value); err == nil && (fi.Mode().IsRegular() || fi.IsDir()) {
				specs = append(specs, value)
			}
		}
	}
	if !run {
		return
	}
	e.mu.Lock()
	e.cgroupRoots[root] = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, spec := range specs {
		set, err := sources.Load(ctx, []string{spec}, sources.Options{Stdin: strings.NewReader(stdin), NodeName: strings.ToLower(node), StaticPodNames: static})
		if err != nil {
			continue // podrun refuses it too, or it needs what only the run has
		}
		e.mu.Lock()
		for _, p := range set.Pods {
			e.uids[string(p.UID)] = true
		}
		for _, j := range set.Jobs {
			for n := range 32 { // a Job's pods' UIDs depend on their number alone
				e.uids[string(j.Pod(n, -1).UID)] = true
			}
		}
		e.mu.Unlock()
	}
}

// notePodsByDryRun is notePods for a run whose pods podrun makes or
// changes from its flags (podrun run NAME --image IMAGE, --image and --env
// overrides): their UIDs as podrun's own dry run of the same arguments
// gives them (the flags of the dry run go before "--", after the run's,
// so that they win), and the cgroup root.
func (e *env) notePodsByDryRun(args []string, stdin string) {
	dry := slices.Clone(args)
	at := slices.Index(dry, "--")
	if at < 0 {
		at = len(dry)
	}
	dry = slices.Insert(dry, at, "--dry-run", "-o", "json", "-q")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, podrunBin, dry...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		return // podrun refuses it too
	}
	var doc struct {
		Pods []struct{ UID string } `json:"pods"`
	}
	if json.Unmarshal(out, &doc) != nil {
		return
	}
	root := "/podrun"
	for i, a := range args {
		if a == "--cgroup-root" && i+1 < len(args) {
			root = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--cgroup-root="); ok {
			root = v
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cgroupRoots[root] = true
	for _, p := range doc.Pods {
		e.uids[p.UID] = true
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// expectNothingCreated checks that podrun, refusing its input, did not
// create the root dir, nor any sandbox of it.
func expectNothingCreated(t *testing.T, e *env) {
	t.Helper()
	var names []string
	entries, _ := os.ReadDir(e.root)
	for _, en := range entries {
		// The remembered CNI validation (cni/cache.go) is node state,
		// written once a sandbox of the root got its network.
		if en.Name() != "cni-validated" {
			names = append(names, en.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("root dir %s holds %v after refused input; want nothing created", e.root, names)
	}
	// Sandboxes are checked by the cleanliness check (by root dir and pid).
}

// downOnCleanup tears the named pods down after the test if still there.
func (e *env) downOnCleanup(names ...string) {
	e.t.Cleanup(func() {
		for _, n := range names {
			if len(sandboxesOf(e.t, n)) > 0 {
				r := e.runPodrun([]string{"down", n}, "")
				if r.code != 0 {
					e.t.Errorf("cleanup: podrun down %s:\n%s", n, r)
				}
			}
		}
	})
}

// ------------------------------------------------------- running podrun --

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running podrun.
type proc struct {
	t       *testing.T
	args    []string
	cmd     *exec.Cmd
	stdout  syncBuffer
	stderr  syncBuffer
	started time.Time
	done    chan struct{}
	code    int
	ended   time.Time
}

// withRoot puts --root-dir ROOT into args: after the subcommand for run, ps
// and down, in front otherwise (the root command's flags).
func withRoot(root string, args []string) []string {
	if len(args) > 0 && (args[0] == "run" || args[0] == "ps" || args[0] == "down" || args[0] == "handover") {
		return append([]string{args[0], "--root-dir", root}, args[1:]...)
	}
	return append([]string{"--root-dir", root}, args...)
}

// commandEnv is this process's environment with changes: "NAME=value" sets,
// a bare "NAME" unsets.
func commandEnv(changes []string) []string {
	out := []string{}
	drop := map[string]bool{}
	for _, c := range changes {
		name, _, _ := strings.Cut(c, "=")
		drop[name] = true
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			out = append(out, kv)
		}
	}
	for _, c := range changes {
		if strings.Contains(c, "=") {
			out = append(out, c)
		}
	}
	return out
}

// startPodrunRaw starts podrun with exactly args.
func (e *env) startPodrunRaw(args []string, stdin string, envChanges ...string) *proc {
	e.t.Helper()
	return e.startPodrunCmd(args, stdin, nil, envChanges...)
}

// startPodrunCmd starts podrun with exactly args, after setup (when not nil)
// has changed its command (its stdout, say).
func (e *env) startPodrunCmd(args []string, stdin string, setup func(*exec.Cmd), envChanges ...string) *proc {
	e.t.Helper()
	e.notePods(args, stdin)
	p := &proc{t: e.t, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(podrunBin, args...)
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	p.cmd.Env = commandEnv(append([]string{"TMPDIR=" + e.tmpDir}, envChanges...))
	if setup != nil {
		setup(p.cmd)
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		e.t.Fatalf("starting podrun %v: %v", args, err)
	}
	e.mu.Lock()
	e.pids[p.cmd.Process.Pid] = true
	e.mu.Unlock()
	go func() {
		p.cmd.Wait()
		p.ended = time.Now()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	// Never leave a podrun running after the test.
	e.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// startPodrun starts podrun with this test's --root-dir.
func (e *env) startPodrun(args []string, stdin string, envChanges ...string) *proc {
	e.t.Helper()
	return e.startPodrunRaw(withRoot(e.root, args), stdin, envChanges...)
}

// wait waits for podrun to end, killing it (and failing the test) after
// timeout, and returns its exit code (-1 when killed by a signal).
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	timeout = scaled(timeout)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("podrun %s did not end within %s; killed it.\nstdout:\n%s\nstderr:\n%s",
			strings.Join(p.args, " "), timeout, p.stdout.String(), p.stderr.String())
	}
	return p.code
}

// waitStderr waits until podrun's stderr contains s; it fails the test
// (fatally) if podrun ends first or timeout passes.
func (p *proc) waitStderr(s string, timeout time.Duration) {
	p.t.Helper()
	p.waitOutput("stderr", &p.stderr, s, timeout)
}

// waitStdout waits until podrun's stdout contains s, as waitStderr.
func (p *proc) waitStdout(s string, timeout time.Duration) {
	p.t.Helper()
	p.waitOutput("stdout", &p.stdout, s, timeout)
}

func (p *proc) waitOutput(stream string, out *syncBuffer, s string, timeout time.Duration) {
	p.t.Helper()
	timeout = scaled(timeout)
	deadline := time.Now().Add(timeout)
	for !strings.Contains(out.String(), s) {
		select {
		case <-p.done:
			if strings.Contains(out.String(), s) {
				return
			}
			p.t.Fatalf("podrun ended (exit %d) before printing %q on %s.\nstdout:\n%s\nstderr:\n%s",
				p.code, s, stream, p.stdout.String(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("podrun did not print %q on %s within %s.\nstdout:\n%s\nstderr:\n%s",
				s, stream, timeout, p.stdout.String(), p.stderr.String())
		}
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signalling podrun: %v", err)
	}
}

// stopNow ends a podrun that runs long-running pods: a SIGTERM, then a
// second one so that containers that ignore SIGTERM (sh or sleep as PID 1)
// are killed at once; podrun still tears everything down (exit 143).
func stopNow(t *testing.T, p *proc) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	// The second signal forces; a teardown that already finished (a
	// container that exits at once on SIGTERM) needs none.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signalling podrun: %v", err)
	}
	if code := p.wait(60 * time.Second); code != 143 {
		t.Errorf("podrun exit %d after SIGTERM, want 143\nstderr:\n%s", code, p.stderr.String())
	}
}

// result is a finished podrun.
type result struct {
	args           []string
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("podrun %s\nexit %d after %s\n--- stdout:\n%s\n--- stderr:\n%s",
		strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

func (p *proc) result(timeout time.Duration) result {
	p.t.Helper()
	code := p.wait(timeout)
	return result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String(), code: code, elapsed: p.ended.Sub(p.started)}
}

// runPodrun runs podrun with this test's --root-dir, stdin and environment
// changes ("NAME=value" sets, "NAME" unsets) and returns what it printed and
// its exit code.
func (e *env) runPodrun(args []string, stdin string, envChanges ...string) result {
	e.t.Helper()
	return e.startPodrun(args, stdin, envChanges...).result(defaultRunTimeout)
}

// runPodrunRaw runs podrun with exactly args (no --root-dir added).
func (e *env) runPodrunRaw(args []string, stdin string, envChanges ...string) result {
	e.t.Helper()
	return e.startPodrunRaw(args, stdin, envChanges...).result(defaultRunTimeout)
}

// expectCode fails the test unless podrun exited with want.
func expectCode(t *testing.T, r result, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d\n%s", r.code, want, r)
	}
}

// psInfo is what the tests read of a pod in `podrun ps -o json`.
type psInfo struct {
	Name, UID string
	Owner     string // the io.podrun.owner annotation: pid N, pid N (gone), detached
	Detached  bool   // its podrun left it running and exited
	Orphaned  bool   // its podrun is gone and it was not detached
	Pod       *v1.Pod
}

// ps is `podrun ps -o json` (every podrun pod on the node).
func (e *env) ps(t *testing.T) []psInfo {
	t.Helper()
	r := e.runPodrun([]string{"ps", "-o", "json"}, "")
	expectCode(t, r, 0)
	var out []psInfo
	for _, p := range parseList(t, r.stdout) {
		owner := p.Annotations["io.podrun.owner"]
		out = append(out, psInfo{Name: p.Name, UID: string(p.UID), Owner: owner,
			Detached: owner == "detached", Orphaned: strings.HasSuffix(owner, "(gone)"), Pod: p})
	}
	return out
}

func findPS(infos []psInfo, name string) *psInfo {
	for i := range infos {
		if infos[i].Name == name {
			return &infos[i]
		}
	}
	return nil
}

// ------------------------------------------------------------- manifests --

// testdata is the absolute path of testdata/e2e/REL.
func testdata(rel string) string { return filepath.Join(manifestDir, rel) }

// readTestdata is the content of testdata/e2e/REL.
func readTestdata(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(testdata(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// manifest writes content to a file in a temp dir and returns its path.
func manifest(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// templateVar is a {{NAME}} of a manifest template.
var templateVar = regexp.MustCompile(`\{\{[A-Z_]+\}\}`)

// fillTemplate is the template testdata/e2e/REL with each {{KEY}} of the
// pairs KEY, value replaced by its value. It fails the test when a KEY does
// not occur in the template or a {{NAME}} is left without a value.
func fillTemplate(t *testing.T, rel string, pairs ...string) string {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("template %s: odd number of KEY, value arguments %q", rel, pairs)
	}
	s := readTestdata(t, rel)
	for i := 0; i < len(pairs); i += 2 {
		key := "{{" + pairs[i] + "}}"
		if !strings.Contains(s, key) {
			t.Fatalf("template %s has no %s", rel, key)
		}
		s = strings.ReplaceAll(s, key, pairs[i+1])
	}
	if left := templateVar.FindAllString(s, -1); len(left) > 0 {
		t.Fatalf("template %s: no value for %v", rel, left)
	}
	return s
}

// fromTemplate writes fillTemplate's manifest to a temp file named like the
// template and returns its path.
func fromTemplate(t *testing.T, rel string, pairs ...string) string {
	t.Helper()
	return manifest(t, filepath.Base(rel), fillTemplate(t, rel, pairs...))
}

// corpusRoot is ../shared/corpus/website beside the clone, absolute. A test
// that reads the corpus fails without it: CI has ../shared beside the clone.
func corpusRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(filepath.Dir(repoRoot), "shared", "corpus", "website")
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the corpus is not beside the repo (want %s: put the shared checkout at ../shared): %v", root, err)
	}
	return root
}

// corpusPod is the absolute path of a row of the shared corpus, read in
// place.
func corpusPod(t *testing.T, rel string) string {
	t.Helper()
	path := filepath.Join(corpusRoot(t), rel)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("corpus row: %v", err)
	}
	return path
}

// randomSuffix keeps the names, cgroups and UIDs of concurrent tests (and
// of other runs on the same testbed) apart.
func randomSuffix(t *testing.T) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// ---------------------------------------------------------------- output --

// parsePod decodes podrun's -o json/yaml output of one pod.
func parsePod(t *testing.T, out string) *v1.Pod {
	t.Helper()
	var p v1.Pod
	if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
		t.Fatalf("stdout is not one v1.Pod: %v\n%s", err, out)
	}
	if p.Kind != "Pod" || p.APIVersion != "v1" {
		t.Errorf("document is %s %s, want v1 Pod", p.APIVersion, p.Kind)
	}
	return &p
}

// parseList decodes podrun's -o json/yaml output of several pods.
func parseList(t *testing.T, out string) []*v1.Pod {
	t.Helper()
	var l v1.List
	if err := yaml.UnmarshalStrict([]byte(out), &l); err != nil {
		t.Fatalf("stdout is not one v1.List: %v\n%s", err, out)
	}
	if l.Kind != "List" || l.APIVersion != "v1" {
		t.Errorf("document is %s %s, want v1 List", l.APIVersion, l.Kind)
	}
	var pods []*v1.Pod
	for i, item := range l.Items {
		var p v1.Pod
		if err := yaml.UnmarshalStrict(item.Raw, &p); err != nil {
			t.Fatalf("item %d is not a v1.Pod: %v", i, err)
		}
		if p.Kind != "Pod" {
			t.Errorf("item %d is a %q, want Pod", i, p.Kind)
		}
		pods = append(pods, &p)
	}
	return pods
}

// podsOf decodes -o json output: one Pod or a List.
func podsOf(t *testing.T, out string) []*v1.Pod {
	t.Helper()
	var head struct{ Kind string }
	if err := yaml.Unmarshal([]byte(out), &head); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if head.Kind == "List" {
		return parseList(t, out)
	}
	return []*v1.Pod{parsePod(t, out)}
}

func podNames(pods []*v1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// containerStatus is the status of the container or init container name.
func containerStatus(t *testing.T, p *v1.Pod, name string) v1.ContainerStatus {
	t.Helper()
	for _, s := range append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("pod %s has no status of container %q", p.Name, name)
	return v1.ContainerStatus{}
}

// condition is the status of the pod's condition ct, "" when it has none.
func condition(pod *v1.Pod, ct v1.PodConditionType) v1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

func podReady(p *v1.Pod) bool { return condition(p, v1.PodReady) == v1.ConditionTrue }

// lines splits output into lines, dropping the last empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// expectLines fails the test unless out holds each line of want, in order
// (other lines may come between).
func expectLines(t *testing.T, out string, want ...string) {
	t.Helper()
	i := 0
	for _, l := range lines(out) {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("output lacks the line %q (or it is out of order):\n%s", want[i], out)
	}
}

// expectHasLines fails unless each of want is a whole line of out, in any
// order.
func expectHasLines(t *testing.T, out string, want ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range lines(out) {
		have[l] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("output lacks the line %q:\n%s", w, out)
		}
	}
}

// expectMatch fails unless out matches each regexp (multi-line mode).
func expectMatch(t *testing.T, out string, res ...string) {
	t.Helper()
	for _, re := range res {
		if !regexp.MustCompile("(?m)" + re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
}

// ------------------------------------------------------------ the runtime --

// sandboxesOf lists podrun sandboxes whose pod has name (any namespace).
func sandboxesOf(t *testing.T, name string) []*runtimeapi.PodSandbox {
	t.Helper()
	return sandboxesLabelled(t, "io.kubernetes.pod.name", name)
}

// sandboxesLabelled lists podrun sandboxes with the label key=value.
func sandboxesLabelled(t *testing.T, key, value string) []*runtimeapi.PodSandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sbs, err := rtClient.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{
		runner.LabelManaged: "true", key: value}})
	if err != nil {
		t.Fatalf("listing sandboxes: %v", err)
	}
	return sbs
}

// sandboxesIn counts the sandboxes of pod name that this test's root dir
// owns (other tests may run pods of the same name).
func sandboxesIn(t *testing.T, e *env, name string) int {
	t.Helper()
	n := 0
	for _, sb := range sandboxesOf(t, name) {
		if sb.Annotations[runner.AnnotationRootDir] == e.root {
			n++
		}
	}
	return n
}

// podDirs lists <root>/pods.
func podDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "pods"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		out = append(out, en.Name())
	}
	return out
}

// runningContainer is the ID of the running container ctr of pod, run by
// podrun process p.
func runningContainer(ctx context.Context, p *proc, pod, ctr string) (string, error) {
	cs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{
			runner.LabelPID: strconv.Itoa(p.cmd.Process.Pid), "io.kubernetes.pod.name": pod, "io.kubernetes.container.name": ctr,
		}})
	if err != nil {
		return "", err
	}
	if len(cs) != 1 {
		return "", fmt.Errorf("%d running containers %s/%s", len(cs), pod, ctr)
	}
	return cs[0].Id, nil
}

// execOut runs cmd in container ctr of pod, run by podrun process p, and
// returns its stdout and stderr together and its exit code.
func execOut(p *proc, pod, ctr string, cmd ...string) (string, int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := runningContainer(ctx, p, pod, ctr)
	if err != nil {
		return "", 0, err
	}
	out, errOut, code, err := rtClient.ExecSync(ctx, id, cmd, 15*time.Second)
	return string(out) + string(errOut), code, err
}

// execIn runs cmd in container ctr of pod, run by podrun process p, and
// returns its stdout; it fails the test unless cmd exits 0.
func execIn(t *testing.T, p *proc, pod, ctr string, cmd ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := runningContainer(ctx, p, pod, ctr)
	if err != nil {
		t.Fatalf("finding container %s/%s: %v", pod, ctr, err)
	}
	out, errOut, code, err := rtClient.ExecSync(ctx, id, cmd, 15*time.Second)
	if err != nil || code != 0 {
		t.Fatalf("exec %v in %s/%s: exit %d, %v\n%s", cmd, pod, ctr, code, err, errOut)
	}
	return string(out)
}

// ------------------------------------------------------------- the node --

// nodeCPUs is the number of CPUs podrun reports as the node's allocatable.
func nodeCPUs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/fs/cgroup/cpuset/cpuset.effective_cpus")
	if err != nil {
		b, _ = os.ReadFile("/sys/devices/system/cpu/online")
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		z := a
		if ok {
			z, _ = strconv.Atoi(hi)
		}
		n += z - a + 1
	}
	return n
}

// hostHasAppArmor is the kubelet's check of the host.
func hostHasAppArmor() bool {
	b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return err == nil && strings.HasPrefix(string(b), "Y")
}
