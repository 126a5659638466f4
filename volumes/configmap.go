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
	return setPayload(v, src.DefaultMode, src.Items, func(def int32) (map[string]FileProjection, error) {
		return configMapFiles(pod, objs, src.Name, src.Optional, src.Items, def)
	})
}

// setPayload checks a configMap or secret volume's modes and sets its
// payload, the files of its object with the volume's defaultMode.
func setPayload(v *Volume, defMode *int32, items []v1.KeyToPath, files func(def int32) (map[string]FileProjection, error)) error {
	if err := checkItemModes(defMode, items); err != nil {
		return err
	}
	payload, err := files(defaultMode(defMode))
	v.Payload = payload
	return err
}

// configMapFiles are the files of a configMap volume or projection: the
// run's ConfigMap name in the pod's namespace, as configMapPayload writes
// it. A ConfigMap the run lacks fails unless optional (then there are
// none).
func configMapFiles(pod *v1.Pod, objs Objects, name string, optional *bool, items []v1.KeyToPath, def int32) (map[string]FileProjection, error) {
	return objectFiles("configmap", pod.Namespace, name, optional, objs.ConfigMap(pod.Namespace, name),
		func(cm *v1.ConfigMap, optional bool) (map[string]FileProjection, error) {
			return configMapPayload(items, cm, def, optional)
		})
}

// configMapPayload is the kubelet's configmap.MakePayload: every key of data
// and binaryData with defaultMode, or only the listed items at their paths
// with their modes. A listed key that is missing is an error unless
// optional (then it is skipped).
func configMapPayload(items []v1.KeyToPath, cm *v1.ConfigMap, defaultMode int32, optional bool) (map[string]FileProjection, error) {
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, b := range cm.BinaryData {
		data[k] = b
	}
	for k, s := range cm.Data {
		data[k] = []byte(s)
	}
	return keyedPayload(items, data, defaultMode, optional, "configmap references non-existent config key: %s")
}

// keyedPayload is what the kubelet's configmap and secret MakePayload
// share: every key of data with defaultMode, or only the listed items at
// their paths with their modes. A listed key that is missing is an error
// (missingKey, with the key) unless optional (then it is skipped).
func keyedPayload(items []v1.KeyToPath, data map[string][]byte, defaultMode int32, optional bool, missingKey string) (map[string]FileProjection, error) {
	payload := map[string]FileProjection{}
	if len(items) == 0 {
		for k, d := range data {
			payload[k] = FileProjection{Data: d, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, it := range items {
		d, ok := data[it.Key]
		switch {
		case ok:
			payload[it.Path] = FileProjection{Data: d, Mode: itemMode(it.Mode, defaultMode)}
		case !optional:
			return nil, fmt.Errorf(missingKey, it.Key)
		}
	}
	return payload, nil
}

// objectFiles are the files of obj, the run's ConfigMap or Secret (kind)
// name in namespace, as payload writes them; nil when the run lacks it,
// which fails unless the reference is optional (then there are none).
func objectFiles[T any](kind, namespace, name string, optional *bool, obj *T,
	payload func(obj *T, optional bool) (map[string]FileProjection, error)) (map[string]FileProjection, error) {
	switch {
	case obj != nil:
		return payload(obj, isTrue(optional))
	case isTrue(optional):
		return map[string]FileProjection{}, nil
	}
	return nil, notProvided(kind, namespace, name)
}

func isTrue(b *bool) bool { return b != nil && *b }

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
