package runner

import (
	"os"
	"regexp"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// Restarting a pod in place (feature RestartAllContainersOnContainerExits,
// beta and on by default since v1.36): a container whose exit code matches
// a restart rule with the RestartAllContainers action restarts every
// container of the pod, keeping its sandbox, its IP and its volumes. As
// the kubelet does it (v1.37.2):
//
//   - The status generated after the exit has the condition
//     AllContainersRestarting True (reason RestartAllContainersStarted),
//     and that sync kills every container still running (grace period 0,
//     so no preStop hook and the runtime's minimum of 2 s; event Killing
//     "killing") and removes every instance of every container: the
//     regular containers, then the init containers, then those whose exit
//     started it (computePodActions, ContainersToReset).
//   - The next sync finds no container: each shows waiting
//     RestartingAllContainers with that reason as its last state (exit
//     137) and one restart more, and the condition is False again. Then
//     the pod starts over: init containers in order, sidecars, regular
//     containers. A new instance's restart count continues from its log
//     files (calcRestartCountByLogDir), as they are kept.
//
// The kubelet carries a removed container's restart count and last state
// in the API status it generated before; podrun carries them in the status
// it last generated (statusInput.Old).

const (
	reasonRestartingAll           = "RestartingAllContainers"
	messageRestartingAll          = "The container is removed because RestartAllContainers in place"
	reasonRestartAllStarted       = "RestartAllContainersStarted"
	messageRestartAllStarted      = "container exited with restart policy rule"
	conditionAllContainersRestart = v1.PodConditionType("AllContainersRestarting")
	// killRestartAll: a container killed to restart the pod in place.
	killRestartAll killReason = "RestartAllContainers"
)

// restartsAll says whether an exit code of container c restarts the whole
// pod: the first rule it matches has the RestartAllContainers action.
func restartsAll(c *v1.Container, exitCode int32) bool {
	rule, ok := matchingRestartRule(c, exitCode)
	return ok && rule.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// allContainersCouldRestart is the kubelet's AllContainersCouldRestart: some
// init or regular container has a rule with the RestartAllContainers action.
// Only such a pod has the AllContainersRestarting condition.
func allContainersCouldRestart(spec *v1.PodSpec) bool {
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for _, r := range cs[i].RestartPolicyRules {
				if r.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// shouldAllContainersRestart is the kubelet's ShouldAllContainersRestart:
// the newest instance of some container exited with a code that restarts
// the pod, or the status generated before (old, may be nil) shows one
// terminated so.
func shouldAllContainersRestart(pod *v1.Pod, st *runtimeStatus, old *v1.PodStatus) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if s := st.latest(c.Name); s != nil && s.State == stateExited && restartsAll(c, s.ExitCode) {
				return true
			}
			if old == nil {
				continue
			}
			o := findStatus(old.InitContainerStatuses, c.Name)
			if o == nil {
				o = findStatus(old.ContainerStatuses, c.Name)
			}
			if o != nil && o.State.Terminated != nil && restartsAll(c, o.State.Terminated.ExitCode) {
				return true
			}
		}
	}
	return false
}

// allContainersRestartingCondition is the kubelet's
// GenerateAllContainersRestartingCondition.
func allContainersRestartingCondition(pod *v1.Pod, st *runtimeStatus, restarting bool, phase v1.PodPhase) v1.PodCondition {
	switch {
	case phase == v1.PodSucceeded:
		return condition(conditionAllContainersRestart, false, reasonPodCompleted, "")
	case phase == v1.PodFailed:
		return condition(conditionAllContainersRestart, false, reasonPodFailed, "")
	case !restarting || len(st.Containers) == 0:
		// Not restarting, or every container is already removed.
		return condition(conditionAllContainersRestart, false, "", "")
	}
	return condition(conditionAllContainersRestart, true, reasonRestartAllStarted, messageRestartAllStarted)
}

// restartingAll says whether a status has AllContainersRestarting True:
// the sync that follows resets the pod (the kubelet's SyncPod reads it
// from the status it has just generated).
func restartingAll(st v1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == conditionAllContainersRestart && c.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

// containerToReset is one entry of podActions.ContainersToReset.
type containerToReset struct {
	ID   string
	Name string
	Kill bool // it has not exited: kill it before removing it
}

// containersToReset is the kubelet's getContainersToReset over one list of
// containers: every instance of each, in spec order, split into those
// whose exit restarts the pod (sources) and the rest (targets).
func containersToReset(containers []v1.Container, st *runtimeStatus) (sources, targets []containerToReset) {
	for i := range containers {
		c := &containers[i]
		for _, s := range st.Containers {
			if s.Name != c.Name {
				continue
			}
			r := containerToReset{ID: s.ID, Name: c.Name}
			switch {
			case s.State != stateExited:
				r.Kill = true
				targets = append(targets, r)
			case restartsAll(c, s.ExitCode):
				sources = append(sources, r)
			default:
				targets = append(targets, r)
			}
		}
	}
	return sources, targets
}

var logFileCount = regexp.MustCompile(`^(\d+)\.log(\..*)?`)

// restartCountFromLogDir is the kubelet's calcRestartCountByLogDir: the
// restart count of a container with no instance in the runtime is one more
// than the highest N of its N.log files (0 without any), so that a pod
// restarted in place does not write its new instances' output over the
// old ones'.
func restartCountFromLogDir(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := logFileCount.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if k, err := strconv.Atoi(m[1]); err == nil && k+1 > n {
			n = k + 1
		}
	}
	return n
}
