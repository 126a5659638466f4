package volumes

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// planDownwardAPI decides a downwardAPI volume (kubelet
// pkg/volume/downwardapi): the pod's fields and its containers' resources,
// written by the atomic writer into an emptyDir on a tmpfs, mounted
// read-only.
func planDownwardAPI(v *Volume, pod *v1.Pod, src *v1.DownwardAPIVolumeSource, node Node) error {
	v.Kind, v.Plugin = KindDownwardAPI, PluginDownwardAPI
	wrapInMemory(v, pod, node)
	payload, err := downwardAPIPayload(src.Items, pod, node, src.DefaultMode)
	if err != nil {
		return err
	}
	v.Payload = payload
	return nil
}

// downwardAPIPayload is the kubelet's downwardapi.CollectData: one file per
// item, at the cleaned path, with the item's mode or defaultMode.
func downwardAPIPayload(items []v1.DownwardAPIVolumeFile, pod *v1.Pod, node Node, defMode *int32) (map[string]FileProjection, error) {
	if err := checkMode(defMode, "defaultMode"); err != nil {
		return nil, err
	}
	payload := map[string]FileProjection{}
	var errs []error
	for _, it := range items {
		if err := checkMode(it.Mode, fmt.Sprintf("items[%s].mode", it.Path)); err != nil {
			errs = append(errs, err)
			continue
		}
		fp := FileProjection{Mode: itemMode(it.Mode, defaultMode(defMode))}
		var err error
		var s string
		switch {
		case it.FieldRef != nil:
			s, err = fieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			s, err = resourceValue(pod, it.ResourceFieldRef, node)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("item %q: %w", it.Path, err))
			continue
		}
		fp.Data = []byte(s)
		payload[filepath.Clean(it.Path)] = fp
	}
	return payload, joinLine(errs)
}

// fieldValue is fieldpath.ExtractFieldPathAsString for the fields a
// downwardAPI volume may name: metadata name, namespace, uid, labels and
// annotations (all of them, or one by key).
func fieldValue(pod *v1.Pod, path string) (string, error) {
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
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%v=%q", k, m[k])
	}
	return b.String()
}

// resourceValue is ExtractResourceValueByContainerNameAndNodeAllocatable:
// the named container's request or limit divided by the divisor (default 1)
// and rounded up; cpu in millicores against the divisor's. A limit the
// container does not set is the node's allocatable.
func resourceValue(pod *v1.Pod, ref *v1.ResourceFieldSelector, node Node) (string, error) {
	c := findContainer(pod, ref.ContainerName)
	if c == nil {
		if ref.ContainerName == "" {
			return "", errors.New("resourceFieldRef: containerName is required in a volume")
		}
		return "", fmt.Errorf("container %s not found", ref.ContainerName)
	}
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

// findContainer finds a container of the pod by name, regular containers
// first, then init containers.
func findContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
