package volumes

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// planSecret decides a secret volume (kubelet pkg/volume/secret): the
// Secret's keys written by the atomic writer into an emptyDir on a tmpfs, so
// that they never reach a disk; mounted read-only. A Secret the run does not
// provide fails the pod unless the volume is optional (then it is empty).
func planSecret(v *Volume, pod *v1.Pod, src *v1.SecretVolumeSource, objs Objects, node Node) error {
	v.Kind, v.Plugin = KindSecret, PluginSecret
	wrapInMemory(v, pod, node)
	optional := src.Optional != nil && *src.Optional
	if err := checkItemModes(src.DefaultMode, src.Items); err != nil {
		return err
	}
	s := objs.Secret(pod.Namespace, src.SecretName)
	if s == nil {
		if !optional {
			return notProvided("secret", pod.Namespace, src.SecretName)
		}
		s = &v1.Secret{}
	}
	payload, err := secretPayload(src.Items, s, defaultMode(src.DefaultMode), optional)
	if err != nil {
		return err
	}
	v.Payload = payload
	return nil
}

// secretPayload is the kubelet's secret.MakePayload: every key with
// defaultMode, or only the listed items at their paths with their modes; a
// listed key that is missing is an error unless optional. (stringData was
// merged into data when the Secret was read.)
func secretPayload(items []v1.KeyToPath, s *v1.Secret, defaultMode int32, optional bool) (map[string]FileProjection, error) {
	payload := map[string]FileProjection{}
	if len(items) == 0 {
		for k, d := range s.Data {
			payload[k] = FileProjection{Data: d, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, it := range items {
		d, ok := s.Data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("references non-existent secret key: %s", it.Key)
		}
		payload[it.Path] = FileProjection{Data: d, Mode: itemMode(it.Mode, defaultMode)}
	}
	return payload, nil
}
