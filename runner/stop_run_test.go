package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// detachStubborn leaves a pod running detached whose container ignores
// SIGTERM, with a grace period of 10 s of the fake's time, and returns
// its data dir and log dir.
func detachStubborn(t *testing.T, e *env, name string) (dataDir, logDir string) {
	t.Helper()
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		if cfg.GetLabels()["io.kubernetes.pod.name"] != name {
			return fake.CommandBehavior(cfg, second)
		}
		return fake.Behavior{UntilStopped: true, IgnoreSIGTERM: true}
	})
	pod := newPod(name, v1.RestartPolicyAlways, ctr("main", "sleep", "infinity"))
	grace := int64(1000)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	if res := e.run(t, context.Background(), pod); !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	dataDir = filepath.Join(e.opts.RootDir, "pods", string(pod.UID))
	logDir = filepath.Join(e.opts.RootDir, "logs", "default_"+name+"_"+string(pod.UID))
	for _, d := range []string{dataDir, logDir, filepath.Join(dataDir, "podrun-status.json")} {
		if !exists(d) {
			t.Fatalf("%s does not exist after the detached run", d)
		}
	}
	return dataDir, logDir
}

// TestDownForceCutsTheGracePeriod: a closed Force (the second signal
// during `podrun down`) stops the containers at once and still removes
// everything, as it does for a run's teardown.
func TestDownForceCutsTheGracePeriod(t *testing.T) {
	e := newEnv(t)
	detachStubborn(t, e, "stubborn")
	force := make(chan struct{})
	progress := &syncBuffer{}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- runner.DownWith(context.Background(), e.rt, runner.DownOptions{Args: []string{"stubborn"}, Force: force,
			Progressf: func(f string, a ...any) { progress.Write([]byte(strings.TrimSpace(fmt.Sprintf(f, a...)) + "\n")) }})
	}()
	waitFor(t, "down to stop the container", runLimit, func() bool { return strings.Contains(progress.String(), "Stopping container main") })
	time.Sleep(50 * time.Millisecond)
	close(force)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("DownWith: %v", err)
		}
	case <-time.After(runLimit):
		t.Fatal("down did not end after force")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("down took %s: force did not cut the grace period", took)
	}
	if !strings.Contains(progress.String(), "pod/stubborn: Killing: Killing container main now (second signal)") {
		t.Errorf("progress does not say the container was killed at once:\n%s", progress.String())
	}
	e.assertTornDown(t)
}

// TestDownCutShortLeavesThePodWhole: a down whose runtime calls fail (its
// context cancelled, as by the signal that used to cancel it, or the
// runtime refusing to remove the sandbox) keeps the pod's data dir, log
// dir and status record while its sandbox is there: ps shows the pod as
// it is and a second down takes it. Before, the dirs went whatever
// happened to the sandbox (ps: 0/0 Unknown, a running container left).
func TestDownCutShortLeavesThePodWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		down func(t *testing.T, e *env) error
	}{
		{"context cancelled while a container stops", func(t *testing.T, e *env) error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			progress := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- runner.DownWith(ctx, e.rt, runner.DownOptions{Args: []string{"cut"},
					Progressf: func(f string, a ...any) { progress.Write([]byte(fmt.Sprintf(f, a...) + "\n")) }})
			}()
			waitFor(t, "down to stop the container", runLimit, func() bool { return strings.Contains(progress.String(), "Stopping container main") })
			time.Sleep(50 * time.Millisecond)
			cancel()
			return <-done
		}},
		{"sandbox not removed", func(t *testing.T, e *env) error {
			for range 10 { // every try of removeSandboxRetrying
				e.srv.FailNext("RemovePodSandbox", errors.New("sandbox container is still running"))
			}
			force := make(chan struct{})
			close(force) // no grace period to wait out
			return runner.DownWith(context.Background(), e.rt, runner.DownOptions{Args: []string{"cut"}, Force: force})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dataDir, logDir := detachStubborn(t, e, "cut")
			if err := tc.down(t, e); err == nil {
				t.Fatal("down cut short: no error")
			}
			sbs, lerr := e.rt.ListPodSandbox(context.Background(), nil)
			if lerr != nil || len(sbs) != 1 {
				t.Fatalf("%d sandboxes after the cut down (%v), want the pod's", len(sbs), lerr)
			}
			for _, d := range []string{dataDir, logDir, filepath.Join(dataDir, "podrun-status.json"), filepath.Join(dataDir, "podrun-pod.json")} {
				if _, err := os.Stat(d); err != nil {
					t.Errorf("the cut down removed %s while the sandbox stays: %v", d, err)
				}
			}
			// A run now reclaims nothing of it (detached) ...
			e.opts.Detach, e.opts.Wait, e.opts.Owner = false, "", runner.Owner{}
			e.run(t, context.Background(), newPod("other", v1.RestartPolicyNever, sh("main", "exit 0")))
			if !exists(dataDir) {
				t.Errorf("a run reclaimed the data dir of the detached pod down left whole")
			}
			// ... and a second down takes it whole.
			force := make(chan struct{})
			close(force)
			if err := runner.DownWith(context.Background(), e.rt, runner.DownOptions{Args: []string{"cut"}, Force: force}); err != nil {
				t.Fatalf("second down: %v", err)
			}
			e.assertTornDown(t)
		})
	}
}

