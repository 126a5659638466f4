package runner_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/podref"
	"github.com/podrun/podrun/runner/report/podlist"
)

// listed lists podrun's pods with l and returns the one named name.
func listed(t *testing.T, l *runner.PodLister, name string) (podref.Listed, bool) {
	t.Helper()
	items, err := l.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, it := range items {
		if it.Pod.Name == name {
			return it, true
		}
	}
	return podref.Listed{}, false
}

// eventually lists until check passes (the run goes on meanwhile).
func eventually(t *testing.T, l *runner.PodLister, name string, check func(podref.Listed) error) podref.Listed {
	t.Helper()
	deadline := time.Now().Add(runLimit)
	for {
		it, ok := listed(t, l, name)
		err := fmt.Errorf("pod %s not listed", name)
		if ok {
			err = check(it)
		}
		if err == nil {
			return it
		}
		if time.Now().After(deadline) {
			t.Fatalf("listing %s: %v", name, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// containerID is a container status's ID without the runtime's scheme.
func containerID(cs v1.ContainerStatus) string {
	_, id, _ := strings.Cut(cs.ContainerID, "://")
	return id
}

func row(it podref.Listed) string {
	s := podlist.Summarize(it.Pod)
	return s.ReadyText() + " " + s.Status + " " + fmt.Sprint(s.Restarts)
}

// A detached pod as ps lists it: the manifest the run ran, the status the
// run's status code gives from the runtime, its owner; then, its podrun
// gone, a container that exits stays exited; down removes it from the list.
func TestPodListerDetached(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dead := deadPID(t)
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	e.opts.Owner = runner.Owner{RunID: "run-web", PID: dead, PIDStart: 1, Detached: true}
	web := newPod("web", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	web.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}},
		PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3, TimeoutSeconds: 1}
	res := e.run(t, ctx, web)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}

	l := runner.NewPodLister(e.rt)
	it, ok := listed(t, l, "web")
	if !ok {
		t.Fatal("the detached pod is not listed")
	}
	p := it.Pod
	if got := row(it); got != "1/1 Running 0" {
		t.Errorf("row %q, want 1/1 Running 0", got)
	}
	if it.Run != "run-web" || it.Owner != "detached" {
		t.Errorf("run %q owner %q, want run-web, detached", it.Run, it.Owner)
	}
	if p.UID != web.UID || p.Spec.Containers[0].ReadinessProbe == nil || p.Spec.Containers[0].Image != "busybox" {
		t.Errorf("the listed pod is not the manifest that ran: %+v", p.Spec)
	}
	if p.Status.PodIP == "" || p.Status.PodIP != res.Pods[0].Status.PodIP || p.Status.StartTime == nil {
		t.Errorf("podIP %q (the run saw %q), startTime %v", p.Status.PodIP, res.Pods[0].Status.PodIP, p.Status.StartTime)
	}
	cs := p.Status.ContainerStatuses[0]
	// The run's facts name the runtime "containerd"; the lister asks the fake.
	if want := res.Pods[0].Status.ContainerStatuses[0]; cs.ContainerID != "fake://"+containerID(want) || !cs.Ready || cs.State.Running == nil {
		t.Errorf("container status %+v; the run's was %+v", cs, want)
	}
	var ready v1.PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			ready = c
		}
	}
	if ready.Status != v1.ConditionTrue || ready.Reason != "ReadinessNotProbed" || ready.LastProbeTime.IsZero() || ready.LastTransitionTime.IsZero() {
		t.Errorf("Ready %+v, want True, not probed since, with the recorded probe and transition times", ready)
	}

	// The container exits: nobody restarts it.
	if err := e.srv.ExitContainer(containerID(cs), 3); err != nil {
		t.Fatal(err)
	}
	it = eventually(t, l, "web", func(it podref.Listed) error {
		if got := row(it); got != "0/1 Error 0" {
			return fmt.Errorf("row %q, want 0/1 Error 0", got)
		}
		return nil
	})
	if term := it.Pod.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 || it.Pod.Status.Phase != v1.PodFailed {
		t.Errorf("terminated %+v, phase %s; want exit code 3, Failed", term, it.Pod.Status.Phase)
	}

	if err := runner.Down(ctx, e.rt, []string{"web"}, false, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if _, ok := listed(t, l, "web"); ok {
		t.Errorf("the pod is listed after down")
	}
	e.assertTornDown(t)
}

