package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/sources/podresources"
	"github.com/podrun/podrun/volumes"
)

// Stopping a pod: the one place that knows how podrun stops a pod's
// containers and sandboxes, and in which order (the kubelet's killPod,
// killContainer and termination_ordering.go). Three paths stop pods; they
// sit side by side here and share the grace period, the termination
// ordering (terminationOrdering) and the sandbox stop and removal:
//
//   - the run's (killPod: teardown, teardown.go, and act's step 1 before a
//     sandbox is made again): the pod's spec is in hand. Its containers
//     are the run's (by label); each is stopped by killContainer, with an
//     event, its spec's preStop hook and the kubelet's grace period
//     (killGracePeriod: a probe's own for a liveness or startup kill), in
//     its turn; then every sandbox of the run is stopped. teardown then
//     removes the sandboxes (removeSandboxRetrying) and the data dir, log
//     dir and cgroup the run made. killContainer also stops one container
//     alone: act's step 2, a failed postStart hook.
//   - `podrun down`'s and handover's (stopForDown, from downPods in
//     down.go): the run is gone and its spec with it. Each running
//     container of the sandbox is restored from its labels and annotations
//     (restoreContainer: preStop hook, ports, sidecar), the grace period is
//     the sandbox's annotation, each step is a progress line rather than an
//     event, and hooks reach the pod at the IP the sandbox's status gives;
//     the same turns. Then removeSandboxAndPodDirs stops what still runs,
//     stops and removes the sandbox and removes the dirs its annotations
//     name, and removeCgroups the pod cgroups.
//   - reclaim's (reclaim.go: what a dead podrun left): no hooks, no grace
//     period: removeSandboxAndPodDirs with grace 0, then removeCgroups.
//
// They stay three functions, not one: the run's and down's stops take the
// spec, the grace period and the pod's IP from different places and report
// differently (a run's killContainer may say it kills a container now after
// a second signal where down's stop, already at grace 0, says nothing),
// and reclaim runs no hook at all; one function would change what one of
// them does or says.

// minimumGracePeriodSeconds is the kubelet's minimumGracePeriodInSeconds:
// a container always gets this long after SIGTERM.
const minimumGracePeriodSeconds = 2

// maxGraceSeconds is the longest wait, in seconds, a time.Duration holds:
// about 292 years.
const maxGraceSeconds = math.MaxInt64 / int64(time.Second)

// graceDuration is a grace period (or a sleep hook's seconds) as a
// time.Duration, saturated at maxGraceSeconds: validation lets a grace
// period up to MaxInt64 seconds through, as the API server does, and
// time.Duration(s)*time.Second wraps around beyond it into a negative
// wait, or a short one: a timer that fires at once, a preStop cut before
// it starts, the kubelet's kill now. Saturated, a huge grace period means
// waiting as long as possible, until a second signal cuts it as it cuts
// any grace period. cri.Client.StopContainer bounds what the runtime is
// handed the same way.
func graceDuration(seconds int64) time.Duration {
	return time.Duration(min(max(seconds, -maxGraceSeconds), maxGraceSeconds)) * time.Second
}

