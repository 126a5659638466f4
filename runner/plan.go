package runner

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// killReason says why a running container is killed.
type killReason string

const (
	killLivenessProbe killReason = "LivenessProbe"
	killStartupProbe  killReason = "StartupProbe"
	killUnknownState  killReason = "Unknown"
)

// containerToKill is one entry of podActions.ContainersToKill.
type containerToKill struct {
	Name    string
	Reason  killReason
	Message string
}

// podActions is the plan for one sync of a pod, like the kubelet's
// podActions (pkg/kubelet/kuberuntime/kuberuntime_manager.go).
type podActions struct {
	// KillPod stops every container and the sandbox. With CreateSandbox it is
	// the first step of recreating the pod; without it the pod is done.
	KillPod bool
	// CreateSandbox creates a new sandbox with Attempt.
	CreateSandbox bool
	// SandboxID is the sandbox the containers start in when none is created.
	SandboxID string
	Attempt   uint32
	// InitContainersToStart are indexes into spec.initContainers, in spec order.
	InitContainersToStart []int
	// ContainersToStart are indexes into spec.containers, in spec order.
	ContainersToStart []int
	// ContainersToKill are running containers to stop, by container ID.
	ContainersToKill map[string]containerToKill
	// ContainersToReset are the container instances to remove (killing
	// those that run first) when the pod restarts in place
	// (restartall.go), in the kubelet's order: regular containers, init
	// containers, then those whose exit restarts the pod.
	ContainersToReset []containerToReset
}

// planInput is everything computePodActions decides from.
type planInput struct {
	Pod    *v1.Pod
	Status *runtimeStatus
	Probes probeResults
	// RestartAll: the status generated for this sync has
	// AllContainersRestarting True (restartall.go).
	RestartAll bool
}

// computePodActions decides what one sync of the pod does. It follows the
// kubelet's computePodActions and computeInitContainerActions: the sandbox
// is (re)created when it is missing or broken; regular init containers run
// strictly in order, each to exit 0 before the next; restartable init
// containers (sidecars) start in order, gate the next one on their startup
// probe and are kept running; regular containers start once the pod is
// initialised and are restarted by restartPolicy. Back-off is not decided
// here: the sync step defers a start that is still in back-off.
func computePodActions(in planInput) podActions {
	pod, status := in.Pod, in.Status
	create, attempt, sandboxID, _ := sandboxChanged(pod, status)
	a := podActions{
		KillPod:          create,
		CreateSandbox:    create,
		SandboxID:        sandboxID,
		Attempt:          attempt,
		ContainersToKill: map[string]containerToKill{},
	}

	if in.RestartAll {
		// Restart the pod in place: remove every container, those whose
		// exit started it last. The next sync starts the pod over.
		srcInit, init := containersToReset(pod.Spec.InitContainers, status)
		srcRegular, regular := containersToReset(pod.Spec.Containers, status)
		a.ContainersToReset = slices.Concat(regular, init, srcRegular, srcInit)
		return a
	}

	if create {
		// Under restartPolicy Never a pod whose containers already ran is not
		// given a new sandbox: it is over. With no container status at all we
		// never got as far as a container, so the sandbox is retried.
		if pod.Spec.RestartPolicy == v1.RestartPolicyNever && attempt != 0 && len(status.Containers) != 0 {
			a.CreateSandbox = false
			return a
		}
		var toStart []int
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			if runsOnce(c, pod.Spec.RestartPolicy) && succeeded(status.latest(c.Name)) {
				continue
			}
			toStart = append(toStart, i)
		}
		// Every regular container succeeded under OnFailure after the pod was
		// initialised: nothing to recreate the sandbox for.
		if len(toStart) == 0 && anyRegularContainerIn(pod, status, stateCreated, stateRunning, stateExited) {
			a.CreateSandbox = false
			return a
		}
		// A new sandbox starts the pod from the beginning.
		if len(pod.Spec.InitContainers) != 0 {
			a.InitContainersToStart = []int{0}
			return a
		}
		a.ContainersToStart = toStart
		return a
	}

	initialized := computeInitContainerActions(in, &a)
	if a.KillPod || !initialized {
		return a
	}

	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.latest(c.Name)
		if cs == nil || cs.State != stateRunning {
			if shouldRestart(pod, c, cs) {
				a.ContainersToStart = append(a.ContainersToStart, i)
				if cs != nil && cs.State == stateUnknown {
					// Kill first so that two instances never run at once.
					a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killUnknownState,
						Message: fmt.Sprintf("Container %s is in unknown state, will be restarted", c.Name)}
				}
			}
			continue
		}
		var reason killReason
		var msg string
		switch {
		case in.Probes.Liveness[cs.ID] == probeFailure:
			reason, msg = killLivenessProbe, fmt.Sprintf("Container %s failed liveness probe", c.Name)
		case in.Probes.Startup[cs.ID] == probeFailure:
			reason, msg = killStartupProbe, fmt.Sprintf("Container %s failed startup probe", c.Name)
		default:
			keep++
			continue
		}
		if restartsAfterKill(c, pod.Spec.RestartPolicy) {
			msg += ", will be restarted"
			a.ContainersToStart = append(a.ContainersToStart, i)
		}
		a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: reason, Message: msg}
	}
	if keep == 0 && len(a.ContainersToStart) == 0 {
		// Nothing runs and nothing will: the pod is done. Sidecars must not
		// keep it alive, so they are not restarted either.
		a.KillPod = true
		a.InitContainersToStart = nil
	}
	return a
}

