package runner

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// Waiting reasons the kubelet reports (pkg/kubelet/kubelet_pods.go,
// pkg/kubelet/images/types.go, pkg/kubelet/container/sync_result.go).
const (
	reasonContainerCreating   = "ContainerCreating"
	reasonPodInitializing     = "PodInitializing"
	reasonCrashLoopBackOff    = "CrashLoopBackOff"
	reasonErrImagePull        = "ErrImagePull"
	reasonImagePullBackOff    = "ImagePullBackOff"
	reasonErrImageNeverPull   = "ErrImageNeverPull"
	reasonInvalidImageName    = "InvalidImageName"
	reasonCreateConfigError   = "CreateContainerConfigError"
	reasonCreateContainerErr  = "CreateContainerError"
	reasonRunContainerError   = "RunContainerError"
	reasonContainersNotInit   = "ContainersNotInitialized"
	reasonContainersNotReady  = "ContainersNotReady"
	reasonPodCompleted        = "PodCompleted"
	reasonPodFailed           = "PodFailed"
	reasonPodSandboxNotReady  = "PodSandboxNotReady"
	conditionReadyToStartCtrs = v1.PodConditionType("PodReadyToStartContainers")
)

// waitingReason is why a container is not running, kept by container name
// like the kubelet's reasonCache.
type waitingReason struct {
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// statusInput is everything podStatusFor decides from.
type statusInput struct {
	Pod         *v1.Pod
	Status      *runtimeStatus
	Reasons     map[string]waitingReason // by container name
	Probes      probeResults
	RuntimeName string // container ID scheme, e.g. "containerd"
	HostIP      string
	StartTime   time.Time
	// Terminal is set once podrun has stopped the pod (kubelet: the pod is
	// terminal), so that every container ending counts as final.
	Terminal bool
	// Failure, when set, fails the pod whatever its containers say, with
	// its reason and message (a deadline passed: deadline.go), as a
	// kubelet sync handler's eviction does in generateAPIPodStatus.
	Failure *podFailure
	// Old is the status generated before (nil: none), the kubelet's
	// oldPodStatus: a pod that keeps its Initialized condition while its
	// init containers run again, and a pod restarted in place
	// (restartall.go), whose removed containers' restart counts and last
	// states only it holds.
	Old *v1.PodStatus
}

// podStatusFor generates the v1.PodStatus the kubelet would report
// (generateAPIPodStatus, convertToAPIContainerStatuses, getPhase and the
// condition generators of pkg/kubelet/status/generate.go).
func podStatusFor(in statusInput) v1.PodStatus {
	pod, st := in.Pod, in.Status
	out := v1.PodStatus{HostIP: in.HostIP, QOSClass: podresources.QOSClass(pod)}
	if in.HostIP != "" {
		out.HostIPs = []v1.HostIP{{IP: in.HostIP}}
	}
	if !in.StartTime.IsZero() {
		t := metav1.NewTime(in.StartTime)
		out.StartTime = &t
	}
	if len(st.Sandboxes) > 0 {
		sb := st.Sandboxes[0]
		for _, ip := range sb.IPs {
			out.PodIPs = append(out.PodIPs, v1.PodIP{IP: ip})
		}
		if len(sb.IPs) > 0 {
			out.PodIP = sb.IPs[0]
		}
	}
	if pod.Spec.HostNetwork && in.HostIP != "" {
		out.PodIP = in.HostIP
		out.PodIPs = []v1.PodIP{{IP: in.HostIP}}
	}

	hasInit := len(pod.Spec.InitContainers) > 0
	restartAll := allContainersCouldRestart(&pod.Spec)
	restarting := restartAll && shouldAllContainersRestart(pod, st, in.Old)
	out.InitContainerStatuses = containerStatusesFor(in, pod.Spec.InitContainers, hasInit, true, restartAll, restarting)
	out.ContainerStatuses = containerStatusesFor(in, pod.Spec.Containers, hasInit, false, restartAll, restarting)
	out.Phase = podPhase(pod, out.InitContainerStatuses, out.ContainerStatuses, in.Terminal)
	if f := in.Failure; f != nil {
		// Before the conditions, which follow the phase (ContainersReady
		// and Ready False with reason PodFailed).
		out.Phase, out.Reason, out.Message = v1.PodFailed, f.Reason, f.Message
	}

	// The kubelet's order: PodReadyToStartContainers, Initialized, Ready,
	// ContainersReady, PodScheduled.
	ready := containersReadyCondition(pod, out)
	podReady := ready
	podReady.Type = v1.PodReady
	out.Conditions = []v1.PodCondition{
		readyToStartCondition(pod, st),
		initializedCondition(pod, out, in.Old),
		podReady,
		ready,
		condition(v1.PodScheduled, true, "", ""),
	}
	if restartAll {
		out.Conditions = append(out.Conditions, allContainersRestartingCondition(pod, st, restarting, out.Phase))
	}
	return out
}

// readyToStartCondition is the kubelet's
// GeneratePodReadyToStartContainersCondition: True while the pod's
// sandbox stands, else False with reason PodSandboxNotReady and why (as
// the kubelet reports a pod whose sandbox it stopped once it ended).
func readyToStartCondition(pod *v1.Pod, st *runtimeStatus) v1.PodCondition {
	if create, _, _, why := sandboxChanged(pod, st); create {
		return condition(conditionReadyToStartCtrs, false, reasonPodSandboxNotReady, why)
	}
	return condition(conditionReadyToStartCtrs, true, "", "")
}

func condition(t v1.PodConditionType, ok bool, reason, msg string) v1.PodCondition {
	s := v1.ConditionFalse
	if ok {
		s = v1.ConditionTrue
	}
	return v1.PodCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// containerStatusesFor converts the runtime's view of the given containers
// into API container statuses, in spec order. In a pod that can restart in
// place (restartAll), restart counts and last states carry over from the
// status before, and while it restarts (restarting) a removed container
// shows RestartingAllContainers (restartall.go; the kubelet's
// convertToAPIContainerStatuses).
func containerStatusesFor(in statusInput, containers []v1.Container, hasInit, isInit, restartAll, restarting bool) []v1.ContainerStatus {
	var out []v1.ContainerStatus
	for i := range containers {
		c := &containers[i]
		s := v1.ContainerStatus{Name: c.Name, Image: c.Image, VolumeMounts: volumeMountStatuses(c)}
		cur := in.Status.latest(c.Name)
		var old *v1.ContainerStatus
		if restartAll && in.Old != nil {
			if isInit {
				old = findStatus(in.Old.InitContainerStatuses, c.Name)
			} else {
				old = findStatus(in.Old.ContainerStatuses, c.Name)
			}
		}
		if cur == nil {
			reason := reasonContainerCreating
			if hasInit {
				reason = reasonPodInitializing
			}
			s.State.Waiting = &v1.ContainerStateWaiting{Reason: reason}
			f := false
			s.Started = &f
			switch {
			case old != nil && restarting && old.State.Waiting == nil:
				s.State.Waiting = &v1.ContainerStateWaiting{Reason: reasonRestartingAll, Message: messageRestartingAll}
				s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
					Reason: reasonRestartingAll, Message: messageRestartingAll, ExitCode: 137,
				}
				s.RestartCount = old.RestartCount + 1
			case old != nil && old.State.Terminated != nil:
				s = *old.DeepCopy() // the kubelet keeps a terminated status
			case old != nil:
				s.RestartCount = old.RestartCount
				s.LastTerminationState = *old.LastTerminationState.DeepCopy()
			}
			if r, ok := in.Reasons[c.Name]; ok {
				if s.State.Terminated != nil {
					s.LastTerminationState = s.State
				}
				s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
			}
			out = append(out, s)
			continue
		}
		s.ContainerID = in.RuntimeName + "://" + cur.ID
		if cur.ImageRef != "" {
			s.ImageID = cur.ImageRef
		}
		s.RestartCount = int32(cur.RestartCount)
		var carried *v1.ContainerStateTerminated
		if old != nil {
			// The kubelet's convertContainerStatus: a removed instance's
			// count and its last state live on only in the old status.
			s.RestartCount = max(s.RestartCount, old.RestartCount)
			// Its last state, unless the runtime still has an instance
			// before this one or a waiting reason says otherwise (below).
			switch {
			case old.ContainerID != s.ContainerID && old.State.Terminated != nil:
				carried = old.State.Terminated.DeepCopy()
			case old.LastTerminationState.Terminated != nil:
				carried = old.LastTerminationState.Terminated.DeepCopy()
			}
			if cur.State == stateRunning && old.State.Terminated != nil && old.RestartCount >= int32(cur.RestartCount) {
				s.RestartCount = old.RestartCount + 1
			}
		}
		// The resources the container was given (the kubelet's
		// allocation, which for a pod nobody resizes is its spec) and
		// the identity it runs as.
		s.Resources = c.Resources.DeepCopy()
		s.AllocatedResources = c.Resources.Requests.DeepCopy()
		s.User = cur.User
		started := false
		switch cur.State {
		case stateRunning:
			s.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}
			started = in.Probes.Startup[cur.ID] == probeSuccess || c.StartupProbe == nil
			if isInit && !podresources.IsSidecar(c) {
				started = true
			}
			s.Ready = started && (c.ReadinessProbe == nil || in.Probes.Readiness[cur.ID] == probeSuccess)
			if isInit && !podresources.IsSidecar(c) {
				s.Ready = false
			}
		case stateExited:
			s.State.Terminated = terminated(in.RuntimeName, cur)
			s.Ready = isInit && !podresources.IsSidecar(c) && cur.ExitCode == 0
		case stateCreated:
			s.State.Waiting = &v1.ContainerStateWaiting{}
		default:
			s.State.Waiting = &v1.ContainerStateWaiting{}
		}
		s.Started = &started
		// A container that will start again shows why it is waiting, with
		// its last run as the last state. One that will not (restartPolicy
		// Never, or OnFailure after exit 0) shows how it ended.
		willStart := podresources.IsSidecar(c) || shouldRestart(in.Pod, c, cur)
		if r, ok := in.Reasons[c.Name]; ok && cur.State != stateRunning && !in.Terminal && willStart {
			if s.State.Terminated != nil {
				s.LastTerminationState.Terminated = s.State.Terminated
			}
			s.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}}
		}
		if s.LastTerminationState.Terminated == nil {
			if prev := in.Status.previous(c.Name); prev != nil && prev.State == stateExited {
				s.LastTerminationState.Terminated = terminated(in.RuntimeName, prev)
			}
		}
		if s.LastTerminationState.Terminated == nil {
			s.LastTerminationState.Terminated = carried
		}
		out = append(out, s)
	}
	return out
}

