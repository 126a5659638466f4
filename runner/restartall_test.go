package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// restartAllPod is basePlanPod with app2's exit 42 restarting the pod.
func restartAllPod() *v1.Pod {
	p := basePlanPod()
	never := v1.ContainerRestartPolicyNever
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	p.Spec.Containers[1].RestartPolicy = &never
	p.Spec.Containers[1].RestartPolicyRules = []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	return p
}

func TestComputePodActionsRestartAll(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*runtimeStatus)
		want   []containerToReset
	}{
		{
			// The kubelet's order: regular containers, init containers, then
			// the sources; every instance, running ones killed first.
			name:   "app2 exited 42 while the rest runs",
			mutate: func(s *runtimeStatus) { setState(s, "app2", stateExited, 42) },
			want: []containerToReset{
				{ID: "app1-0", Name: "app1", Kill: true},
				{ID: "init1-0", Name: "init1"},
				{ID: "sidecar-0", Name: "sidecar", Kill: true},
				{ID: "init2-0", Name: "init2"},
				{ID: "app2-0", Name: "app2"},
			},
		},
		{
			name: "older instances are removed too, newest first",
			mutate: func(s *runtimeStatus) {
				setState(s, "app2", stateExited, 42)
				s.Containers = append(s.Containers, &containerStatus{ID: "sidecar-old", Name: "sidecar", State: stateExited, ExitCode: 1})
			},
			want: []containerToReset{
				{ID: "app1-0", Name: "app1", Kill: true},
				{ID: "init1-0", Name: "init1"},
				{ID: "sidecar-0", Name: "sidecar", Kill: true},
				{ID: "sidecar-old", Name: "sidecar"},
				{ID: "init2-0", Name: "init2"},
				{ID: "app2-0", Name: "app2"},
			},
		},
		{
			name: "an exit the rule does not match is a target",
			mutate: func(s *runtimeStatus) {
				setState(s, "app2", stateExited, 42)
				setState(s, "app1", stateExited, 42) // app1 has no rule
			},
			want: []containerToReset{
				{ID: "app1-0", Name: "app1"},
				{ID: "init1-0", Name: "init1"},
				{ID: "sidecar-0", Name: "sidecar", Kill: true},
				{ID: "init2-0", Name: "init2"},
				{ID: "app2-0", Name: "app2"},
			},
		},
		{
			name:   "nothing left: nothing to reset",
			mutate: func(s *runtimeStatus) { s.Containers = nil },
			want:   nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := baseStatus()
			tc.mutate(st)
			a := computePodActions(planInput{Pod: restartAllPod(), Status: st, RestartAll: true})
			if !reflect.DeepEqual(a.ContainersToReset, tc.want) {
				t.Errorf("ContainersToReset =\n  %+v\nwant\n  %+v", a.ContainersToReset, tc.want)
			}
			if a.KillPod || a.CreateSandbox || len(a.InitContainersToStart)+len(a.ContainersToStart)+len(a.ContainersToKill) != 0 {
				t.Errorf("the reset sync does nothing else: %+v", a)
			}
		})
	}
}