// computeInitContainerActions fills in the init container part of the plan
// and reports whether the pod is initialised. It walks the init containers
// from the last to the first, because the last one known to have completed
// tells how far initialisation got even when earlier instances are gone.
func computeInitContainerActions(in planInput, a *podActions) bool {
	pod, status := in.Pod, in.Status
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	// A regular container that exists (created or running) means every init
	// container completed at some point.
	// Exited ones do not count: after a node reboot every container is
	// exited and the new sandbox has not been initialised.
	initialized := anyRegularContainerIn(pod, status, stateCreated, stateRunning)
	doneBefore := initialized // this or a later init container has completed
	last := len(pod.Spec.InitContainers) - 1

	for i := last; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		sidecar := podresources.IsSidecar(c)
		cs := status.latest(c.Name)
		if cs == nil {
			// A sidecar whose instance vanished after it had started is restarted.
			if doneBefore && sidecar {
				a.InitContainersToStart = append(a.InitContainersToStart, i)
			}
			continue
		}
		if doneBefore && !sidecar {
			// Once initialised only sidecars need to keep running.
			continue
		}
		switch cs.State {
		case stateCreated:
			// Create and start happen in one step; a container stuck in
			// created failed to start. Start it again.
			a.InitContainersToStart = append(a.InitContainersToStart, i)
		case stateRunning:
			if !sidecar {
				break // wait for it to exit
			}
			if c.StartupProbe != nil {
				r, ok := in.Probes.Startup[cs.ID]
				if !ok || r == probeUnknown {
					break // wait for the startup probe
				}
				if r == probeFailure {
					a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killStartupProbe,
						Message: fmt.Sprintf("Init container %s failed startup probe", c.Name)}
					a.InitContainersToStart = append(a.InitContainersToStart, i)
					break
				}
			}
			if i == last {
				initialized = true
			} else if !doneBefore {
				a.InitContainersToStart = append(a.InitContainersToStart, i+1)
			}
			if in.Probes.Liveness[cs.ID] == probeFailure {
				a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killLivenessProbe,
					Message: fmt.Sprintf("Init container %s failed liveness probe", c.Name)}
				a.InitContainersToStart = append(a.InitContainersToStart, i)
			}
		case stateExited:
			if sidecar {
				a.InitContainersToStart = append(a.InitContainersToStart, i)
				break
			}
			if initContainerFailed(cs) {
				if !containerRestarts(c, pod.Spec.RestartPolicy, cs.ExitCode) {
					a.KillPod = true
					a.InitContainersToStart = nil
					return false
				}
				a.InitContainersToStart = append(a.InitContainersToStart, i)
				break
			}
			if i == last {
				initialized = true
			} else {
				a.InitContainersToStart = append(a.InitContainersToStart, i+1)
			}
		default: // unknown
			if sidecar {
				a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killUnknownState,
					Message: fmt.Sprintf("Init container %s is in unknown state, will be restarted", c.Name)}
				a.InitContainersToStart = append(a.InitContainersToStart, i)
				break
			}
			if !initContainerFailed(cs) {
				break
			}
			if !restartsAfterKill(c, pod.Spec.RestartPolicy) {
				a.KillPod = true
				a.InitContainersToStart = nil
				return false
			}
			a.ContainersToKill[cs.ID] = containerToKill{Name: c.Name, Reason: killUnknownState,
				Message: fmt.Sprintf("Init container %s is in unknown state, will be restarted", c.Name)}
			a.InitContainersToStart = append(a.InitContainersToStart, i)
		}
		doneBefore = true
	}
	if !doneBefore {
		a.InitContainersToStart = append(a.InitContainersToStart, 0)
	}
	slices.Sort(a.InitContainersToStart)
	a.InitContainersToStart = slices.Compact(a.InitContainersToStart)
	return initialized
}

