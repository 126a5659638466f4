package runner_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// TestDownRunsPreStopInKubeletOrder: `podrun down` of a detached pod runs
// each container's preStop hook (restored from the container's annotations),
// consuming the grace period, then stops the regular containers and, after
// them, the sidecars in reverse order.
func TestDownRunsPreStopInKubeletOrder(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var log []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, s)
	}
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		name := cfg.GetMetadata().GetName()
		return fake.Behavior{
			UntilStopped: true,
			Exec: func(cmd []string) fake.ExecResult {
				if cmd[0] == "prestop" {
					record("prestop " + name)
					if name == "main" {
						return fake.ExecResult{Took: 1100 * time.Millisecond}
					}
				}
				return fake.ExecResult{}
			},
			OnStop: func(timeout int64) { record("stop " + name + " " + strconv.FormatInt(timeout, 10)) },
		}
	})
	hook := func(name string) *v1.Lifecycle {
		return &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"prestop", name}}}}
	}
	always := v1.ContainerRestartPolicyAlways
	side := func(name string) v1.Container {
		c := ctr(name, "sleep", "infinity")
		c.RestartPolicy = &always
		c.Lifecycle = hook(name)
		return c
	}
	main := ctr("main", "sleep", "infinity")
	main.Lifecycle = hook("main")
	pod := newPod("hooked", v1.RestartPolicyAlways, main, ctr("plain", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{side("side0"), side("side1")}
	grace := int64(10)
	pod.Spec.TerminationGracePeriodSeconds = &grace

	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	res := e.run(t, context.Background(), pod)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	var progress strings.Builder
	var pmu sync.Mutex
	progressf := func(format string, a ...any) {
		pmu.Lock()
		defer pmu.Unlock()
		progress.WriteString(strings.TrimSpace(fmt.Sprintf(format, a...)) + "\n")
	}
	if err := runner.Down(context.Background(), e.rt, []string{"hooked"}, false, progressf); err != nil {
		t.Fatalf("Down: %v", err)
	}
	e.assertTornDown(t)

	mu.Lock()
	got := slices.Clone(log)
	mu.Unlock()
	idx := func(s string) int {
		i := slices.Index(got, s)
		if i < 0 {
			t.Fatalf("%q did not happen: %v", s, got)
		}
		return i
	}
	for _, n := range []string{"main", "side0", "side1"} {
		idx("prestop " + n)
	}
	// main's hook took a second of its 10 s; plain had no hook; the
	// sidecars' hooks were quick, but their wait for main's turn took the
	// same second.
	stopMain, stopPlain := idx("stop main 9"), idx("stop plain 10")
	stopSide1, stopSide0 := idx("stop side1 9"), idx("stop side0 9")
	if stopSide1 < stopMain || stopSide1 < stopPlain || stopSide0 < stopSide1 {
		t.Errorf("stop order %v: want main and plain, then side1, then side0", got)
	}
	for _, w := range []string{"pod/hooked: Killing: Stopping container main", "pod/hooked: Killing: Stopping container side0"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}
}

// TestDownPreStopFailureGoesOn: a preStop hook that fails is reported and
// the container is still stopped with the whole grace period.
func TestDownPreStopFailureGoesOn(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var stops []int64
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{
			UntilStopped: true,
			Exec:         func([]string) fake.ExecResult { return fake.ExecResult{ExitCode: 1} },
			OnStop: func(timeout int64) {
				mu.Lock()
				defer mu.Unlock()
				stops = append(stops, timeout)
			},
		}
	})
	c := ctr("main", "sleep", "infinity")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"false"}}}}
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	e.run(t, context.Background(), newPod("failing-hook", v1.RestartPolicyAlways, c))
	var progress strings.Builder
	if err := runner.Down(context.Background(), e.rt, nil, true, func(f string, a ...any) { progress.WriteString(fmt.Sprintf(f, a...) + "\n") }); err != nil {
		t.Fatalf("Down: %v", err)
	}
	e.assertTornDown(t)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(stops, []int64{2}) {
		t.Errorf("StopContainer timeouts %v, want [2] (the pod's grace)", stops)
	}
	if !strings.Contains(progress.String(), "pod/failing-hook: FailedPreStopHook: PreStopHook failed") {
		t.Errorf("progress lacks FailedPreStopHook:\n%s", progress.String())
	}
}
