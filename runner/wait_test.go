package runner

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestParseWaitMode(t *testing.T) {
	for _, s := range []string{"auto", "complete", "ready", "none"} {
		if m, err := ParseWaitMode(s); err != nil || string(m) != s {
			t.Errorf("ParseWaitMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseWaitMode("started"); err == nil || !strings.Contains(err.Error(), `invalid --wait "started"`) {
		t.Errorf("ParseWaitMode(started) error = %v, want invalid --wait", err)
	}
}

func TestEffectiveWait(t *testing.T) {
	never, onFailure, always := ptrTo(v1.ContainerRestartPolicyNever), ptrTo(v1.ContainerRestartPolicyOnFailure), ptrTo(v1.ContainerRestartPolicyAlways)
	cases := []struct {
		name   string
		mode   WaitMode
		policy v1.RestartPolicy
		own    []*v1.ContainerRestartPolicy // the containers' own restartPolicy; none: one container without
		want   WaitMode
	}{
		{"auto under Never waits for completion", WaitAuto, v1.RestartPolicyNever, nil, WaitComplete},
		{"auto under OnFailure waits for completion", WaitAuto, v1.RestartPolicyOnFailure, nil, WaitComplete},
		{"auto under Always waits for readiness", WaitAuto, v1.RestartPolicyAlways, nil, WaitReady},
		{"an explicit mode is kept", WaitNone, v1.RestartPolicyAlways, nil, WaitNone},
		{"an explicit complete is kept under Always", WaitComplete, v1.RestartPolicyAlways, nil, WaitComplete},
		{"auto under Always when every container's own policy ends it: completion", WaitAuto, v1.RestartPolicyAlways,
			[]*v1.ContainerRestartPolicy{never, onFailure}, WaitComplete},
		{"auto under Always when one container keeps the pod's: readiness", WaitAuto, v1.RestartPolicyAlways,
			[]*v1.ContainerRestartPolicy{never, nil}, WaitReady},
		{"auto under Never with a container whose own policy is Always: readiness", WaitAuto, v1.RestartPolicyNever,
			[]*v1.ContainerRestartPolicy{nil, always}, WaitReady},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: tc.policy, Containers: []v1.Container{{Name: "c"}}}}
			if tc.own != nil {
				pod.Spec.Containers = nil
				for i, p := range tc.own {
					pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i), RestartPolicy: p})
				}
			}
			if got := EffectiveWait(tc.mode, pod); got != tc.want {
				t.Errorf("EffectiveWait(%s, %s) = %s, want %s", tc.mode, tc.policy, got, tc.want)
			}
		})
	}
}

// baseWaitStatus is a Running pod with two running containers that is not Ready.
func baseWaitStatus() v1.PodStatus {
	return v1.PodStatus{
		Phase: v1.PodRunning,
		Conditions: []v1.PodCondition{
			{Type: v1.PodInitialized, Status: v1.ConditionTrue},
			{Type: v1.PodReady, Status: v1.ConditionFalse},
		},
		ContainerStatuses: []v1.ContainerStatus{cstatus("a", running()), cstatus("b", running())},
	}
}

func setReady(st *v1.PodStatus) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodReady {
			st.Conditions[i].Status = v1.ConditionTrue
		}
	}
}