// TestTeardownCountsASandboxStoppedMeanwhileAsStopped: the run's stop of
// its sandbox failing because another stop of it (`podrun down` at the
// same time) deleted the pod's network interface under it is not a
// teardown failure: the stop is asked again and the run ends as it would
// have. Before, the run exited 125 with containerd's `failed to delete
// "eth0": no such device`.
func TestTeardownCountsASandboxStoppedMeanwhileAsStopped(t *testing.T) {
	e := newEnv(t)
	e.srv.FailNext("StopPodSandbox", status.Error(codes.Unknown,
		`failed to destroy network for sandbox "0123abcd": plugin type="bridge" name="podrun" failed (delete): failed to delete "eth0": no such device`))
	res := e.run(t, context.Background(), newPod("raced", v1.RestartPolicyNever, sh("main", "exit 0")))
	if r := res.Pods[0]; !r.Reached() || r.Err != nil {
		t.Errorf("outcome %s, err %v; want reached without error", r.Outcome, r.Err)
	}
	e.assertTornDown(t)

	// Any other failure of the stop is still the teardown's.
	e.srv.FailNext("StopPodSandbox", status.Error(codes.Unknown, `failed to destroy network for sandbox "0123abcd": plugin type="bridge" failed (delete): netlink: operation not permitted`))
	res = e.run(t, context.Background(), newPod("refused", v1.RestartPolicyNever, sh("main", "exit 0")))
	if r := res.Pods[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "operation not permitted") {
		t.Errorf("outcome %s, err %v; want the stop's error", r.Outcome, r.Err)
	}
}

// A stop of a container that fails is made again, as the kubelet's next
// sync would: containerd 1.6 answers a kill that races the container's own
// exit with "ttrpc: closed", and the next stop finds it exited. A stop
// that keeps failing is still the teardown's error.
func TestTeardownStopsAContainerAgainWhenAStopFails(t *testing.T) {
	e := newEnv(t)
	e.srv.FailNext("StopContainer", status.Error(codes.Unknown,
		`failed to kill container "b10d475e": ttrpc: closed: unknown`))
	res := e.run(t, context.Background(), newPod("raced", v1.RestartPolicyAlways, sh("main", "sleep 1000")))
	if r := res.Pods[0]; !r.Reached() || r.Err != nil {
		t.Errorf("outcome %s, err %v; want reached without error", r.Outcome, r.Err)
	}
	e.assertTornDown(t)

	for range 10 {
		e.srv.FailNext("StopContainer", status.Error(codes.Unknown, `failed to kill container "c": permission denied`))
	}
	res = e.run(t, context.Background(), newPod("refused", v1.RestartPolicyAlways, sh("main", "sleep 1000")))
	if r := res.Pods[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "permission denied") {
		t.Errorf("outcome %s, err %v; want the stop's error", r.Outcome, r.Err)
	}
}
