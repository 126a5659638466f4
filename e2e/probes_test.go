//go:build e2e

package e2e

// Probes and lifecycle hooks end to end (runner/probe.go, runner/hooks.go):
// readiness gating --wait ready, liveness restarts, startup gating both,
// postStart and preStop hooks (on teardown and on podrun down), and the
// grace period.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestE2EProbeReadinessHTTPGatesWaitReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "--wait", "ready", "--timeout", "60s", "-f", testdata("probes/readiness-http.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if !podReady(p) {
		t.Fatalf("not Ready: %+v\n%s", p.Status.Conditions, r)
	}
	if r.elapsed < 2*time.Second {
		t.Errorf("Ready after %s, before the server listened (2 s)", r.elapsed)
	}
	if !strings.Contains(r.stderr, "Readiness probe failed") {
		t.Errorf("no Unhealthy event before the server listened\n%s", r)
	}
}

func TestE2EProbeReadinessTCP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "--wait", "ready", "--timeout", "60s", "-f", testdata("probes/readiness-tcp.yaml")}, "")
	expectCode(t, r, 0)
	if p := parsePod(t, r.stdout); !podReady(p) {
		t.Fatalf("not Ready: %+v\n%s", p.Status.Conditions, r)
	}
}

func TestE2EProbeLivenessExecRestarts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "--timeout", "60s", "-f", testdata("probes/liveness-exec.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("statuses %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode == 0 {
		t.Errorf("restartCount %d, lastState %+v; want 1 and a non-zero termination\n%s", cs.RestartCount, cs.LastTerminationState, r)
	}
	for _, s := range []string{"Liveness probe failed", "failed liveness probe, will be restarted", "second-run"} {
		if !strings.Contains(r.stderr+r.stdout, s) {
			t.Errorf("output lacks %q\n%s", s, r)
		}
	}
}

func TestE2EProbeStartupGatesLivenessAndReadiness(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "--wait", "ready", "--timeout", "60s", "-f", testdata("probes/startup.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	cs := p.Status.ContainerStatuses[0]
	if !podReady(p) || cs.RestartCount != 0 || cs.Started == nil || !*cs.Started {
		t.Errorf("ready %v restartCount %d started %v\n%s", podReady(p), cs.RestartCount, cs.Started, r)
	}
	if r.elapsed < 3*time.Second {
		t.Errorf("Ready after %s, before the startup probe could pass", r.elapsed)
	}
	if strings.Contains(r.stderr, "Liveness probe failed") {
		t.Errorf("the liveness probe ran before the container started\n%s", r)
	}
}

// A container a failed startup or liveness probe kills under restartPolicy
// Never: the run ends on the kill's outcome, as on kubelet v1.37.2 (the
// container terminated 137, reason Error; the pod Failed), and podrun exits
// with the container's 137. It ended "failed (phase Running)" with the
// container running and exit 1 before.
func TestE2EProbeKillUnderNeverEndsWithTheKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, event string }{
		{"probes/startup-never.yaml", "Startup probe failed"},
		{"probes/liveness-never.yaml", "Liveness probe failed"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.runPodrun([]string{"-o", "json", "--timeout", "60s", "-f", testdata(tc.file)}, "")
			expectCode(t, r, 137)
			p := parsePod(t, r.stdout)
			if p.Status.Phase != v1.PodFailed {
				t.Errorf("phase %s, want Failed\n%s", p.Status.Phase, r)
			}
			cs := containerStatus(t, p, "c")
			if term := cs.State.Terminated; term == nil || term.ExitCode != 137 || term.Reason != "Error" || cs.RestartCount != 0 {
				t.Errorf("container c %+v, restartCount %d; want terminated 137 (Error), not restarted\n%s", cs.State, cs.RestartCount, r)
			}
			for _, s := range []string{tc.event, "Killing: Stopping container c", "failed (phase Failed)"} {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q\n%s", s, r)
				}
			}
		})
	}
}

func TestE2EHookPostStartWritesAFileTheMainProcessReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("probes/poststart.yaml")}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, "from-poststart") {
		t.Errorf("the main process did not see the hook's file\n%s", r)
	}
}