// Why a pod needs a new sandbox, as the kubelet says it in the
// PodReadyToStartContainers condition's message (pkg/kubelet/types
// PodSandboxNotReadyMsg*, v1.37).
const (
	sandboxMsgNone      = "no pod sandbox exists"
	sandboxMsgMultiple  = "multiple pod sandboxes are ready and need to be reconciled"
	sandboxMsgNotReady  = "pod sandbox is not ready"
	sandboxMsgNoAddress = "pod sandbox has no IP address"
)

// sandboxChanged reports whether the pod needs a new sandbox, with the attempt
// number for it, or the ID of the sandbox to keep using, and why it needs
// one (kubelet PodSandboxChanged).
func sandboxChanged(pod *v1.Pod, status *runtimeStatus) (bool, uint32, string, string) {
	if len(status.Sandboxes) == 0 {
		return true, 0, "", sandboxMsgNone
	}
	ready := 0
	for _, s := range status.Sandboxes {
		if s.Ready {
			ready++
		}
	}
	newest := status.Sandboxes[0]
	switch {
	case ready > 1:
		return true, newest.Attempt + 1, newest.ID, sandboxMsgMultiple
	case !newest.Ready:
		return true, newest.Attempt + 1, newest.ID, sandboxMsgNotReady
	case !pod.Spec.HostNetwork && newest.IP == "":
		return true, newest.Attempt + 1, newest.ID, sandboxMsgNoAddress
	}
	return false, newest.Attempt, newest.ID, ""
}

// shouldRestart is the kubelet's ShouldContainerBeRestarted for the newest
// instance of container c (nil: never started).
func shouldRestart(pod *v1.Pod, c *v1.Container, cs *containerStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if cs == nil {
		return true
	}
	switch cs.State {
	case stateRunning:
		return false
	case stateUnknown, stateCreated:
		return true
	}
	return containerRestarts(c, pod.Spec.RestartPolicy, cs.ExitCode)
}

func succeeded(cs *containerStatus) bool {
	return cs != nil && cs.State == stateExited && cs.ExitCode == 0
}

// initContainerFailed: OOM-killed, exited non-zero, or in an unknown state.
func initContainerFailed(cs *containerStatus) bool {
	return cs.Reason == "OOMKilled" ||
		cs.State == stateExited && cs.ExitCode != 0 ||
		cs.State == stateUnknown
}

