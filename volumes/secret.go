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

// MaskedValue stands for every value taken from a Secret wherever podrun
// prints one: a dry run's configs (podrun validate) and the messages of
// a run and a dry run alike.
const MaskedValue = "<masked>"

// MaskSecrets is a copy of the Secrets with every value MaskedValue, the
// keys kept: what is decided from keys (a key exists or not) is the same,
// and no value can reach what is made from the copy. It is podrun's one
// way of hiding a Secret's value: a dry run builds its configs from the
// copy, and a subPathExpr shows its expansion as made from the copy
// (Env.Shown).
func MaskSecrets(secrets []*v1.Secret) []*v1.Secret {
	out := make([]*v1.Secret, len(secrets))
	for i, s := range secrets {
		m := s.DeepCopy()
		for k := range m.Data {
			m.Data[k] = []byte(MaskedValue)
		}
		for k := range m.StringData {
			m.StringData[k] = MaskedValue
		}
		out[i] = m
	}
	return out
}

// Masked is the objects with the Secrets masked (MaskSecrets).
func (o Objects) Masked() Objects {
	return Objects{ConfigMaps: o.ConfigMaps, Secrets: MaskSecrets(o.Secrets)}
}
