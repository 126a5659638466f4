package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/podrun/podrun/volumes"
)

// teardownSlack bounds the teardown beyond the grace period: the runtime
// calls after the containers are stopped take well under this.
const teardownSlack = 60 * time.Second

// teardown stops the pod's containers with the grace period, copies what
// --copy-out asks for and was not copied yet (copyRest: the volumes are
// still there), stops and removes every sandbox of the pod, and removes
// its data dir, podrun's own log dir and its cgroup, once the run has
// made the data dir (setUp's first step: before it, nothing of the pod
// is the run's). It runs under its own bounded context, so that it still
// runs after the run's context is cancelled, and counts not-found as done.
func (p *podRun) teardown() error {
	if p.dataDir == "" {
		// The run never took the pod on (interrupted before, or another
		// run of it made the data dir first): nothing here is its own,
		// and the log dir, named by the pod, may be that other run's.
		return nil
	}
	grace := graceDuration(p.gracePeriod())
	ctx, cancel := context.WithTimeout(context.Background(), grace+min(teardownSlack, math.MaxInt64-grace))
	defer cancel()
	var errs []error
	// ps shows the pod Terminating from now on, with its grace period.
	p.recordStatus(func(rec *statusRecord) {
		now, grace := p.r.now(), p.gracePeriod()
		rec.Deleting, rec.GracePeriod = &now, &grace
	})
	ids, sandboxesGone := p.sandboxIDsSure(ctx)
	var settled *killedPod
	if killed, err := p.killPod(ctx, true, ids); err != nil {
		errs = append(errs, err)
	} else {
		settled = &killed
	}
	testPause(p.r.ctx, PauseTeardown)
	p.observeFinal(ctx, settled)
	p.r.obs.forget(p.uid) // its removal below wakes no poll
	// What the containers left on their volumes, before the volumes go.
	p.copyRest()
	p.logs.finishAll(true)
	p.lostLogs = p.logsLost()
	p.logTails = p.readLogTails() // before the log dir goes
	for _, id := range ids {
		if err := removeSandboxRetrying(ctx, p.r.rt, id); err != nil {
			errs = append(errs, fmt.Errorf("removing pod sandbox %s: %w", id, err))
			sandboxesGone = false
		}
	}
	if p.ownLogs {
		if err := volumes.RemoveSafely(p.logDir); err != nil {
			errs = append(errs, err)
		}
	}
	// The pod cgroup once the runtime has removed the sandbox and its
	// containers' cgroups, as the kubelet's SyncTerminatedPod releases it;
	// before the data dir, whose owner record names it for a later run to
	// reclaim should this one die in between. With every sandbox gone, a
	// process still in it is one the runtime lost, killed first.
	if p.cgroup != "" {
		if err := p.r.cgroups.RemovePodCgroup(p.cgroup, sandboxesGone); err != nil {
			errs = append(errs, err)
		}
	}
	if p.dataDir != "" {
		if err := volumes.RemoveSafely(p.dataDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
