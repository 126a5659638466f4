package runner

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pollInterval is how often the observer lists the run's sandboxes and
// containers on a runtime without container events (containerd 1.6 and
// 1.7, CRI-O without enable_pod_events) while its pods change: a
// container's exit right after a start must be noticed within tens of
// milliseconds. One List of each kind per tick for the whole run keeps the
// cost independent of the number of pods.
const pollInterval = 20 * time.Millisecond

// maxIdlePollInterval is the slowest that polling gets while nothing
// changes: the delay grows with the time since the last change (see
// idlePollDelay), so a pod that runs for minutes costs five Lists of each
// kind a second instead of fifty, and its exit is noticed within 200 ms
// (the kubelet's PLEG relists every second). Every change a poll sees,
// and every action of podrun's (observer.acted), makes polling fast again.
const maxIdlePollInterval = 200 * time.Millisecond

// idlePollDelay is the delay before the next poll on a runtime without
// events, sinceChange after the last change a poll saw: a quarter of that
// time, between pollInterval and maxIdlePollInterval. Right after a change
// the next one is likely close (a start, then an exit); the longer nothing
// changed, the longer a poll may wait.
func idlePollDelay(sinceChange time.Duration) time.Duration {
	return min(max(sinceChange/4, pollInterval), maxIdlePollInterval)
}

// actPollDelay is the delay between polls for actPollWindow after an act
// of podrun's on a runtime without events (observer.acted): a container
// started is likely to change soon, and containerd 1.6 reports the exit of
// one that ends at once (/bin/true) 20 to 35 ms after StartContainer
// returns (hack/cricount -timeline; the bare sequence, which asks every
// 10 ms, sees it after a median of 26 ms). Polls at 20 and 40 ms saw it
// 40 ms after; polls every 10 ms for the first 50 ms see it within 10 ms
// of its report.
const (
	actPollDelay  = 10 * time.Millisecond
	actPollWindow = 50 * time.Millisecond
)

// pollDelay is the delay before the next poll on a runtime without
// events, sinceAct after podrun's last act and sinceChange after the last
// change a poll saw or act: actPollDelay within actPollWindow of an act,
// else idlePollDelay.
func pollDelay(sinceChange, sinceAct time.Duration) time.Duration {
	if sinceAct < actPollWindow {
		return actPollDelay
	}
	return idlePollDelay(sinceChange)
}

// safetyPollInterval is how often the observer lists anyway while the
// runtime's event stream is up: events wake it at once, and this catches
// anything a stream hiccup lost.
var safetyPollInterval = time.Second // a var for tests (SetSafetyPollInterval)

// observer keeps the runtime's view of every sandbox and container of this
// run (or, for `podrun ps`, of every podrun pod), refreshed by polling, and
// wakes the pod whose state changed.
type observer struct {
	rt  Runtime
	sel map[string]string // the labels of what it observes: the run's, or podrun's

	pollMu     sync.Mutex    // one poll at a time
	lastChange atomic.Int64  // when a poll last saw a change, or podrun acted (Unix ns)
	lastAct    atomic.Int64  // when podrun last acted (Unix ns)
	lastFull   atomic.Int64  // when a poll last listed the sandboxes (Unix ns)
	kick       chan struct{} // an act: the next poll comes at pollInterval (acted)

	mu         sync.Mutex
	sandboxes  map[string]*runtimeapi.PodSandbox
	containers map[string]*observedContainer
	subs       map[string]chan struct{} // pod UID → wake channel
	done       map[string]bool          // pods whose teardown read them for the last time (forget)
}

type observedContainer struct {
	state  runtimeapi.ContainerState
	status *containerStatus
	podUID string
}

func newObserver(rt Runtime, sel map[string]string) *observer {
	return &observer{
		rt: rt, sel: sel,
		sandboxes:  map[string]*runtimeapi.PodSandbox{},
		containers: map[string]*observedContainer{},
		subs:       map[string]chan struct{}{},
		done:       map[string]bool{},
		kick:       make(chan struct{}, 1),
	}
}

// forget drops pod uid from the view once its teardown has read it for
// the last time (observeFinal), before its sandboxes are removed: the
// events of that removal (and of anything else of the pod) then wake no
// poll of the whole run, one per pod at a run's end otherwise, for a
// pod nobody reads again.
func (o *observer) forget(uid string) {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done[uid] = true
	for id, sb := range o.sandboxes {
		if sb.Labels[labelPodUID] == uid {
			delete(o.sandboxes, id)
		}
	}
	for id, c := range o.containers {
		if c.podUID == uid {
			delete(o.containers, id)
		}
	}
}

