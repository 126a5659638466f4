package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/volumes"

	"github.com/podrun/podrun/runner/podresources"
)

// teardownSlack bounds the teardown beyond the grace period: the runtime
// calls after the containers are stopped take well under this.
const teardownSlack = 60 * time.Second

// teardown stops the pod's containers with the grace period, stops and
// removes every sandbox of the pod, and removes its data dir, podrun's own
// log dir and its cgroup, once the run has made the data dir (setUp's
// first step: before it, nothing of the pod is the run's). It runs under
// its own bounded context, so that it still runs after the run's context
// is cancelled, and counts not-found as done.
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
	ids := p.sandboxIDs(ctx)
	if err := p.killPod(ctx, true, ids); err != nil {
		errs = append(errs, err)
	}
	testPause(p.r.ctx, PauseTeardown)
	p.observeFinal(ctx)
	p.logs.finishAll(true)
	p.lostLogs = p.logsLost()
	p.logTails = p.readLogTails() // before the log dir goes
	for _, id := range ids {
		if err := removePodSandbox(ctx, p.r.rt, id); err != nil {
			errs = append(errs, fmt.Errorf("removing pod sandbox %s: %w", id, err))
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
	// reclaim should this one die in between.
	if p.cgroup != "" {
		if err := p.r.cgroups.RemovePodCgroup(p.cgroup); err != nil {
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

// removeRetries and removeRetryDelay bound how long teardown waits for a
// container that is still starting (containerd refuses to remove it until
// its start has finished) before giving up.
const (
	removeRetries    = 10
	removeRetryDelay = 200 * time.Millisecond
)

// removePodSandbox removes a sandbox, retrying while the runtime refuses
// because a container of it is still being started or stopped.
func removePodSandbox(ctx context.Context, rt Runtime, id string) error {
	var err error
	for range removeRetries {
		if err = rt.RemovePodSandbox(ctx, id); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(removeRetryDelay):
		}
		_ = rt.StopPodSandbox(ctx, id)
	}
	return err
}

// stopRetries and stopRetryDelay bound how long a stop of a sandbox waits
// for another stop of it under way (goneMeanwhile) to finish.
const (
	stopRetries    = 5
	stopRetryDelay = 200 * time.Millisecond
)

// stopPodSandbox stops a sandbox, counting one that another stop of it
// (`podrun down` beside the run's teardown, two downs) tore down at the
// same time as stopped: the runtime's error then says that what it was
// tearing down went away under it (goneMeanwhile), and the stop is asked
// again until the runtime says it is done (or that the sandbox is gone:
// not found counts as done, cri.Client). Any other error is the stop's.
func stopPodSandbox(ctx context.Context, rt Runtime, id string) error {
	err := rt.StopPodSandbox(ctx, id)
	for i := 0; i < stopRetries && err != nil && goneMeanwhile(err); i++ {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(stopRetryDelay):
		}
		err = rt.StopPodSandbox(ctx, id)
	}
	return err
}

// goneMeanwhile reports whether the runtime's error from a sandbox stop
// says that the pod's network interface was deleted under it: the CNI
// plugin found the interface, and it was gone when it deleted it (ENODEV,
// the bridge and ptp plugins' `failed to delete "eth0": no such device`,
// which containerd wraps in "failed to destroy network for sandbox"). That
// is another stop of the same sandbox tearing its network down at the same
// time; nothing else deletes a pod's interface. The runtime's own message
// (its gRPC status) is read, never podrun's wrapping of it.
func goneMeanwhile(err error) bool {
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) || se.GRPCStatus() == nil {
		return false
	}
	msg := se.GRPCStatus().Message()
	return strings.Contains(msg, "failed to delete ") && strings.HasSuffix(strings.TrimSpace(msg), ": no such device")
}

// sandboxIDs lists every sandbox of the pod in this run: those podrun
// recorded, and any the runtime has that a lost reply hid from it.
func (p *podRun) sandboxIDs(ctx context.Context) []string {
	ids := map[string]bool{}
	for id := range p.sandboxes {
		ids[id] = true
	}
	sbs, err := p.r.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{
		labelRun: p.r.opts.Owner.RunID, labelPodUID: p.uid,
	}})
	if err == nil {
		for _, sb := range sbs {
			ids[sb.Id] = true
		}
	}
	return slices.Sorted(maps.Keys(ids))
}

// killPod stops the pod's running containers as the kubelet's
// killContainersWithSyncResult does: all at once, each with the pod's
// grace period, which its preStop hook consumes; sidecars then wait for
// their turn (terminationOrdering: after the regular and init containers,
// in reverse spec order), which consumes it too, so that the whole stop
// takes at most the grace period (and the 2 s every container gets after
// SIGTERM), not a grace period per turn. Then every sandbox of ids is
// stopped. With honourForce, a closed Options.Force cuts every grace
// period to zero.
func (p *podRun) killPod(ctx context.Context, honourForce bool, ids []string) error {
	ctrs, err := p.r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{labelRun: p.r.opts.Owner.RunID, labelPodUID: p.uid},
	})
	if err != nil {
		return fmt.Errorf("listing the pod's containers: %w", err)
	}
	cs := make([]downContainer, len(ctrs))
	for i, c := range ctrs {
		cs[i] = downContainer{ID: c.Id, Name: c.Labels[labelContainerName], Sidecar: -1}
		for j := range p.pod.Spec.InitContainers {
			if ic := &p.pod.Spec.InitContainers[j]; ic.Name == cs[i].Name && podresources.IsSidecar(ic) {
				cs[i].Sidecar = j
			}
		}
	}
	var force <-chan struct{}
	if honourForce {
		force = p.r.opts.Force
	}
	order := newTerminationOrdering(cs)
	errs := make([]error, len(cs)+len(ids))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			defer order.terminated(i)
			turn := func(grace int64) (int64, bool) { return order.waitForTurn(i, grace, force) }
			errs[i] = p.killContainer(ctx, c.ID, c.Name, "", "", force, turn)
		})
	}
	wg.Wait()
	for i, id := range ids {
		if err := stopPodSandbox(ctx, p.r.rt, id); err != nil {
			errs[len(cs)+i] = fmt.Errorf("stopping pod sandbox %s: %w", id, err)
		}
	}
	return errors.Join(errs...)
}
