package runner

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// WaitMode is what `--wait` asks podrun to wait for.
type WaitMode string

const (
	WaitAuto     WaitMode = "auto"
	WaitComplete WaitMode = "complete"
	WaitReady    WaitMode = "ready"
	WaitNone     WaitMode = "none"
	// WaitSupervise is `podrun run --supervise` (docs/bootstrap.md): no
	// condition ends the wait but the pod's end (Succeeded or Failed);
	// the run keeps the pods as the kubelet would, restarts, probes and
	// all, until a signal or a kubelet's taking them over (Wiring.HandOver).
	// Not a --wait value.
	WaitSupervise WaitMode = "supervise"
)

// ParseWaitMode checks a --wait value.
func ParseWaitMode(s string) (WaitMode, error) {
	switch m := WaitMode(s); m {
	case WaitAuto, WaitComplete, WaitReady, WaitNone:
		return m, nil
	}
	return "", fmt.Errorf("invalid --wait %q: want auto, complete, ready or none", s)
}

// EffectiveWait resolves auto: complete when the pod is expected to
// finish, every regular container's restart policy (its own, else the
// pod's) being Never or OnFailure; ready when one's is Always (a pod's
// restartPolicy Always, unless each container overrides it).
func EffectiveWait(m WaitMode, pod *v1.Pod) WaitMode {
	if m != WaitAuto {
		return m
	}
	if len(pod.Spec.Containers) == 0 { // not a valid pod; by the pod's policy
		if pod.Spec.RestartPolicy == v1.RestartPolicyAlways {
			return WaitReady
		}
		return WaitComplete
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		policy := pod.Spec.RestartPolicy == v1.RestartPolicyAlways
		if c.RestartPolicy != nil {
			policy = *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		}
		if policy {
			return WaitReady
		}
	}
	return WaitComplete
}

// Outcome is how a pod's wait ended.
type Outcome int

// The outcomes; OutcomeWaiting is never a PodResult's.
const (
	OutcomeWaiting     Outcome = iota // the wait goes on
	OutcomeReached                    // the wait condition holds
	OutcomeFailed                     // the pod failed
	OutcomeTimeout                    // --timeout expired
	OutcomeInterrupted                // SIGINT or SIGTERM
	OutcomeError                      // podrun could not run the pod (exit 125)
	// OutcomeStopped: the pod's controller stopped it, as the Job
	// controller deletes a Job's active pods once the Job is over
	// (job.go); only a Job's pods end so.
	OutcomeStopped
)

// String names the outcome: waiting, reached, failed, timeout,
// interrupted, error or stopped.
func (o Outcome) String() string {
	return [...]string{"waiting", "reached", "failed", "timeout", "interrupted", "error", "stopped"}[o]
}

// waitOutcome decides whether the wait for a pod is over, from its API status.
// started says whether the first sync has started the pod (for --wait=none).
//
//   - complete: the pod Succeeded (reached) or Failed (failed). Under
//     restartPolicy Always, where the kubelet never ends a pod, the wait ends
//     the first time every regular container has terminated: reached when all
//     exited 0, failed otherwise.
//   - ready: the Ready condition is True; a pod that Succeeded counts as
//     reached (it has nothing left to be ready for) and one that Failed as failed.
//   - none: the pod has been started.
//   - supervise: nothing but the pod's end.
func waitOutcome(m WaitMode, pod *v1.Pod, st v1.PodStatus, started bool) Outcome {
	switch st.Phase {
	case v1.PodFailed:
		return OutcomeFailed
	case v1.PodSucceeded:
		return OutcomeReached
	}
	switch EffectiveWait(m, pod) {
	case WaitNone:
		if started {
			return OutcomeReached
		}
	case WaitReady:
		for _, c := range st.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				return OutcomeReached
			}
		}
	case WaitComplete:
		if pod.Spec.RestartPolicy != v1.RestartPolicyAlways {
			break
		}
		allDone, allOK := len(st.ContainerStatuses) > 0, true
		for _, s := range st.ContainerStatuses {
			t := s.State.Terminated
			if t == nil {
				allDone = false
				break
			}
			if t.ExitCode != 0 {
				allOK = false
			}
		}
		if allDone {
			if allOK {
				return OutcomeReached
			}
			return OutcomeFailed
		}
	}
	return OutcomeWaiting
}

// podEnd is what a sync does with its plan: act on it, or end the pod.
type podEnd int

const (
	podGoesOn  podEnd = iota // the plan does not end the pod: act on it
	podEndKill               // the plan ends the pod and a container still runs: kill the pod, then read its status again
	podEnded                 // the plan ends the pod and nothing runs: the wait is over
)

// String names the decision, for tests.
func (e podEnd) String() string {
	return [...]string{"goes on", "kill", "ended"}[e]
}

// endOfPod decides whether a sync's plan ends the pod and how. A plan
// that kills the pod without a new sandbox (KillPod without CreateSandbox)
// ends it: nothing will run in it again. When a container still runs
// (one a liveness or startup probe failed under restartPolicy Never,
// which the plan does not restart; one left in a sandbox that died), the
// pod is killed first, as the kubelet's SyncPod step 2 does
// (killPodWithSyncResult: every container with the pod's grace period,
// then the sandbox), and its status read again: the final status is the
// kill's outcome (the container terminated, 137 for one that waits out
// SIGTERM; the pod Failed), and podrun's exit status the killed
// container's. killed says the run has killed the pod for its end
// already: the pod is over then, whatever the runtime still reports (no
// second kill, no loop). Without a running container the pod is over.
func endOfPod(a podActions, st *runtimeStatus, killed bool) podEnd {
	if !a.KillPod || a.CreateSandbox {
		return podGoesOn
	}
	if killed {
		return podEnded
	}
	for _, c := range st.Containers {
		if c.State == stateRunning {
			return podEndKill
		}
	}
	return podEnded
}