// forgotten tells whether forget dropped pod uid.
func (o *observer) forgotten(uid string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.done[uid]
}

// subscribe returns the channel that is signalled when the pod's state changes.
func (o *observer) subscribe(uid string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch := make(chan struct{}, 1)
	o.subs[uid] = ch
	return ch
}

// watch keeps the view fresh until ctx ends: on every container event of this
// run where the runtime streams events, else by polling, every pollInterval
// while things change and more slowly while they don't (idlePollDelay).
func (o *observer) watch(ctx context.Context) {
	// The view is whole at the start: nothing of the run exists yet.
	o.lastFull.CompareAndSwap(0, time.Now().UnixNano())
	pace := func() time.Duration {
		return pollDelay(time.Since(time.Unix(0, o.lastChange.Load())), time.Since(time.Unix(0, o.lastAct.Load())))
	}
	onChangesPaced(ctx, o.rt, o.sel, safetyPollInterval, pace, o.kick,
		// podrun's own calls cause the other events, and it polls after
		// them; a stop whose event says all a poll would learn needs none.
		func(ev *runtimeapi.ContainerEventResponse) bool {
			return changesOnItsOwn(ev.GetContainerEventType()) &&
				!o.forgotten(ev.GetPodSandboxStatus().GetLabels()[labelPodUID]) && !o.takeStop(ctx, ev)
		},
		func(paced bool) {
			lastAct := o.lastAct.Load()
			switch pollKindFor(lastAct != 0, paced, time.Since(time.Unix(0, lastAct)), time.Since(time.Unix(0, o.lastFull.Load()))) {
			case pollContainersFirst:
				_ = o.pollAfterAct(ctx)
			case pollBoth:
				_ = o.poll(ctx) // a failed poll is retried on the next tick
			}
		})
}

// pollKind is what the observer's watch lists when it fires.
type pollKind int

const (
	pollNothing         pollKind = iota // nothing
	pollContainersFirst                 // the containers, the sandboxes too on a change (observer.pollAfterAct)
	pollBoth                            // the sandboxes and the containers (observer.poll)
)

// pollKindFor decides what a firing of the watch lists: nothing before
// the run's first act (the run's label is new with this process, and
// each pod reads its sandbox from its own call); the containers first on
// a tick of the pace without events within actPollWindow of an act,
// unless the sandboxes were last listed maxIdlePollInterval ago (a busy
// run acts all the time, and a sandbox's own change must still be seen);
// else both (an event, a broken stream, a quiet tick).
func pollKindFor(acted, paced bool, sinceAct, sinceFull time.Duration) pollKind {
	switch {
	case !acted:
		return pollNothing
	case paced && sinceAct < actPollWindow && sinceFull < maxIdlePollInterval:
		return pollContainersFirst
	default:
		return pollBoth
	}
}

// takeStop keeps what a stop event tells when it tells all that a poll
// would learn of it, and reports whether it did: the stopped container's
// full status (containerd ≥ 1.7 and CRI-O send the status of every
// container of the pod with each event, as the kubelet's evented PLEG
// reads them), or the stopped sandbox's state. With a container's exit
// it reads its sandbox's state (one PodSandboxStatus instead of a poll's
// two Lists and a ContainerStatus): a runtime stopping a sandbox reports
// its containers' exits first, and the pod must not take a container
// killed with its sandbox for one that exited in a ready sandbox. A stop
// the observer knows already (podrun stopped it and read its status)
// needs nothing. Anything else (a removal, an event without the status, a
// sandbox not seen yet, a failed read) is left to a poll. It holds
// pollMu: a poll that read the container still running does not store
// that over the exit.
func (o *observer) takeStop(ctx context.Context, ev *runtimeapi.ContainerEventResponse) bool {
	if ev.GetContainerEventType() != runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
		return false
	}
	id := ev.GetContainerId()
	o.pollMu.Lock()
	defer o.pollMu.Unlock()
	if sb := ev.GetPodSandboxStatus(); sb != nil && sb.GetId() == id {
		o.mu.Lock()
		known, ok := o.sandboxes[id]
		if ok && known.State == runtimeapi.PodSandboxState_SANDBOX_READY && sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			o.sandboxes[id] = notReady(known)
		}
		o.mu.Unlock()
		if !ok || sb.GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			return false
		}
		if known.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			o.changed(known.Labels[labelPodUID])
		}
		return true
	}
	for _, st := range ev.GetContainersStatuses() {
		if st.GetId() != id {
			continue
		}
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			return false
		}
		o.mu.Lock()
		known := o.containers[id]
		sb, sbKnown := o.sandboxes[ev.GetPodSandboxStatus().GetId()]
		o.mu.Unlock()
		if known != nil && known.state == runtimeapi.ContainerState_CONTAINER_EXITED {
			return true
		}
		if !sbKnown {
			return false
		}
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			resp, err := o.rt.PodSandboxStatus(ctx, sb.Id, false)
			if err != nil || resp.GetStatus() == nil {
				return false
			}
			if resp.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
				o.mu.Lock()
				o.sandboxes[sb.Id] = notReady(sb)
				o.mu.Unlock()
			}
		}
		o.changed(o.store(st))
		return true
	}
	return false
}

