package main

import (
	"math"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		heap uint64
		want int64
	}{
		{0, 24 << 20},
		{3 << 20, 24 << 20}, // 50 small pods: the least limit
		{6 << 20, 24 << 20},
		{7 << 20, 28 << 20}, // past it, four times the manifests' heap
		{400 << 20, 1600 << 20},
		{math.MaxUint64, 4 << 60},
	} {
		if got := memoryLimit(tc.heap); got != tc.want {
			t.Errorf("memoryLimit(%d) = %d, want %d", tc.heap, got, tc.want)
		}
	}
}
