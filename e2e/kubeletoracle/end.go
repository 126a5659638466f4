package kubeletoracle

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
)

// end is where a pod on the kubelet stands against the wait podrun would do.
type end int

const (
	endWaiting end = iota // not there yet
	endReached            // the wait's condition holds; the kubelet may still be stopping containers of a pod that ended
	endSettled            // reached, and nothing of an ended pod runs any more
)

// podEnd decides, from the kubelet's view of a pod, whether the wait podrun
// does with mode (auto, complete or ready: see runner.WaitMode) would be
// over:
//   - a pod that Succeeded or Failed has ended in every mode; it has
//     settled once no container of it runs (the kubelet stops sidecars and
//     what still runs after the phase turns terminal, as podrun's teardown
//     does before it re-reads an ended pod's status);
//   - ready: the Ready condition is True;
//   - complete under restartPolicy Always (which never ends a pod): every
//     regular container has terminated.
func podEnd(mode runner.WaitMode, pod *v1.Pod) end {
	st := pod.Status
	switch st.Phase {
	case v1.PodSucceeded, v1.PodFailed:
		if anyRunning(st.InitContainerStatuses) || anyRunning(st.ContainerStatuses) {
			return endReached
		}
		return endSettled
	}
	// auto as podrun resolves it: by each regular container's own restart
	// policy, else the pod's.
	switch runner.EffectiveWait(mode, pod) {
	case runner.WaitReady:
		for _, c := range st.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				return endSettled
			}
		}
	case runner.WaitComplete:
		if pod.Spec.RestartPolicy != v1.RestartPolicyAlways || len(st.ContainerStatuses) == 0 {
			break
		}
		for _, c := range st.ContainerStatuses {
			if c.State.Terminated == nil {
				return endWaiting
			}
		}
		return endSettled
	}
	return endWaiting
}

func anyRunning(statuses []v1.ContainerStatus) bool {
	for _, c := range statuses {
		if c.State.Running != nil {
			return true
		}
	}
	return false
}

// firstSyncPending says whether the kubelet's status of a pod is still the
// one it writes before its first sync of the pod has done anything: the
// phase is Pending, and every container, init or regular, waits with the
// kubelet's default reason (ContainerCreating, or PodInitializing in a pod
// with init containers) and has never run. Once the sync has made the
// sandbox and started what it starts, the next status shows a container
// running or terminated, or waiting for another reason (ErrImagePull,
// CreateContainerConfigError, ...). A pod with no container statuses yet
// is pending too.
func firstSyncPending(pod *v1.Pod) bool {
	st := pod.Status
	if st.Phase != v1.PodPending && st.Phase != "" {
		return false
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, c := range list {
			w := c.State.Waiting
			if w == nil || (w.Reason != "ContainerCreating" && w.Reason != "PodInitializing") {
				return false
			}
			if c.LastTerminationState.Terminated != nil || c.RestartCount > 0 {
				return false
			}
		}
	}
	return true
}
