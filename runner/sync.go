package runner

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// podRun is the state of one pod during a run.
type podRun struct {
	r       *runState
	pod     *v1.Pod
	uid     string
	dataDir string      // "" until created
	volumes *podVolumes // the pod's volumes (volumes.go); nil until set up
	cgroup  string      // the pod's cgroup (package cgroups); "" until created or without pod cgroups
	logDir  string
	ownLogs bool // the log dir is podrun's own (no --pod-logs-dir): removed at teardown

	sandboxes map[string]*runtimeapi.PodSandboxConfig // every sandbox created, by ID
	// sandboxUnsure: a RunPodSandbox of the pod failed, so the runtime
	// may hold a sandbox of it whose ID the lost reply hid (sandboxIDs
	// lists them then, and only then).
	sandboxUnsure bool
	ips           map[string][]string      // sandbox ID → pod IPs
	reasons       map[string]waitingReason // container name → why it waits
	backoff       backOff                  // container restarts, by container name
	images        podImages                // what the run knows of the pod's images (image.go)
	startTime     time.Time
	started       bool        // the first sync has started the pod
	terminal      bool        // podrun has stopped the pod: every container ending is final
	ended         bool        // the plan ended the pod (endOfPod): it is over, whatever its phase said
	failure       *podFailure // why the pod failed when not by its containers (its deadline passed); nil while it has not
	wake          <-chan struct{}
	prober        *podProber   // the pod's probe workers (prober.go); nil until the sync loop starts
	probes        probeResults // the probe results last read from prober
	logs          *logSet
	attached      bool              // -i's attach has started (container.go attach)
	logTails      map[string]string // the end of each container's log, read at teardown (logtail.go)
	lostLogs      error             // container output the runtime could not write (loglost.go)

	observed *runtimeStatus // the runtime's view of the pod, last observed

	apiStatus v1.PodStatus // the v1.PodStatus last generated from observed

	rec       statusRecord // the status record last written to the data dir (records.go)
	recFailed bool         // writing it failed once: warned, not again

	acted actedOn // what the current act touched, for observeActed

	copyOuts   []*copyOut // the pod's --copy-outs (copyout.go)
	wait       WaitMode   // what its run waits for: the run's --wait; complete for a Job's pod
	usernsBase uint32     // its user namespace's host ID range (hostUsers false), 0: the host's
	givenUID   bool       // podrun gave its UID (records.go: io.podrun.uid-given)
	// inJob: a Job's pod, run by its controller (job.go): never left
	// running by -d, and its statuses go to onStatus.
	inJob    bool
	onStatus func(v1.PodStatus)
	// stopped: its controller stopped it (OutcomeStopped); its final
	// status is read at teardown, as a pod's that ended is.
	stopped bool
}

// actedOn is what an act created, started or stopped.
type actedOn struct {
	containers []string                 // container IDs
	sandboxes  []*runtimeapi.PodSandbox // sandboxes it created
	all        bool                     // it killed the pod: list everything
}

func newPodRun(r *runState, pod *v1.Pod) *podRun {
	uid := string(pod.UID)
	logsRoot, own := r.opts.PodLogsDir, false
	if logsRoot == "" {
		logsRoot, own = defaultLogDir(r.opts.RootDir), true
	}
	p := &podRun{
		r: r, pod: pod, uid: uid,
		logDir:     podLogDir(logsRoot, pod.Namespace, pod.Name, uid),
		ownLogs:    own,
		sandboxes:  map[string]*runtimeapi.PodSandboxConfig{},
		ips:        map[string][]string{},
		reasons:    map[string]waitingReason{},
		images:     podImages{refs: map[string]string{}, info: map[string]*runtimeapi.Image{}},
		wake:       r.obs.subscribe(uid),
		observed:   &runtimeStatus{},
		copyOuts:   newCopyOuts(pod, r.opts.CopyOuts),
		wait:       r.opts.Wait,
		usernsBase: r.userns[uid],
		givenUID:   r.opts.GivenUIDs[pod.UID],
	}
	p.logs = newLogSet(r.sink, pod.Name, r.multi)
	p.apiStatus = p.generateAPIStatus()
	return p
}

// event reports an event of the pod, named like a kubelet event.
func (p *podRun) event(reason, format string, args ...any) {
	if p.r.opts.Progress != nil {
		p.r.opts.Progress.Event(p.pod, reason, fmt.Sprintf(format, args...))
	}
}

// reportStatus reports the pod's status as last worked out.
func (p *podRun) reportStatus() {
	if p.r.opts.Progress != nil {
		p.r.opts.Progress.PodStatus(p.pod, p.apiStatus)
	}
	if p.onStatus != nil {
		p.onStatus(p.apiStatus)
	}
}

