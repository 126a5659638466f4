//go:build e2e

package e2e

// The sync loop end to end: init containers in order and failing, a
// sidecar Job, restarts with the kubelet's back-off, CrashLoopBackOff in
// -o json, and image pulls that fail for good.

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// uptimes reads the "<tag> <seconds>" lines a container printed from
// /proc/uptime (the host's clock, the same in every container) in order.
func uptimes(t *testing.T, out, tag string) []float64 {
	t.Helper()
	var ts []float64
	for _, l := range lines(out) {
		rest, ok := strings.CutPrefix(l, tag+" ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ts = append(ts, f)
	}
	return ts
}

func TestE2ESyncInitContainersRunInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/init-order.yaml")}, "")
	expectCode(t, r, 0)
	// With -o json the containers' output goes to stderr.
	if !strings.Contains(r.stderr, "[pod/e2e-sync-init-order/main] one\n[pod/e2e-sync-init-order/main] two\n[pod/e2e-sync-init-order/main] three\n") {
		t.Errorf("the init containers did not run one after the other in spec order\n%s", r)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %s, want Succeeded", p.Status.Phase)
	}
	for i, s := range p.Status.InitContainerStatuses {
		term := s.State.Terminated
		if term == nil || term.ExitCode != 0 || term.Reason != "Completed" || s.RestartCount != 0 {
			t.Errorf("init container %s: %+v restartCount %d, want terminated Completed 0, no restart", s.Name, s.State, s.RestartCount)
			continue
		}
		if i > 0 {
			prev := p.Status.InitContainerStatuses[i-1].State.Terminated
			if prev != nil && term.StartedAt.Before(&prev.FinishedAt) {
				t.Errorf("%s started at %s, before %s finished at %s", s.Name, term.StartedAt, p.Status.InitContainerStatuses[i-1].Name, prev.FinishedAt)
			}
		}
	}
}

func TestE2ESyncInitFailureUnderNeverFailsThePod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/init-never.yaml")}, "")
	expectCode(t, r, 6)
	if strings.Contains(r.stderr, "main-must-not-run") {
		t.Errorf("the regular container ran\n%s", r)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", p.Status.Phase)
	}
	if s := p.Status.InitContainerStatuses[0]; s.State.Terminated == nil || s.State.Terminated.ExitCode != 6 || s.RestartCount != 0 {
		t.Errorf("init status %+v restartCount %d, want terminated 6 and no restart", s.State, s.RestartCount)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("main state %+v, want waiting PodInitializing", p.Status.ContainerStatuses[0].State)
	}
}

// Under OnFailure a failing init container is retried; the kubelet's first
// restart is not delayed (no back-off entry yet), so a container that fails
// once and then succeeds finishes quickly with restartCount 1.
func TestE2ESyncInitFailureUnderOnFailureIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/init-retry.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	s := p.Status.InitContainerStatuses[0]
	if s.RestartCount != 1 || s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
		t.Errorf("init status %+v restartCount %d, want terminated 0 after one restart", s.State, s.RestartCount)
	}
	if lt := s.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 4 {
		t.Errorf("init lastState %+v, want terminated 4", s.LastTerminationState)
	}
	// The gap between the two tries, by the node's clock as the container
	// read it (a loaded machine's start-up time does not count).
	var tries []string
	for _, l := range lines(r.stderr) {
		if rest, ok := strings.CutPrefix(l, "[pod/e2e-sync-init-retry/flaky] "); ok {
			tries = append(tries, rest)
		}
	}
	if ts := uptimes(t, strings.Join(tries, "\n"), "try"); len(ts) != 2 {
		t.Errorf("%d tries, want 2\n%s", len(ts), r)
	} else if d := ts[1] - ts[0]; d > 5 {
		t.Errorf("the second try came %.2fs after the first: the first restart must not wait for the back-off", d)
	}
}

// Under Always an init container that keeps failing is restarted with the
// back-off: once at once, then 10 s after its exit; a --timeout inside the
// following 20 s back-off shows CrashLoopBackOff on the init container.
// The second restart comes about 11 s after the start on a quiet machine,
// and the 20 s back-off after it lasts until about 32 s: a --timeout of
// 25 s falls inside it even when a loaded machine takes seconds to start
// each try (15 s did not, on a cold CI machine).
func TestE2ESyncInitFailureUnderAlwaysBacksOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"--timeout", "25s", "-o", "json", "-f", testdata("sync/init-always.yaml")}, "")
	expectCode(t, r, 124)
	p := parsePod(t, r.stdout)
	s := p.Status.InitContainerStatuses[0]
	if s.RestartCount != 2 {
		t.Errorf("init restartCount %d after 25 s, want 2 (at once, then after 10 s)\n%s", s.RestartCount, r)
	}
	w := s.State.Waiting
	if w == nil || w.Reason != "CrashLoopBackOff" ||
		!strings.HasPrefix(w.Message, "back-off 20s restarting failed container=bad pod=e2e-sync-init-always_default(") {
		t.Errorf("init state %+v, want waiting CrashLoopBackOff with the kubelet's message", s.State)
	}
	if lt := s.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 2 {
		t.Errorf("init lastState %+v, want terminated 2", s.LastTerminationState)
	}
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	if !strings.Contains(r.stderr, "BackOff: Back-off restarting failed container bad in pod e2e-sync-init-always_default(") {
		t.Errorf("no BackOff event\n%s", r)
	}
}

