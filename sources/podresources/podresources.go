// Package podresources is the pod-level resource arithmetic that
// admission, the pod cgroup, oom_score_adj, the pod's status and
// memory-backed emptyDir volumes all rest on, written once: a pod's
// effective requests and limits (k8s.io/component-helpers/resource
// PodRequests and PodLimits), its QoS class (pkg/apis/core/v1/helper/qos)
// and whether an init container is a sidecar.
//
// It reads a v1.Pod and depends on the API types alone, so it sits under
// sources, beside the spec it reads, as sources/imageref does: sources'
// validation, runner, runner/admission, runner/cgroups, volumes and the
// printers all import it, and none of them reaches into runner for it.
package podresources

import (
	"math"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// IsSidecar tells whether an init container is a sidecar: a restartable
// init container (restartPolicy Always), which keeps running next to the
// regular containers.
func IsSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// QOSClass is the pod's QoS class as kubelet v1.37 computes it
// (pkg/apis/core/v1/helper/qos ComputePodQOS, with PodLevelResources and
// PodLevelResourcesFixKubeletQOSClass on, their defaults): a pod with
// pod-level cpu, memory or hugepages resources takes its class from them;
// otherwise each container, init containers included, has a class of its
// own and the pod is Burstable as soon as one is, or as soon as they are
// not all alike. Only cpu and memory count.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if r := pod.Spec.Resources; r != nil {
		for name := range r.Requests {
			if podLevel(name) {
				return requirementsQOS(r)
			}
		}
		for name := range r.Limits {
			if podLevel(name) {
				return requirementsQOS(r)
			}
		}
	}
	var qos v1.PodQOSClass
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		switch cq := requirementsQOS(&c.Resources); {
		case cq == v1.PodQOSBurstable:
			return cq
		case qos == "":
			qos = cq
		case qos != cq:
			return v1.PodQOSBurstable
		}
	}
	if qos == "" {
		return v1.PodQOSBestEffort
	}
	return qos
}

// requirementsQOS is the class of one set of requirements (with the API's
// default of a missing request to its limit): BestEffort without any; else Guaranteed when cpu and memory each have a request
// equal to a non-zero limit, BestEffort when neither has one, Burstable
// otherwise.
func requirementsQOS(r *v1.ResourceRequirements) v1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return v1.PodQOSBestEffort
	}
	var qos v1.PodQOSClass
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		lim := r.Limits[name]
		req, ok := r.Requests[name]
		if !ok {
			req = lim // the API's default: a limit without a request is both
		}
		rq := v1.PodQOSGuaranteed
		switch {
		case !req.Equal(lim):
			return v1.PodQOSBurstable
		case req.IsZero():
			rq = v1.PodQOSBestEffort
		}
		if qos == "" {
			qos = rq
		} else if qos != rq {
			return v1.PodQOSBurstable
		}
	}
	return qos
}

// Requests is the pod's effective request per resource, the formula of the
// scheduler and the kubelet (resource.PodRequests):
//
//   - regular containers and sidecars add up;
//   - each regular init container runs alone next to the sidecars started
//     before it, so it needs its own request plus theirs;
//   - the pod needs the larger of the two, per resource;
//   - pod-level requests (spec.resources) replace that for cpu, memory and
//     hugepages;
//   - the pod overhead is added.
func Requests(pod *v1.Pod) v1.ResourceList {
	return aggregate(pod, func(r *v1.ResourceRequirements) v1.ResourceList { return r.Requests }, nil, false)
}

// Limits is resource.PodLimits: as Requests over the limits, with the
// overhead added only to non-zero limits. perContainer (may be nil) sees
// each container's effective limits: an init container's include the
// sidecars started before it.
func Limits(pod *v1.Pod, perContainer func(v1.ResourceList)) v1.ResourceList {
	return aggregate(pod, func(r *v1.ResourceRequirements) v1.ResourceList { return r.Limits }, perContainer, true)
}

