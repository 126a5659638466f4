package runner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// The kubelet's OOM score adjustments (pkg/kubelet/qos/policy.go).
const (
	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
)

// oomScoreAdj is the kubelet's GetContainerOOMScoreAdjust: -997 for a
// node-critical or Guaranteed pod, 1000 for BestEffort; a Burstable
// container gets 1000 - 1000*memoryRequest/memoryCapacity, at least 3 and
// at most 999, and a sidecar no more than the regular container with the
// smallest memory request. memoryCapacity is the node's memory (MemTotal);
// 0 (unknown) leaves Burstable containers at 999.
//
// Not modelled: pod-level resources spreading the pod's memory request,
// and the KubeletOOMScoreAdjTieBreak gate.
func oomScoreAdj(pod *v1.Pod, c *v1.Container, memoryCapacity int64) int64 {
	if pod.Spec.PriorityClassName == "system-node-critical" {
		return guaranteedOOMScoreAdj
	}
	switch podresources.QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	score := func(request int64) int64 {
		if memoryCapacity <= 0 {
			return 1000
		}
		return 1000 - (1000*request)/memoryCapacity
	}
	adj := score(c.Resources.Requests.Memory().Value())
	if podresources.IsSidecar(c) && len(pod.Spec.Containers) > 0 && isInitContainer(pod, c) {
		minRequest := pod.Spec.Containers[0].Resources.Requests.Memory().Value()
		for _, rc := range pod.Spec.Containers[1:] {
			minRequest = min(minRequest, rc.Resources.Requests.Memory().Value())
		}
		adj = min(adj, score(minRequest))
	}
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == besteffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// isInitContainer tells whether c is one of the pod's init containers.
func isInitContainer(pod *v1.Pod, c *v1.Container) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}
