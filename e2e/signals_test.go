//go:build e2e

package e2e

// Signals and crashes end to end: SIGINT and SIGTERM tear everything down
// (130, 143), a second SIGINT forces, the containers' last output is kept,
// SIGINT at any moment of start-up leaves nothing in the way, and after a
// SIGKILL the next run, in any root dir, reclaims the orphan (a `podrun -d`
// killed before its detach included); a SIGINT to `podrun down` does not
// abandon the stop half way.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestE2ESignalSIGINT(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", testdata("signals/sigint.yaml")}, "")
	p.waitStderr("Started", 60*time.Second)
	if len(sandboxesOf(t, "e2e-sigint")) != 1 {
		t.Errorf("no sandbox while running")
	}
	p.signal(syscall.SIGINT)
	sent := time.Now()
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if d := time.Since(sent); d > 15*time.Second {
		t.Errorf("teardown after SIGINT took %s", d)
	}
}

func TestE2ESignalSIGTERM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-o", "json", "-f", testdata("signals/sigterm.yaml")}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGTERM)
	r := p.result(60 * time.Second)
	expectCode(t, r, 143)
	// -o prints the final pod whatever the outcome, a signal included.
	if pod := parsePod(t, r.stdout); pod.Name != "e2e-sigterm" {
		t.Errorf("-o json after SIGTERM printed pod %q", pod.Name)
	}
}

func TestE2ESignalSecondSIGINTForces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Ignores SIGTERM; a 30 s grace period.
	p := e.startPodrun([]string{"-f", testdata("signals/sigforce.yaml")}, "")
	p.waitStdout("ignoring-term", 60*time.Second) // the trap is set
	p.signal(syscall.SIGINT)
	sent := time.Now()
	p.waitStderr("Killing", 10*time.Second) // teardown has begun and waits on the grace period
	time.Sleep(500 * time.Millisecond)
	select {
	case <-p.done:
		t.Fatalf("podrun ended before the second SIGINT (exit %d): the container should have held it for 30s\n%s", p.code, p.stderr.String())
	default:
	}
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if d := time.Since(sent); d > 8*time.Second {
		t.Errorf("the run ended %s after the first SIGINT; the second should have killed the container at once\n%s", d, r)
	}
}

func TestE2ESignalOutputDuringTeardown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// On SIGTERM the container says goodbye and exits 0; podrun must not
	// lose that line while tearing down.
	p := e.startPodrun([]string{"-o", "yaml", "-f", testdata("signals/bye.yaml")}, "")
	p.waitStderr("hello", 60*time.Second)
	// Running: its pod dir and log dir exist.
	if len(podDirs(t, e.root)) != 1 {
		t.Errorf("while running: pod dirs %v, want one", podDirs(t, e.root))
	}
	if entries, _ := os.ReadDir(filepath.Join(e.root, "logs")); len(entries) != 1 {
		t.Errorf("while running: %d log dirs, want one", len(entries))
	}
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if !strings.Contains(r.stderr, "goodbye-on-term\n") {
		t.Errorf("the container's last line, printed during teardown, is missing\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if len(pod.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", pod.Status.ContainerStatuses)
	}
}

// TestE2ESignalEarly sends SIGINT at moments spread over podrun's start-up
// (dialing, checking the runtime, reclaiming, creating the sandbox, pulling,
// starting): every time podrun must exit 130 once everything is torn down,
// so that running the same pod again at once works.
func TestE2ESignalEarly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("signals/early.yaml")
	// From 25 ms on: before podrun has installed its signal handler (Go
	// start-up, flag parsing) SIGINT kills it, and it has created nothing.
	for delay := 25 * time.Millisecond; delay <= 300*time.Millisecond; delay += 25 * time.Millisecond {
		p := e.startPodrun([]string{"-f", m}, "")
		time.Sleep(delay)
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			r := p.result(time.Second)
			t.Errorf("podrun ended before SIGINT %s after start (the pod never ends): exit %d\n%s", delay, r.code, r)
			continue
		}
		r := p.result(60 * time.Second)
		switch {
		case r.code == -1 && r.stderr == "":
			t.Logf("SIGINT %s after start came before podrun's signal handler", delay)
		case r.code != 130:
			t.Errorf("SIGINT %s after start: exit %d, want 130\n%s", delay, r.code, r)
		}
		if dirs := podDirs(t, e.root); len(dirs) != 0 {
			t.Errorf("SIGINT %s after start: pod dirs %v left", delay, dirs)
		}
		// The pod again, at once: nothing of the interrupted run may be in
		// the way (a sandbox still being created holds the sandbox name).
		again := e.runPodrun([]string{"-q", "--wait", "none", "-f", m}, "")
		if again.code != 0 {
			t.Errorf("after SIGINT %s after start: the next run of the same pod: exit %d, want 0\n%s", delay, again.code, again)
			// Let the leftover settle (a later run reclaims it) so that the
			// next delay is tried on a clean runtime; say how long it took.
			start := time.Now()
			for again.code != 0 && time.Since(start) < 20*time.Second {
				time.Sleep(500 * time.Millisecond)
				again = e.runPodrun([]string{"-q", "--wait", "none", "-f", m}, "")
			}
			t.Logf("the same pod could run again %s later (exit %d)", time.Since(start).Round(100*time.Millisecond), again.code)
		}
	}
}

