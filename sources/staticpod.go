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
	for i, v := range spec.Volumes {
		f := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.CSI != nil:
			return f + ".csi", "csidrivers (via CSI volumes)"
		case v.Glusterfs != nil:
			return f + ".glusterfs", "endpoints (via glusterFS volumes)"
		case v.PersistentVolumeClaim != nil:
			return f + ".persistentVolumeClaim", "persistentvolumeclaims"
		case v.Ephemeral != nil:
			return f + ".ephemeral", "persistentvolumeclaims (via ephemeral volumes)"
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				sf := fmt.Sprintf("%s.projected.sources[%d]", f, j)
				switch {
				case s.ServiceAccountToken != nil:
					return sf + ".serviceAccountToken", "serviceaccounts (via projected volumes)"
				case s.ClusterTrustBundle != nil:
					return sf + ".clusterTrustBundle", "clustertrustbundles"
				case s.PodCertificate != nil:
					return sf + ".podCertificate", "podcertificates"
				}
			}
		}
	}
	return "", ""
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
	for i, v := range spec.Volumes {
		f := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.Secret != nil:
			return f + ".secret"
		case v.AzureFile != nil:
			return f + ".azureFile.secretName"
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			return f + ".csi.nodePublishSecretRef"
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			return f + ".cephfs.secretRef"
		case v.Cinder != nil && v.Cinder.SecretRef != nil:
			return f + ".cinder.secretRef"
		case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
			return f + ".flexVolume.secretRef"
		case v.RBD != nil && v.RBD.SecretRef != nil:
			return f + ".rbd.secretRef"
		case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
			return f + ".iscsi.secretRef"
		case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
			return f + ".scaleIO.secretRef"
		case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
			return f + ".storageos.secretRef"
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				if s.Secret != nil {
					return fmt.Sprintf("%s.projected.sources[%d].secret", f, j)
				}
			}
		}
	}
	return ""
}

// configMapReference is the field of the pod's first config map
// reference, as the kubelet's VisitPodConfigmapNames goes: the
// containers' env, then the volumes.
func configMapReference(spec *v1.PodSpec) string {
	if f := envReference(spec, "configMapRef", func(e v1.EnvFromSource) bool { return e.ConfigMapRef != nil },
		"configMapKeyRef", func(s *v1.EnvVarSource) bool { return s.ConfigMapKeyRef != nil }); f != "" {
		return f
	}
	for i, v := range spec.Volumes {
		f := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.ConfigMap != nil:
			return f + ".configMap"
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					return fmt.Sprintf("%s.projected.sources[%d].configMap", f, j)
				}
			}
		}
	}
	return ""
}
