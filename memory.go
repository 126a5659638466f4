package main

// podrun's memory: the garbage collector set up for a small heap beside
// the runtime (tuneGC, from main) and a soft limit once a run's manifests
// are read (limitMemory).

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// gcTuned says that main set the garbage collector up (tuneGC), so that a
// run limits its memory once its manifests are read (limitMemory); tests
// that call run leave their own process's collector alone.
var gcTuned bool

// gcMemoryLimit is the least soft limit of the Go runtime's memory that
// limitMemory sets (docs/benchmark.md has the measurements behind it).
const gcMemoryLimit = 24 << 20

// gcMemoryBase and gcMemoryPerPod make the limit grow with a run's pods:
// each running pod holds goroutines, gRPC buffers and its status, and a
// limit that stays at gcMemoryLimit while they grow makes the collector
// run all the time (100 pods: 421 collections and 2.2 s of CPU in user
// space against 0.4 s; docs/benchmark.md, The memory limit). At 50 pods
// the two give the same 24 MiB.
const (
	gcMemoryBase   = 12 << 20
	gcMemoryPerPod = 240 << 10
)

// tuneGC: podrun's heap stays small (a few MiB of manifests and status) and
// it shares two cores with the runtime it drives, so it collects less often
// than Go's default (GOGC 400). GOGC in the environment wins.
func tuneGC() {
	gcTuned = true
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// limitMemory sets a soft limit on the Go runtime's memory once a run's
// manifests are read: gcMemoryLimit, or four times the heap they hold, or
// gcMemoryBase and gcMemoryPerPod for each of its pods, whichever is the
// most. Past it the run collects more often instead of growing
// (docs/benchmark.md, The memory limit), and a run of thousands of pods is
// not made to collect over and over.
// GOMEMLIMIT in the environment wins.
func limitMemory(pods int) {
	if !gcTuned || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	if heap[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(memoryLimit(heap[0].Value.Uint64(), pods))
	}
}

// memoryLimit is the soft memory limit of a run of pods whose manifests
// hold heap bytes.
func memoryLimit(heap uint64, pods int) int64 {
	perPods := int64(gcMemoryBase) + gcMemoryPerPod*int64(min(max(pods, 0), 1<<30))
	return max(gcMemoryLimit, 4*int64(min(heap, 1<<60)), perPods)
}