// killGracePeriod is the kubelet's setTerminationGracePeriod: the pod's
// deletion grace period, else its terminationGracePeriodSeconds, where a
// liveness or startup kill takes the probe's own terminationGracePeriodSeconds
// when set; else the minimum. A kill that restarts the pod in place has
// the kubelet's override of 0 (restartall.go): no preStop hook, and the
// runtime is given the minimum.
func killGracePeriod(pod *v1.Pod, c *v1.Container, reason killReason) int64 {
	switch {
	case reason == killRestartAll:
		return 0
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		if c != nil {
			var p *v1.Probe
			switch reason {
			case killStartupProbe:
				p = c.StartupProbe
			case killLivenessProbe:
				p = c.LivenessProbe
			}
			if p != nil && p.TerminationGracePeriodSeconds != nil {
				return *p.TerminationGracePeriodSeconds
			}
		}
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return minimumGracePeriodSeconds
}

// gracePeriod is the pod's termination grace period in seconds, at least
// the kubelet's minimum of 2.
func (p *podRun) gracePeriod() int64 {
	g := int64(v1.DefaultTerminationGracePeriodSeconds)
	if p.pod.Spec.TerminationGracePeriodSeconds != nil {
		g = *p.pod.Spec.TerminationGracePeriodSeconds
	}
	return max(g, minimumGracePeriodSeconds)
}

// stoppingContainer is a running container as a stop sees it: the run's
// (killPod) knows its ID, name and sidecar index, the pod's spec the rest;
// `podrun down`'s (stopForDown) restores it whole from its labels and
// annotations (restoreContainer).
type stoppingContainer struct {
	ID      string
	Name    string
	PreStop *v1.LifecycleHandler // restored only: a run's is in the spec
	Ports   []v1.ContainerPort   // restored only
	// Sidecar is the container's index among the init containers when it
	// is a sidecar, else -1.
	Sidecar int
}

// restoreContainer reads what `podrun down` needs of a container from its
// labels and annotations (containerAnnotations). An annotation that does
// not parse is left out (no hook, no ports), as the kubelet does.
func restoreContainer(c *runtimeapi.Container) stoppingContainer {
	d := stoppingContainer{ID: c.Id, Name: c.Labels[labelContainerName], Sidecar: -1}
	if d.Name == "" && c.Metadata != nil {
		d.Name = c.Metadata.Name
	}
	if s := c.Annotations[annotationPreStopHandler]; s != "" {
		var h v1.LifecycleHandler
		if json.Unmarshal([]byte(s), &h) == nil {
			d.PreStop = &h
		}
	}
	if s := c.Annotations[annotationContainerPorts]; s != "" {
		_ = json.Unmarshal([]byte(s), &d.Ports)
	}
	if s, ok := c.Annotations[annotationSidecar]; ok {
		if i, err := strconv.Atoi(s); err == nil && i >= 0 {
			d.Sidecar = i
		}
	}
	return d
}

// stopTurns says, for each container of cs (by index), which others must
// have stopped before it is: none for a regular container; for a sidecar,
// every regular container and every sidecar declared after it — the
// kubelet's termination ordering, which stops sidecars after the main
// containers, in reverse order.
func stopTurns(cs []stoppingContainer) [][]int {
	turns := make([][]int, len(cs))
	for i, c := range cs {
		if c.Sidecar < 0 {
			continue
		}
		for j, o := range cs {
			if j != i && (o.Sidecar < 0 || o.Sidecar > c.Sidecar) {
				turns[i] = append(turns[i], j)
			}
		}
	}
	return turns
}

// terminationOrdering is the kubelet's (kuberuntime
// termination_ordering.go) for one stop of a pod: a container waits for
// the containers stopTurns names, for at most the grace period it has
// left, before it is stopped itself. The run's teardown (killPod) and
// `podrun down` (stopForDown) stop pods through it alike.
type terminationOrdering struct {
	turns   [][]int
	stopped []chan struct{}
}

func newTerminationOrdering(cs []stoppingContainer) *terminationOrdering {
	o := &terminationOrdering{turns: stopTurns(cs), stopped: make([]chan struct{}, len(cs))}
	for i := range o.stopped {
		o.stopped[i] = make(chan struct{})
	}
	return o
}

// waitForTurn waits until every container before container i has stopped,
// at most grace seconds, or until force closes (forced), and returns the
// whole seconds it waited, which the container's grace period loses.
func (o *terminationOrdering) waitForTurn(i int, grace int64, force <-chan struct{}) (elapsed int64, forced bool) {
	if len(o.turns[i]) == 0 || grace <= 0 {
		return 0, false
	}
	start := time.Now()
	wait := time.NewTimer(graceDuration(grace))
	defer wait.Stop()
	for _, j := range o.turns[i] {
		select {
		case <-o.stopped[j]:
		case <-wait.C:
			return int64(time.Since(start) / time.Second), false
		case <-force:
			return int64(time.Since(start) / time.Second), true
		}
	}
	return int64(time.Since(start) / time.Second), false
}

// terminated marks container i stopped; it is called once per container.
func (o *terminationOrdering) terminated(i int) { close(o.stopped[i]) }

// The run's stop.

// killPod stops the pod's running containers as the kubelet's
// killContainersWithSyncResult does: all at once, each with the pod's
// grace period, which its preStop hook consumes; sidecars then wait for
// their turn (terminationOrdering: after the regular and init containers,
// in reverse spec order), which consumes it too, so that the whole stop
// takes at most the grace period (and the 2 s every container gets after
// SIGTERM), not a grace period per turn. Then every sandbox of ids is
// stopped. With honourForce, a closed Wiring.Force cuts every grace
// period to zero.
//
// It returns what it found and did (killedPod), from which the
// teardown's last look at the pod is read (observer.settle).
func (p *podRun) killPod(ctx context.Context, honourForce bool, ids []string) (killedPod, error) {
	// Every container of the pod in this run, in any state: the running
	// ones are stopped, and the list is the teardown's view of the rest.
	all, err := p.r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{labelRun: p.r.opts.Owner.RunID, labelPodUID: p.uid},
	})
	if err != nil {
		return killedPod{}, fmt.Errorf("listing the pod's containers: %w", err)
	}
	var ctrs []*runtimeapi.Container
	for _, c := range all {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			ctrs = append(ctrs, c)
		}
	}
	cs := make([]stoppingContainer, len(ctrs))
	for i, c := range ctrs {
		cs[i] = stoppingContainer{ID: c.Id, Name: c.Labels[labelContainerName], Sidecar: -1}
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
		if err := stopSandboxRetrying(ctx, p.r.rt, id); err != nil {
			errs[len(cs)+i] = fmt.Errorf("stopping pod sandbox %s: %w", id, err)
		}
	}
	return killedPod{Containers: all, Sandboxes: ids}, errors.Join(errs...)
}

