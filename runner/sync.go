package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner/podresources"
	"github.com/podrun/podrun/volumes"
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
	ips       map[string][]string                     // sandbox ID → pod IPs
	reasons   map[string]waitingReason                // container name → why it waits
	backoff   backOff                                 // container restarts, by container name
	images    podImages                               // what the run knows of the pod's images (image.go)
	startTime time.Time
	started   bool // the first sync has started the pod
	terminal  bool // podrun has stopped the pod: every container ending is final
	wake      <-chan struct{}
	prober    *podProber   // the pod's probe workers (prober.go); nil until the sync loop starts
	probes    probeResults // the probe results last read from prober
	logs      *logSet
	logTails  map[string]string // the end of each container's log, read at teardown (logtail.go)
	lostLogs  error             // container output the runtime could not write (loglost.go)

	observed *runtimeStatus // the runtime's view of the pod, last observed

	apiStatus v1.PodStatus // the v1.PodStatus last generated from observed

	rec       statusRecord // the status record last written to the data dir (podrecord.go)
	recFailed bool         // writing it failed once: warned, not again

	acted actedOn // what the current act touched, for observeActed
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
		logDir:    podLogDir(logsRoot, pod.Namespace, pod.Name, uid),
		ownLogs:   own,
		sandboxes: map[string]*runtimeapi.PodSandboxConfig{},
		ips:       map[string][]string{},
		reasons:   map[string]waitingReason{},
		images:    podImages{refs: map[string]string{}, info: map[string]*runtimeapi.Image{}},
		wake:      r.obs.subscribe(uid),
		observed:  &runtimeStatus{},
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
}

