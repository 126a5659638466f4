package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/podref"
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

// TestSuperviseHandOverReadiness: what `podrun ps` shows of a pod that a
// supervised run handed over while a restarted container's probe had not
// run since it came back. The kubelet that takes the pod probes it at
// once (its workers' first probe comes within a period of its start, the
// initial delay long past), so the readiness podrun leaves behind is what
// a probe says at the hand-over, not a result still pending its next
// period: a container that passes its probe then is listed ready (1/1),
// as the kubelet will have it; one that does not stays not ready. The
// probes are exec probes whose answer the test switches (pass): the
// first instance passes; the restarted one only once pass is set.
func TestSuperviseHandOverReadiness(t *testing.T) {
	// The restarted instance's probe fails until pass is set (never often
	// enough to restart it), and the hand-over comes before its next
	// period: only a probe at the hand-over sees pass.
	gated := func() *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"probe"}}},
			PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1000, TimeoutSeconds: 1}
	}
	for _, tt := range []struct {
		name string
		// probe puts the gated probe on the container.
		probe func(c *v1.Container, p *v1.Probe)
		// passAtHandOver: the restarted instance passes its probe when
		// the hand-over comes (else only after it).
		passAtHandOver bool
		want           string // the row ps shows once the kubelet has it
	}{
		{"startup probe passing at the hand-over", func(c *v1.Container, p *v1.Probe) { c.StartupProbe = p }, true, "1/1 Running 1"},
		{"startup probe failing at the hand-over", func(c *v1.Container, p *v1.Probe) { c.StartupProbe = p }, false, "0/1 Running 1"},
		{"readiness probe passing at the hand-over", func(c *v1.Container, p *v1.Probe) { c.ReadinessProbe = p }, true, "1/1 Running 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			var pass atomic.Bool
			e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
				first := cfg.GetMetadata().GetAttempt() == 0
				return fake.Behavior{UntilStopped: true, Exec: func([]string) fake.ExecResult {
					if first || pass.Load() {
						return fake.ExecResult{}
					}
					return fake.ExecResult{ExitCode: 1}
				}}
			})
			handOver := make(chan struct{})
			e.opts.Wait = runner.WaitSupervise
			e.opts.HandOver = handOver
			// Its owner's process is gone once it has handed over, as a
			// supervised run's is: ps reads the pod as nobody's but the
			// kubelet's.
			e.opts.Owner = runner.Owner{RunID: "run-etcd", PID: deadPID(t), PIDStart: 1}
			c := ctr("etcd", "etcd")
			tt.probe(&c, gated())
			pod := newPod("etcd", v1.RestartPolicyAlways, c)
			done := make(chan *runner.Result, 1)
			go func() { done <- e.run(t, ctx, pod) }()
			t.Cleanup(func() {
				if err := runner.Down(ctx, e.rt, []string{"etcd"}, false, func(string, ...any) {}); err != nil {
					t.Errorf("down: %v", err)
				}
				e.assertTornDown(t)
			})

			l := runner.NewPodLister(e.rt)
			it := eventually(t, l, "etcd", func(it podref.Listed) error {
				if got := row(it); got != "1/1 Running 0" {
					return fmt.Errorf("row %q, want 1/1 Running 0", got)
				}
				return nil
			})
			// The process is killed; the run restarts it, and the new
			// instance fails its probe.
			if err := e.srv.ExitContainer(containerID(it.Pod.Status.ContainerStatuses[0]), 137); err != nil {
				t.Fatal(err)
			}
			eventually(t, l, "etcd", func(it podref.Listed) error {
				if got := row(it); got != "0/1 Running 1" {
					return fmt.Errorf("row %q, want 0/1 Running 1", got)
				}
				return nil
			})
			if tt.passAtHandOver {
				pass.Store(true)
			}
			close(handOver)
			var res *runner.Result
			select {
			case res = <-done:
			case <-time.After(runLimit):
				t.Fatal("the run did not end at the hand-over")
			}
			if o := res.Pods[0].Outcome; o != runner.OutcomeReached || res.Pods[0].Err != nil {
				t.Fatalf("outcome %v, err %v; want reached", o, res.Pods[0].Err)
			}
			pass.Store(true) // the kubelet's probe would pass from now on

			// The kubelet answers healthz and leaves the pod running: adopted.
			healthz := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
			defer healthz.Close()
			results, err := runner.Handover(ctx, e.rt, runner.HandoverOptions{Args: []string{string(pod.UID)},
				RootDir: e.opts.RootDir, Healthz: healthz.URL, Settle: time.Millisecond})
			if err != nil || len(results) != 1 || results[0].Outcome != runner.HandoverAdopted {
				t.Fatalf("handover: %+v, %v; want adopted", results, err)
			}
			it, ok := listed(t, l, "etcd")
			if !ok {
				t.Fatal("the handed-over pod is not listed")
			}
			if got := row(it); got != tt.want || it.Owner != "kubelet" {
				t.Errorf("ps after the hand-over: %q, owner %q; want %q, kubelet", got, it.Owner, tt.want)
			}
		})
	}
}
