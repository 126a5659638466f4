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
)

// ParseWaitMode checks a --wait value.
func ParseWaitMode(s string) (WaitMode, error) {
	switch m := WaitMode(s); m {
	case WaitAuto, WaitComplete, WaitReady, WaitNone:
		return m, nil
	}
	return "", fmt.Errorf("invalid --wait %q: want auto, complete, ready or none", s)
}

// effectiveWait resolves auto: complete for restartPolicy Never and
// OnFailure (the pod is expected to finish), ready for Always.
func effectiveWait(m WaitMode, pod *v1.Pod) WaitMode {
	if m != WaitAuto {
		return m
	}
	if pod.Spec.RestartPolicy == v1.RestartPolicyAlways {
		return WaitReady
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
)

// String names the outcome: waiting, reached, failed, timeout, interrupted
// or error.
func (o Outcome) String() string {
	return [...]string{"waiting", "reached", "failed", "timeout", "interrupted", "error"}[o]
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
func waitOutcome(m WaitMode, pod *v1.Pod, st v1.PodStatus, started bool) Outcome {
	switch st.Phase {
	case v1.PodFailed:
		return OutcomeFailed
	case v1.PodSucceeded:
		return OutcomeReached
	}
	switch effectiveWait(m, pod) {
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
