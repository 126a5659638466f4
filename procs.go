package main

// podrun's threads: one running Go code at a time (limitProcs, from main).

import (
	"os"
	"runtime"
)

// limitProcs runs podrun's Go code on one thread at a time (GOMAXPROCS 1)
// unless GOMAXPROCS is set in the environment. A run mostly waits for the
// runtime: its goroutines (a pod's sync loop, the observer, the log
// followers, gRPC's transport) wake for a few microseconds each, and
// with a P per core they wake one another across threads, each wake-up a
// context switch and a futex. One P serves them in turn on the thread
// that is awake; a blocking syscall still hands the P to another thread.
// Measured on the shared 2-core machine (docs/benchmark.md, Where the
// CPU goes): a third fewer context switches and less CPU at every size
// (3 to 12 % at 1 to 20 pods, 20 to 38 % at 50), the wall time within
// the loaded machine's noise (from 9 % more to 9 % less).
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