// generateAPIStatus generates the pod's API status from what was last observed,
// keeping each condition's lastTransitionTime until its status changes.
func (p *podRun) generateAPIStatus() v1.PodStatus {
	st := podStatusFor(statusInput{
		Pod: p.pod, Status: p.observed, Reasons: p.reasons, Probes: p.probes,
		RuntimeName: p.r.facts.RuntimeName, HostIP: p.r.facts.HostIP, StartTime: p.startTime,
		Terminal: p.terminal, Failure: p.failure, Old: &p.apiStatus,
	})
	now := metav1.NewTime(p.r.now())
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.LastTransitionTime = now
		for _, prev := range p.apiStatus.Conditions {
			if prev.Type == c.Type && prev.Status == c.Status {
				c.LastTransitionTime = prev.LastTransitionTime
			}
		}
	}
	return st
}

// observeFinal re-reads a pod that ended on its own (Succeeded or Failed,
// or a plan that ended it: endOfPod) once teardown has stopped what still
// ran, and makes that its last status, as the kubelet's SyncTerminatingPod
// writes the final status after killPod: sidecars stopped after the
// regular containers show how they ended, and the stopped sandbox makes
// PodReadyToStartContainers False (PodSandboxNotReady). A pod whose wait
// ended otherwise (ready, timeout, signal) keeps the status it had then,
// which says why it was not done; a Job's pod its controller stopped is
// re-read too, as the kubelet reports a deleted pod Failed once its
// containers are killed.
//
// What the teardown's killPod found and did (killed, when it succeeded)
// is what a poll would learn of the pod: the sync loop is over, so
// nothing but the kill changes it. The pod's view is settled from that
// (one ContainerStatus per container stopped or changed, no List); a
// failed kill, a sandbox the observer never saw or a failed read polls
// the whole run, as before (issue 18: CRI calls per pod).
func (p *podRun) observeFinal(ctx context.Context, killed *killedPod) {
	if !p.ended && !p.stopped && p.apiStatus.Phase != v1.PodSucceeded && p.apiStatus.Phase != v1.PodFailed {
		return
	}
	if killed == nil || p.sandboxUnsure || !p.r.obs.settle(ctx, p.uid, *killed) {
		if err := p.r.obs.poll(ctx); err != nil {
			return
		}
	}
	p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
	p.terminal = true
	p.apiStatus = p.generateAPIStatus()
}

// syncLoop observes, decides and acts until the wait for the pod is over or
// ctx ends (OutcomeWaiting then). An error means podrun cannot run the pod.
func (p *podRun) syncLoop(ctx context.Context) (Outcome, error) {
	if err := p.setUp(ctx); err != nil {
		return OutcomeError, err
	}
	p.prober = newPodProber(p.pod, p.r.rt, p.event, p.r.now)
	p.prober.start(ctx)
	defer p.prober.stop()
	deadline := ActiveDeadline(p.pod.Spec.ActiveDeadlineSeconds, p.startTime)
	for {
		p.checkDeadline()
		p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
		p.logs.update(p.observed)
		p.copyEnded()
		p.probes = p.prober.snapshot()
		p.apiStatus = p.generateAPIStatus()
		p.reportStatus()
		p.prober.observe(p.observed, p.apiStatus.PodIP)
		if o := waitOutcome(p.wait, p.pod, p.apiStatus, p.started); o != OutcomeWaiting {
			return o, nil
		}

		if ctx.Err() != nil {
			// Interrupted (or timed out) before acting: create nothing more.
			return OutcomeWaiting, nil
		}
		actions := computePodActions(planInput{Pod: p.pod, Status: p.observed, Probes: p.probes,
			RestartAll: restartingAll(p.apiStatus)})
		switch endOfPod(actions, p.observed, p.ended) {
		case podEndKill:
			// The plan ends the pod while a container runs (a probe
			// failed under Never): kill it, then read the pod again, so
			// that the wait ends on the kill's outcome (wait.go).
			if _, err := p.killPod(ctx, false, p.sandboxIDs(ctx)); err != nil {
				if ctx.Err() != nil {
					return OutcomeWaiting, nil
				}
				return OutcomeError, err
			}
			p.ended = true
			if err := p.r.obs.poll(ctx); err != nil && ctx.Err() == nil {
				return OutcomeError, fmt.Errorf("observing the runtime: %w", err)
			}
			continue
		case podEnded:
			// Nothing runs and nothing will: the pod is over. Only a pod
			// whose containers all succeeded reached its goal; one whose
			// sandbox died before its containers ran did not.
			p.ended = true
			if p.apiStatus.Phase == v1.PodSucceeded {
				return OutcomeReached, nil
			}
			return OutcomeFailed, nil
		}
		acted, nextWake, err := p.act(ctx, actions)
		if ctx.Err() != nil {
			if acted || err != nil {
				p.observeCut(ctx, err != nil)
			}
			return OutcomeWaiting, nil
		}
		if err != nil {
			// Report what was created and the reason the act recorded
			// (ErrImageNeverPull, ...).
			_ = p.r.obs.poll(context.WithoutCancel(ctx))
			p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
			p.apiStatus = p.generateAPIStatus()
			return OutcomeError, err
		}
		p.started = true
		if acted {
			if err := p.observeActed(ctx); err != nil {
				if ctx.Err() == nil {
					return OutcomeError, fmt.Errorf("observing the runtime: %w", err)
				}
				// Cut while reading what the act did: read it anyway.
				p.observeCut(ctx, true)
				return OutcomeWaiting, nil
			}
			continue
		}
		// Nothing started: the act may have recorded why (CrashLoopBackOff,
		// ImagePullBackOff), which the status shows while the loop waits,
		// and `podrun ps` too (podrecord.go).
		p.apiStatus = p.generateAPIStatus()
		p.reportStatus()
		p.recordStatus(nil)
		if !p.sleep(ctx, earliest(nextWake, deadline)) {
			return OutcomeWaiting, nil
		}
	}
}

