package volumes

import (
	v1 "k8s.io/api/core/v1"
)

// planSecret decides a secret volume (kubelet pkg/volume/secret): the
// Secret's keys written by the atomic writer into an emptyDir on a tmpfs, so
// that they never reach a disk; mounted read-only. A Secret the run does not
// provide fails the pod unless the volume is optional (then it is empty).
func planSecret(v *Volume, pod *v1.Pod, src *v1.SecretVolumeSource, objs Objects, node Node) error {
	v.Kind, v.Plugin = KindSecret, PluginSecret
	wrapInMemory(v, pod, node)
	return setPayload(v, src.DefaultMode, src.Items, func(def int32) (map[string]FileProjection, error) {
		return secretFiles(pod, objs, src.SecretName, src.Optional, src.Items, def)
	})
}

// secretFiles are the files of a secret volume or projection: the run's
// Secret name in the pod's namespace, as secretPayload writes it. A Secret
// the run lacks fails unless optional (then there are none).
func secretFiles(pod *v1.Pod, objs Objects, name string, optional *bool, items []v1.KeyToPath, def int32) (map[string]FileProjection, error) {
	return objectFiles("secret", pod.Namespace, name, optional, objs.Secret(pod.Namespace, name),
		func(s *v1.Secret, optional bool) (map[string]FileProjection, error) {
			return secretPayload(items, s, def, optional)
		})
}

// secretPayload is the kubelet's secret.MakePayload: every key with
// defaultMode, or only the listed items at their paths with their modes; a
// listed key that is missing is an error unless optional. (stringData was
// merged into data when the Secret was read.)
func secretPayload(items []v1.KeyToPath, s *v1.Secret, defaultMode int32, optional bool) (map[string]FileProjection, error) {
	return keyedPayload(items, s.Data, defaultMode, optional, "references non-existent secret key: %s")
}
