package runner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestContainerRestarts(t *testing.T) {
	in, notIn := v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn
	never, onFailure, always := ptrTo(v1.ContainerRestartPolicyNever), ptrTo(v1.ContainerRestartPolicyOnFailure), ptrTo(v1.ContainerRestartPolicyAlways)
	cases := []struct {
		name   string
		pod    v1.RestartPolicy
		policy *v1.ContainerRestartPolicy
		rules  []v1.ContainerRestartRule
		exit   int32
		want   bool
	}{
		{name: "no own policy: the pod's Never", pod: v1.RestartPolicyNever, exit: 1, want: false},
		{name: "no own policy: the pod's OnFailure after a failure", pod: v1.RestartPolicyOnFailure, exit: 1, want: true},
		{name: "no own policy: the pod's OnFailure after exit 0", pod: v1.RestartPolicyOnFailure, exit: 0, want: false},
		{name: "no own policy: the pod's Always after exit 0", pod: v1.RestartPolicyAlways, exit: 0, want: true},
		{name: "no policy anywhere counts as Always", exit: 0, want: true},
		{name: "own Never wins over the pod's Always", pod: v1.RestartPolicyAlways, policy: never, exit: 1, want: false},
		{name: "own Always wins over the pod's Never", pod: v1.RestartPolicyNever, policy: always, exit: 0, want: true},
		{name: "own OnFailure after a failure under Never", pod: v1.RestartPolicyNever, policy: onFailure, exit: 2, want: true},
		{name: "own OnFailure after exit 0 under Always", pod: v1.RestartPolicyAlways, policy: onFailure, exit: 0, want: false},
		{name: "an In rule that matches restarts despite Never", policy: never,
			rules: []v1.ContainerRestartRule{restartOn(in, 3, 42)}, exit: 42, want: true},
		{name: "an In rule that does not match falls back to Never", pod: v1.RestartPolicyAlways, policy: never,
			rules: []v1.ContainerRestartRule{restartOn(in, 3, 42)}, exit: 1, want: false},
		{name: "a NotIn rule matches a code not listed", policy: never,
			rules: []v1.ContainerRestartRule{restartOn(notIn, 0)}, exit: 137, want: true},
		{name: "a NotIn rule does not match a listed code", policy: never,
			rules: []v1.ContainerRestartRule{restartOn(notIn, 0)}, exit: 0, want: false},
		{name: "the first matching rule decides; a later one is not read", policy: never,
			rules: []v1.ContainerRestartRule{restartOn(in, 5), restartOn(notIn, 7)}, exit: 7, want: false},
		{name: "a rule without exitCodes never matches", policy: never,
			rules: []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart}}, exit: 1, want: false},
		{name: "rules are read only with an own policy", pod: v1.RestartPolicyNever,
			rules: []v1.ContainerRestartRule{restartOn(in, 1)}, exit: 1, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1.Container{Name: "c", RestartPolicy: tc.policy, RestartPolicyRules: tc.rules}
			if got := containerRestarts(c, tc.pod, tc.exit); got != tc.want {
				t.Errorf("containerRestarts(exit %d) = %v, want %v", tc.exit, got, tc.want)
			}
		})
	}
}

func TestRestartsAfterKill(t *testing.T) {
	for _, tc := range []struct {
		pod    v1.RestartPolicy
		policy *v1.ContainerRestartPolicy
		want   bool
	}{
		{v1.RestartPolicyNever, nil, false},
		{v1.RestartPolicyOnFailure, nil, true},
		{v1.RestartPolicyAlways, nil, true},
		{v1.RestartPolicyAlways, ptrTo(v1.ContainerRestartPolicyNever), false},
		{v1.RestartPolicyNever, ptrTo(v1.ContainerRestartPolicyOnFailure), true},
		{v1.RestartPolicyNever, ptrTo(v1.ContainerRestartPolicyAlways), true},
	} {
		if got := restartsAfterKill(&v1.Container{RestartPolicy: tc.policy}, tc.pod); got != tc.want {
			t.Errorf("restartsAfterKill(pod %s, own %v) = %v, want %v", tc.pod, tc.policy, got, tc.want)
		}
	}
}