// killedPod is what a killPod that succeeded found and did: every
// container of the pod in the run as it listed them before the stops
// (the running ones of them stopped since), and the sandboxes it stopped.
type killedPod struct {
	Containers []*runtimeapi.Container
	Sandboxes  []string
}

// killContainer stops one container instance as the kubelet's
// killContainer does: event Killing, the preStop hook (when the grace
// period is above 0) bounded by the grace period, whose elapsed whole
// seconds it consumes, then CRI StopContainer with what is left, at least
// 2 s; the runtime sends SIGKILL when that runs out. message "" means
// "Stopping container NAME". waitTurn, when set, is called after the hook
// with the grace period left: the wait for the container's turn in the
// pod's termination ordering (killPod), which consumes it too. When force
// closes, the hook or the wait is abandoned and the container is stopped
// with no grace.
func (p *podRun) killContainer(ctx context.Context, id, name string, reason killReason, message string, force <-chan struct{}, waitTurn func(grace int64) (int64, bool)) error {
	c := volumes.FindContainer(p.pod, name)
	grace := killGracePeriod(p.pod, c, reason)
	if message == "" {
		message = "Stopping container " + name
	}
	p.event("Killing", "%s", message)
	forced := false
	if c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 {
		var elapsed int64
		elapsed, forced = runPreStop(ctx, p.r.rt, id, c, c.Lifecycle.PreStop, grace, p.fullName(), p.podIP(), force, p.event)
		grace -= elapsed
	}
	if waitTurn != nil && !forced && grace > 0 {
		var elapsed int64
		elapsed, forced = waitTurn(grace)
		grace -= elapsed
	}
	grace = max(grace, minimumGracePeriodSeconds)
	if forced {
		grace = 0
	}
	done := make(chan error, 1)
	go func() { done <- stopContainerRetrying(ctx, p.r.rt, id, grace) }()
	var err error
	select {
	case err = <-done:
	case <-force:
		p.event("Killing", "Killing container %s now (second signal)", name)
		err = p.r.rt.StopContainer(ctx, id, 0)
		<-done
	}
	if err != nil {
		return fmt.Errorf("stopping container %s: %w", name, err)
	}
	return nil
}

// sandboxIDs lists every sandbox of the pod in this run: those podrun
// recorded, and any the runtime has that a lost reply hid from it. Only a
// failed RunPodSandbox can have left such a sandbox (sandboxUnsure): the
// runtime is asked only then, not at every pod's teardown (issue 18: CRI
// calls per pod).
func (p *podRun) sandboxIDs(ctx context.Context) []string {
	ids, _ := p.sandboxIDsSure(ctx)
	return ids
}

// sandboxIDsSure is sandboxIDs and whether they are all of the pod's: not
// when the run was unsure and the runtime did not answer the listing.
func (p *podRun) sandboxIDsSure(ctx context.Context) ([]string, bool) {
	ids := map[string]bool{}
	for id := range p.sandboxes {
		ids[id] = true
	}
	if !p.sandboxUnsure {
		return slices.Sorted(maps.Keys(ids)), true
	}
	sbs, err := p.r.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{
		labelRun: p.r.opts.Owner.RunID, labelPodUID: p.uid,
	}})
	if err == nil {
		for _, sb := range sbs {
			ids[sb.Id] = true
		}
	}
	return slices.Sorted(maps.Keys(ids)), err == nil
}

// `podrun down`'s stop.