// anyRegularContainerIn reports whether the newest instance of some regular
// container is in one of the states.
func anyRegularContainerIn(pod *v1.Pod, status *runtimeStatus, states ...containerState) bool {
	for i := range pod.Spec.Containers {
		if cs := status.latest(pod.Spec.Containers[i].Name); cs != nil && slices.Contains(states, cs.State) {
			return true
		}
	}
	return false
}

// backOff is client-go's flowcontrol.Backoff as the kubelet uses it, one
// per pod run: for container restarts (kubelet.go: 10 s doubling to 300 s,
// HasExpiredFunc "eventTime - lastUpdate > 600 s") and for image pulls
// (images.NewImageManager: 10 s doubling to 300 s, the default expiry
// "eventTime - lastUpdate > 2*max", also 600 s).
//
// The first restart of a container is not delayed: doBackOff finds no
// entry, lets the start go and calls Next, which creates the entry with
// 10 s. Only the second restart waits, 10 s from the exit's FinishedAt.
type backOff struct {
	entries map[string]backOffEntry
}

type backOffEntry struct {
	Delay      time.Duration
	LastUpdate time.Time
}

const (
	backOffInitial = 10 * time.Second
	backOffMax     = 300 * time.Second
	backOffReset   = 600 * time.Second
)

// expired is the expiry rule: the entry is forgotten when eventTime comes
// more than 10 minutes after its last update.
func (e backOffEntry) expired(eventTime time.Time) bool {
	return eventTime.Sub(e.LastUpdate) > backOffReset
}

// until is IsInBackOffSince(key, eventTime) for container restarts, with
// eventTime the last exit's FinishedAt: it returns when the back-off ends
// and whether it is still in force at now.
func (b *backOff) until(key string, eventTime, now time.Time) (time.Time, bool) {
	e, ok := b.entries[key]
	if !ok || e.expired(eventTime) {
		return time.Time{}, false
	}
	end := eventTime.Add(e.Delay)
	return end, now.Before(end)
}

// untilSinceUpdate is IsInBackOffSinceUpdate(key, now) for image pulls:
// the back-off runs from the last failure (the last Next).
func (b *backOff) untilSinceUpdate(key string, now time.Time) (time.Time, bool) {
	e, ok := b.entries[key]
	if !ok || e.expired(now) {
		return time.Time{}, false
	}
	end := e.LastUpdate.Add(e.Delay)
	return end, now.Before(end)
}

// resyncInterval is the kubelet's default syncFrequency: a pod worker
// looks at a pod at least this often, so no back-off wait is longer.
const resyncInterval = time.Minute

// requeueAfter is how long the kubelet's pod worker waits before it syncs
// a pod again after a sync that found a container in back-off
// (pod_workers.go completeWork): until the back-off ends, at most
// resyncInterval, plus up to half of that again as jitter (wait.Jitter
// with factor 0.5; rnd in [0, 1)). A restart after a crash therefore comes
// 10 to 15 s after it, then 20 to 30 s, and so on, not on the dot.
func requeueAfter(remaining time.Duration, rnd float64) time.Duration {
	d := min(max(remaining, 0), resyncInterval)
	return d + time.Duration(rnd*0.5*float64(d))
}

// delay is Get(key): the current delay, 0 without an entry.
func (b *backOff) delay(key string) time.Duration { return b.entries[key].Delay }

// next is Next(key, eventTime) at now: a new or expired entry starts at
// 10 s, an existing one doubles up to 300 s; now becomes its last update.
func (b *backOff) next(key string, eventTime, now time.Time) {
	if b.entries == nil {
		b.entries = map[string]backOffEntry{}
	}
	e, ok := b.entries[key]
	switch {
	case !ok || e.expired(eventTime):
		e.Delay = backOffInitial
	default:
		e.Delay = min(2*e.Delay, backOffMax)
	}
	e.LastUpdate = now
	b.entries[key] = e
}
