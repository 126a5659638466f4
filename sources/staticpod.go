package sources

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// What a kubelet refuses or never reads in a static pod manifest, for runs
// with --static-pod-names (docs/bootstrap.md): podrun runs such a pod, and
// the node works until a kubelet takes the manifests over and then does
// not. StaticPodProblems finds them before anything starts; the run warns
// of each, or refuses them all with --static-pod-strict.
//
// The kubelet's own checks (k8s.io/kubernetes v1.37.2):
//   - pkg/kubelet/config/common.go tryDecodeSinglePod refuses a static pod
//     that references an API object, "static pods may not reference
//     RESOURCE", RESOURCE being what pkg/api/pod HasAPIObjectReference
//     finds first: the service account, then secrets, then config maps
//     (anywhere in the spec), then resource claims, then the volumes that
//     need the API.
//   - pkg/kubelet/config/file.go decodes a manifest file as one object:
//     a Pod or a PodList. The YAML to JSON conversion reads the first
//     document only, so a second document of a file never runs.

// StaticPodProblems lists, for each pod of set, what a kubelet would
// refuse of it as a static pod, with the field; and every object after
// the first document of a file or URL, which a kubelet does not read.
func StaticPodProblems(set *Set) []*Error {
	var out []*Error
	for _, p := range set.Pods {
		if field, resource := staticPodReference(p.Pod); resource != "" {
			out = append(out, &Error{Origin: p.Origin, Kind: "Pod", Name: p.Name, Field: field,
				Msg: fmt.Sprintf("a kubelet refuses this static pod: static pods may not reference %s", resource)})
		}
	}
	later := func(o Origin, kind, name string) {
		if o.Doc > 1 && o.Source != "stdin" { // stdin has no kubelet counterpart
			out = append(out, &Error{Origin: o, Kind: kind, Name: name,
				Msg: "a kubelet reads only the first document of a static pod manifest; put each pod in a file of its own"})
		}
	}
	for _, p := range set.Pods {
		later(p.Origin, "Pod", p.Name)
	}
	for _, c := range set.ConfigMaps {
		later(c.Origin, "ConfigMap", c.Name)
	}
	for _, s := range set.Secrets {
		later(s.Origin, "Secret", s.Name)
	}
	return out
}

// staticPodReference is the first reference to an API object the kubelet
// finds in a static pod, in its order (HasAPIObjectReference), as the
// field that holds it and the kubelet's name for what it references; ""
// when there is none.
func staticPodReference(pod *v1.Pod) (field, resource string) {
	spec := &pod.Spec
	if spec.ServiceAccountName != "" {
		return "spec.serviceAccountName", "serviceaccounts"
	}
	if f := secretReference(spec); f != "" {
		return f, "secrets"
	}
	if f := configMapReference(spec); f != "" {
		return f, "configmaps"
	}
	if len(spec.ResourceClaims) > 0 {
		return "spec.resourceClaims", "resourceclaims"
	}
	return volumeReference(spec, otherVolumeRefs)
}

