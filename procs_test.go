package main

import (
	"runtime"
	"testing"
)

// TestLimitProcs: one P unless GOMAXPROCS is in the environment, which
// wins (the Go runtime read it at start; limitProcs leaves it alone).
func TestLimitProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		env  string
		set  bool
		want int
	}{
		{"", false, 1},
		{"3", true, 3},
	} {
		runtime.GOMAXPROCS(3)
		if tc.set {
			t.Setenv("GOMAXPROCS", tc.env)
		} else {
			t.Setenv("GOMAXPROCS", "")
		}
		limitProcs()
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS=%q: %d Ps, want %d", tc.env, got, tc.want)
		}
	}
}
