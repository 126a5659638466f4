package main

import (
	"math"
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
