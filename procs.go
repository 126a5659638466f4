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
// The figures that chose it: docs/benchmark.md, Where the CPU goes.
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
