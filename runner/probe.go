package runner

// The prober's decisions (pkg/kubelet/prober: worker.go and the results
// manager), without effects: what a probe publishes and when to probe.
// prober.go runs them against the pod.

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// probeResult is the published result of a probe, as the kubelet's prober
// results manager holds it.
type probeResult int

const (
	probeUnknown probeResult = iota
	probeSuccess
	probeFailure
)

// probeResults holds the published probe results by container ID. A missing
// entry means "no result yet".
type probeResults struct {
	Liveness  map[string]probeResult
	Startup   map[string]probeResult
	Readiness map[string]probeResult
}

// probeKind is one of the three probes of a container.
type probeKind int

const (
	probeLiveness probeKind = iota
	probeReadiness
	probeStartup
)

// String is the kubelet's probeType name, used in its events.
func (k probeKind) String() string {
	return [...]string{"Liveness", "Readiness", "Startup"}[k]
}

// initialResult is the result a worker publishes for a new container
// instance before it has probed it (pkg/kubelet/prober/worker.go newWorker).
func (k probeKind) initialResult() probeResult {
	switch k {
	case probeReadiness:
		return probeFailure
	case probeLiveness:
		return probeSuccess
	}
	return probeUnknown
}

func (k probeKind) spec(c *v1.Container) *v1.Probe {
	return [...]*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}[k]
}

func (r probeResults) of(k probeKind) map[string]probeResult {
	return [...]map[string]probeResult{r.Liveness, r.Readiness, r.Startup}[k]
}

// probeTarget is what a worker sees of the newest instance of its container.
type probeTarget struct {
	ID        string
	Running   bool
	Exited    bool
	ExitCode  int32 // of an exited instance
	StartedAt time.Time
	// Started: running, and the startup probe succeeded or there is none.
	Started bool
}

// probeWorker is the kubelet's prober worker (pkg/kubelet/prober/worker.go)
// for one probe of one container, across its instances, without effects:
// tick decides whether to probe now and record takes the probe's result.
// Both publish into the results map of the worker's kind, by container ID.
type probeWorker struct {
	kind probeKind
	spec *v1.Probe
	// restarts says whether an instance that exited with the code is
	// followed by another (containerRestarts: the container's rules and
	// policy, else the pod's; a sidecar always), so the worker goes on.
	restarts func(exitCode int32) bool

	containerID string
	onHold      bool // after a published liveness/startup Failure, until a new instance
	lastResult  probeResult
	resultRun   int
}

func newProbeWorker(kind probeKind, spec *v1.Probe, restarts func(exitCode int32) bool) *probeWorker {
	return &probeWorker{kind: kind, spec: spec, restarts: restarts, lastResult: probeUnknown}
}

// set publishes r for id and reports whether the published value changed.
func set(results map[string]probeResult, id string, r probeResult) bool {
	old, ok := results[id]
	results[id] = r
	return !ok || old != r
}

// tick is the first half of doProbe: given the newest instance of the
// container (ok false: none yet), it updates what is published and says
// whether to run the probe now, and whether the worker should stop.
func (w *probeWorker) tick(results map[string]probeResult, t probeTarget, ok bool, now time.Time) (probe, stop, changed bool) {
	if !ok || t.ID == "" {
		return false, false, false
	}
	if w.containerID != t.ID {
		if w.containerID != "" {
			delete(results, w.containerID)
		}
		w.containerID = t.ID
		changed = set(results, t.ID, w.kind.initialResult())
		// A new instance: resume probing.
		w.onHold = false
	}
	if w.onHold {
		return false, false, changed
	}
	if !t.Running {
		changed = set(results, t.ID, probeFailure) || changed
		// Stop when no further instance will come.
		return false, t.Exited && !w.restarts(t.ExitCode), changed
	}
	// No probing during initialDelaySeconds, counted in whole seconds from
	// the instance's start.
	if int32(now.Sub(t.StartedAt)/time.Second) < w.spec.InitialDelaySeconds {
		return false, false, changed
	}
	if t.Started {
		// The startup probe is done once the container has started.
		if w.kind == probeStartup {
			return false, false, changed
		}
	} else if w.kind != probeStartup {
		// Liveness and readiness wait for the startup probe.
		return false, false, changed
	}
	return true, false, changed
}

// record is the second half of doProbe: it counts the probe's result and
// publishes it once it has come successThreshold (failureThreshold) times
// in a row. It reports whether the published value changed.
func (w *probeWorker) record(results map[string]probeResult, r probeResult) bool {
	if w.lastResult == r {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = r, 1
	}
	if r == probeFailure && w.resultRun < int(w.spec.FailureThreshold) ||
		r == probeSuccess && w.resultRun < int(w.spec.SuccessThreshold) {
		return false
	}
	changed := set(results, w.containerID, r)
	if r == probeFailure && (w.kind == probeLiveness || w.kind == probeStartup) {
		// The container will be killed and restarted: probe no more until
		// the new instance appears.
		w.onHold = true
		w.resultRun = 0
	}
	return changed
}

// probeOutcome is one run of a probe (pkg/probe Result).
type probeOutcome int

const (
	probeRunSuccess probeOutcome = iota
	probeRunWarning
	probeRunFailure
	probeRunUnknown
)
