//go:build e2e

package e2e

// Detached pods end to end: -d leaves them running, podrun ps lists them,
// podrun down NAME, NAMESPACE/NAME, UID or --all removes them fully (those
// of its --root-dir), and a second run of a pod that runs (detached or
// not) is refused.

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestE2EDetachPsDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-detach"
	m := testdata("detach/detach.yaml")
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-d", "-f", m}, "")
	expectCode(t, r, 0)
	if r.elapsed > 20*time.Second {
		t.Errorf("-d took %s", r.elapsed)
	}
	sbs := sandboxesOf(t, name)
	if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("after -d: %d sandboxes of %s, want one ready", len(sbs), name)
	}
	uid := sbs[0].Labels["io.kubernetes.pod.uid"]
	if dirs := podDirs(t, e.root); len(dirs) != 1 || dirs[0] != uid {
		t.Errorf("pod dirs %v, want [%s]", dirs, uid)
	}

	// ps, the wide table (OWNER) and json.
	r = e.runPodrun([]string{"ps", "-o", "wide"}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "detached") {
		t.Errorf("ps does not list %s as detached\n%s", name, r)
	}
	info := findPS(e.ps(t), name)
	if info == nil || !info.Detached || info.Orphaned || info.UID != uid {
		t.Errorf("ps -o json entry for %s: %+v, want detached, not orphaned, uid %s", name, info, uid)
	}

	// A second run of the same pod while it is detached.
	r = e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "already running") {
		t.Errorf("second run: stderr lacks \"already running\"\n%s", r)
	}
	if sbs := sandboxesOf(t, name); len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("the refused second run disturbed the detached pod: %d sandboxes", len(sbs))
	}

	// down NAME removes it fully.
	r = e.runPodrun([]string{"down", name}, "")
	expectCode(t, r, 0)
	if sbs := sandboxesOf(t, name); len(sbs) != 0 {
		t.Errorf("after down: %d sandboxes of %s remain", len(sbs), name)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 0 {
		t.Errorf("after down: pod dirs %v remain", dirs)
	}
	if info := findPS(e.ps(t), name); info != nil {
		t.Errorf("after down: ps still lists %+v", info)
	}
	// down of a pod that is not there.
	r = e.runPodrun([]string{"down", name}, "")
	if r.code == 0 {
		t.Errorf("down of a pod that is gone: exit 0, want an error\n%s", r)
	}
}

func TestE2EDownByUIDAndNamespacedName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := "e2e-down-uid", "e2e-down-nsname"
	e.downOnCleanup(a, b)
	r := e.runPodrun([]string{"-d", "-q", "-f", testdata("detach/down-uid.yaml")}, "")
	expectCode(t, r, 0)
	sbs := sandboxesOf(t, a)
	if len(sbs) != 1 {
		t.Fatalf("after -d: %d sandboxes of %s", len(sbs), a)
	}
	uid := sbs[0].Labels["io.kubernetes.pod.uid"]
	r = e.runPodrun([]string{"down", uid}, "")
	expectCode(t, r, 0)
	if len(sandboxesOf(t, a)) != 0 {
		t.Errorf("down UID left the sandbox of %s", a)
	}
	if len(sandboxesOf(t, b)) != 1 {
		t.Errorf("down UID of %s took %s too", a, b)
	}
	r = e.runPodrun([]string{"down", "default/" + b}, "")
	expectCode(t, r, 0)
	if len(sandboxesOf(t, b)) != 0 {
		t.Errorf("down NAMESPACE/NAME left the sandbox of %s", b)
	}
}

func TestE2EAlreadyRunningLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("detach/live-twice.yaml")
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStderr("Started", 60*time.Second)
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "already running") {
		t.Errorf("stderr lacks \"already running\"\n%s", r)
	}
	select {
	case <-p.done:
		t.Fatalf("the first podrun ended (exit %d) when the second was refused", p.code)
	default:
	}
	if sbs := sandboxesOf(t, "e2e-live-twice"); len(sbs) != 1 {
		t.Errorf("%d sandboxes, want the first run's one", len(sbs))
	}
	p.signal(syscall.SIGINT)
	expectCode(t, p.result(60*time.Second), 130)
}

// TestE2EDownAll: `down --all` takes every podrun pod of its --root-dir
// and leaves those of other root dirs (another CI job's on the same
// runtime), which it counts; `down NAME` of the other job's pod is refused
// naming its --root-dir; ps lists a root dir's pods, `ps --all-roots -o
// wide` every one with its ROOT. Before, `down --all` tore down every
// podrun pod on the node, so this test could not run beside any other.
func TestE2EDownAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	names := []string{"e2e-downall-1", "e2e-downall-2"}
	other, otherPod := e.otherRoot(), "e2e-scope-b"
	e.downOnCleanup(names...)
	t.Cleanup(func() {
		if len(sandboxesOf(t, otherPod)) > 0 {
			e.runPodrunRaw(withRoot(other, []string{"down", "-q", otherPod}), "")
		}
	})
	r := e.runPodrun([]string{"-d", "-q", "-f", testdata("detach/down-all.yaml")}, "")
	expectCode(t, r, 0)
	r = e.runPodrunRaw(withRoot(other, []string{"-d", "-q", "-f", fromTemplate(t, "detach/scope.yaml", "JOB", "b")}), "")
	expectCode(t, r, 0)
	for _, n := range append(names, otherPod) {
		if len(sandboxesOf(t, n)) != 1 {
			t.Fatalf("after -d: no sandbox of %s", n)
		}
	}
	if dirs := podDirs(t, e.root); len(dirs) != 2 {
		t.Errorf("pod dirs %v, want 2", dirs)
	}

	// ps: this root dir's pods; with --all-roots, the other's too, with ROOT.
	if got := e.ps(t); len(got) != 2 || findPS(got, otherPod) != nil {
		t.Errorf("ps of the root dir lists %+v, want its 2 pods", got)
	}
	r = e.runPodrun([]string{"ps", "--all-roots", "-o", "wide"}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, "ROOT") || !regexp.MustCompile(otherPod+` .* `+regexp.QuoteMeta(other)+`\n`).MatchString(r.stdout) {
		t.Errorf("ps --all-roots -o wide does not list %s with its root dir %s\n%s", otherPod, other, r)
	}

	// down of the other root dir's pod: refused, naming its root dir.
	r = e.runPodrun([]string{"down", otherPod}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "give --root-dir "+other+", or --all-roots") {
		t.Errorf("down of another root dir's pod does not say how to reach it\n%s", r)
	}

	r = e.runPodrun([]string{"down", "--all"}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, "of other root dirs left running") && !strings.Contains(r.stderr, "of another root dir left running") {
		t.Errorf("down --all does not count the pods of other root dirs it leaves\n%s", r)
	}
	for _, n := range names {
		if sbs := sandboxesOf(t, n); len(sbs) != 0 {
			t.Errorf("after down --all: %d sandboxes of %s remain", len(sbs), n)
		}
	}
	if len(e.ps(t)) != 0 {
		t.Errorf("after down --all, ps lists pods")
	}
	if sbs := sandboxesOf(t, otherPod); len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("down --all of one root dir took the other's pod: %d sandboxes of %s", len(sbs), otherPod)
	}
	if dirs := podDirs(t, other); len(dirs) != 1 {
		t.Errorf("the other root dir's pod dirs %v, want its one", dirs)
	}
	r = e.runPodrunRaw(withRoot(other, []string{"down", "--all"}), "")
	expectCode(t, r, 0)
}