// generateAPIStatus generates the pod's API status from what was last observed,
// keeping each condition's lastTransitionTime until its status changes.
func (p *podRun) generateAPIStatus() v1.PodStatus {
	st := podStatusFor(statusInput{
		Pod: p.pod, Status: p.observed, Reasons: p.reasons, Probes: p.probes,
		RuntimeName: p.r.facts.RuntimeName, HostIP: p.r.facts.HostIP, StartTime: p.startTime,
		Terminal: p.terminal,
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

// observeFinal re-reads a pod that ended on its own (Succeeded or Failed)
// once teardown has stopped what still ran, and makes that its last status,
// as the kubelet's SyncTerminatingPod writes the final status after
// killPod: sidecars stopped after the regular containers show how they
// ended, and the stopped sandbox makes PodReadyToStartContainers False
// (PodSandboxNotReady). A pod whose wait ended otherwise (ready, timeout,
// signal) keeps the status it had then, which says why it was not done.
func (p *podRun) observeFinal(ctx context.Context) {
	if p.apiStatus.Phase != v1.PodSucceeded && p.apiStatus.Phase != v1.PodFailed {
		return
	}
	if err := p.r.obs.poll(ctx); err != nil {
		return
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
	for {
		p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
		p.logs.update(p.observed)
		p.probes = p.prober.snapshot()
		p.apiStatus = p.generateAPIStatus()
		p.reportStatus()
		p.prober.observe(p.observed, p.apiStatus.PodIP)
		if o := waitOutcome(p.r.opts.Wait, p.pod, p.apiStatus, p.started); o != OutcomeWaiting {
			return o, nil
		}

		if ctx.Err() != nil {
			// Interrupted (or timed out) before acting: create nothing more.
			return OutcomeWaiting, nil
		}
		actions := computePodActions(planInput{Pod: p.pod, Status: p.observed, Probes: p.probes})
		if actions.KillPod && !actions.CreateSandbox {
			// Nothing runs and nothing will: the pod is over. Only a pod
			// whose containers all succeeded reached its goal; one whose
			// sandbox died before its containers ran did not.
			if p.apiStatus.Phase == v1.PodSucceeded {
				return OutcomeReached, nil
			}
			return OutcomeFailed, nil
		}
		acted, nextWake, err := p.act(ctx, actions)
		if ctx.Err() != nil {
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
			if err := p.observeActed(ctx); err != nil && ctx.Err() == nil {
				return OutcomeError, fmt.Errorf("observing the runtime: %w", err)
			}
			continue
		}
		// Nothing started: the act may have recorded why (CrashLoopBackOff,
		// ImagePullBackOff), which the status shows while the loop waits,
		// and `podrun ps` too (podrecord.go).
		p.apiStatus = p.generateAPIStatus()
		p.reportStatus()
		p.recordStatus(nil)
		if !p.sleep(ctx, nextWake) {
			return OutcomeWaiting, nil
		}
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
	// start, for `podrun ps` (podrecord.go).
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
		if err := p.killPod(ctx, false, p.sandboxIDs(ctx)); err != nil {
			return true, nextWake, err
		}
		acted, p.acted.all = true, true
	}
	// 2. Kill the containers the plan does not keep.
	for id, k := range a.ContainersToKill {
		// With the preStop hook and the kill's grace period (hooks.go).
		if err := p.killContainer(ctx, id, k.Name, k.Reason, k.Message, nil, nil); err != nil {
			return true, nextWake, err
		}
		acted = true
		p.acted.containers = append(p.acted.containers, id)
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

// podSandboxConfig is the pod's sandbox config for attempt (the kubelet's
// generatePodSandboxConfig), with the DNS warnings to report. Like the
// kubelet's, it refuses a pod whose hostname it cannot form (an FQDN over
// 64 characters, say).
func (p *podRun) podSandboxConfig(attempt uint32) (*runtimeapi.PodSandboxConfig, []string, error) {
	if !p.pod.Spec.HostNetwork {
		if _, err := podHostnames(p.pod, p.r.opts.ClusterDomain); err != nil {
			return nil, nil, fmt.Errorf("generating the pod sandbox config: %w", err)
		}
	}
	dns, warnings := dnsConfigFor(dnsInput{Pod: p.pod, Host: p.r.host, ClusterDNS: p.r.opts.ClusterDNS, ClusterDomain: p.r.opts.ClusterDomain})
	return sandboxConfig(sandboxInput{
		Pod: p.pod, Attempt: attempt, Owner: p.r.opts.Owner, RootDir: p.r.opts.RootDir,
		LogDir: p.logDir, DNS: dns, ClusterDomain: p.r.opts.ClusterDomain, CgroupParent: p.cgroup,
		UsernsBase: p.r.userns[p.uid], GivenUID: p.r.opts.GivenUIDs[p.pod.UID],
	}), warnings, nil
}

// createSandbox runs a new sandbox for the pod and learns its IPs.
func (p *podRun) createSandbox(ctx context.Context, attempt uint32) (string, error) {
	cfg, warnings, err := p.podSandboxConfig(attempt)
	if err != nil {
		return "", err
	}
	for _, w := range warnings {
		p.event("Warning", "%s", w)
	}
	// The pod's log dir, 0755, as the kubelet's createPodSandbox makes it
	// before RunPodSandbox: containerd would make it 0755 too, CRI-O 0700.
	if dir := cfg.GetLogDirectory(); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("creating the pod sandbox: creating its log directory: %w", err)
		}
	}
	// A signal must not cut a call that creates something: the runtime
	// would go on creating it after podrun stopped looking, and teardown
	// would miss it. The call is bounded by the client's per-call timeout.
	ctx = context.WithoutCancel(ctx)
	id, err := p.runPodSandbox(ctx, cfg)
	if err != nil {
		return "", p.withCgroupDriverHint(fmt.Errorf("creating the pod sandbox: %w", err))
	}
	p.sandboxes[id] = cfg
	// The observer learns of it now rather than from a listing.
	sb := &runtimeapi.PodSandbox{Id: id, Metadata: cfg.Metadata, State: runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: p.r.now().UnixNano(), Labels: cfg.Labels, Annotations: cfg.Annotations}
	p.acted.sandboxes = append(p.acted.sandboxes, sb)
	if !p.pod.Spec.HostNetwork {
		st, err := p.r.rt.PodSandboxStatus(ctx, id, false)
		if err != nil {
			return "", fmt.Errorf("reading the pod sandbox status: %w", err)
		}
		sb.State, sb.CreatedAt = st.GetStatus().GetState(), st.GetStatus().GetCreatedAt()
		if ips := sandboxIPs(st); len(ips) > 0 {
			p.ips[id] = ips
		}
	}
	return id, nil
}

// withCgroupDriverHint adds cgroupDriverHint to err, an error of the
// runtime creating the pod's sandbox or a container: when the runtime
// refused the pod cgroup podrun handed it for the other driver, which
// driver podrun used, why, and the flag that fixes it.
func (p *podRun) withCgroupDriverHint(err error) error {
	if p.cgroup == "" {
		return err // no pod cgroup: the runtime placed the pod itself
	}
	if hint := cgroupDriverHint(err.Error(), p.r.facts.CgroupDriver, p.r.facts.CgroupDriverSource); hint != "" {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// runPodSandboxAttempts bounds the RunPodSandbox calls of one sandbox that
// the runtime cuts short by going away.
const runPodSandboxAttempts = 3

// runPodSandbox is RunPodSandbox, made again when the runtime went away
// during the call (restarted: the client waits for it to come back), as
// the kubelet's next SyncPod would make it. What the lost call made — a
// sandbox of the pod's run that podrun has no ID of, half made or whole —
// is removed first, so that nothing is left of it and its name is free.
func (p *podRun) runPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig) (string, error) {
	for attempt := 1; ; attempt++ {
		id, err := p.r.rt.RunPodSandbox(ctx, cfg, "")
		if err == nil || !cri.IsUnavailable(err) || attempt == runPodSandboxAttempts {
			return id, err
		}
		p.event("FailedCreatePodSandBox", "Failed to create pod sandbox: %v; the runtime went away: trying again", err)
		for _, id := range p.sandboxIDs(ctx) {
			if _, known := p.sandboxes[id]; known {
				continue
			}
			if err := removePodSandbox(ctx, p.r.rt, id); err != nil {
				return "", fmt.Errorf("removing pod sandbox %s, left by a RunPodSandbox the runtime cut short: %w", id, err)
			}
		}
	}
}

// startContainer starts one container instance unless it is in back-off.
// It reports whether it started one, and when a deferred start is due.
func (p *podRun) startContainer(ctx context.Context, sandboxID string, c *v1.Container) (bool, time.Time, error) {
	prev := p.observed.latest(c.Name)
	if until, in := p.restartBackOff(c, prev); in {
		return false, until, nil
	}

	sandboxCfg := p.sandboxes[sandboxID]
	ref, wakeAt, err := p.ensureImage(ctx, c, sandboxCfg)
	if err != nil {
		return false, time.Time{}, err
	}
	if ref == "" {
		// The pull failed for now, or is in back-off: look again at wakeAt.
		return false, wakeAt, nil
	}
	restartCount := 0
	if prev != nil {
		restartCount = prev.RestartCount + 1
	}
	cfg, err := p.makeContainerConfig(ctx, sandboxID, c, ref, restartCount)
	if err != nil {
		return false, time.Time{}, err
	}
	hookCtx := ctx // a signal may cut the postStart hook
	// As for the sandbox, a signal must not cut create or start midway.
	ctx = context.WithoutCancel(ctx)
	id, err := p.r.rt.CreateContainer(ctx, sandboxID, cfg, sandboxCfg)
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateContainerErr, Message: err.Error()}
		// A sandbox that died meanwhile is recreated by the next sync; in a
		// ready sandbox the runtime refuses this container for good.
		if st, serr := p.r.rt.PodSandboxStatus(ctx, sandboxID, false); serr == nil &&
			st.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			p.acted.all = true
			return true, time.Time{}, nil
		}
		return false, time.Time{}, p.withCgroupDriverHint(fmt.Errorf("%s: creating container %q: %w", reasonCreateContainerErr, c.Name, err))
	}
	p.acted.containers = append(p.acted.containers, id)
	p.event("Created", "Created container %s", c.Name)
	if err := p.r.rt.StartContainer(ctx, id); err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonRunContainerError, Message: err.Error()}
		p.event("Failed", "Error: %s: %v", reasonRunContainerError, err)
		// containerd leaves the container exited (128, StartError), and the
		// restart policy decides what next. CRI-O removes it: the next sync
		// would create it again at once, and again, as nothing changes in
		// a run; like a container the runtime refuses to create, the run
		// ends (exit 125).
		if _, serr := p.r.rt.ContainerStatus(ctx, id); cri.IsNotFound(serr) {
			return false, time.Time{}, fmt.Errorf("%s: starting container %q (the runtime removed it): %w", reasonRunContainerError, c.Name, err)
		}
		return true, time.Time{}, nil
	}
	delete(p.reasons, c.Name)
	p.event("Started", "Started container %s", c.Name)
	// Its output shows from now on, while the hook below runs (logs.go).
	if cfg.GetLogPath() != "" && sandboxCfg.GetLogDirectory() != "" {
		p.logs.started(id, c.Name, filepath.Join(sandboxCfg.GetLogDirectory(), cfg.GetLogPath()))
	}
	// The postStart hook runs synchronously; if it fails the container is
	// killed, to be restarted by its restart policy (hooks.go).
	p.postStart(hookCtx, id, c)
	return true, time.Time{}, nil
}