// A Job-like pod (restartPolicy Never) with a sidecar completes when its
// regular container does; the sidecar is then stopped with SIGTERM, and
// what it printed on the way out is kept.
func TestE2ESyncSidecarJobCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/sidecar-job.yaml")}, "")
	expectCode(t, r, 0)
	if r.elapsed > 15*time.Second {
		t.Errorf("the run took %s: the sidecars must not keep the pod alive until a grace period ends", r.elapsed)
	}
	out := r.stderr
	for _, want := range []string{
		"[pod/e2e-sync-sidecar-job/main] main done\n",
		// side2 (later in spec) is stopped first, then side1, which sees it.
		"[pod/e2e-sync-sidecar-job/side1] side1 stopping\n[pod/e2e-sync-sidecar-job/side1] side2\n[pod/e2e-sync-sidecar-job/side1] side1 last line\n",
		"[pod/e2e-sync-sidecar-job/side2] side2 last line\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	if i, j := strings.Index(out, "main done"), strings.Index(out, "side2 last line"); i < 0 || j < i {
		t.Errorf("the sidecars were stopped before the regular container ended\n%s", r)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %s, want Succeeded", p.Status.Phase)
	}
	for _, s := range p.Status.InitContainerStatuses {
		want := map[string]int32{"side1": 42, "side2": 43}[s.Name]
		if term := s.State.Terminated; term == nil || term.ExitCode != want || s.RestartCount != 0 {
			t.Errorf("sidecar %s: %+v restartCount %d, want terminated by its SIGTERM trap with %d", s.Name, s.State, s.RestartCount, want)
		}
	}
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 {
		t.Errorf("main %+v, want terminated 0", p.Status.ContainerStatuses[0].State)
	}
}

// OnFailure restarts a failed container. As the kubelet's doBackOff does,
// the first restart is at once (restartCount 1, lastState the failed run)
// and the second waits 10 s from the exit.
func TestE2ESyncOnFailureRestartBackOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/onfailure.yaml")}, "")
	expectCode(t, r, 0)
	ts := uptimes(t, r.stderr, "run")
	if len(ts) != 3 {
		t.Fatalf("%d runs, want 3\n%s", len(ts), r)
	}
	if d := ts[1] - ts[0]; d > 5 {
		t.Errorf("the first restart came %.2fs after the first run: want it at once", d)
	}
	// At least the 10 s back-off, well short of the next one (20 s).
	if d := ts[2] - ts[1]; d < 10 || d > 18 {
		t.Errorf("the second restart came %.2fs after the second run: want the 10 s back-off", d)
	}
	p := parsePod(t, r.stdout)
	s := p.Status.ContainerStatuses[0]
	if s.RestartCount != 2 || s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
		t.Errorf("status %+v restartCount %d, want terminated 0 after 2 restarts", s.State, s.RestartCount)
	}
	if lt := s.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 3 || lt.Reason != "Error" {
		t.Errorf("lastState %+v, want terminated 3 Error", s.LastTerminationState)
	}
	if !strings.Contains(r.stderr, "BackOff: Back-off restarting failed container c in pod e2e-sync-onfailure_default(") {
		t.Errorf("no BackOff event\n%s", r)
	}
}

// A --timeout during the back-off shows the container in CrashLoopBackOff,
// with restartCount 1 and the failed run as lastState.
func TestE2ESyncCrashLoopBackOffInJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// 9 s: room for both runs on a loaded machine, and still inside the
	// 10 s back-off that follows the second.
	r := e.runPodrun([]string{"--timeout", "9s", "-o", "json", "-f", testdata("sync/crashloop.yaml")}, "")
	expectCode(t, r, 124)
	p := parsePod(t, r.stdout)
	s := p.Status.ContainerStatuses[0]
	w := s.State.Waiting
	if w == nil || w.Reason != "CrashLoopBackOff" ||
		w.Message != "back-off 10s restarting failed container=c pod=e2e-sync-crashloop_default("+string(p.UID)+")" {
		t.Errorf("state %+v, want waiting CrashLoopBackOff with the kubelet's message", s.State)
	}
	if s.RestartCount != 1 {
		t.Errorf("restartCount %d, want 1", s.RestartCount)
	}
	if lt := s.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" {
		t.Errorf("lastState %+v, want terminated 1 Error", s.LastTerminationState)
	}
	if s.Ready || s.Started == nil || *s.Started {
		t.Errorf("ready %v started %v, want neither", s.Ready, s.Started)
	}
	if p.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running (a waiting container with a last termination)", p.Status.Phase)
	}
}

