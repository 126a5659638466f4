package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// logsOf runs runner.Logs and returns what it wrote.
func logsOf(t *testing.T, ctx context.Context, e *env, pod string, opts runner.LogsOptions) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb syncBuffer
	opts.Stdout, opts.Stderr = &out, &errb
	if opts.TailLines == 0 {
		opts.TailLines = -1
	}
	err = runner.Logs(ctx, e.rt, pod, opts)
	return out.String(), errb.String(), err
}

// TestLogsOfADetachedPod: the logs of a pod a run left (-d), container by
// container, as kubectl picks and prints them.
func TestLogsOfADetachedPod(t *testing.T) {
	e := newEnv(t)
	pod := newPod("logs", v1.RestartPolicyNever,
		sh("app", "echo app 1; echo app err >&2; echo app 2"),
		sh("side", "echo side 1"))
	pod.Spec.InitContainers = []v1.Container{sh("setup", "echo setup 1")}
	e.opts.Detach = true
	if res := e.run(t, context.Background(), pod); !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	t.Cleanup(func() { runner.Down(context.Background(), e.rt, []string{"logs"}, false, func(string, ...any) {}) })
	ctx := context.Background()

	_, _, err := logsOf(t, ctx, e, "logs", runner.LogsOptions{})
	if want := "a container name must be specified for pod logs, choose one of: [setup app side]"; err == nil || err.Error() != want {
		t.Errorf("no -c: err = %v, want %q", err, want)
	}
	stdout, stderr, err := logsOf(t, ctx, e, "default/logs", runner.LogsOptions{Container: "app"})
	if err != nil || stdout != "app 1\napp 2\n" || stderr != "app err\n" {
		t.Errorf("-c app: stdout %q, stderr %q, err %v", stdout, stderr, err)
	}
	stdout, _, err = logsOf(t, ctx, e, "logs-uid", runner.LogsOptions{Container: "app", TailLines: 1})
	if err != nil || stdout != "app 2\n" {
		t.Errorf("--tail 1: stdout %q, err %v", stdout, err)
	}
	stdout, _, err = logsOf(t, ctx, e, "logs", runner.LogsOptions{AllContainers: true, Prefix: true})
	if want := "[pod/logs/setup] setup 1\n[pod/logs/app] app 1\n[pod/logs/app] app 2\n[pod/logs/side] side 1\n"; err != nil || stdout != want {
		t.Errorf("--all-containers --prefix: stdout %q, err %v; want %q", stdout, err, want)
	}
	stdout, _, err = logsOf(t, ctx, e, "logs", runner.LogsOptions{Container: "side", Timestamps: true})
	if err != nil || !strings.HasSuffix(stdout, "Z side 1\n") || !strings.HasPrefix(stdout, "20") {
		t.Errorf("--timestamps: stdout %q, err %v", stdout, err)
	}
	stdout, _, err = logsOf(t, ctx, e, "logs", runner.LogsOptions{Container: "side", Since: time.Now().Add(time.Hour)})
	if err != nil || stdout != "" {
		t.Errorf("--since in the future: stdout %q, err %v", stdout, err)
	}
	_, _, err = logsOf(t, ctx, e, "logs", runner.LogsOptions{Container: "app", Previous: true})
	if want := `previous terminated container "app" in pod "logs" not found`; err == nil || err.Error() != want {
		t.Errorf("--previous: err = %v, want %q", err, want)
	}
	_, _, err = logsOf(t, ctx, e, "nope", runner.LogsOptions{})
	if want := `no podrun pod "nope"`; err == nil || err.Error() != want {
		t.Errorf("an unknown pod: err = %v, want %q", err, want)
	}
	// A container that will not restart: following ends with its log.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stdout, _, err = logsOf(t, fctx, e, "logs", runner.LogsOptions{Container: "app", Follow: true})
	if err != nil || stdout != "app 1\napp 2\n" {
		t.Errorf("-f of an exited container that will not restart: stdout %q, err %v", stdout, err)
	}
}