func TestWaitOutcome(t *testing.T) {
	cases := []struct {
		name    string
		mode    WaitMode
		policy  v1.RestartPolicy
		mutate  func(*v1.PodStatus)
		started bool
		want    Outcome
	}{
		{"complete: a Running pod goes on", WaitComplete, v1.RestartPolicyNever, func(*v1.PodStatus) {}, true, OutcomeWaiting},
		{"complete: Succeeded is reached", WaitComplete, v1.RestartPolicyNever, func(s *v1.PodStatus) { s.Phase = v1.PodSucceeded }, true, OutcomeReached},
		{"complete: Failed is failed", WaitComplete, v1.RestartPolicyOnFailure, func(s *v1.PodStatus) { s.Phase = v1.PodFailed }, true, OutcomeFailed},
		{"complete: Ready does not end the wait", WaitComplete, v1.RestartPolicyNever, setReady, true, OutcomeWaiting},
		{"complete under Always: every regular container exited 0 is reached", WaitComplete, v1.RestartPolicyAlways, func(s *v1.PodStatus) {
			s.ContainerStatuses = []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))}
		}, true, OutcomeReached},
		{"complete under Always: every regular container terminated, one non-zero, is failed", WaitComplete, v1.RestartPolicyAlways, func(s *v1.PodStatus) {
			s.ContainerStatuses = []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(2))}
		}, true, OutcomeFailed},
		{"complete under Always: one container still running goes on", WaitComplete, v1.RestartPolicyAlways, func(s *v1.PodStatus) {
			s.ContainerStatuses = []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", running())}
		}, true, OutcomeWaiting},
		{"complete under Always: no container status yet goes on", WaitComplete, v1.RestartPolicyAlways, func(s *v1.PodStatus) {
			s.ContainerStatuses = nil
		}, true, OutcomeWaiting},
		{"complete under OnFailure: every container terminated is left to the phase", WaitComplete, v1.RestartPolicyOnFailure, func(s *v1.PodStatus) {
			s.ContainerStatuses = []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(2))}
		}, true, OutcomeWaiting},
		{"ready: the Ready condition ends the wait", WaitReady, v1.RestartPolicyAlways, setReady, true, OutcomeReached},
		{"ready: not Ready goes on", WaitReady, v1.RestartPolicyAlways, func(*v1.PodStatus) {}, true, OutcomeWaiting},
		{"ready: a pod that Succeeded has nothing left to be ready for", WaitReady, v1.RestartPolicyNever, func(s *v1.PodStatus) { s.Phase = v1.PodSucceeded }, true, OutcomeReached},
		{"ready: a pod that Failed is failed", WaitReady, v1.RestartPolicyNever, func(s *v1.PodStatus) { s.Phase = v1.PodFailed }, true, OutcomeFailed},
		{"auto under Always waits for Ready", WaitAuto, v1.RestartPolicyAlways, setReady, true, OutcomeReached},
		{"auto under Always ignores all containers exiting", WaitAuto, v1.RestartPolicyAlways, func(s *v1.PodStatus) {
			s.ContainerStatuses = []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))}
		}, true, OutcomeWaiting},
		{"auto under Never ignores Ready", WaitAuto, v1.RestartPolicyNever, setReady, true, OutcomeWaiting},
		{"auto under Never: Succeeded is reached", WaitAuto, v1.RestartPolicyNever, func(s *v1.PodStatus) { s.Phase = v1.PodSucceeded }, true, OutcomeReached},
		{"none: a started pod is reached", WaitNone, v1.RestartPolicyAlways, func(s *v1.PodStatus) { s.Phase = v1.PodPending }, true, OutcomeReached},
		{"none: a pod not started yet goes on", WaitNone, v1.RestartPolicyAlways, func(s *v1.PodStatus) { s.Phase = v1.PodPending }, false, OutcomeWaiting},
		{"none: a pod that already Failed is failed", WaitNone, v1.RestartPolicyNever, func(s *v1.PodStatus) { s.Phase = v1.PodFailed }, false, OutcomeFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: tc.policy}}
			st := baseWaitStatus()
			tc.mutate(&st)
			if got := waitOutcome(tc.mode, pod, st, tc.started); got != tc.want {
				t.Errorf("waitOutcome = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestEndOfPod decides, from the plan one sync computes, whether the run
// acts on it, kills the pod first or is over. Each case starts from the
// plan tests' "everything running" (basePlanPod, baseStatus) under
// restartPolicy Never and changes it.
func TestEndOfPod(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.Pod, *runtimeStatus, *probeResults)
		killed bool // the run has killed the pod for its end already
		want   podEnd
	}{
		{
			name:   "everything running: act on the plan",
			mutate: func(*v1.Pod, *runtimeStatus, *probeResults) {},
			want:   podGoesOn,
		},
		{
			name: "one of two containers fails its liveness probe under Never: killed alone, the other runs on",
			mutate: func(_ *v1.Pod, _ *runtimeStatus, pr *probeResults) {
				pr.Liveness["app1-0"] = probeFailure
			},
			want: podGoesOn,
		},
		{
			name: "the only running container fails its startup probe under Never: kill the pod, then read it again",
			mutate: func(_ *v1.Pod, s *runtimeStatus, pr *probeResults) {
				setState(s, "app2", stateExited, 0)
				pr.Startup["app1-0"] = probeFailure
			},
			want: podEndKill,
		},
		{
			name: "both containers fail their liveness probes under Never, the sidecar runs: kill the pod",
			mutate: func(_ *v1.Pod, _ *runtimeStatus, pr *probeResults) {
				pr.Liveness["app1-0"], pr.Liveness["app2-0"] = probeFailure, probeFailure
			},
			want: podEndKill,
		},
		{
			name: "killed already and the runtime still says running: over, no second kill",
			mutate: func(_ *v1.Pod, s *runtimeStatus, pr *probeResults) {
				setState(s, "app2", stateExited, 0)
				pr.Startup["app1-0"] = probeFailure
			},
			killed: true,
			want:   podEnded,
		},
		{
			name: "the kill observed: the container exited 137, the sandbox stopped, nothing runs: over",
			mutate: func(_ *v1.Pod, s *runtimeStatus, _ *probeResults) {
				setState(s, "app1", stateExited, 137)
				setState(s, "app2", stateExited, 0)
				setState(s, "sidecar", stateExited, 137)
				s.Sandboxes[0].Ready = false
			},
			killed: true,
			want:   podEnded,
		},
		{
			name: "the sandbox died under Never after the containers ran, nothing runs: over",
			mutate: func(_ *v1.Pod, s *runtimeStatus, _ *probeResults) {
				for _, c := range s.Containers {
					c.State = stateExited
				}
				s.Sandboxes[0].Ready = false
			},
			want: podEnded,
		},
		{
			name: "the sandbox died under Never with a container still running: kill it first",
			mutate: func(_ *v1.Pod, s *runtimeStatus, _ *probeResults) {
				s.Sandboxes[0].Ready = false
			},
			want: podEndKill,
		},
		{
			name: "the sandbox died under Always: a new one is made, the run goes on",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyAlways
				s.Sandboxes[0].Ready = false
			},
			want: podGoesOn,
		},
		{
			name: "a failed startup probe under OnFailure restarts the container: the run goes on",
			mutate: func(p *v1.Pod, _ *runtimeStatus, pr *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				pr.Startup["app1-0"], pr.Startup["app2-0"] = probeFailure, probeFailure
			},
			want: podGoesOn,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod, st := basePlanPod(), baseStatus()
			pod.Spec.RestartPolicy = v1.RestartPolicyNever
			pr := probeResults{Liveness: map[string]probeResult{}, Readiness: map[string]probeResult{}, Startup: map[string]probeResult{}}
			tc.mutate(pod, st, &pr)
			a := computePodActions(planInput{Pod: pod, Status: st, Probes: pr})
			if got := endOfPod(a, st, tc.killed); got != tc.want {
				t.Errorf("endOfPod = %s, want %s (plan %+v)", got, tc.want, a)
			}
		})
	}
}
