package runner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// failedPod is a pod with init container i and regular containers a and b,
// whose result is failed with the given statuses.
func failedResult(init, regular []v1.ContainerStatus) PodResult {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "i"}},
		Containers:     []v1.Container{{Name: "a"}, {Name: "b"}},
	}}
	return PodResult{Pod: pod, Outcome: OutcomeFailed,
		Status: v1.PodStatus{Phase: v1.PodFailed, InitContainerStatuses: init, ContainerStatuses: regular}}
}

// withSidecar makes init container i a sidecar (restartPolicy Always).
func withSidecar(r PodResult) PodResult {
	always := v1.ContainerRestartPolicyAlways
	r.Pod.Spec.InitContainers[0].RestartPolicy = &always
	return r
}

// pastDeadline makes a failed result one whose activeDeadlineSeconds passed.
func pastDeadline(r PodResult) PodResult {
	r.Status.Reason, r.Status.Message = ReasonDeadlineExceeded, messageDeadlineExceeded
	return r
}

func result(o Outcome) PodResult {
	return PodResult{Pod: &v1.Pod{}, Outcome: o}
}

func TestExitCode(t *testing.T) {
	okInit := []v1.ContainerStatus{cstatus("i", exited(0))}
	cases := []struct {
		name      string
		results   []PodResult
		interrupt int
		want      int
		jobs      []JobResult
	}{
		{"no pods: 0", nil, 0, ExitOK, nil},
		{"every pod reached: 0", []PodResult{result(OutcomeReached), result(OutcomeReached)}, 0, ExitOK, nil},
		{"a timeout: 124", []PodResult{result(OutcomeReached), result(OutcomeTimeout)}, 0, ExitTimeout, nil},
		{"a podrun error wins over everything: 125", []PodResult{
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(3))}), result(OutcomeTimeout), result(OutcomeError),
		}, ExitSIGINT, ExitPodrunError, nil},
		{"an interruption wins over failures and timeouts: 130", []PodResult{
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(3))}), result(OutcomeTimeout), result(OutcomeInterrupted),
		}, ExitSIGINT, ExitSIGINT, nil},
		{"SIGTERM: 143", []PodResult{result(OutcomeInterrupted)}, ExitSIGTERM, ExitSIGTERM, nil},
		{"a failed container's code wins over a timeout", []PodResult{
			result(OutcomeTimeout), failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(7))}),
		}, 0, 7, nil},
		{"the first failed container in spec order", []PodResult{
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(4)), cstatus("b", exited(7))}),
		}, 0, 4, nil},
		{"init containers come first", []PodResult{
			failedResult([]v1.ContainerStatus{cstatus("i", exited(9))}, []v1.ContainerStatus{cstatus("a", exited(4))}),
		}, 0, 9, nil},
		{"a last state counts", []PodResult{
			failedResult([]v1.ContainerStatus{restarting("i", 11)}, []v1.ContainerStatus{cstatus("a", exited(4))}),
		}, 0, 11, nil},
		{"the first failed pod decides", []PodResult{
			result(OutcomeReached),
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(5))}),
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(6))}),
		}, 0, 5, nil},
		{"a sidecar stopped at teardown does not count", []PodResult{
			withSidecar(failedResult([]v1.ContainerStatus{cstatus("i", exited(143))}, []v1.ContainerStatus{cstatus("a", exited(4))})),
		}, 0, 4, nil},
		{"a pod past its deadline: 123, not its killed container's 137", []PodResult{
			pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(137)), cstatus("b", exited(0))})),
		}, 0, ExitDeadlineExceeded, nil},
		{"a pod past its deadline whose containers exited 0 on SIGTERM: 123", []PodResult{
			pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))})),
		}, 0, ExitDeadlineExceeded, nil},
		{"a pod past its deadline killed in its init container: 123", []PodResult{
			pastDeadline(failedResult([]v1.ContainerStatus{cstatus("i", exited(137))}, []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing))})),
		}, 0, ExitDeadlineExceeded, nil},
		{"the first failed pod decides: a container's code before a later deadline", []PodResult{
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(5))}),
			pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(137))})),
		}, 0, 5, nil},
		{"the first failed pod decides: a deadline before a later container's code", []PodResult{
			pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(137))})),
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(5))}),
		}, 0, ExitDeadlineExceeded, nil},
		{"an interruption wins over a deadline", []PodResult{
			pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(137))})), result(OutcomeInterrupted),
		}, ExitSIGTERM, ExitSIGTERM, nil},
		{"a deadline wins over a timeout", []PodResult{
			result(OutcomeTimeout), pastDeadline(failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(137))})),
		}, 0, ExitDeadlineExceeded, nil},
		{"a failed pod without a non-zero exit code: 1", []PodResult{
			failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", waiting(reasonContainerCreating))}),
		}, 0, 1, nil},
		{"a Job that completed after failed pods: 0", []PodResult{result(OutcomeReached)}, 0, ExitOK, []JobResult{
			{Outcome: OutcomeReached, Pods: []PodResult{failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(3))}), result(OutcomeReached)}},
		}},
		{"a failed Job: its code", []PodResult{result(OutcomeTimeout)}, 0, 3, []JobResult{
			{Outcome: OutcomeFailed, FailedCode: 3},
		}},
		{"a failed pod before a failed Job", []PodResult{failedResult(okInit, []v1.ContainerStatus{cstatus("a", exited(5))})}, 0, 5, []JobResult{
			{Outcome: OutcomeFailed, FailedCode: 3},
		}},
		{"a Job's podrun error: 125", []PodResult{result(OutcomeReached)}, ExitSIGINT, ExitPodrunError, []JobResult{
			{Outcome: OutcomeError},
		}},
		{"a Job that timed out: 124", []PodResult{result(OutcomeReached)}, 0, ExitTimeout, []JobResult{
			{Outcome: OutcomeTimeout},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.results, tc.jobs, tc.interrupt); got != tc.want {
				t.Errorf("exitCode = %d, want %d", got, tc.want)
			}
			r := Result{Pods: tc.results, Jobs: tc.jobs}
			if got := r.ExitCode(tc.interrupt); got != tc.want {
				t.Errorf("Result.ExitCode = %d, want %d", got, tc.want)
			}
		})
	}
}