// TestLogsFollowAcrossRestarts: logs -f goes on with the next instance of
// a container that restarts, from its start, and ends when the pod is
// torn down.
func TestLogsFollowAcrossRestarts(t *testing.T) {
	e := newEnv(t)
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		n := cfg.GetMetadata().GetAttempt()
		line := fake.LogLine{Text: fmt.Sprintf("attempt %d", n)}
		// Never ready (the probe fails), so the run goes on until cancelled.
		notReady := func([]string) fake.ExecResult { return fake.ExecResult{ExitCode: 1} }
		if n == 0 {
			return fake.Behavior{Output: []fake.LogLine{line}, ExitAfter: time.Second, ExitCode: 1, Exec: notReady}
		}
		return fake.Behavior{Output: []fake.LogLine{line}, UntilStopped: true, Exec: notReady}
	})
	c := ctr("app", "server")
	c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"false"}}}, PeriodSeconds: 1}
	pod := newPod("restarts", v1.RestartPolicyAlways, c)

	runCtx, stopRun := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() {
		_, err := runner.Run(runCtx, e.rt, e.facts, []*v1.Pod{pod}, e.opts)
		runDone <- err
	}()
	defer func() {
		stopRun()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
		e.assertTornDown(t)
	}()
	// Follow once the first instance runs.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctrs, _ := e.rt.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
		if len(ctrs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the container did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out, errb syncBuffer
	logsCtx, stopLogs := context.WithCancel(context.Background())
	defer stopLogs()
	logsDone := make(chan error, 1)
	go func() {
		logsDone <- runner.Logs(logsCtx, e.rt, "restarts", runner.LogsOptions{Follow: true, TailLines: -1, Stdout: &out, Stderr: &errb})
	}()
	deadline = time.Now().Add(8 * time.Second)
	for out.String() != "attempt 0\nattempt 1\n" {
		if time.Now().After(deadline) {
			t.Fatalf("logs -f printed %q, want attempt 0 then attempt 1", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The pod torn down (the run cancelled), following ends by itself.
	stopRun()
	select {
	case err := <-logsDone:
		if err != nil {
			t.Errorf("logs -f after the pod went: %v", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("logs -f did not end once the pod was torn down")
	}
	if out.String() != "attempt 0\nattempt 1\n" || errb.String() != "" {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// TestLogsFollowEndsWithTheContext: logs -f of a running container ends
// with its context.
func TestLogsFollowEndsWithTheContext(t *testing.T) {
	e := newEnv(t)
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	e.run(t, context.Background(), newPod("server", v1.RestartPolicyAlways, sh("app", "echo up; sleep infinity")))
	t.Cleanup(func() { runner.Down(context.Background(), e.rt, nil, true, func(string, ...any) {}) })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	stdout, _, err := logsOf(t, ctx, e, "server", runner.LogsOptions{Follow: true})
	if !errors.Is(err, context.DeadlineExceeded) || stdout != "up\n" {
		t.Errorf("stdout %q, err %v; want up and the context's end", stdout, err)
	}
}

// TestFindExecTarget: the container `podrun exec` runs in.
func TestFindExecTarget(t *testing.T) {
	e := newEnv(t)
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	e.run(t, context.Background(), newPod("ex", v1.RestartPolicyAlways, sh("app", "sleep infinity"), sh("side", "sleep infinity")))
	t.Cleanup(func() { runner.Down(context.Background(), e.rt, nil, true, func(string, ...any) {}) })
	ctx := context.Background()
	tg, notice, err := runner.FindExecTarget(ctx, e.rt, "ex", "")
	if err != nil || tg.Container != "app" || tg.Pod != "default/ex" || tg.ContainerID == "" ||
		notice != `Defaulted container "app" out of: app, side` {
		t.Errorf("default: %+v, notice %q, err %v", tg, notice, err)
	}
	if _, _, code, err := e.rt.ExecSync(ctx, tg.ContainerID, []string{"true"}, 0); err != nil || code != 0 {
		t.Errorf("ExecSync in the target: code %d, err %v", code, err)
	}
	tg, notice, err = runner.FindExecTarget(ctx, e.rt, "default/ex", "side")
	if err != nil || tg.Container != "side" || notice != "" {
		t.Errorf("-c side: %+v, notice %q, err %v", tg, notice, err)
	}
	if _, _, err = runner.FindExecTarget(ctx, e.rt, "ex", "nope"); err == nil ||
		err.Error() != "container nope is not valid for pod ex out of: app, side" {
		t.Errorf("-c nope: err %v", err)
	}
}
