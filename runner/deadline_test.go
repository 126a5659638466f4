package runner

import (
	"math"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestPastActiveDeadline(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	start := t0
	cases := []struct {
		name    string
		seconds *int64
		start   time.Time
		now     time.Time
		want    bool
		at      time.Time // ActiveDeadline
	}{
		{"no deadline never passes", nil, start, start.Add(1000 * time.Hour), false, time.Time{}},
		{"not started yet: no start time, never passes", secs(1), time.Time{}, start.Add(time.Hour), false, time.Time{}},
		{"before the deadline", secs(3), start, start.Add(2999 * time.Millisecond), false, start.Add(3 * time.Second)},
		{"at the deadline it has passed (the kubelet's duration >= allowed)", secs(3), start, start.Add(3 * time.Second), true, start.Add(3 * time.Second)},
		{"after the deadline", secs(3), start, start.Add(time.Minute), true, start.Add(3 * time.Second)},
		{"the API's largest deadline, MaxInt32 seconds, 68 years", secs(math.MaxInt32), start, start.Add(24 * time.Hour), false, start.Add(math.MaxInt32 * time.Second)},
		{"a deadline beyond a time.Duration saturates instead of wrapping into the past", secs(math.MaxInt64), start, start.Add(24 * time.Hour), false, start.Add(graceDuration(math.MaxInt64))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PastActiveDeadline(tc.seconds, tc.start, tc.now); got != tc.want {
				t.Errorf("PastActiveDeadline = %v, want %v", got, tc.want)
			}
			if got := ActiveDeadline(tc.seconds, tc.start); !got.Equal(tc.at) {
				t.Errorf("ActiveDeadline = %v, want %v", got, tc.at)
			}
		})
	}
}

// A pod past its deadline is Failed with the kubelet's reason and message
// whatever its containers say, and its conditions follow the phase.
func TestPodStatusForAFailure(t *testing.T) {
	pod := basePlanPod()
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	st := podStatusFor(statusInput{Pod: pod, Status: baseStatus(), StartTime: t0, Failure: deadlineFailure})
	if st.Phase != v1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("phase %s, reason %q, message %q; want Failed, the kubelet's DeadlineExceeded", st.Phase, st.Reason, st.Message)
	}
	for _, c := range st.Conditions {
		if (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && (c.Status != v1.ConditionFalse || c.Reason != reasonPodFailed) {
			t.Errorf("condition %s = %s (%s), want False (PodFailed)", c.Type, c.Status, c.Reason)
		}
	}
	if running := st.ContainerStatuses[0].State.Running; running == nil {
		t.Errorf("container app1 %+v, want still running until it is killed", st.ContainerStatuses[0].State)
	}
	st = podStatusFor(statusInput{Pod: pod, Status: baseStatus(), StartTime: t0})
	if st.Phase != v1.PodRunning || st.Reason != "" {
		t.Errorf("without a failure: phase %s, reason %q; want Running, none", st.Phase, st.Reason)
	}
}
