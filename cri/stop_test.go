package cri

import (
	"math"
	"testing"
	"time"
)

// TestStopTimeout: the grace period StopContainer hands the runtime, and
// the RPC's deadline beyond the per-call timeout, never wrap around:
// containerd and CRI-O compute time.Duration(timeout)*time.Second, which a
// terminationGracePeriodSeconds of MaxInt64 turned into -1 s (SIGKILL at
// once), and the client's own deadline into one already past.
func TestStopTimeout(t *testing.T) {
	const maxDuration = time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		seconds, want int64
	}{
		{0, 0},
		{2, 2},
		{30, 30},
		{MaxStopTimeout, MaxStopTimeout},
		{MaxStopTimeout + 1, MaxStopTimeout},
		{math.MaxInt64, MaxStopTimeout},
	} {
		got := stopTimeout(tc.seconds)
		if got != tc.want {
			t.Errorf("stopTimeout(%d) = %d, want %d", tc.seconds, got, tc.want)
		}
		// What the runtime computes from it, and the RPC's deadline.
		if d := time.Duration(got) * time.Second; d < 0 || d/time.Second != time.Duration(got) {
			t.Errorf("stopTimeout(%d) = %d wraps around as a time.Duration: %v", tc.seconds, got, d)
		}
		if d := addDurations(2*time.Minute, time.Duration(got)*time.Second); d < time.Duration(got)*time.Second {
			t.Errorf("the deadline of a stop with %d s is %v: wrapped around", got, d)
		}
	}
	for _, tc := range []struct{ a, b, want time.Duration }{
		{0, 0, 0},
		{time.Minute, time.Second, time.Minute + time.Second},
		{2 * time.Minute, maxDuration, maxDuration},
		{2 * time.Minute, maxDuration - time.Minute, maxDuration},
		{2 * time.Minute, maxDuration - 3*time.Minute, maxDuration - time.Minute},
	} {
		if got := addDurations(tc.a, tc.b); got != tc.want {
			t.Errorf("addDurations(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
