package runner_test

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

// TestSuperviseRestartsUntilHandedOver: under --supervise a pod that is
// Ready does not end the run; a container that exits is started again
// with the kubelet's back-off; closing HandOver ends the wait and leaves
// the pod running, detached, for the kubelet.
func TestSuperviseRestartsUntilHandedOver(t *testing.T) {
	e := newEnv(t)
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		if cfg.GetMetadata().GetAttempt() == 0 {
			return fake.Behavior{ExitAfter: 50 * time.Millisecond, ExitCode: 1}
		}
		return fake.Behavior{UntilStopped: true}
	})
	handOver := make(chan struct{})
	e.opts.Wait = runner.WaitSupervise
	e.opts.HandOver = handOver
	pod := newPod("etcd", v1.RestartPolicyAlways, ctr("etcd", "etcd"))
	done := make(chan *runner.Result, 1)
	go func() { done <- e.run(t, context.Background(), pod) }()

	// The restarted instance runs: its restart count is 1.
	deadline := time.Now().Add(runLimit / 2)
	for {
		ctrs, err := e.rt.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ctrs) == 1 && ctrs[0].GetMetadata().GetAttempt() == 1 {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the run ended while supervising: %+v", res.Pods[0].Outcome)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no restarted instance running; progress:\n%s", e.progress.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(handOver)
	res := <-done
	if o := res.Pods[0].Outcome; o != runner.OutcomeReached || res.Pods[0].Err != nil {
		t.Fatalf("outcome %v, err %v; want reached", o, res.Pods[0].Err)
	}
	if !strings.Contains(e.progress.String(), "HandedOver: leaving the pod running for the kubelet") {
		t.Errorf("no HandedOver event:\n%s", e.progress.String())
	}
	sbs, err := e.rt.ListPodSandbox(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("sandboxes after the hand-over: %v; want the pod's, ready", sbs)
	}
}

// TestSuperviseEndsOnASignal: a signal ends supervision with the usual
// teardown.
func TestSuperviseEndsOnASignal(t *testing.T) {
	e := newEnv(t)
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior { return fake.Behavior{UntilStopped: true} })
	e.opts.Wait = runner.WaitSupervise
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res := e.run(t, ctx, newPod("web", v1.RestartPolicyAlways, ctr("web", "httpd")))
	if o := res.Pods[0].Outcome; o != runner.OutcomeInterrupted {
		t.Errorf("outcome %v, want interrupted", o)
	}
	e.assertTornDown(t)
}
