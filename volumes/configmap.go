package volumes

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// planConfigMap decides a configMap volume (kubelet pkg/volume/configmap):
// the ConfigMap's keys written by the atomic writer into an emptyDir on
// disk, mounted read-only. A ConfigMap the run does not provide fails the
// pod unless the volume is optional (then the volume is empty).
func planConfigMap(v *Volume, pod *v1.Pod, src *v1.ConfigMapVolumeSource, objs Objects) error {
	v.Kind, v.Plugin = KindConfigMap, PluginConfigMap
	v.ReadOnly, v.SELinuxRelabel = true, true
	optional := src.Optional != nil && *src.Optional
	if err := checkItemModes(src.DefaultMode, src.Items); err != nil {
		return err
	}
	cm := objs.ConfigMap(pod.Namespace, src.Name)
	if cm == nil {
		if !optional {
			return notProvided("configmap", pod.Namespace, src.Name)
		}
		cm = &v1.ConfigMap{}
	}
	payload, err := configMapPayload(src.Items, cm, defaultMode(src.DefaultMode), optional)
	if err != nil {
		return err
	}
	v.Payload = payload
	return nil
}

// configMapPayload is the kubelet's configmap.MakePayload: every key of data
// and binaryData with defaultMode, or only the listed items at their paths
// with their modes. A listed key that is missing is an error unless
// optional (then it is skipped).
func configMapPayload(items []v1.KeyToPath, cm *v1.ConfigMap, defaultMode int32, optional bool) (map[string]FileProjection, error) {
	payload := map[string]FileProjection{}
	if len(items) == 0 {
		for k, d := range cm.Data {
			payload[k] = FileProjection{Data: []byte(d), Mode: defaultMode}
		}
		for k, d := range cm.BinaryData {
			payload[k] = FileProjection{Data: d, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, it := range items {
		var data []byte
		if s, ok := cm.Data[it.Key]; ok {
			data = []byte(s)
		} else if b, ok := cm.BinaryData[it.Key]; ok {
			data = b
		} else if optional {
			continue
		} else {
			return nil, fmt.Errorf("configmap references non-existent config key: %s", it.Key)
		}
		payload[it.Path] = FileProjection{Data: data, Mode: itemMode(it.Mode, defaultMode)}
	}
	return payload, nil
}

// notProvided is the error for a ConfigMap or Secret that the run does not
// have: the API server's not-found message, and where podrun looks.
func notProvided(kind, namespace, name string) error {
	return fmt.Errorf("%s %q not found in namespace %q (podrun reads ConfigMaps and Secrets only from the run's -f sources; mark the reference optional to run without it)", kind, name, namespace)
}

// defaultMode is a volume's defaultMode, 0644 when unset (API defaulting).
func defaultMode(m *int32) int32 {
	if m == nil {
		return 0o644
	}
	return *m
}

func itemMode(m *int32, def int32) int32 {
	if m != nil {
		return *m
	}
	return def
}

func checkItemModes(def *int32, items []v1.KeyToPath) error {
	if err := checkMode(def, "defaultMode"); err != nil {
		return err
	}
	for _, it := range items {
		if err := checkMode(it.Mode, fmt.Sprintf("items[%s].mode", it.Key)); err != nil {
			return err
		}
	}
	return nil
}