// The container's output shows while its postStart hook runs (5 s), not
// once the hook has ended: podrun follows the log from the container's
// start, as the runtime writes it meanwhile.
func TestE2EHookPostStartOutputShowsDuringTheHook(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", testdata("probes/poststart-slow.yaml")}, "")
	p.waitStderr("Started", 60*time.Second)
	started := time.Now()
	p.waitStdout("marker-at-start\n", 10*time.Second)
	if d := time.Since(started); d > 2*time.Second {
		t.Errorf("the marker showed %s after the container started; the hook takes 5 s", d.Round(time.Millisecond))
	}
	r := p.result(60 * time.Second)
	expectCode(t, r, 0)
	if strings.Count(r.stdout, "marker-at-start") != 1 {
		t.Errorf("the marker is not printed once\n%s", r)
	}
}

// SIGINT while the postStart hook runs: what the container printed before
// it still reaches stdout before podrun exits.
func TestE2EHookPostStartInterruptedKeepsOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", strings.Replace(readTestdata(t, "probes/poststart-slow.yaml"),
		"name: e2e-hook-poststart-slow", "name: e2e-hook-poststart-sigint", 1))
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStderr("Started", 60*time.Second)
	time.Sleep(2 * time.Second) // the hook runs
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if !strings.Contains(r.stdout, "marker-at-start\n") {
		t.Errorf("the marker the container printed before the interrupt is missing\n%s", r)
	}
}

func TestE2EHookPostStartFailureKillsTheContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "--timeout", "60s", "-f", testdata("probes/poststart-fail.yaml")}, "")
	if r.code == 0 {
		t.Fatalf("exit 0\n%s", r)
	}
	if !strings.Contains(r.stderr, "FailedPostStartHook") {
		t.Errorf("no FailedPostStartHook event\n%s", r)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", p.Status.Phase)
	}
}

func TestE2EHookPreStopRunsBeforeSIGTERM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"--wait", "ready", "--timeout", "60s", "-f", testdata("probes/prestop.yaml")}, "")
	expectCode(t, r, 0)
	i, j := strings.Index(r.stdout, "in-prestop"), strings.Index(r.stdout, "got-term")
	if i < 0 || j < 0 || i > j {
		t.Errorf("want in-prestop before got-term\n%s", r)
	}
}

// TestE2EHookPreStopOnDown: `podrun down` of a detached pod runs the
// preStop hooks (from what the runtime recorded of the containers) before
// SIGTERM, and stops the sidecar after the main container, as a kubelet
// deleting the pod does. The containers write to a host directory, which
// outlives the pod.
func TestE2EHookPreStopOnDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := t.TempDir()
	name := "e2e-hook-down-" + randomSuffix(t)
	m := fromTemplate(t, "probes/prestop-down.yaml", "NAME", name, "OUT", out)
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-d", "--wait", "ready", "--timeout", "60s", "-f", m}, "")
	expectCode(t, r, 0)
	d := e.runPodrun([]string{"down", name}, "")
	expectCode(t, d, 0)
	b, err := os.ReadFile(filepath.Join(out, "log"))
	if err != nil {
		t.Fatalf("the containers wrote nothing: %v\n%s", err, d)
	}
	log := string(b)
	at := func(s string) int {
		i := strings.Index(log, s)
		if i < 0 {
			t.Fatalf("no %s in the log:\n%s\npodrun down:\n%s", s, log, d)
		}
		return i
	}
	if at("prestop-main") > at("term-main") || at("prestop-side") > at("term-side") {
		t.Errorf("a container got SIGTERM before its preStop hook ran:\n%s", log)
	}
	if at("term-main") > at("term-side") {
		t.Errorf("the sidecar was stopped before the main container:\n%s", log)
	}
	if !strings.Contains(d.stderr, "Killing: Stopping container main") {
		t.Errorf("podrun down printed no Killing event for main:\n%s", d)
	}
}

func TestE2EHookGracePeriodCutAtItsEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"--wait", "ready", "-f", testdata("probes/grace-cut.yaml")}, "")
	p.waitStderr("Killing", 60*time.Second)
	start := time.Now()
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// About the grace period: not the 30 s default, nor cut short (a
	// loaded machine adds a few seconds of sandbox teardown).
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("teardown took %s after Killing, want about the 2 s grace period", d)
	}
}