// notReady is a copy of sb in the state SANDBOX_NOTREADY.
func notReady(sb *runtimeapi.PodSandbox) *runtimeapi.PodSandbox {
	c := proto.Clone(sb).(*runtimeapi.PodSandbox)
	c.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return c
}

// changed records that a poll or an event saw the pods uids change and
// wakes them.
func (o *observer) changed(uids ...string) {
	if len(uids) == 0 {
		return
	}
	o.lastChange.Store(time.Now().UnixNano())
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, uid := range uids {
		if ch, ok := o.subs[uid]; ok {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// onChanges calls fire until ctx ends: on a container event of a pod with
// the labels sel that want takes (nil: any), once for the events queued
// with it, where the runtime streams events; every tick in any case, the
// ticker set to withEvents while events stream and to withoutEvents
// otherwise. A stream that ends (the runtime does not implement events,
// or it broke) fires once and leaves the ticker.
func onChanges(ctx context.Context, rt Runtime, sel map[string]string, withEvents, withoutEvents time.Duration,
	want func(*runtimeapi.ContainerEventResponse) bool, fire func()) {
	onChangesPaced(ctx, rt, sel, withEvents, func() time.Duration { return withoutEvents }, nil, want, func(bool) { fire() })
}

// onChangesPaced is onChanges with the delay between ticks without events
// asked of withoutEvents after each tick, and again on each receive from
// kick while no events stream (the pace changed: observer.acted), then
// at most actPollDelay. fire is told whether it is a tick of that pace
// (paced: no events stream, nothing but time asks for the poll).
func onChangesPaced(ctx context.Context, rt Runtime, sel map[string]string, withEvents time.Duration,
	withoutEvents func() time.Duration, kick <-chan struct{}, want func(*runtimeapi.ContainerEventResponse) bool, fire func(paced bool)) {
	var events <-chan *runtimeapi.ContainerEventResponse
	stream, err := rt.GetContainerEvents(ctx)
	if err == nil {
		events = stream.C
	}
	// dropped: the stream dropped events while this loop was polling
	// (cri.EventStream.TakeDropped); what they said is learnt by listing.
	dropped := func() bool { return stream != nil && stream.TakeDropped() > 0 }
	next := func() time.Duration {
		if events != nil {
			return withEvents
		}
		return withoutEvents()
	}
	t := time.NewTimer(next())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			dropped() // the poll lists anyway
			fire(events == nil)
			t.Reset(next())
		case <-kick:
			if events == nil {
				t.Reset(min(next(), actPollDelay))
			}
		case ev, ok := <-events:
			if !ok {
				events = nil
				fire(false)
				t.Reset(next())
				continue
			}
			lost := dropped()
			if !lost && !hasLabels(ev.GetPodSandboxStatus().GetLabels(), sel) {
				continue // another run's, or replayed history
			}
			if !lost && want != nil && !want(ev) {
				continue
			}
			// Take the events that are already queued with this one.
			for drained := false; !drained; {
				select {
				case _, ok := <-events:
					drained = !ok
				default:
					drained = true
				}
			}
			dropped() // the poll below learns what they said
			fire(false)
		}
	}
}

// poll lists the run's sandboxes and containers, fetches the full status of
// every container whose state changed, and wakes the pods concerned.
func (o *observer) poll(ctx context.Context) error {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()

	o.lastFull.Store(time.Now().UnixNano())
	sbs, err := o.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: o.sel})
	if err != nil {
		return err
	}
	ctrs, err := o.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: o.sel})
	if err != nil {
		return err
	}
	o.take(ctx, sbs, ctrs)
	return nil
}

