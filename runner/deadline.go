package runner

import (
	"time"
)

// The pod's active deadline (spec.activeDeadlineSeconds), enforced as the
// kubelet's activeDeadlineHandler does (pkg/kubelet/active_deadline.go,
// v1.37.2): measured from the pod's start time (status.startTime, which
// podrun sets when it takes the pod on, as the kubelet's status manager
// does at its first sync); once it has passed, every status generated for
// the pod is Failed with reason DeadlineExceeded and the handler's
// message (generateAPIPodStatus' ShouldEvict), an event says so, and the
// pod, now terminal, is killed with its grace period, preStop hooks and
// init containers included (SyncTerminatingPod's killPod; podrun's
// teardown). The sync loop wakes at the deadline (the kubelet's sync loop
// asks ShouldSync every second).

// ReasonDeadlineExceeded is the reason of a pod whose activeDeadlineSeconds
// passed, and of the kubelet's event for it.
const ReasonDeadlineExceeded = "DeadlineExceeded"

// messageDeadlineExceeded is the kubelet's message for it.
const messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"

// ActiveDeadline is when an active deadline of seconds, counted from
// start, passes; the zero time when there is none (seconds nil) or
// nothing started (start zero). Seconds beyond what a time.Duration
// holds saturate (graceDuration): the deadline then lies centuries ahead.
// A Job's activeDeadlineSeconds, counted from the job's start, is the
// same sum.
func ActiveDeadline(seconds *int64, start time.Time) time.Time {
	if seconds == nil || start.IsZero() {
		return time.Time{}
	}
	return start.Add(graceDuration(*seconds))
}

// PastActiveDeadline is the kubelet's pastActiveDeadline: whether, at now,
// a pod (or a job) that started at start has been active for at least
// seconds. No deadline, or no start, never passes.
func PastActiveDeadline(seconds *int64, start, now time.Time) bool {
	d := ActiveDeadline(seconds, start)
	return !d.IsZero() && !now.Before(d)
}

// podFailure is a reason the pod failed that is not its containers': a
// sync handler's eviction in the kubelet's words (ShouldEvictResponse),
// which makes the phase Failed and sets the pod's reason and message.
type podFailure struct {
	Reason  string
	Message string
}

// deadlineFailure is the failure of a pod past its deadline.
var deadlineFailure = &podFailure{Reason: ReasonDeadlineExceeded, Message: messageDeadlineExceeded}