// restartBackOff is the kubelet's doBackOff for a container whose newest
// instance prev exited: while the back-off from its exit runs, the
// container waits in CrashLoopBackOff, and the returned time is when the
// kubelet would look at it again (requeueAfter: the back-off's end plus
// jitter); past the back-off's end, the next restart's back-off is
// recorded.
func (p *podRun) restartBackOff(c *v1.Container, prev *containerStatus) (until time.Time, in bool) {
	if prev == nil || prev.State != stateExited {
		return time.Time{}, false
	}
	now := p.r.now()
	if until, in := p.backoff.until(c.Name, prev.FinishedAt, now); in {
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", p.backoff.delay(c.Name), c.Name, p.fullName())
		if p.reasons[c.Name].Reason != reasonCrashLoopBackOff {
			p.event("BackOff", "Back-off restarting failed container %s in pod %s", c.Name, p.fullName())
		}
		p.reasons[c.Name] = waitingReason{Reason: reasonCrashLoopBackOff, Message: msg}
		return now.Add(requeueAfter(until.Sub(now), p.r.jitter())), true
	}
	p.backoff.next(c.Name, prev.FinishedAt, now)
	return time.Time{}, false
}

// makeContainerConfig is the CRI config of the container's instance
// restartCount from image ref, with its mounts. What fails is a
// CreateContainerConfigError, recorded as the container's waiting reason.
func (p *podRun) makeContainerConfig(ctx context.Context, sandboxID string, c *v1.Container, ref string, restartCount int) (*runtimeapi.ContainerConfig, error) {
	var cfg *runtimeapi.ContainerConfig
	// The kubelet's getImageUser, for runAsNonRoot and the default uid.
	img, err := p.imageStatus(ctx, ref)
	if err != nil {
		err = &configError{err.Error()}
	} else {
		cfg, err = containerConfig(p.containerInput(c, ref, restartCount, p.ips[sandboxID], imageUserOf(img)))
	}
	if err != nil {
		// A config error ends the run (exit 125); the status shows the
		// reason and the kubelet's message.
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		p.event("Failed", "Error: %v", err)
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	// The kubelet's makeMounts, after the environment (for subPathExpr):
	// the volume mounts come first.
	mounts, err := p.containerMounts(c, p.ips[sandboxID])
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	cfg.Mounts = append(mounts, cfg.Mounts...)
	// Then the managed /etc/hosts, rewritten for every start (kubelet
	// makeMounts), and the instance's termination message file (kuberuntime
	// makeMounts; like the kubelet, a file that cannot be made is skipped).
	hosts, err := p.hostsMount(c, p.ips[sandboxID])
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	if hosts != nil {
		cfg.Mounts = append(cfg.Mounts, hosts)
	}
	if term, err := p.terminationMount(c); err != nil {
		p.event("Warning", "error on creating termination-log file for container %s: %v", c.Name, err)
	} else if term != nil {
		cfg.Mounts = append(cfg.Mounts, term)
	}
	// Last, the directory of the container's log file, 0755 (the kubelet's
	// generateContainerConfig): CRI-O makes only the pod's log dir, and
	// its conmon fails the create without this one; containerd makes it
	// itself. It goes with the pod's log dir.
	if dir := containerLogDir(p.sandboxes[sandboxID], cfg); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			err = fmt.Errorf("create container log directory for container %s failed: %w", c.Name, err)
			p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
			p.event("Failed", "Error: %v", err)
			return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
		}
	}
	return cfg, nil
}

