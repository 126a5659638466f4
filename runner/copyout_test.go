package runner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestEndedForGood: when a --copy-out is made as its container ends,
// rather than at teardown.
func TestEndedForGood(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	pod := func(policy v1.RestartPolicy) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{
			RestartPolicy:  policy,
			InitContainers: []v1.Container{{Name: "init"}, {Name: "side", RestartPolicy: &always}},
			Containers:     []v1.Container{{Name: "main"}},
		}}
	}
	exited := func(code int32) *containerStatus { return &containerStatus{State: stateExited, ExitCode: code} }
	for _, tc := range []struct {
		policy v1.RestartPolicy
		name   string
		cs     *containerStatus
		want   bool
	}{
		{v1.RestartPolicyNever, "main", nil, false},
		{v1.RestartPolicyNever, "main", &containerStatus{State: stateRunning}, false},
		{v1.RestartPolicyNever, "main", &containerStatus{State: stateCreated}, false},
		{v1.RestartPolicyNever, "main", exited(0), true},
		{v1.RestartPolicyNever, "main", exited(1), true},
		{v1.RestartPolicyOnFailure, "main", exited(0), true},
		{v1.RestartPolicyOnFailure, "main", exited(1), false},
		{v1.RestartPolicyAlways, "main", exited(0), false},
		{v1.RestartPolicyAlways, "init", exited(0), true},
		{v1.RestartPolicyAlways, "init", exited(2), false},
		{v1.RestartPolicyNever, "init", exited(2), true},
		{v1.RestartPolicyNever, "side", exited(0), false}, // a sidecar: at teardown
	} {
		if got := endedForGood(pod(tc.policy), tc.name, tc.cs); got != tc.want {
			t.Errorf("%s, %s, %+v: endedForGood = %v, want %v", tc.policy, tc.name, tc.cs, got, tc.want)
		}
	}
}
