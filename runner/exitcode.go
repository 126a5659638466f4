package runner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// Exit statuses of podrun besides a failed container's own exit code.
const (
	ExitOK               = 0
	ExitDeadlineExceeded = 123 // a pod's activeDeadlineSeconds passed (reason DeadlineExceeded): the pod failed
	ExitTimeout          = 124 // --timeout expired (as timeout(1))
	ExitPodrunError      = 125 // podrun could not run the pods
	ExitSIGHUP           = 129 // after SIGHUP (the terminal is gone), once torn down
	ExitSIGINT           = 130
	ExitSIGPIPE          = 141 // podrun's stdout or stderr lost its reader (EPIPE), once torn down
	ExitSIGTERM          = 143
)

// exitCode decides podrun's exit status from every pod's and Job's
// outcome: a podrun error (125) first, then an interruption (129, 130,
// 141 or 143), then the first failed pod's (failedPodExitCode: 123 when
// its deadline passed, else its first failed container's exit code), then
// the first failed Job's status (JobResult.FailedCode), then a timeout
// (124), else 0. A Job's own pods count only through their Job: one that
// failed and was replaced by one that succeeded leaves 0.
func exitCode(results []PodResult, jobs []JobResult, interruptCode int) int {
	// Every pod, then every Job, each with the status it fails with.
	type ended struct {
		outcome Outcome
		failed  func() int
	}
	var all []ended
	for _, r := range results {
		all = append(all, ended{r.Outcome, func() int { return failedPodExitCode(r.Pod, r.Status) }})
	}
	for _, j := range jobs {
		all = append(all, ended{j.Outcome, func() int { return j.FailedCode }})
	}
	first := func(o Outcome) (ended, bool) {
		for _, e := range all {
			if e.outcome == o {
				return e, true
			}
		}
		return ended{}, false
	}
	if _, ok := first(OutcomeError); ok {
		return ExitPodrunError
	}
	if interruptCode != 0 {
		return interruptCode
	}
	if e, ok := first(OutcomeFailed); ok {
		return e.failed()
	}
	if _, ok := first(OutcomeTimeout); ok {
		return ExitTimeout
	}
	return ExitOK
}

// failedPodExitCode is a failed pod's exit status: 123 when its
// activeDeadlineSeconds passed (reason DeadlineExceeded), else its first
// failed container's exit code.
func failedPodExitCode(pod *v1.Pod, st v1.PodStatus) int {
	if st.Reason == ReasonDeadlineExceeded {
		return ExitDeadlineExceeded
	}
	return failedContainerExitCode(pod, st)
}

// failedContainerExitCode is the exit code of the first failed container in
// spec order, init containers first; a failed pod with no non-zero exit code
// (say, a container the runtime lost) gives 1. Sidecars do not count: as in
// the kubelet's getPhase, how they ended (stopped at teardown, say) does
// not decide whether the pod failed.
func failedContainerExitCode(pod *v1.Pod, st v1.PodStatus) int {
	sidecar := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		sidecar[pod.Spec.InitContainers[i].Name] = podresources.IsSidecar(&pod.Spec.InitContainers[i])
	}
	for gi, group := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, s := range group {
			if gi == 0 && sidecar[s.Name] {
				continue
			}
			for _, t := range []*v1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
				if t != nil && t.ExitCode != 0 {
					return int(t.ExitCode)
				}
			}
		}
	}
	return 1
}
