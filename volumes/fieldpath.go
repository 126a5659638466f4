package volumes

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FieldPathValue is fieldpath.ExtractFieldPathAsString for the pod's
// metadata: name, namespace, uid, labels and annotations (all of them, or
// one by key). The downward API volume and the environment share it; the
// environment's spec and status fields are the runner's.
func FieldPathValue(pod *v1.Pod, path string) (string, error) {
	if p, key, ok := subscript(path); ok {
		switch p {
		case "metadata.labels":
			return pod.Labels[key], nil
		case "metadata.annotations":
			return pod.Annotations[key], nil
		}
		return "", fmt.Errorf("fieldPath %q does not support subscript", path)
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}

// subscript splits "metadata.labels['key']" into the path and the key.
func subscript(path string) (string, string, bool) {
	i := strings.Index(path, "['")
	if i < 0 || !strings.HasSuffix(path, "']") || len(path) < i+4 {
		return "", "", false
	}
	return path[:i], path[i+2 : len(path)-2], true
}

// formatMap writes a map as fieldpath.FormatMap does: one key="value" line
// per key (Go-quoted value), sorted by key, no trailing newline.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%v=%q", k, m[k])
	}
	return b.String()
}

// ContainerResourceValue is the kubelet's ExtractContainerResourceValue
// over a container whose unset limits are the node's allocatable
// (defaultPodLimitsForDownwardAPI): the request or limit divided by the
// divisor (default 1) and rounded up; cpu in millicores against the
// divisor's. The downward API volume and the environment share it.
func ContainerResourceValue(c *v1.Container, ref *v1.ResourceFieldSelector, node Node) (string, error) {
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
	}
	rn := v1.ResourceName(name)
	list := c.Resources.Requests
	if kind == "limits" {
		list = limitsWithAllocatable(c.Resources.Limits, node)
	}
	q := list[rn]
	switch {
	case rn == v1.ResourceCPU:
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	case rn == v1.ResourceMemory, rn == v1.ResourceEphemeralStorage, strings.HasPrefix(name, v1.ResourceHugePagesPrefix):
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", ref.Resource)
}

// limitsWithAllocatable fills the cpu, memory and ephemeral-storage limits
// a container leaves unset with the node's allocatable
// (MergeContainerResourceLimits).
func limitsWithAllocatable(limits v1.ResourceList, node Node) v1.ResourceList {
	out := v1.ResourceList{}
	for k, q := range limits {
		out[k] = q
	}
	defaults := map[v1.ResourceName]*resource.Quantity{
		v1.ResourceCPU:              resource.NewMilliQuantity(node.AllocatableMilliCPU, resource.DecimalSI),
		v1.ResourceMemory:           resource.NewQuantity(node.AllocatableMemory, resource.BinarySI),
		v1.ResourceEphemeralStorage: resource.NewQuantity(node.AllocatableEphemeralStorage, resource.BinarySI),
	}
	for k, q := range defaults {
		if _, ok := out[k]; !ok {
			out[k] = *q
		}
	}
	return out
}

func ceilDiv(v, d int64) string {
	if d == 0 {
		d = 1
	}
	return strconv.FormatInt(int64(math.Ceil(float64(v)/float64(d))), 10)
}
