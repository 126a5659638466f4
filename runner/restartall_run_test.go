package runner_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
)

// A regular container whose exit 42 matches a RestartAllContainers rule
// restarts the pod in place: the running sidecar is killed ("killing"),
// every container removed, and the pod starts over in the same sandbox
// (the init container runs again); the second run's exit 0 ends the pod
// Succeeded. Restart counts go on from the log files, and the removed
// instances' last state is the kubelet's RestartingAllContainers.
func TestRunRestartAllContainersRestartsThePodInPlace(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	created := map[string][]uint32{} // container name → attempts created
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		name, attempt := cfg.GetMetadata().GetName(), cfg.GetMetadata().GetAttempt()
		mu.Lock()
		created[name] = append(created[name], attempt)
		mu.Unlock()
		switch {
		case name == "watcher":
			return fake.Behavior{UntilStopped: true}
		case name == "main" && attempt == 0:
			return fake.Behavior{ExitAfter: 50 * time.Millisecond, ExitCode: 42}
		}
		return fake.Behavior{}
	})
	always, never := v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever
	setup, watcher, main := sh("setup", "true"), sh("watcher", "sleep 3600"), sh("main", "run")
	watcher.RestartPolicy = &always
	main.RestartPolicy = &never
	main.RestartPolicyRules = []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	pod := newPod("inplace", v1.RestartPolicyNever, main)
	pod.Spec.InitContainers = []v1.Container{setup, watcher}
	e.opts.PodLogsDir = t.TempDir()

	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded || res.ExitCode(0) != 0 {
		t.Fatalf("outcome %s, phase %s, exit %d, err %v; want reached, Succeeded, 0", r.Outcome, r.Status.Phase, res.ExitCode(0), r.Err)
	}
	for name, want := range map[string][]uint32{"setup": {0, 1}, "watcher": {0, 1}, "main": {0, 1}} {
		if got := created[name]; !slices.Equal(got, want) {
			t.Errorf("%s created with attempts %v, want %v (once, then again after the in-place restart)", name, got, want)
		}
	}
	count := func(method string) int { return countCalls(e.srv.Calls(), method) }
	if n := count("RunPodSandbox"); n != 1 {
		t.Errorf("%d RunPodSandbox calls, want the pod restarted in its one sandbox", n)
	}
	if n := count("RemoveContainer"); n != 3 {
		t.Errorf("%d RemoveContainer calls, want 3 (each container's one instance)", n)
	}
	statuses := append(slices.Clone(r.Status.InitContainerStatuses), r.Status.ContainerStatuses...)
	for _, s := range statuses {
		if s.RestartCount != 1 {
			t.Errorf("%s: restartCount %d, want 1", s.Name, s.RestartCount)
		}
		if lt := s.LastTerminationState.Terminated; lt == nil || lt.Reason != "RestartingAllContainers" || lt.ExitCode != 137 {
			t.Errorf("%s: lastState %+v, want terminated RestartingAllContainers 137", s.Name, s.LastTerminationState)
		}
	}
	var cond *v1.PodCondition
	for i := range r.Status.Conditions {
		if r.Status.Conditions[i].Type == "AllContainersRestarting" {
			cond = &r.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != v1.ConditionFalse || cond.Reason != "PodCompleted" {
		t.Errorf("AllContainersRestarting = %+v, want False PodCompleted", cond)
	}
	progress := e.progress.String()
	if !strings.Contains(progress, "pod/inplace: Killing: killing") {
		t.Errorf("no Killing event with the kubelet's message \"killing\" for the sidecar:\n%s", progress)
	}
	// Both instances' logs are kept, as the kubelet keeps them: 0.log and 1.log.
	for _, name := range []string{"setup", "main"} {
		logs, _ := filepath.Glob(filepath.Join(e.opts.PodLogsDir, "*", name, "*.log"))
		if len(logs) != 2 {
			t.Errorf("%s logs %v, want 0.log and 1.log", name, logs)
		}
	}
	e.assertTornDown(t)
}
