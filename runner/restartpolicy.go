package runner

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Container restart policy and rules (feature ContainerRestartRules, beta
// and on by default since v1.35): a container may set its own
// restartPolicy (Always, OnFailure, Never), which then wins over the pod's,
// and restartPolicyRules, whose first rule matching an exit code decides
// before either policy. The Restart action starts the container again;
// the RestartAllContainers action (feature
// RestartAllContainersOnContainerExits, beta and on by default since
// v1.36) restarts the whole pod in place (restartall.go).

// containerRestarts is the kubelet's ContainerShouldRestart
// (pkg/api/v1/pod/util.go, v1.37): whether a container whose instance
// exited with exitCode is started again. A sidecar's policy is Always, so
// it always is.
func containerRestarts(c *v1.Container, podPolicy v1.RestartPolicy, exitCode int32) bool {
	if c != nil && c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch podPolicy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true // Always, and the default
}

// matchingRestartRule is the kubelet's FindMatchingContainerRestartRule:
// the first rule whose exitCodes match (In: the code is listed; NotIn: it
// is not).
func matchingRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		listed := slices.Contains(r.ExitCodes.Values, exitCode)
		switch r.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return r, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return r, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// restartsAfterKill says whether a container the kubelet kills while it
// runs (a failed liveness or startup probe), or finds in an unknown state,
// is started again: there is no exit code for the rules to match, so the
// container's own policy decides (anything but Never restarts), and
// without one the pod's (anything but Never), as computePodActions does.
func restartsAfterKill(c *v1.Container, podPolicy v1.RestartPolicy) bool {
	if c != nil && c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return podPolicy != v1.RestartPolicyNever
}

// runsOnce says whether a container that exited 0 is left alone when a
// new sandbox restarts the pod: its own policy OnFailure, or the pod's
// OnFailure when it has none (computePodActions' runOnce).
func runsOnce(c *v1.Container, podPolicy v1.RestartPolicy) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy == v1.ContainerRestartPolicyOnFailure
	}
	return podPolicy == v1.RestartPolicyOnFailure
}
