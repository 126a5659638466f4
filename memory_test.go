package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		heap uint64
		pods int
		want int64
	}{
		{0, 0, 24 << 20},
		{0, 1, 24 << 20},
		{3 << 20, 50, 24 << 20}, // 50 small pods: the least limit
		{6 << 20, 1, 24 << 20},
		{7 << 20, 1, 28 << 20}, // past it, four times the manifests' heap
		{3 << 20, 51, 24 << 20},
		{3 << 20, 52, 24768 << 10},  // past 51 pods, 240 KiB a pod
		{3 << 20, 100, 36288 << 10}, // 100 pods: 35.4 MiB
		{20 << 20, 100, 80 << 20},   // a large manifest's heap wins
		{400 << 20, 1, 1600 << 20},
		{0, -1, 24 << 20},
		{math.MaxUint64, 1 << 40, 4 << 60},
	} {
		if got := memoryLimit(tc.heap, tc.pods); got != tc.want {
			t.Errorf("memoryLimit(%d, %d) = %d, want %d", tc.heap, tc.pods, got, tc.want)
		}
	}
}

// TestLimitMemorySetsTheLimit: a tuned run's limit is memoryLimit of the
// heap its manifests hold, read from the runtime.
func TestLimitMemorySetsTheLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before, tuned := debug.SetMemoryLimit(-1), gcTuned
	defer func() { debug.SetMemoryLimit(before); gcTuned = tuned }()
	gcTuned = true
	const pods = 200
	limitMemory(pods)
	got := debug.SetMemoryLimit(-1)
	if low := memoryLimit(0, pods); got < low || got == before {
		t.Errorf("limit %d after limitMemory(%d), want memoryLimit of the heap, at least %d", got, pods, low)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if high := memoryLimit(ms.HeapAlloc, pods); got > high {
		t.Errorf("limit %d after limitMemory(%d), more than memoryLimit of the heap now (%d)", got, pods, high)
	}
}