// pollAfterAct is a poll in the act window on a runtime without events
// (actPollWindow): what it waits for is a container's change (a start
// that fails, an exit), so it lists the containers only, and the
// sandboxes too when a container changed (after the containers, so that
// a container killed with its sandbox is seen with the sandbox not
// ready). A sandbox's own change waits for the next full poll
// (pollKindFor). Half the Lists of a short pod on containerd 1.6.
func (o *observer) pollAfterAct(ctx context.Context) error {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()

	ctrs, err := o.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: o.sel})
	if err != nil {
		return err
	}
	if !o.containersChanged(ctrs) {
		return nil
	}
	o.lastFull.Store(time.Now().UnixNano())
	sbs, err := o.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: o.sel})
	if err != nil {
		return err
	}
	o.take(ctx, sbs, ctrs)
	return nil
}

// containersChanged tells whether a list of the run's containers differs
// from the view: a container new, gone or in another state.
func (o *observer) containersChanged(ctrs []*runtimeapi.Container) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range ctrs {
		if o.done[c.Labels[labelPodUID]] {
			continue
		}
		n++
		if prev, ok := o.containers[c.Id]; !ok || prev.state != c.State {
			return true
		}
	}
	return n != len(o.containers)
}

// take brings the view up to the lists sbs and ctrs of a poll: fetches
// the full status of every container whose state changed and wakes the
// pods concerned. The caller holds pollMu.
func (o *observer) take(ctx context.Context, sbs []*runtimeapi.PodSandbox, ctrs []*runtimeapi.Container) {
	changed := map[string]bool{}
	o.mu.Lock()
	seenSB := map[string]bool{}
	for _, sb := range sbs {
		if o.done[sb.Labels[labelPodUID]] {
			continue // forgotten: its teardown is past its last look
		}
		seenSB[sb.Id] = true
		if prev, ok := o.sandboxes[sb.Id]; !ok || prev.State != sb.State {
			changed[sb.Labels[labelPodUID]] = true
		}
		o.sandboxes[sb.Id] = sb
	}
	for id, sb := range o.sandboxes {
		if !seenSB[id] {
			delete(o.sandboxes, id)
			changed[sb.Labels[labelPodUID]] = true
		}
	}
	var fetch []*runtimeapi.Container
	seen := map[string]bool{}
	for _, c := range ctrs {
		if o.done[c.Labels[labelPodUID]] {
			continue
		}
		seen[c.Id] = true
		if prev, ok := o.containers[c.Id]; !ok || prev.state != c.State {
			fetch = append(fetch, c)
		}
	}
	for id, c := range o.containers {
		if !seen[id] {
			delete(o.containers, id)
			changed[c.podUID] = true
		}
	}
	o.mu.Unlock()

	for _, c := range fetch {
		st, err := o.rt.ContainerStatus(ctx, c.Id)
		if err != nil {
			continue // gone meanwhile, or a transient error: the next poll retries
		}
		changed[o.store(st)] = true
	}

	o.changed(slices.Collect(maps.Keys(changed))...)
}

// settle brings the view of pod uid up to date after killPod stopped it,
// from what the kill found and did instead of a poll of the whole run:
// the sandboxes it stopped are not ready; of the containers it listed,
// those it stopped, those the view holds in another state and those the
// view lacks get their status read (ContainerStatus), and the view's
// containers of the pod it did not list are gone. It is a poll's outcome
// for the pod when nothing else changes it meanwhile (the pod's sync loop
// is over). It reports false, having changed nothing the poll would not,
// when it cannot stand in for one: a sandbox it has not seen, a status
// it could not read.
func (o *observer) settle(ctx context.Context, uid string, k killedPod) bool {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()
	o.mu.Lock()
	for _, id := range k.Sandboxes {
		if _, ok := o.sandboxes[id]; !ok {
			o.mu.Unlock()
			return false
		}
	}
	for _, id := range k.Sandboxes {
		if sb := o.sandboxes[id]; sb.State != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			o.sandboxes[id] = notReady(sb)
		}
	}
	listed := map[string]bool{}
	var fetch []string
	for _, c := range k.Containers {
		listed[c.Id] = true
		if prev, ok := o.containers[c.Id]; !ok || prev.state != c.State || c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			fetch = append(fetch, c.Id)
		}
	}
	for id, c := range o.containers {
		if c.podUID == uid && !listed[id] {
			delete(o.containers, id)
		}
	}
	o.mu.Unlock()
	if o.storeStatuses(ctx, fetch) != nil {
		return false
	}
	o.changed(uid)
	return true
}

// store keeps a container status, as a poll would, and returns its pod's UID.
func (o *observer) store(st *runtimeapi.ContainerStatus) string {
	uid := st.Labels[labelPodUID]
	cs := fromCRIStatus(st)
	if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		// Read once, when the exit is first seen; kept with the status.
		cs.Message = withTerminationMessage(st)
	}
	o.mu.Lock()
	o.containers[st.Id] = &observedContainer{state: st.State, status: cs, podUID: uid}
	o.mu.Unlock()
	return uid
}

