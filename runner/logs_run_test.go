package runner_test

// Run-level tests of a run's live output against the fake CRI: a
// container's output shows while its postStart hook runs, and is not lost
// when the run is interrupted during the hook.

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// hookTakes is how long the postStart hook of these tests runs.
const hookTakes = 3 * time.Second

// markerWithSlowPostStart is a pod whose container prints a marker as it
// starts and whose postStart hook takes hookTakes.
func markerWithSlowPostStart(e *env) *v1.Pod {
	e.srv.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{
			Output:       []fake.LogLine{{Text: "marker"}},
			UntilStopped: true, TermExitCode: fake.Code(0),
			Exec: func([]string) fake.ExecResult { return fake.ExecResult{Took: hookTakes} },
		}
	})
	c := ctr("main", "server")
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"slow-hook"}}}}
	return newPod("hooked", v1.RestartPolicyAlways, c)
}

// The container's output shows as soon as it is written, while the
// postStart hook still runs: the run follows the log from the start, not
// from the sync after the hook.
func TestRunShowsOutputWhilePostStartRuns(t *testing.T) {
	e := newEnv(t)
	pod := markerWithSlowPostStart(e)
	e.opts.Wait = runner.WaitNone
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		runner.Run(ctx, e.rt, e.facts, []*v1.Pod{pod}, e.opts)
	}()
	waitFor(t, "the marker on stdout", 2*hookTakes, func() bool { return strings.Contains(e.stdout.String(), "marker\n") })
	if d := time.Since(start); d > hookTakes-time.Second {
		t.Errorf("the marker showed %s after the start, with the hook's %s: after the hook", d, hookTakes)
	}
	cancel()
	<-done
	e.assertTornDown(t)
}

// A run interrupted while the postStart hook runs still prints what the
// container wrote before it ends.
func TestRunInterruptedDuringPostStartKeepsOutput(t *testing.T) {
	e := newEnv(t)
	pod := markerWithSlowPostStart(e)
	e.opts.Wait = runner.WaitNone
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once the hook runs.
		waitFor(t, "the hook", runLimit, func() bool {
			for _, c := range e.srv.Calls() {
				if c == "ExecSync" {
					return true
				}
			}
			return false
		})
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	res := e.run(t, ctx, pod)
	if d := time.Since(start); d > hookTakes {
		t.Errorf("the run took %s: the interrupt did not cut the %s hook", d, hookTakes)
	}
	if o := res.Pods[0].Outcome; o != runner.OutcomeInterrupted {
		t.Errorf("outcome %s, want interrupted", o)
	}
	if got := e.stdout.String(); got != "marker\n" {
		t.Errorf("stdout = %q, want the marker the container printed before the interrupt", got)
	}
	e.assertTornDown(t)
}