// checkDeadline fails the pod once its active deadline has passed
// (deadline.go), with the kubelet's event (Normal, DeadlineExceeded, its
// message), once: the status generated from then on is Failed, which ends
// the wait, and teardown kills what runs.
func (p *podRun) checkDeadline() {
	if p.failure == nil && PastActiveDeadline(p.pod.Spec.ActiveDeadlineSeconds, p.startTime, p.r.now()) {
		p.failure = deadlineFailure
		p.event(ReasonDeadlineExceeded, "%s", messageDeadlineExceeded)
	}
}

// recordStatus writes the pod's status record when what it holds changed
// (or mark changes it: detached, deleting), so that `podrun ps` sees what
// the run sees. A failed write is reported once and returned; the run goes
// on (the detach does not: runPod).
func (p *podRun) recordStatus(mark func(*statusRecord)) error {
	if p.dataDir == "" {
		return nil
	}
	names := map[string]string{}
	for _, c := range p.observed.Containers {
		names[c.ID] = c.Name
	}
	now := p.r.now()
	next := nextStatusRecord(p.rec, recordInput{
		Reasons: p.reasons, Probes: p.probes, Names: names, Conditions: p.apiStatus.Conditions, Now: now,
	})
	if mark != nil {
		mark(&next)
	}
	if !next.changed(p.rec) {
		return nil
	}
	next.Written = now
	err := writeStatusRecord(p.dataDir, next)
	if err != nil && !p.recFailed {
		p.recFailed = true
		p.event("Warning", "podrun ps will not see the pod's latest status: %v", err)
	}
	p.rec = next
	return err
}

// sleep waits until the observer reports a change for the pod or a probe
// result changes, until wakeAt (when set), or until ctx ends (false).
func (p *podRun) sleep(ctx context.Context, wakeAt time.Time) bool {
	var timer <-chan time.Time
	if !wakeAt.IsZero() {
		t := time.NewTimer(time.Until(wakeAt))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.wake:
	case <-p.prober.wake:
	case <-timer:
	}
	return true
}

// setUp creates the pod's data dir and cgroup. The kubelet's SyncPod makes
// the pod cgroup (step 7) before the data dirs; podrun makes the data dir
// first, with the cgroup's name in its owner record, so that a podrun
// killed between the two leaves nothing a later run cannot reclaim.
func (p *podRun) setUp(ctx context.Context) error {
	h := p.r.cgroups
	cgroup := ""
	if h != nil {
		cgroup = h.PodCgroupName(p.pod)
	}
	// The data dir holds the manifest and the status record from the
	// start, for `podrun ps` (records.go).
	p.startTime = p.r.now()
	manifest, err := manifestData(p.pod)
	if err != nil {
		return err
	}
	p.rec = statusRecord{StartTime: p.startTime, HostIP: p.r.facts.HostIP, Written: p.startTime}
	if cgroup != "" {
		p.rec.Cgroup, p.rec.CgroupDriver = cgroup, p.r.facts.CgroupDriver
		p.rec.CgroupDriverSource = p.r.facts.CgroupDriverSource.String()
	}
	dir, err := makePodDataDirs(p.r.opts.RootDir, p.uid, ownerRecord{
		Owner: p.r.opts.Owner, Namespace: p.pod.Namespace, Name: p.pod.Name, LogDir: p.logDir, Cgroup: cgroup,
	}, manifest, statusData(p.rec))
	if err != nil {
		return err
	}
	p.dataDir = dir
	if h != nil {
		cg, err := h.EnsurePodCgroup(p.pod)
		p.cgroup = cg // removed at teardown, even when made in part
		if err != nil {
			return fmt.Errorf("creating the pod cgroup: %w", err)
		}
	}
	testPause(ctx, PauseCgroup)
	// The volume manager mounts the pod's volumes before SyncPod runs.
	if err := p.setUpVolumes(); err != nil {
		return err
	}
	testPause(ctx, PauseVolumes)
	return nil
}

