package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// TestReclaimADetachRunThatDiedBeforeItsDetach: a `podrun -d` whose owner
// is gone while it still waits for its pod (kill -9 before the pod was
// Ready) has not handed the pod over: ps shows its owner gone, not
// detached, and the next run reclaims the pod. Before, the pod was
// labelled detached from its sandbox on, and stayed for good.
func TestReclaimADetachRunThatDiedBeforeItsDetach(t *testing.T) {
	e := newEnv(t)
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		if cfg.GetMetadata().GetName() != "app" {
			return fake.Behavior{}
		}
		return fake.Behavior{UntilStopped: true, Exec: func([]string) fake.ExecResult { return fake.ExecResult{ExitCode: 1} }}
	})
	waiting := newPod("waiting", v1.RestartPolicyAlways, ctr("app", "sleep", "infinity"))
	waiting.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"false"}}},
		PeriodSeconds: 1, SuccessThreshold: 1, FailureThreshold: 1, TimeoutSeconds: 1}

	// The -d run, as if killed: its owner is a PID that no process has.
	opts := e.opts
	opts.Detach, opts.Wait = true, runner.WaitReady
	opts.Owner = runner.Owner{RunID: "killed", PID: deadPID(t), PIDStart: 1, Detached: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *runner.Result, 1)
	go func() {
		res, _ := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{waiting}, opts)
		done <- res
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(runLimit):
			t.Error("the -d run did not end")
		}
		e.assertTornDown(t)
	}()
	l := runner.NewPodLister(e.rt)
	waitFor(t, "the -d run's pod to run", runLimit, func() bool {
		it, ok := listed(t, l, "waiting")
		return ok && it.Pod.Status.Phase == v1.PodRunning
	})
	if it, _ := listed(t, l, "waiting"); !strings.HasSuffix(it.Owner, "(gone)") {
		t.Errorf("OWNER %q of a dead -d run's pod before its detach, want pid N (gone)", it.Owner)
	}

	e.opts.Owner = runner.Owner{}
	res := e.run(t, context.Background(), newPod("next", v1.RestartPolicyNever, sh("main", "exit 0")))
	if !res.Pods[0].Reached() {
		t.Errorf("next: outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if !strings.Contains(e.progress.String(), "reclaiming pod default/waiting left by podrun pid") {
		t.Errorf("the next run did not reclaim the dead -d run's pod:\n%s", e.progress.String())
	}
}

// TestRunLosingTheRaceForThePodDataDir: two runs of one pod at once both
// find it not running; the one whose data dir comes second says the pod
// is already running, as checkNotRunning does, and leaves the winner's
// data dir and log dir alone. Before, it failed with the raw "rename ...
// file exists" and its teardown removed the winner's log dir.
func TestRunLosingTheRaceForThePodDataDir(t *testing.T) {
	e := newEnv(t)
	pod := newPod("twice", v1.RestartPolicyNever, sh("main", "exit 0"))
	// The winner, a live podrun (this process), has made the pod's data
	// dir and its log dir, and not yet its sandbox. (An owner without a
	// start time is alive while its PID is.)
	winner := runner.Owner{RunID: "winner", PID: os.Getpid()}
	dir := filepath.Join(e.opts.RootDir, "pods", string(pod.UID))
	logDir := filepath.Join(e.opts.RootDir, "logs", "default_twice_"+string(pod.UID))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{"RunID": winner.RunID, "PID": winner.PID, "PIDStart": winner.PIDStart, "namespace": "default", "name": "twice", "logDir": logDir})
	if err := os.WriteFile(filepath.Join(dir, "podrun-owner.json"), rec, 0o640); err != nil {
		t.Fatal(err)
	}

	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	want := fmt.Sprintf("pod default/twice (uid twice-uid) is already running (by podrun pid %d); stop it with `podrun down default/twice`", winner.PID)
	if r.Outcome != runner.OutcomeError || res.Err() == nil || res.Err().Error() != want {
		t.Errorf("outcome %s, error %v; want error %q", r.Outcome, res.Err(), want)
	}
	for _, d := range []string{dir, logDir} {
		if !exists(d) {
			t.Errorf("the losing run removed the winner's %s", d)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(e.opts.RootDir, "pods"))
	if len(entries) != 1 {
		t.Errorf("pods dir holds %v, want the winner's data dir alone", names(entries))
	}
	if sbs, _ := e.rt.ListPodSandbox(context.Background(), nil); len(sbs) != 0 {
		t.Errorf("the losing run left %d sandboxes", len(sbs))
	}
}