// TestE2EReclaimAfterKill9 is not parallel: any podrun run reclaims the
// orphan, and the test wants its own run to do it.
func TestE2EReclaimAfterKill9(t *testing.T) {
	e := newEnv(t)
	orphan, keep := "e2e-orphan", "e2e-orphan-detached"
	e.downOnCleanup(keep)

	// A detached pod, which a later run must not reclaim.
	r := e.runPodrun([]string{"-d", "-q", "-f", testdata("signals/keep.yaml")}, "")
	expectCode(t, r, 0)

	// A running podrun, killed with SIGKILL.
	p := e.startPodrun([]string{"-f", testdata("signals/orphan.yaml")}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code != -1 {
		t.Fatalf("podrun exit %d after SIGKILL", code)
	}
	sbs := sandboxesOf(t, orphan)
	if len(sbs) != 1 {
		t.Fatalf("after kill -9: %d sandboxes of %s, want the orphan", len(sbs), orphan)
	}
	orphanUID := sbs[0].Labels["io.kubernetes.pod.uid"]
	if _, err := os.Stat(filepath.Join(e.root, "pods", orphanUID)); err != nil {
		t.Fatalf("after kill -9: the orphan's pod dir: %v", err)
	}
	if info := findPS(e.ps(t), orphan); info == nil || !info.Orphaned {
		t.Errorf("ps -o json entry for the orphan %+v, want orphaned", info)
	}

	// Another podrun, another pod, another root dir: it reclaims the orphan
	// (sandbox, containers, data dir under the first root) and leaves the
	// detached pod alone.
	other := e.otherRoot()
	r = e.runPodrunRaw(withRoot(other, []string{"-f", testdata("signals/reclaimer.yaml")}), "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, orphan) {
		t.Errorf("the next run did not report reclaiming %s\n%s", orphan, r)
	}
	if sbs := sandboxesOf(t, orphan); len(sbs) != 0 {
		t.Errorf("after the next run: %d sandboxes of the orphan remain", len(sbs))
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", orphanUID)); !os.IsNotExist(err) {
		t.Errorf("after the next run: the orphan's pod dir remains (%v)", err)
	}
	if sbs := sandboxesOf(t, keep); len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("the detached pod was reclaimed: %d sandboxes", len(sbs))
	} else if _, err := os.Stat(filepath.Join(e.root, "pods", sbs[0].Labels["io.kubernetes.pod.uid"])); err != nil {
		t.Errorf("the detached pod's data dir was reclaimed: %v", err)
	}

	// The same with the next run in the same root dir.
	p = e.startPodrun([]string{"-f", testdata("signals/orphan-2.yaml")}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	r = e.runPodrun([]string{"-q", "-f", testdata("signals/reclaimer-2.yaml")}, "")
	expectCode(t, r, 0)
	if sbs := sandboxesOf(t, orphan+"-2"); len(sbs) != 0 {
		t.Errorf("after the next run: %d sandboxes of the orphan remain", len(sbs))
	}
	if len(sandboxesOf(t, keep)) != 1 {
		t.Errorf("the detached pod was reclaimed")
	}

	r = e.runPodrun([]string{"down", keep}, "")
	expectCode(t, r, 0)
}

// TestE2EDownInterrupted: a signal to `podrun down` while it waits out a
// grace period does not abandon the stop: down finishes (the containers
// stopped, the sandbox, data and log dirs and cgroup removed) and exits
// 130; a second signal kills the containers at once and still removes
// everything. Before, the first SIGINT made down exit 125 with the
// container still running, its data and log dirs deleted and its cgroup
// left, and ps showed the pod 0/0 Unknown until a second down.
func TestE2EDownInterrupted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	one, two := "e2e-down-int-1", "e2e-down-int-2"
	e.downOnCleanup(one, two)
	r := e.runPodrun([]string{"-d", "-q", "-f", testdata("signals/down-interrupted.yaml")}, "")
	expectCode(t, r, 0)
	if dirs := podDirs(t, e.root); len(dirs) != 2 {
		t.Fatalf("after -d: pod dirs %v, want 2", dirs)
	}

	// One SIGINT while down waits out the 8 s grace period.
	p := e.startPodrun([]string{"down", one}, "")
	p.waitStderr("Killing: Stopping container c", 60*time.Second)
	time.Sleep(time.Second)
	p.signal(syscall.SIGINT)
	sent := time.Now()
	r = p.result(60 * time.Second)
	expectCode(t, r, 130)
	if !strings.Contains(r.stderr, "interrupted: finishing the stop") {
		t.Errorf("down does not say it finishes the stop\n%s", r)
	}
	if d := time.Since(sent); d < 4*time.Second {
		t.Errorf("down ended %s after SIGINT: the container ignoring SIGTERM should have held it for the rest of its 8 s grace period\n%s", d, r)
	}
	if n := len(sandboxesOf(t, one)); n != 0 {
		t.Errorf("after the interrupted down: %d sandboxes of %s left", n, one)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 1 {
		t.Errorf("after the interrupted down: pod dirs %v, want the other pod's alone", dirs)
	}
	if info := findPS(e.ps(t), one); info != nil {
		t.Errorf("ps still lists %s: %+v", one, info)
	}

	// Two SIGINTs while down waits out the 60 s grace period.
	p = e.startPodrun([]string{"down", two}, "")
	p.waitStderr("Killing: Stopping container c", 60*time.Second)
	p.signal(syscall.SIGINT)
	sent = time.Now()
	p.waitStderr("interrupted: finishing the stop", 10*time.Second)
	p.signal(syscall.SIGINT)
	r = p.result(60 * time.Second)
	expectCode(t, r, 130)
	if d := time.Since(sent); d > 20*time.Second {
		t.Errorf("down ended %s after the first SIGINT; the second should have killed the container at once\n%s", d, r)
	}
	if !strings.Contains(r.stderr, "Killing container c now (second signal)") {
		t.Errorf("down does not say it killed the container at once\n%s", r)
	}
	if n := len(sandboxesOf(t, two)); n != 0 {
		t.Errorf("after the forced down: %d sandboxes of %s left", n, two)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 0 {
		t.Errorf("after the forced down: pod dirs %v left", dirs)
	}
}

// TestE2EDetachKilledBeforeReady: a `podrun -d` killed (SIGKILL) while it
// still waits for its pod to be Ready never handed the pod over: ps shows
// its owner gone, and the next run reclaims the pod with its data dir and
// cgroup. Before, the pod was labelled detached from its sandbox on, and
// no run ever reclaimed it. Any podrun on the node may be the one that
// reclaims it; the test checks that it is gone once its own run is done.
func TestE2EDetachKilledBeforeReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-detach-never-ready"
	e.downOnCleanup(name)
	p := e.startPodrun([]string{"-d", "-f", testdata("signals/detach-never-ready.yaml")}, "")
	p.waitStdout("waiting-for-ready", 60*time.Second)
	p.waitStderr("Readiness probe failed", 60*time.Second)
	if info := findPS(e.ps(t), name); info == nil || info.Owner != fmt.Sprintf("pid %d", p.cmd.Process.Pid) {
		t.Errorf("ps of the pod a -d run waits for: %+v, want owner pid %d", info, p.cmd.Process.Pid)
	}
	p.signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code != -1 {
		t.Fatalf("podrun exit %d after SIGKILL", code)
	}
	if info := findPS(e.ps(t), name); info != nil && !info.Orphaned {
		t.Errorf("ps after the kill: owner %q, want pid N (gone): not detached", info.Owner)
	}
	r := e.runPodrun([]string{"-f", testdata("signals/detach-never-ready-next.yaml")}, "")
	expectCode(t, r, 0)
	if n := len(sandboxesOf(t, name)); n != 0 {
		t.Errorf("after the next run: %d sandboxes of %s left: the killed -d run's pod was not reclaimed\n%s", n, name, r)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 0 {
		t.Errorf("after the next run: pod dirs %v left", dirs)
	}
}