// cutLookTimeout bounds observeCut's reads.
const cutLookTimeout = 5 * time.Second

// observeCut brings the pod's status up to date when a signal or the
// timeout ended the sync loop during an act or while the loop read what
// it did (failed: the act or the read failed, so the run is polled):
// what the act did still shows in the pod's last status, which a pod
// whose wait ended so keeps (observeFinal). A container started while the
// signal came (create and start are not cut midway) is reported running,
// as the run's Started event and its output show it, not the
// ContainerCreating of before the start.
func (p *podRun) observeCut(ctx context.Context, failed bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cutLookTimeout)
	defer cancel()
	var err error
	if failed {
		p.acted = actedOn{}
		err = p.r.obs.poll(ctx)
	} else {
		err = p.observeActed(ctx)
	}
	if err != nil {
		return
	}
	p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
	p.apiStatus = p.generateAPIStatus()
}

// observeActed brings the observer up to date after an act: what the act
// touched is re-read directly; a pod kill (which touches everything) is
// followed by a full poll.
func (p *podRun) observeActed(ctx context.Context) error {
	ids, sbs, full := p.acted.containers, p.acted.sandboxes, p.acted.all
	p.acted = actedOn{}
	if full {
		return p.r.obs.poll(ctx)
	}
	if err := p.r.obs.refresh(ctx, ids, sbs); err != nil {
		// A container already gone (removed with its sandboxes): list.
		return p.r.obs.poll(ctx)
	}
	return nil
}

// act carries out a plan, in the order of the kubelet's SyncPod. It reports
// whether it changed anything and, when a start was deferred by back-off,
// when to look again.
func (p *podRun) act(ctx context.Context, a podActions) (acted bool, nextWake time.Time, err error) {
	// 1. Kill the pod before recreating its sandbox.
	if a.KillPod && a.SandboxID != "" {
		p.event("SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
		if _, err := p.killPod(ctx, false, p.sandboxIDs(ctx)); err != nil {
			return true, nextWake, err
		}
		acted, p.acted.all = true, true
	}
	// 2. Kill the containers the plan does not keep.
	for id, k := range a.ContainersToKill {
		// With the preStop hook and the kill's grace period (stop.go).
		if err := p.killContainer(ctx, id, k.Name, k.Reason, k.Message, nil, nil); err != nil {
			return true, nextWake, err
		}
		acted = true
		p.acted.containers = append(p.acted.containers, id)
	}
	// 2b. Restart the pod in place: kill what runs, remove every instance
	// (restartall.go). The next sync, at once, starts the pod over.
	if !a.KillPod {
		for _, r := range a.ContainersToReset {
			if r.Kill {
				if err := p.killContainer(ctx, r.ID, r.Name, killRestartAll, "killing", nil, nil); err != nil {
					return true, nextWake, err
				}
			}
			if err := p.r.rt.RemoveContainer(context.WithoutCancel(ctx), r.ID); err != nil {
				return true, nextWake, fmt.Errorf("removing container %s to restart the pod: %w", r.Name, err)
			}
			acted, p.acted.all = true, true
		}
	}
	// 3. Create the sandbox.
	sandboxID := a.SandboxID
	if a.CreateSandbox {
		id, err := p.createSandbox(ctx, a.Attempt)
		if err != nil {
			return true, nextWake, err
		}
		sandboxID, acted = id, true
		testPause(ctx, PauseSandbox)
	}
	// 4. Start init containers in order; a failing regular init container
	// stops this sync, a failing sidecar does not.
	for _, i := range a.InitContainersToStart {
		c := &p.pod.Spec.InitContainers[i]
		started, wakeAt, err := p.startContainer(ctx, sandboxID, c)
		acted = acted || started
		nextWake = earliest(nextWake, wakeAt)
		if err != nil {
			return acted, nextWake, err
		}
		if !started && !podresources.IsSidecar(c) {
			return acted, nextWake, nil
		}
	}
	// 5. Start regular containers.
	for _, i := range a.ContainersToStart {
		started, wakeAt, err := p.startContainer(ctx, sandboxID, &p.pod.Spec.Containers[i])
		acted = acted || started
		nextWake = earliest(nextWake, wakeAt)
		if err != nil {
			return acted, nextWake, err
		}
	}
	return acted, nextWake, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