// A pull the registry refuses for good ends the run at once with exit 125
// and the registry's reason, instead of retrying until --timeout.
func TestE2ESyncPermanentPullFailureEndsTheRun(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, image, why string }{
		{"missing tag on the mirror", os.Getenv("PODRUN_TESTBED_MIRROR") + "/library/busybox:e2e-no-such-tag", "not found"},
		{"private registry without credentials", os.Getenv("PODRUN_TESTBED_PRIVATE_IMAGE"), "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := fromTemplate(t, "sync/pull.yaml", "IMAGE", tc.image)
			r := e.runPodrun([]string{"--timeout", "60s", "-o", "json", "-f", m}, "")
			expectCode(t, r, 125)
			if r.elapsed > 10*time.Second {
				t.Errorf("the run took %s: a pull that fails for good must not be retried", r.elapsed)
			}
			if !strings.Contains(r.stderr, "ErrImagePull") || !strings.Contains(r.stderr, "("+tc.why+")") {
				t.Errorf("stderr lacks ErrImagePull and %q\n%s", tc.why, r)
			}
			if strings.Contains(r.stderr, "ImagePullBackOff") {
				t.Errorf("a permanent failure went into back-off\n%s", r)
			}
			p := parsePod(t, r.stdout)
			if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
				t.Errorf("state %+v, want waiting ErrImagePull", p.Status.ContainerStatuses[0].State)
			}
		})
	}
}

// A container's own restart policy and rules (ContainerRestartRules) under
// a pod's restartPolicy Never: the init container's own OnFailure restarts
// it after its failed first run, and the job's Restart rule on exit 42
// restarts it although its own policy is Never. The pod Succeeded.
func TestE2ESyncContainerRestartRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/restart-rules.yaml")}, "")
	expectCode(t, r, 0)
	for _, want := range []string{"[pod/e2e-sync-restart-rules/job] job retry\n", "[pod/e2e-sync-restart-rules/job] job done\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %s, want Succeeded", p.Status.Phase)
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		last := map[string]int32{"setup": 1, "job": 42}[s.Name]
		if term := s.State.Terminated; term == nil || term.ExitCode != 0 || s.RestartCount != 1 {
			t.Errorf("%s: %+v restartCount %d, want terminated 0 after 1 restart", s.Name, s.State, s.RestartCount)
		}
		if lt := s.LastTerminationState.Terminated; lt == nil || lt.ExitCode != last {
			t.Errorf("%s: lastState %+v, want terminated %d", s.Name, s.LastTerminationState, last)
		}
	}
}

// A restart rule with the RestartAllContainers action restarts the pod in
// place, as a kubelet does: the job's exit 42 kills the running sidecar
// (the kubelet's Killing event, "killing"), removes every container and
// starts the pod over in the same sandbox (setup runs again and sees the
// emptyDir of the first run); the job's second run succeeds.
func TestE2ESyncRestartAllContainers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/restart-all.yaml")}, "")
	expectCode(t, r, 0)
	pre := "[pod/e2e-sync-restart-all/"
	order := []string{
		pre + "setup] setup run 1\n", pre + "job] job restarts the pod\n",
		"pod/e2e-sync-restart-all: Killing: killing\n",
		pre + "setup] setup run 2\n", pre + "job] job done\n",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(r.stderr[at:], want)
		if i < 0 {
			t.Fatalf("output lacks %q after offset %d (want in order %q)\n%s", want, at, order, r)
		}
		at += i + len(want)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %s, want Succeeded", p.Status.Phase)
	}
	if p.Status.PodIP == "" {
		t.Error("no pod IP")
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if term := s.State.Terminated; term == nil || term.ExitCode != 0 || s.RestartCount != 1 {
			t.Errorf("%s: %+v restartCount %d, want terminated 0 after 1 restart", s.Name, s.State, s.RestartCount)
		}
		if lt := s.LastTerminationState.Terminated; lt == nil || lt.Reason != "RestartingAllContainers" || lt.ExitCode != 137 {
			t.Errorf("%s: lastState %+v, want terminated RestartingAllContainers 137", s.Name, s.LastTerminationState)
		}
	}
	found := false
	for _, c := range p.Status.Conditions {
		if c.Type == "AllContainersRestarting" {
			found = true
			if c.Status != v1.ConditionFalse || c.Reason != "PodCompleted" {
				t.Errorf("AllContainersRestarting %+v, want False PodCompleted", c)
			}
		}
	}
	if !found {
		t.Error("no AllContainersRestarting condition")
	}
}

// Containers whose own policies (Never, OnFailure) do not restart them in a
// pod whose restartPolicy is Always: the pod ends Failed, as on a kubelet,
// and podrun exits with the failed container's 5.
func TestE2ESyncContainerOwnNeverEndsAnAlwaysPod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sync/container-never.yaml")}, "")
	expectCode(t, r, 5)
	if !strings.Contains(r.stderr, "pod/e2e-sync-container-never: failed (phase Failed)") {
		t.Errorf("no failed outcome\n%s", r)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", p.Status.Phase)
	}
	for _, s := range p.Status.ContainerStatuses {
		want := map[string]int32{"migrate": 5, "check": 0}[s.Name]
		if term := s.State.Terminated; term == nil || term.ExitCode != want || s.RestartCount != 0 {
			t.Errorf("%s: %+v restartCount %d, want terminated %d, never restarted", s.Name, s.State, s.RestartCount, want)
		}
	}
}