// TestPodStatusRestartAllSequence follows a pod through an in-place restart
// as the sync loop generates its statuses, each from the one before
// (statusInput.Old), as the kubelet generates them from oldPodStatus.
func TestPodStatusRestartAllSequence(t *testing.T) {
	pod := restartAllPod()
	gen := func(st *runtimeStatus, old *v1.PodStatus) v1.PodStatus {
		return podStatusFor(statusInput{Pod: pod, Status: st, RuntimeName: "containerd", Old: old})
	}
	cond := func(s v1.PodStatus) v1.PodCondition { return *findCondition(s, conditionAllContainersRestart) }
	all := func(s v1.PodStatus) []v1.ContainerStatus {
		return append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...)
	}

	// 1. Everything runs.
	st := baseStatus()
	s1 := gen(st, nil)
	if c := cond(s1); c.Status != v1.ConditionFalse || c.Reason != "" {
		t.Errorf("running: AllContainersRestarting = %+v, want False", c)
	}
	// 2. app2 exits 42: the condition turns True; the pod still runs.
	setState(st, "app2", stateExited, 42)
	s2 := gen(st, &s1)
	if c := cond(s2); c.Status != v1.ConditionTrue || c.Reason != reasonRestartAllStarted || c.Message != messageRestartAllStarted {
		t.Errorf("after the exit: AllContainersRestarting = %+v, want True %s", c, reasonRestartAllStarted)
	}
	if s2.Phase != v1.PodRunning || !restartingAll(s2) {
		t.Errorf("after the exit: phase %s, restarting %v; want Running, true", s2.Phase, restartingAll(s2))
	}
	// 3. Every container removed: each waits, RestartingAllContainers, one
	// restart more; the condition is False again; the pod stays Running
	// and Initialized.
	st.Containers = nil
	s3 := gen(st, &s2)
	for _, s := range all(s3) {
		if w := s.State.Waiting; w == nil || w.Reason != reasonRestartingAll || w.Message != messageRestartingAll {
			t.Errorf("removed %s: state %+v, want waiting %s", s.Name, s.State, reasonRestartingAll)
		}
		if lt := s.LastTerminationState.Terminated; lt == nil || lt.Reason != reasonRestartingAll || lt.ExitCode != 137 {
			t.Errorf("removed %s: lastState %+v, want terminated %s 137", s.Name, s.LastTerminationState, reasonRestartingAll)
		}
		if s.RestartCount != 1 {
			t.Errorf("removed %s: restartCount %d, want 1", s.Name, s.RestartCount)
		}
	}
	if c := cond(s3); c.Status != v1.ConditionFalse || c.Reason != "" || restartingAll(s3) {
		t.Errorf("removed: AllContainersRestarting = %+v, want False", c)
	}
	if s3.Phase != v1.PodRunning {
		t.Errorf("removed: phase %s, want Running (every container restarts)", s3.Phase)
	}
	if c := findCondition(s3, v1.PodInitialized); c.Status != v1.ConditionTrue {
		t.Errorf("removed: Initialized = %+v, want True (kept)", c)
	}
	// 4. init1 runs again (its new instance's count from the log files):
	// it shows the carried last state; the others still wait, now with
	// the default reason, their counts and last states carried.
	st.Containers = []*containerStatus{{ID: "init1-1", Name: "init1", State: stateRunning, RestartCount: 1}}
	s4 := gen(st, &s3)
	init1 := findStatus(s4.InitContainerStatuses, "init1")
	if init1.State.Running == nil || init1.RestartCount != 1 || init1.LastTerminationState.Terminated == nil ||
		init1.LastTerminationState.Terminated.Reason != reasonRestartingAll {
		t.Errorf("init1 again: %+v", *init1)
	}
	app2 := findStatus(s4.ContainerStatuses, "app2")
	if w := app2.State.Waiting; w == nil || w.Reason != reasonPodInitializing || app2.RestartCount != 1 ||
		app2.LastTerminationState.Terminated == nil || app2.LastTerminationState.Terminated.Reason != reasonRestartingAll {
		t.Errorf("app2 waiting again: %+v", *app2)
	}
	if s4.Phase != v1.PodRunning && s4.Phase != v1.PodPending {
		t.Errorf("init1 again: phase %s", s4.Phase)
	}
	// 5. app2 runs again and exits 0: the pod Succeeded, the condition False
	// with PodCompleted.
	st.Containers = []*containerStatus{
		{ID: "app2-1", Name: "app2", State: stateExited, RestartCount: 1},
		{ID: "app1-1", Name: "app1", State: stateExited, RestartCount: 1},
		{ID: "sidecar-1", Name: "sidecar", State: stateExited, ExitCode: 137, RestartCount: 1},
		{ID: "init2-1", Name: "init2", State: stateExited, RestartCount: 1},
		{ID: "init1-1", Name: "init1", State: stateExited, RestartCount: 1},
	}
	in := statusInput{Pod: pod, Status: st, RuntimeName: "containerd", Old: &s4, Terminal: true}
	s5 := podStatusFor(in)
	if s5.Phase != v1.PodSucceeded {
		t.Errorf("done: phase %s, want Succeeded", s5.Phase)
	}
	if c := cond(s5); c.Status != v1.ConditionFalse || c.Reason != reasonPodCompleted {
		t.Errorf("done: AllContainersRestarting = %+v, want False PodCompleted", c)
	}
}

func TestPodStatusWithoutRestartAllRulesHasNoCondition(t *testing.T) {
	st := podStatusFor(statusInput{Pod: basePlanPod(), Status: baseStatus(), RuntimeName: "containerd"})
	if c := findCondition(st, conditionAllContainersRestart); c != nil {
		t.Errorf("AllContainersRestarting = %+v on a pod without RestartAllContainers rules", c)
	}
}

func TestContainerRestartsOnRestartAllRule(t *testing.T) {
	c := &restartAllPod().Spec.Containers[1]
	if !containerRestarts(c, v1.RestartPolicyNever, 42) {
		t.Error("exit 42 of a RestartAllContainers rule: not restarted, want restarted (ContainerShouldRestart)")
	}
	if containerRestarts(c, v1.RestartPolicyNever, 1) {
		t.Error("exit 1 under its own Never: restarted")
	}
	if !restartsAll(c, 42) || restartsAll(c, 1) {
		t.Error("restartsAll: want true for 42 only")
	}
}

func TestRestartCountFromLogDir(t *testing.T) {
	cases := []struct {
		files []string
		want  int
	}{
		{nil, 0},
		{[]string{"0.log"}, 1},
		{[]string{"0.log", "3.log.20261128-000000", "1.log", "notes.txt", "x.log"}, 4},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := restartCountFromLogDir(dir); got != tc.want {
			t.Errorf("files %v: %d, want %d", tc.files, got, tc.want)
		}
	}
	if got := restartCountFromLogDir(filepath.Join(t.TempDir(), "missing")); got != 0 {
		t.Errorf("missing dir: %d, want 0", got)
	}
}