// volumeMountStatuses is the kubelet's status.volumeMounts of a container:
// each mount as the spec gives it, a read-only one with whether it is
// recursively read-only (podrun makes it so only when asked with Enabled;
// IfPossible is not).
func volumeMountStatuses(c *v1.Container) []v1.VolumeMountStatus {
	var out []v1.VolumeMountStatus
	for _, m := range c.VolumeMounts {
		s := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled {
				mode = v1.RecursiveReadOnlyEnabled
			}
			s.RecursiveReadOnly = &mode
		}
		out = append(out, s)
	}
	return out
}

func terminated(runtimeName string, cs *containerStatus) *v1.ContainerStateTerminated {
	return &v1.ContainerStateTerminated{
		ExitCode:    cs.ExitCode,
		Reason:      cs.Reason,
		Message:     cs.Message,
		StartedAt:   metav1.NewTime(cs.StartedAt),
		FinishedAt:  metav1.NewTime(cs.FinishedAt),
		ContainerID: runtimeName + "://" + cs.ID,
	}
}

// podPhase is the kubelet's getPhase over API container statuses.
func podPhase(pod *v1.Pod, initStatuses, statuses []v1.ContainerStatus, terminal bool) v1.PodPhase {
	pendingInit, failedInit := 0, 0 // failedInit: failed and not restarted
	initialized := false
	for _, s := range statuses {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			initialized = true
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		s := findStatus(initStatuses, c.Name)
		if podresources.IsSidecar(c) {
			if !initialized && (s == nil || s.Started == nil || !*s.Started) {
				pendingInit++
			}
			continue
		}
		switch {
		case s != nil && s.State.Terminated != nil:
			if code := s.State.Terminated.ExitCode; code != 0 && !restartsAfter(pod, c, s.State.Terminated) {
				failedInit++
			}
		case s != nil && s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			// Waiting to run again after an exit: not pending (getPhase),
			// failed for good after a failure nothing restarts.
			if code := s.LastTerminationState.Terminated.ExitCode; code != 0 && !restartsAfter(pod, c, s.LastTerminationState.Terminated) {
				failedInit++
			}
		default:
			pendingInit++ // not created yet, running, waiting for its first run, or unknown
		}
	}
	if failedInit > 0 {
		return v1.PodFailed
	}
	unknown, running, waiting, stopped, stoppedForGood, succeededN := 0, 0, 0, 0, 0, 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		s := findStatus(statuses, c.Name)
		switch {
		case s == nil:
			unknown++
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if !restartsAfter(pod, c, s.State.Terminated) {
				stoppedForGood++
			}
			if s.State.Terminated.ExitCode == 0 {
				succeededN++
			}
		case s.State.Waiting != nil:
			if t := s.LastTerminationState.Terminated; t != nil {
				stopped++
				if !restartsAfter(pod, c, t) {
					stoppedForGood++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	switch {
	case pendingInit > 0, waiting > 0: // pending sidecars count only before initialisation
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if terminal {
			if stopped == succeededN {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		// With ContainerRestartRules the kubelet asks each container's
		// policy (its own, else the pod's) whether it runs again.
		switch {
		case stopped != stoppedForGood:
			return v1.PodRunning // some container is restarting
		case stopped == succeededN:
			return v1.PodSucceeded
		default:
			return v1.PodFailed
		}
	}
	return v1.PodPending
}

// restartsAfter is getPhase's "restartable": the container's policy starts
// it again after that ending, or the ending was its removal to restart the
// pod in place (restartall.go).
func restartsAfter(pod *v1.Pod, c *v1.Container, t *v1.ContainerStateTerminated) bool {
	return containerRestarts(c, pod.Spec.RestartPolicy, t.ExitCode) || t.Reason == reasonRestartingAll
}

func findStatus(statuses []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

// initializedCondition is the kubelet's GeneratePodInitializedCondition,
// in its order: a pod that Succeeded is initialized with reason
// PodCompleted (with or without init containers: every init container has
// a status here); else one whose regular containers started is; else every
// init container must be done (regular: exited 0; sidecar: started).
func initializedCondition(pod *v1.Pod, st v1.PodStatus, old *v1.PodStatus) v1.PodCondition {
	if st.Phase == v1.PodSucceeded {
		return condition(v1.PodInitialized, true, reasonPodCompleted, "")
	}
	for _, s := range st.ContainerStatuses {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			return condition(v1.PodInitialized, true, "", "")
		}
	}
	var pending []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		s := findStatus(st.InitContainerStatuses, c.Name)
		done := s != nil && (podresources.IsSidecar(c) && s.Started != nil && *s.Started ||
			!podresources.IsSidecar(c) && s.State.Terminated != nil && s.State.Terminated.ExitCode == 0)
		if !done {
			pending = append(pending, c.Name)
		}
	}
	if len(pending) == 0 {
		return condition(v1.PodInitialized, true, "", "")
	}
	// Once initialised a pod stays so while its init containers run again
	// (a pod restarted in place), as the kubelet keeps the condition since
	// v1.35 (RestartAllContainersOnContainerExits, on by default).
	if old != nil {
		for _, c := range old.Conditions {
			if c.Type == v1.PodInitialized && c.Status == v1.ConditionTrue {
				return condition(v1.PodInitialized, true, "", "")
			}
		}
	}
	return condition(v1.PodInitialized, false, reasonContainersNotInit,
		fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pending, " ")))
}

// containersReadyCondition: every regular container and sidecar ready.
func containersReadyCondition(pod *v1.Pod, st v1.PodStatus) v1.PodCondition {
	switch st.Phase {
	case v1.PodSucceeded:
		return condition(v1.ContainersReady, false, reasonPodCompleted, "")
	case v1.PodFailed:
		return condition(v1.ContainersReady, false, reasonPodFailed, "")
	}
	var unready []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if s := findStatus(st.InitContainerStatuses, c.Name); podresources.IsSidecar(c) && (s == nil || !s.Ready) {
			unready = append(unready, c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if s := findStatus(st.ContainerStatuses, c.Name); s == nil || !s.Ready {
			unready = append(unready, c.Name)
		}
	}
	if len(unready) > 0 {
		return condition(v1.ContainersReady, false, reasonContainersNotReady,
			fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " ")))
	}
	return condition(v1.ContainersReady, true, "", "")
}