// A pod whose podrun runs it, listed from outside the run: a crash loop
// shows CrashLoopBackOff and the restart, as the run's own status does;
// the teardown takes it off the list.
func TestPodListerDuringARun(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.opts.Wait = runner.WaitReady // an Always pod that crashes is never ready: the run goes on
	done := make(chan *runner.Result)
	go func() {
		res, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{newPod("loop", v1.RestartPolicyAlways, ctr("app", "exit", "1"))}, e.opts)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	l := runner.NewPodLister(e.rt)
	it := eventually(t, l, "loop", func(it podref.Listed) error {
		if got := row(it); got != "0/1 CrashLoopBackOff 1" {
			return fmt.Errorf("row %q, want 0/1 CrashLoopBackOff 1", got)
		}
		return nil
	})
	if it.Owner != fmt.Sprintf("pid %d", os.Getpid()) {
		t.Errorf("owner %q, want this process", it.Owner)
	}
	cs := it.Pod.Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || !strings.Contains(cs.State.Waiting.Message, "back-off 10s restarting failed container=app") ||
		cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 || it.Pod.Status.Phase != v1.PodRunning {
		t.Errorf("container status %+v, phase %s", cs, it.Pod.Status.Phase)
	}
	if it.Pod.Status.Message != "" {
		t.Errorf("a pod its podrun runs has message %q", it.Pod.Status.Message)
	}

	cancel()
	res := <-done
	if res.Pods[0].Outcome != runner.OutcomeInterrupted {
		t.Errorf("outcome %s, want interrupted", res.Pods[0].Outcome)
	}
	if _, ok := listed(t, l, "loop"); ok {
		t.Errorf("the pod is listed after its teardown")
	}
	e.assertTornDown(t)
}

// Changes wakes a watch on a container event of a podrun pod, well before
// its interval, where the runtime has events; without them, at its
// interval. It ends with its context.
func TestPodListerChanges(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.srv.EnableEvents(true)
	e.opts.Detach, e.opts.Wait = true, runner.WaitNone
	e.run(t, ctx, newPod("web", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity")))
	t.Cleanup(func() { runner.Down(ctx, e.rt, nil, true, func(string, ...any) {}) })
	l := runner.NewPodLister(e.rt)
	it := eventually(t, l, "web", func(it podref.Listed) error {
		if it.Pod.Status.ContainerStatuses[0].State.Running == nil {
			return fmt.Errorf("not running yet")
		}
		return nil
	})
	wait := func(changes <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-changes:
		case <-time.After(runLimit):
			t.Fatalf("no change signalled %s", what)
		}
	}

	// The detached run's own event stream ends on the server a little after
	// the run returns; counting it as Changes' subscription would make the
	// exit below go to no one.
	deadline := time.Now().Add(runLimit)
	for e.srv.EventSubscribers() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run's event stream is still open")
		}
		time.Sleep(time.Millisecond)
	}
	wctx, stop := context.WithCancel(ctx)
	changes := l.Changes(wctx, time.Hour)
	for e.srv.EventSubscribers() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Changes did not subscribe to the runtime's events")
		}
		time.Sleep(time.Millisecond)
	}
	if err := e.srv.ExitContainer(containerID(it.Pod.Status.ContainerStatuses[0]), 1); err != nil {
		t.Fatal(err)
	}
	wait(changes, "after a container exited")
	stop()
	for range changes {
	}

	e.srv.EnableEvents(false)
	wctx, stop = context.WithCancel(ctx)
	defer stop()
	wait(l.Changes(wctx, 10*time.Millisecond), "at the interval without events")
}
