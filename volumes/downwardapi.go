package volumes

import (
	"errors"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
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
			s, err = FieldPathValue(pod, it.FieldRef.FieldPath)
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

// resourceValue is a downwardAPI volume item's resource: the named
// container's (a volume must name one).
func resourceValue(pod *v1.Pod, ref *v1.ResourceFieldSelector, node Node) (string, error) {
	c := FindContainer(pod, ref.ContainerName)
	if c == nil {
		if ref.ContainerName == "" {
			return "", errors.New("resourceFieldRef: containerName is required in a volume")
		}
		return "", fmt.Errorf("container %s not found", ref.ContainerName)
	}
	return ContainerResourceValue(c, ref, node)
}

// FindContainer finds a container of the pod by name, regular containers
// first, then init containers (names are unique across both).
func FindContainer(pod *v1.Pod, name string) *v1.Container {
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
