package runner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// deadlinePod is a pod under restartPolicy Never whose activeDeadlineSeconds
// is 1 (real time: the deadline is the wall clock's, not the fake's).
func deadlinePod(name string, ctrs ...v1.Container) *v1.Pod {
	pod := newPod(name, v1.RestartPolicyNever, ctrs...)
	one := int64(1)
	pod.Spec.ActiveDeadlineSeconds = &one
	return pod
}

// A pod past its activeDeadlineSeconds ends as on the kubelet: Failed,
// reason DeadlineExceeded and the kubelet's message, with its event; its
// running container killed with the pod's grace period after its preStop
// hook, the status read after the kill (137: it waits SIGTERM out);
// podrun's exit status 123; nothing left.
func TestRunDeadlineFailsThePodAndKillsItsContainers(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var execs []string
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		b := fake.CommandBehavior(cfg, second)
		b.Exec = func(cmd []string) fake.ExecResult {
			mu.Lock()
			defer mu.Unlock()
			execs = append(execs, strings.Join(cmd, " "))
			return fake.ExecResult{}
		}
		return b
	})
	c := sh("main", "trap '' TERM; sleep infinity")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"drain"}}}}
	start := time.Now()
	res := e.run(t, context.Background(), deadlinePod("deadline", c))
	r := res.Pods[0]
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("the run ended after %s, before the deadline of 1 s", elapsed)
	}
	if r.Outcome != runner.OutcomeFailed || r.Err != nil {
		t.Fatalf("outcome %s, err %v; want failed", r.Outcome, r.Err)
	}
	if r.Status.Phase != v1.PodFailed || r.Status.Reason != "DeadlineExceeded" ||
		r.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("phase %s, reason %q, message %q; want Failed, DeadlineExceeded and the kubelet's message", r.Status.Phase, r.Status.Reason, r.Status.Message)
	}
	if term := r.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("state %+v, want terminated with 137 (killed after its grace period)", r.Status.ContainerStatuses[0].State)
	}
	if got := res.ExitCode(0); got != runner.ExitDeadlineExceeded {
		t.Errorf("exit status %d, want %d", got, runner.ExitDeadlineExceeded)
	}
	mu.Lock()
	if !slices.Contains(execs, "drain") {
		t.Errorf("the preStop hook did not run (execs %q)", execs)
	}
	mu.Unlock()
	progress := e.progress.String()
	i, j := strings.Index(progress, "DeadlineExceeded: Pod was active on the node longer than the specified deadline"), strings.Index(progress, "Killing: Stopping container main")
	if i < 0 || j < 0 || j < i {
		t.Errorf("want the DeadlineExceeded event, then Killing")
	}
	if n := strings.Count(progress, "DeadlineExceeded"); n != 1 {
		t.Errorf("%d DeadlineExceeded events, want 1", n)
	}
	e.assertTornDown(t)
}

// The deadline counts from the pod's start, init containers included: an
// init container still running when it passes is killed, and the regular
// container never starts.
func TestRunDeadlineKillsARunningInitContainer(t *testing.T) {
	e := newEnv(t)
	pod := deadlinePod("deadline-init", sh("main", "exit 0"))
	pod.Spec.InitContainers = []v1.Container{sh("setup", "trap '' TERM; sleep infinity")}
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if r.Status.Phase != v1.PodFailed || r.Status.Reason != "DeadlineExceeded" {
		t.Fatalf("phase %s, reason %q; want Failed, DeadlineExceeded", r.Status.Phase, r.Status.Reason)
	}
	if term := r.Status.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("init container %+v, want terminated with 137", r.Status.InitContainerStatuses[0].State)
	}
	if s := r.Status.ContainerStatuses[0]; s.State.Waiting == nil || s.ContainerID != "" {
		t.Errorf("main %+v, want never started", s.State)
	}
	if got := res.ExitCode(0); got != runner.ExitDeadlineExceeded {
		t.Errorf("exit status %d, want %d", got, runner.ExitDeadlineExceeded)
	}
	if strings.Contains(e.progress.String(), "Started container main") {
		t.Error("main started after the deadline")
	}
	e.assertTornDown(t)
}

// A pod that completes before its deadline is not touched by it.
func TestRunDeadlineNotReachedLeavesThePodAlone(t *testing.T) {
	e := newEnv(t)
	res := e.run(t, context.Background(), deadlinePod("deadline-done", sh("main", "sleep 2; exit 0")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeReached || r.Status.Phase != v1.PodSucceeded || r.Status.Reason != "" {
		t.Errorf("outcome %s, phase %s, reason %q; want reached, Succeeded, no reason", r.Outcome, r.Status.Phase, r.Status.Reason)
	}
	if got := res.ExitCode(0); got != 0 {
		t.Errorf("exit status %d, want 0", got)
	}
	e.assertTornDown(t)
}