// envReference is the field of the first reference in the env of the
// pod's init and regular containers, in the order the kubelet visits
// them (each container's envFrom, then its env): an envFrom source that
// from picks (its field fromField), or an env var whose valueFrom
// valueFrom picks (valueFrom.valueField). "" when none.
func envReference(spec *v1.PodSpec, fromField string, from func(v1.EnvFromSource) bool,
	valueField string, valueFrom func(*v1.EnvVarSource) bool) string {
	var paths []string
	var cs []*v1.Container
	for i := range spec.InitContainers {
		paths, cs = append(paths, fmt.Sprintf("spec.initContainers[%d]", i)), append(cs, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		paths, cs = append(paths, fmt.Sprintf("spec.containers[%d]", i)), append(cs, &spec.Containers[i])
	}
	for i, c := range cs {
		for j, e := range c.EnvFrom {
			if from(e) {
				return fmt.Sprintf("%s.envFrom[%d].%s", paths[i], j, fromField)
			}
		}
		for j, e := range c.Env {
			if e.ValueFrom != nil && valueFrom(e.ValueFrom) {
				return fmt.Sprintf("%s.env[%d].valueFrom.%s", paths[i], j, valueField)
			}
		}
	}
	return ""
}

// secretReference is the field of the pod's first secret reference, as
// the kubelet's VisitPodSecretNames goes: pull secrets, the containers'
// env, then the volumes.
func secretReference(spec *v1.PodSpec) string {
	if len(spec.ImagePullSecrets) > 0 {
		return "spec.imagePullSecrets[0]"
	}
	if f := envReference(spec, "secretRef", func(e v1.EnvFromSource) bool { return e.SecretRef != nil },
		"secretKeyRef", func(s *v1.EnvVarSource) bool { return s.SecretKeyRef != nil }); f != "" {
		return f
	}
	f, _ := volumeReference(spec, secretVolumeRefs)
	return f
}

// configMapReference is the field of the pod's first config map
// reference, as the kubelet's VisitPodConfigmapNames goes: the
// containers' env, then the volumes.
func configMapReference(spec *v1.PodSpec) string {
	if f := envReference(spec, "configMapRef", func(e v1.EnvFromSource) bool { return e.ConfigMapRef != nil },
		"configMapKeyRef", func(s *v1.EnvVarSource) bool { return s.ConfigMapKeyRef != nil }); f != "" {
		return f
	}
	f, _ := volumeReference(spec, configMapVolumeRefs)
	return f
}

// volumeRef is a kind of volume, or of a projected volume's source, that
// names an API object: the field that names it (below spec.volumes[i], or
// below spec.volumes[i].projected.sources[j] for a source), the kubelet's
// name for what it names (otherVolumeRefs'; the callers of the secrets'
// and the config maps' tables know theirs), and whether a volume
// (volume), or else a projected volume's source (source), is of the kind.
type volumeRef struct {
	field, resource string
	volume          func(*v1.VolumeSource) bool
	source          func(v1.VolumeProjection) bool
}

// secretVolumeRefs are the volumes that name a secret, in the order of
// the kubelet's VisitPodSecretNames.
var secretVolumeRefs = []volumeRef{
	{field: "secret", volume: func(v *v1.VolumeSource) bool { return v.Secret != nil }},
	{field: "azureFile.secretName", volume: func(v *v1.VolumeSource) bool { return v.AzureFile != nil }},
	{field: "csi.nodePublishSecretRef", volume: func(v *v1.VolumeSource) bool { return v.CSI != nil && v.CSI.NodePublishSecretRef != nil }},
	{field: "cephfs.secretRef", volume: func(v *v1.VolumeSource) bool { return v.CephFS != nil && v.CephFS.SecretRef != nil }},
	{field: "cinder.secretRef", volume: func(v *v1.VolumeSource) bool { return v.Cinder != nil && v.Cinder.SecretRef != nil }},
	{field: "flexVolume.secretRef", volume: func(v *v1.VolumeSource) bool { return v.FlexVolume != nil && v.FlexVolume.SecretRef != nil }},
	{field: "rbd.secretRef", volume: func(v *v1.VolumeSource) bool { return v.RBD != nil && v.RBD.SecretRef != nil }},
	{field: "iscsi.secretRef", volume: func(v *v1.VolumeSource) bool { return v.ISCSI != nil && v.ISCSI.SecretRef != nil }},
	{field: "scaleIO.secretRef", volume: func(v *v1.VolumeSource) bool { return v.ScaleIO != nil && v.ScaleIO.SecretRef != nil }},
	{field: "storageos.secretRef", volume: func(v *v1.VolumeSource) bool { return v.StorageOS != nil && v.StorageOS.SecretRef != nil }},
	{field: "secret", source: func(s v1.VolumeProjection) bool { return s.Secret != nil }},
}

// configMapVolumeRefs are the volumes that name a config map, in the
// order of the kubelet's VisitPodConfigmapNames.
var configMapVolumeRefs = []volumeRef{
	{field: "configMap", volume: func(v *v1.VolumeSource) bool { return v.ConfigMap != nil }},
	{field: "configMap", source: func(s v1.VolumeProjection) bool { return s.ConfigMap != nil }},
}

// otherVolumeRefs are the volumes that name an API object other than a
// secret or a config map, which the kubelet looks for once those are
// ruled out (HasAPIObjectReference), with what they name.
var otherVolumeRefs = []volumeRef{
	{field: "csi", resource: "csidrivers (via CSI volumes)", volume: func(v *v1.VolumeSource) bool { return v.CSI != nil }},
	{field: "glusterfs", resource: "endpoints (via glusterFS volumes)", volume: func(v *v1.VolumeSource) bool { return v.Glusterfs != nil }},
	{field: "persistentVolumeClaim", resource: "persistentvolumeclaims", volume: func(v *v1.VolumeSource) bool { return v.PersistentVolumeClaim != nil }},
	{field: "ephemeral", resource: "persistentvolumeclaims (via ephemeral volumes)", volume: func(v *v1.VolumeSource) bool { return v.Ephemeral != nil }},
	{field: "serviceAccountToken", resource: "serviceaccounts (via projected volumes)",
		source: func(s v1.VolumeProjection) bool { return s.ServiceAccountToken != nil }},
	{field: "clusterTrustBundle", resource: "clustertrustbundles", source: func(s v1.VolumeProjection) bool { return s.ClusterTrustBundle != nil }},
	{field: "podCertificate", resource: "podcertificates", source: func(s v1.VolumeProjection) bool { return s.PodCertificate != nil }},
}

// volumeReference is the first reference of one of refs in the pod's
// volumes, volume by volume, as the field that holds it and its
// resource; "" when there is none.
func volumeReference(spec *v1.PodSpec, refs []volumeRef) (field, resource string) {
	for i, v := range spec.Volumes {
		f := fmt.Sprintf("spec.volumes[%d]", i)
		for _, r := range refs {
			if r.volume != nil && r.volume(&v.VolumeSource) {
				return f + "." + r.field, r.resource
			}
		}
		if v.Projected == nil {
			continue
		}
		for j, s := range v.Projected.Sources {
			for _, r := range refs {
				if r.source != nil && r.source(s) {
					return fmt.Sprintf("%s.projected.sources[%d].%s", f, j, r.field), r.resource
				}
			}
		}
	}
	return "", ""
}
