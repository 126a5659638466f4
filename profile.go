//go:build profile

// Profiling hooks, only in a binary built with -tags profile (make
// profile): PODRUN_CPUPROFILE=FILE writes a CPU profile of the whole run to
// FILE (PODRUN_CPUPROFILE_HZ samples per second, default 500; hack/bench
// runs are tens of milliseconds), PODRUN_MEMPROFILE=FILE a heap profile
// (every 4 KiB allocated sampled) at exit. Package inits are not in the
// CPU profile: GODEBUG=inittrace=1 shows them.
//
// main.go has no hook for this, so with either variable set this init
// runs the command itself, as main does (same GC percent, same run), and
// exits: main is never reached. Keep the two alike.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"

	"github.com/podrun/podrun/runner"
)

func init() {
	cpuPath, memPath := os.Getenv("PODRUN_CPUPROFILE"), os.Getenv("PODRUN_MEMPROFILE")
	if cpuPath == "" && memPath == "" {
		return
	}
	tuneGC() // as main
	limitProcs()
	if memPath != "" {
		runtime.MemProfileRate = 4096
	}
	var cpu *os.File
	if cpuPath != "" {
		hz, err := strconv.Atoi(os.Getenv("PODRUN_CPUPROFILE_HZ"))
		if err != nil || hz <= 0 {
			hz = 500
		}
		if cpu, err = os.Create(cpuPath); err != nil {
			fmt.Fprintf(os.Stderr, "podrun: create CPU profile: %v\n", err)
			os.Exit(runner.ExitPodrunError)
		}
		// Set before StartCPUProfile, which then keeps it (and says on
		// stderr that it cannot set its own 100 Hz).
		runtime.SetCPUProfileRate(hz)
		if err := pprof.StartCPUProfile(cpu); err != nil {
			fmt.Fprintf(os.Stderr, "podrun: start CPU profile: %v\n", err)
			os.Exit(runner.ExitPodrunError)
		}
	}
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	if cpu != nil {
		pprof.StopCPUProfile()
		cpu.Close()
	}
	if memPath != "" {
		if f, err := os.Create(memPath); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	os.Exit(code)
}
