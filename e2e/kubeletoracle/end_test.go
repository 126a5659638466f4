package kubeletoracle

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
)

func TestPodEnd(t *testing.T) {
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	exited := func(code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	}
	ready := []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	for _, tc := range []struct {
		name    string
		mode    runner.WaitMode
		policy  v1.RestartPolicy
		phase   v1.PodPhase
		conds   []v1.PodCondition
		inits   []v1.ContainerState
		regular []v1.ContainerState
		own     []v1.ContainerRestartPolicy // each regular container's own restartPolicy, if any
		want    end
	}{
		{name: "Never pod still running", mode: runner.WaitAuto, policy: v1.RestartPolicyNever, phase: v1.PodRunning,
			regular: []v1.ContainerState{running}, want: endWaiting},
		{name: "Never pod that is Ready is still running (auto means complete)", mode: runner.WaitAuto, policy: v1.RestartPolicyNever,
			phase: v1.PodRunning, conds: ready, regular: []v1.ContainerState{running}, want: endWaiting},
		{name: "Failed with nothing running has settled", mode: runner.WaitAuto, policy: v1.RestartPolicyNever, phase: v1.PodFailed,
			regular: []v1.ContainerState{exited(3)}, want: endSettled},
		{name: "Succeeded while a sidecar still runs has ended, not settled", mode: runner.WaitAuto, policy: v1.RestartPolicyNever,
			phase: v1.PodSucceeded, inits: []v1.ContainerState{running}, regular: []v1.ContainerState{exited(0)}, want: endReached},
		{name: "a terminal phase ends a ready wait too", mode: runner.WaitReady, policy: v1.RestartPolicyAlways, phase: v1.PodFailed,
			regular: []v1.ContainerState{exited(1)}, want: endSettled},
		{name: "rejected at admission: Failed, no containers", mode: runner.WaitAuto, policy: v1.RestartPolicyAlways, phase: v1.PodFailed,
			want: endSettled},
		{name: "Always pod Ready (auto means ready)", mode: runner.WaitAuto, policy: v1.RestartPolicyAlways, phase: v1.PodRunning,
			conds: ready, regular: []v1.ContainerState{running}, want: endSettled},
		{name: "Always pod not yet Ready", mode: runner.WaitAuto, policy: v1.RestartPolicyAlways, phase: v1.PodRunning,
			conds: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}, regular: []v1.ContainerState{running}, want: endWaiting},
		{name: "auto under Always with every container Never or OnFailure means complete: Ready is not the end", mode: runner.WaitAuto,
			policy: v1.RestartPolicyAlways, own: []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure},
			phase: v1.PodRunning, conds: ready, regular: []v1.ContainerState{running, running}, want: endWaiting},
		{name: "auto under Always with every container Never or OnFailure: both terminated", mode: runner.WaitAuto,
			policy: v1.RestartPolicyAlways, own: []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure},
			phase: v1.PodRunning, regular: []v1.ContainerState{exited(5), exited(0)}, want: endSettled},
		{name: "auto under Never with one container's own Always means ready", mode: runner.WaitAuto,
			policy: v1.RestartPolicyNever, own: []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyAlways},
			phase: v1.PodRunning, conds: ready, regular: []v1.ContainerState{running, running}, want: endSettled},
		{name: "complete under Always: every regular container terminated", mode: runner.WaitComplete, policy: v1.RestartPolicyAlways,
			phase: v1.PodRunning, regular: []v1.ContainerState{exited(0), exited(2)}, want: endSettled},
		{name: "complete under Always: one still runs", mode: runner.WaitComplete, policy: v1.RestartPolicyAlways,
			phase: v1.PodRunning, regular: []v1.ContainerState{exited(0), running}, want: endWaiting},
		{name: "complete under Always: no statuses yet", mode: runner.WaitComplete, policy: v1.RestartPolicyAlways,
			phase: v1.PodPending, want: endWaiting},
		{name: "complete under OnFailure waits for the phase", mode: runner.WaitComplete, policy: v1.RestartPolicyOnFailure,
			phase: v1.PodRunning, regular: []v1.ContainerState{exited(1)}, want: endWaiting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: tc.policy}, Status: v1.PodStatus{Phase: tc.phase, Conditions: tc.conds}}
			for i := range tc.regular {
				c := v1.Container{Name: fmt.Sprint("c", i)}
				if i < len(tc.own) {
					c.RestartPolicy = &tc.own[i]
				}
				pod.Spec.Containers = append(pod.Spec.Containers, c)
			}
			for _, s := range tc.inits {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, v1.ContainerStatus{State: s})
			}
			for _, s := range tc.regular {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, v1.ContainerStatus{State: s})
			}
			if got := podEnd(tc.mode, pod); got != tc.want {
				t.Errorf("podEnd = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFirstSyncPending(t *testing.T) {
	waiting := func(reason string) v1.ContainerState {
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
	}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	for _, tc := range []struct {
		name    string
		phase   v1.PodPhase
		inits   []v1.ContainerState
		regular []v1.ContainerState
		restart int32
		want    bool
	}{
		{name: "no status yet", want: true},
		{name: "Pending, every container ContainerCreating", phase: v1.PodPending,
			regular: []v1.ContainerState{waiting("ContainerCreating"), waiting("ContainerCreating")}, want: true},
		{name: "Pending with init containers, all PodInitializing", phase: v1.PodPending,
			inits: []v1.ContainerState{waiting("PodInitializing")}, regular: []v1.ContainerState{waiting("PodInitializing")}, want: true},
		{name: "an init container runs", phase: v1.PodPending,
			inits: []v1.ContainerState{running}, regular: []v1.ContainerState{waiting("PodInitializing")}},
		{name: "one container started, the next not yet", phase: v1.PodPending,
			regular: []v1.ContainerState{running, waiting("ContainerCreating")}},
		{name: "the image could not be pulled", phase: v1.PodPending,
			regular: []v1.ContainerState{waiting("ErrImagePull")}},
		{name: "a bad reference to a ConfigMap", phase: v1.PodPending,
			regular: []v1.ContainerState{waiting("CreateContainerConfigError")}},
		{name: "restarted before", phase: v1.PodPending, restart: 1,
			regular: []v1.ContainerState{waiting("ContainerCreating")}},
		{name: "Running", phase: v1.PodRunning, regular: []v1.ContainerState{running}},
		{name: "rejected at admission", phase: v1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Status: v1.PodStatus{Phase: tc.phase}}
			for _, s := range tc.inits {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, v1.ContainerStatus{State: s})
			}
			for _, s := range tc.regular {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, v1.ContainerStatus{State: s, RestartCount: tc.restart})
			}
			if got := firstSyncPending(pod); got != tc.want {
				t.Errorf("firstSyncPending = %v, want %v", got, tc.want)
			}
		})
	}
}
