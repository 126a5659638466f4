//go:build e2e

package e2e

// Detached pods end to end: -d leaves them running, podrun ps lists them,
// podrun down NAME, NAMESPACE/NAME, UID or --all removes them fully, and a
// second run of a pod that runs (detached or not) is refused.

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner"
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

// TestE2EDownAll is not parallel: `down --all` tears down every podrun pod
// on the node, which would take other tests' pods with it.
func TestE2EDownAll(t *testing.T) {
	e := newEnv(t)
	names := []string{"e2e-downall-1", "e2e-downall-2"}
	e.downOnCleanup(names...)
	// Other podrun pods on the node (another session's run) would go too.
	deadline := time.Now().Add(30 * time.Second)
	for {
		infos, err := runner.List(context.Background(), rtClient)
		if err != nil {
			t.Fatal(err)
		}
		live := infos[:0]
		for _, in := range infos {
			if !in.Orphaned { // orphans are garbage: any run reclaims them
				live = append(live, in)
			}
		}
		if len(live) == 0 {
			break
		}
		infos = live
		if time.Now().After(deadline) {
			t.Fatalf("not running `podrun down --all`: other podrun pods run on this node and would be torn down (stop them first): %+v", infos)
		}
		time.Sleep(time.Second)
	}
	r := e.runPodrun([]string{"-d", "-q", "-f", testdata("detach/down-all.yaml")}, "")
	expectCode(t, r, 0)
	for _, n := range names {
		if len(sandboxesOf(t, n)) != 1 {
			t.Fatalf("after -d: no sandbox of %s", n)
		}
	}
	if dirs := podDirs(t, e.root); len(dirs) != 2 {
		t.Errorf("pod dirs %v, want 2", dirs)
	}
	r = e.runPodrun([]string{"down", "--all"}, "")
	expectCode(t, r, 0)
	for _, n := range names {
		if sbs := sandboxesOf(t, n); len(sbs) != 0 {
			t.Errorf("after down --all: %d sandboxes of %s remain", len(sbs), n)
		}
	}
	if len(e.ps(t)) != 0 {
		t.Errorf("after down --all, ps lists pods")
	}
}