// containerInput is what containerConfig decides container c's instance
// restartCount from: image ref, run as the image's user u, in a sandbox
// with podIPs.
func (p *podRun) containerInput(c *v1.Container, ref string, restartCount int, podIPs []string, u imageUser) containerInput {
	return containerInput{
		Pod: p.pod, Container: c, RestartCount: restartCount, ImageRef: ref, Owner: p.r.opts.Owner,
		PodIPs: podIPs, HostIP: p.r.facts.HostIP, Node: volumeNode(p.r.facts.Node),
		Objects:        volumes.Objects{ConfigMaps: p.r.opts.ConfigMaps, Secrets: p.r.opts.Secrets},
		MemoryCapacity: p.r.facts.Node.MemoryCapacity, ImageUser: u,
		SeccompProfileRoot: p.r.opts.seccompProfileRoot(), PodDir: p.dataDir,
		UsernsBase: p.r.userns[p.uid],
	}
}

// gracePeriod is the pod's termination grace period in seconds, at least
// the kubelet's minimum of 2.
func (p *podRun) gracePeriod() int64 {
	const minimumGracePeriodSeconds = 2
	g := int64(v1.DefaultTerminationGracePeriodSeconds)
	if p.pod.Spec.TerminationGracePeriodSeconds != nil {
		g = *p.pod.Spec.TerminationGracePeriodSeconds
	}
	return max(g, minimumGracePeriodSeconds)
}