// refresh reads the status of containers a pod just created, started or
// stopped, and of the sandbox it just created: one call each instead of
// listing the whole run.
func (o *observer) refresh(ctx context.Context, ids []string, sandboxes []*runtimeapi.PodSandbox) error {
	o.pollMu.Lock()
	defer o.pollMu.Unlock()
	o.mu.Lock()
	for _, sb := range sandboxes {
		o.sandboxes[sb.Id] = sb
	}
	o.mu.Unlock()
	err := o.storeStatuses(ctx, ids)
	o.acted()
	return err
}

// acted records that podrun just created, started or stopped something
// (refresh) and, on a runtime without events, brings the next poll to
// actPollDelay from now, and the ones after it every actPollDelay for
// actPollWindow (pollDelay): a container started is likely to change soon (a
// short one exits within milliseconds), and the delay the timer was armed
// with may be the idle one, up to maxIdlePollInterval. Without it, the
// exit of a container started after a quiet spell waited up to 200 ms for
// the next poll.
func (o *observer) acted() {
	now := time.Now().UnixNano()
	o.lastChange.Store(now)
	o.lastAct.Store(now)
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// storeStatuses reads and keeps the status of each container of ids, up
// to the first that fails.
func (o *observer) storeStatuses(ctx context.Context, ids []string) error {
	for _, id := range ids {
		st, err := o.rt.ContainerStatus(ctx, id)
		if err != nil {
			return err
		}
		o.store(st)
	}
	return nil
}

// runtimeStatus is the observed state of one pod, newest first. ips gives the
// IPs podrun learnt for each sandbox when it created it.
func (o *observer) runtimeStatus(uid string, ips map[string][]string) *runtimeStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	st := &runtimeStatus{}
	for _, sb := range o.sandboxes {
		if sb.Labels[labelPodUID] != uid {
			continue
		}
		s := &sandboxStatus{
			ID:        sb.Id,
			Ready:     sb.State == runtimeapi.PodSandboxState_SANDBOX_READY,
			CreatedAt: time.Unix(0, sb.CreatedAt),
			IPs:       ips[sb.Id],
		}
		if sb.Metadata != nil {
			s.Attempt = sb.Metadata.Attempt
		}
		if len(s.IPs) > 0 {
			s.IP = s.IPs[0]
		}
		st.Sandboxes = append(st.Sandboxes, s)
	}
	for _, c := range o.containers {
		if c.podUID == uid {
			cp := *c.status
			st.Containers = append(st.Containers, &cp)
		}
	}
	st.sortNewestFirst()
	return st
}

// sandboxList is every observed sandbox.
func (o *observer) sandboxList() []*runtimeapi.PodSandbox {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Collect(maps.Values(o.sandboxes))
}

// hasLabels tells whether labels hold every label of sel.
func hasLabels(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// changesOnItsOwn tells the events that report something podrun did not
// do itself: a container or sandbox stopped (exited, killed, OOM) or was
// removed. Created and started follow podrun's own calls, after which it
// polls anyway.
func changesOnItsOwn(t runtimeapi.ContainerEventType) bool {
	return t == runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT ||
		t == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT
}

// fromCRIStatus converts a CRI container status.
func fromCRIStatus(s *runtimeapi.ContainerStatus) *containerStatus {
	cs := &containerStatus{
		ID:         s.Id,
		CreatedAt:  nsTime(s.CreatedAt),
		StartedAt:  nsTime(s.StartedAt),
		FinishedAt: nsTime(s.FinishedAt),
		ExitCode:   s.ExitCode,
		Reason:     s.Reason,
		Message:    s.Message,
		ImageRef:   s.ImageRef,
		LogPath:    s.LogPath,
	}
	if s.Metadata != nil {
		cs.Name = s.Metadata.Name
	}
	if n, ok := s.Labels[labelContainerName]; ok {
		cs.Name = n
	}
	if s.Image != nil {
		cs.Image = s.Image.Image
	}
	if l := s.GetUser().GetLinux(); l != nil {
		cs.User = &v1.ContainerUser{Linux: &v1.LinuxContainerUser{
			UID: l.Uid, GID: l.Gid, SupplementalGroups: l.SupplementalGroups}}
	}
	cs.RestartCount, _ = strconv.Atoi(s.Annotations[annotationRestartCount])
	switch s.State {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		cs.State = stateCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.State = stateRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		cs.State = stateExited
	default:
		cs.State = stateUnknown
	}
	return cs
}

func nsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