// stopForDown stops the running containers of a sandbox as the kubelet
// stops a pod: all at once, each with its preStop hook first (run for at
// most the grace period, which it consumes), the sidecars then waiting for
// their turn (terminationOrdering, also consuming the grace period), and
// CRI StopContainer with what is left of it, at least 2 s. A closed force
// (a second signal) cuts whatever is left to 0, as it does for a run's
// teardown (killContainer).
func stopForDown(ctx context.Context, rt Runtime, sb *runtimeapi.PodSandbox, ctrs []*runtimeapi.Container, grace int64, force <-chan struct{}, progressf func(string, ...any)) error {
	var cs []stoppingContainer
	for _, c := range ctrs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			cs = append(cs, restoreContainer(c))
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	if len(cs) == 0 {
		return nil
	}
	name, ns, uid := sb.Labels[labelPodName], sb.Labels[labelPodNamespace], sb.Labels[labelPodUID]
	podName := formatPod(name, ns, uid)
	podIP := ""
	if st, err := rt.PodSandboxStatus(ctx, sb.Id, false); err == nil && st.GetStatus().GetNetwork() != nil {
		podIP = st.GetStatus().GetNetwork().GetIp()
	}
	if podIP == "" {
		// A host-network pod: its servers answer on the node.
		podIP = "127.0.0.1"
	}
	order := newTerminationOrdering(cs)
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			defer order.terminated(i)
			left, forced := grace, false
			progressf("pod/%s: Killing: Stopping container %s", name, c.Name)
			if c.PreStop != nil && left > 0 {
				spec := &v1.Container{Name: c.Name, Ports: c.Ports}
				var elapsed int64
				elapsed, forced = runPreStop(ctx, rt, c.ID, spec, c.PreStop, left, podName, podIP, force, func(reason, format string, a ...any) {
					progressf("pod/%s: %s: %s", name, reason, fmt.Sprintf(format, a...))
				})
				left -= elapsed
			}
			if left > 0 && !forced {
				var elapsed int64
				elapsed, forced = order.waitForTurn(i, left, force)
				left -= elapsed
			}
			left = max(left, minimumGracePeriodSeconds)
			if forced {
				left = 0
			}
			if err := stopContainerUnlessForced(ctx, rt, c.ID, left, force, func() {
				progressf("pod/%s: Killing: Killing container %s now (second signal)", name, c.Name)
			}); err != nil {
				errs[i] = fmt.Errorf("stopping container %s: %w", c.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopContainerUnlessForced stops a container with the grace period,
// stopping it again at once (grace 0) should force close meanwhile.
func stopContainerUnlessForced(ctx context.Context, rt Runtime, id string, grace int64, force <-chan struct{}, forced func()) error {
	if grace == 0 {
		return stopContainerRetrying(ctx, rt, id, 0)
	}
	done := make(chan error, 1)
	go func() { done <- stopContainerRetrying(ctx, rt, id, grace) }()
	select {
	case err := <-done:
		return err
	case <-force:
		forced()
		err := rt.StopContainer(ctx, id, 0)
		<-done
		return err
	}
}

// The sandboxes, stopped and removed by every path.

// stopRetries and stopRetryDelay bound how long a stop of a sandbox waits
// for another stop of it under way (goneMeanwhile) to finish, and how often
// a failed stop of a container is made again.
const (
	stopRetries    = 5
	stopRetryDelay = 200 * time.Millisecond
)

// stopContainerRetrying stops a container (CRI StopContainer with the
// grace period) and, should the stop fail, stops it again, with what is
// left of the grace period, up to stopRetries times, as the kubelet's next
// sync of the pod would: containerd 1.6 answers a kill that races the
// container's own exit with "failed to kill container ...: ttrpc: closed"
// (the shim went with the container; in the systemd guest a run torn down
// by SIGTERM exited 125 so), and the next stop finds it exited and is done.
func stopContainerRetrying(ctx context.Context, rt Runtime, id string, grace int64) error {
	start := time.Now()
	err := rt.StopContainer(ctx, id, grace)
	for i := 0; i < stopRetries && err != nil; i++ {
		if !waitToRetry(ctx, stopRetryDelay) {
			return err
		}
		left := max(grace-int64(time.Since(start)/time.Second), 0)
		err = rt.StopContainer(ctx, id, left)
	}
	return err
}

// stopSandboxRetrying stops a sandbox, counting one that another stop of
// it (`podrun down` beside the run's teardown, two downs) tore down at the
// same time as stopped: the runtime's error then says that what it was
// tearing down went away under it (goneMeanwhile), and the stop is asked
// again until the runtime says it is done (or that the sandbox is gone:
// not found counts as done, cri.Client). A stop the runtime cut short on
// its own (runtimeCutShort: a deadline of its own inside the call, or the
// runtime going away) is asked again too, each wait twice the one before,
// as the kubelet's next sync of a terminating pod asks again. Any other
// error is the stop's.
func stopSandboxRetrying(ctx context.Context, rt Runtime, id string) error {
	err := rt.StopPodSandbox(ctx, id)
	for i := 0; i < stopRetries && err != nil; i++ {
		delay := stopRetryDelay
		switch {
		case goneMeanwhile(err):
		case runtimeCutShort(ctx, err):
			delay <<= i
		default:
			return err
		}
		if !waitToRetry(ctx, delay) {
			return err
		}
		err = rt.StopPodSandbox(ctx, id)
	}
	return err
}

// runtimeCutShort reports whether err is the runtime's own giving up on a
// call that ctx still allowed: gRPC DeadlineExceeded from a deadline inside
// the runtime (containerd 2.4 under load: "failed to stop sandbox container
// ... failed to get pod sandbox container: context deadline exceeded",
// seconds into a StopPodSandbox whose sandbox its RemovePodSandbox then
// removed), or Unavailable (it went away: a restart). A call that ran out
// of ctx's own time is not the runtime's doing and is not asked again.
func runtimeCutShort(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) || se.GRPCStatus() == nil {
		return false
	}
	switch se.GRPCStatus().Code() {
	case codes.DeadlineExceeded, codes.Unavailable:
		return true
	}
	return false
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

// removeRetries and removeRetryDelay bound how long teardown waits for a
// container that is still starting (containerd refuses to remove it until
// its start has finished) before giving up.
const (
	removeRetries    = 10
	removeRetryDelay = 200 * time.Millisecond
)

// removeSandboxRetrying removes a sandbox (CRI RemovePodSandbox, which
// takes its containers), retrying while the runtime refuses because a
// container of it is still being started or stopped. podrun's dirs of the
// pod are the caller's.
func removeSandboxRetrying(ctx context.Context, rt Runtime, id string) error {
	var err error
	for range removeRetries {
		if err = rt.RemovePodSandbox(ctx, id); err == nil {
			return nil
		}
		if !waitToRetry(ctx, removeRetryDelay) {
			return err
		}
		_ = rt.StopPodSandbox(ctx, id)
	}
	return err
}

// waitToRetry waits delay before a call is asked again, and reports
// whether it did: false when ctx ended first.
func waitToRetry(ctx context.Context, delay time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(delay):
		return true
	}
}

// removeSandboxAndPodDirs stops a sandbox's running containers with the
// given grace period, stops and removes the sandbox, and then removes the
// pod's data dir and podrun-owned log dir named by its annotations. A
// sandbox the runtime did not remove keeps them (and its status record):
// the pod stays whole, for a later `podrun down` or reclaim to take, not
// half removed. The pod's cgroup is the caller's to remove
// (removeCgroups), once every sandbox of the pod is gone.
func removeSandboxAndPodDirs(ctx context.Context, rt Runtime, sb *runtimeapi.PodSandbox, grace int64) error {
	var errs []error
	ctrs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sb.Id})
	if err != nil {
		errs = append(errs, err)
	}
	for _, c := range ctrs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			if err := stopContainerRetrying(ctx, rt, c.Id, grace); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := stopSandboxRetrying(ctx, rt, sb.Id); err != nil {
		errs = append(errs, err)
	}
	if err := removeSandboxRetrying(ctx, rt, sb.Id); err != nil {
		return fmt.Errorf("removing pod %s/%s: %w", sb.Labels[labelPodNamespace], sb.Labels[labelPodName], errors.Join(append(errs, err)...))
	}
	if root := sb.Annotations[AnnotationRootDir]; root != "" {
		uid := sb.Labels[labelPodUID]
		if logDir := sb.Annotations[annotationLogDir]; isUnder(logDir, defaultLogDir(root)) {
			errs = append(errs, volumes.RemoveSafely(logDir))
		}
		if uid != "" {
			errs = append(errs, volumes.RemoveSafely(podDir(root, uid)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("removing pod %s/%s: %w", sb.Labels[labelPodNamespace], sb.Labels[labelPodName], err)
	}
	return nil
}

// removeCgroups removes the pod cgroups the removed sandboxes' annotations
// name, each once, after all of them are gone: a pod whose sandbox was
// recreated has several sandboxes in one cgroup.
func removeCgroups(cgsys cgroups.System, removed []*runtimeapi.PodSandbox) error {
	seen := map[string]bool{}
	var errs []error
	for _, sb := range removed {
		cg := sb.Annotations[annotationCgroupParent]
		if cg == "" || seen[cg] {
			continue
		}
		seen[cg] = true
		if err := cgsys.RemoveRecorded(cg); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s/%s: %w", sb.Labels[labelPodNamespace], sb.Labels[labelPodName], err))
		}
	}
	return errors.Join(errs...)
}