// DeclaredLimits is the pod's Limits and whether every container declares
// a cpu and a memory limit, or the pod a pod-level one (the kubelet's
// ResourceConfigForPod sets the pod cgroup's quota and memory limit only
// then).
func DeclaredLimits(pod *v1.Pod) (limits v1.ResourceList, cpuDeclared, memoryDeclared bool) {
	cpuDeclared, memoryDeclared = true, true
	limits = Limits(pod, func(l v1.ResourceList) {
		if l.Cpu().IsZero() {
			cpuDeclared = false
		}
		if l.Memory().IsZero() {
			memoryDeclared = false
		}
	})
	if r := pod.Spec.Resources; r != nil {
		if !r.Limits.Cpu().IsZero() {
			cpuDeclared = true
		}
		if !r.Limits.Memory().IsZero() {
			memoryDeclared = true
		}
	}
	return limits, cpuDeclared, memoryDeclared
}

// MemoryLimit is the memory limit of the pod's cgroup in bytes, as the
// kubelet's ResourceConfigForPod sets it: a Guaranteed pod's limits, a
// Burstable pod's only when every container (or the pod) declares one; 0
// means none (BestEffort, or undeclared).
func MemoryLimit(pod *v1.Pod) int64 {
	limits, _, declared := DeclaredLimits(pod)
	switch QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return Value(*limits.Memory())
	case v1.PodQOSBurstable:
		if declared {
			return Value(*limits.Memory())
		}
	}
	return 0
}

// Value is q.Value(), the quantity in units rounded up, saturated at the
// int64 bounds where q.Value() wraps around: validation bounds each
// quantity of a pod, not their sum (two containers of memory 5e18 are
// 1e19 bytes together, which Value() reads as 0; other forms of the same
// number wrap around to -8446744073709551616).
func Value(q resource.Quantity) int64 { return scaledValue(q, 0) }

// MilliValue is q.MilliValue(), saturated as Value is.
func MilliValue(q resource.Quantity) int64 { return scaledValue(q, resource.Milli) }

func scaledValue(q resource.Quantity, scale resource.Scale) int64 {
	switch {
	case q.Cmp(*resource.NewScaledQuantity(math.MaxInt64, scale)) > 0:
		return math.MaxInt64
	case q.Cmp(*resource.NewScaledQuantity(math.MinInt64, scale)) < 0:
		return math.MinInt64
	}
	return q.ScaledValue(scale)
}

// aggregate sums the regular containers and sidecars, takes the larger of
// that and each init container's need, applies pod-level values and adds
// the overhead.
func aggregate(pod *v1.Pod, of func(*v1.ResourceRequirements) v1.ResourceList,
	perContainer func(v1.ResourceList), overheadOnlyNonZero bool) v1.ResourceList {
	total := v1.ResourceList{}
	for i := range pod.Spec.Containers {
		l := of(&pod.Spec.Containers[i].Resources)
		if perContainer != nil {
			perContainer(l)
		}
		add(total, l)
	}
	sidecars, inits := v1.ResourceList{}, v1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		l := of(&c.Resources)
		if IsSidecar(c) {
			add(total, l)
			add(sidecars, l)
			l = sidecars
		} else {
			tmp := v1.ResourceList{}
			add(tmp, l)
			add(tmp, sidecars)
			l = tmp
		}
		if perContainer != nil {
			perContainer(l)
		}
		maxOf(inits, l)
	}
	maxOf(total, inits)
	if r := pod.Spec.Resources; r != nil {
		for name, q := range of(r) {
			if podLevel(name) {
				total[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range pod.Spec.Overhead {
		v, ok := total[name]
		if overheadOnlyNonZero && (!ok || v.IsZero()) {
			continue
		}
		v.Add(q)
		total[name] = v
	}
	return total
}

// podLevel tells the resources pod-level requests and limits may set.
func podLevel(name v1.ResourceName) bool {
	return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

func add(list, more v1.ResourceList) {
	for name, q := range more {
		v := list[name]
		v.Add(q)
		list[name] = v
	}
}

func maxOf(list, other v1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
