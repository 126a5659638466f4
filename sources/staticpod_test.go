package sources

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStaticPodReference(t *testing.T) {
	env := func(e v1.EnvVar) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b", Env: []v1.EnvVar{{Name: "X", Value: "1"}, e}}}}}
	}
	vol := func(v v1.VolumeSource) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}, {Name: "v", VolumeSource: v}}}}
	}
	cases := []struct {
		name            string
		pod             *v1.Pod
		field, resource string
	}{
		{"none: host paths, empty dirs, the downward API", &v1.Pod{Spec: v1.PodSpec{
			Volumes: []v1.Volume{{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/kubernetes/pki"}}},
				{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{}}}}}}},
			Containers: []v1.Container{{Name: "etcd", Env: []v1.EnvVar{{Name: "N", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
		}}, "", ""},
		{"service account first", &v1.Pod{Spec: v1.PodSpec{ServiceAccountName: "sa", ImagePullSecrets: []v1.LocalObjectReference{{Name: "s"}}}},
			"spec.serviceAccountName", "serviceaccounts"},
		{"pull secret", &v1.Pod{Spec: v1.PodSpec{ImagePullSecrets: []v1.LocalObjectReference{{Name: "s"}}}},
			"spec.imagePullSecrets[0]", "secrets"},
		{"secret env", env(v1.EnvVar{Name: "P", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}}),
			"spec.containers[1].env[1].valueFrom.secretKeyRef", "secrets"},
		{"config map env", env(v1.EnvVar{Name: "P", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{Key: "k"}}}),
			"spec.containers[1].env[1].valueFrom.configMapKeyRef", "configmaps"},
		{"secrets before config maps", &v1.Pod{Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "a", EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{}}}}},
			Volumes:    []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}}},
		}}, "spec.volumes[0].secret", "secrets"},
		{"config map volume", vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}), "spec.volumes[1].configMap", "configmaps"},
		{"projected secret", vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{}}, {Secret: &v1.SecretProjection{}}}}}),
			"spec.volumes[1].projected.sources[1].secret", "secrets"},
		{"projected token", vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "t"}}}}}),
			"spec.volumes[1].projected.sources[0].serviceAccountToken", "serviceaccounts (via projected volumes)"},
		{"claim", vol(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
			"spec.volumes[1].persistentVolumeClaim", "persistentvolumeclaims"},
		{"azure file secret", vol(v1.VolumeSource{AzureFile: &v1.AzureFileVolumeSource{SecretName: "s"}}), "spec.volumes[1].azureFile.secretName", "secrets"},
		{"csi without a secret", vol(v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}), "spec.volumes[1].csi", "csidrivers (via CSI volumes)"},
		{"csi publish secret", vol(v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d", NodePublishSecretRef: &v1.LocalObjectReference{Name: "s"}}}),
			"spec.volumes[1].csi.nodePublishSecretRef", "secrets"},
		{"cephfs without a secret", vol(v1.VolumeSource{CephFS: &v1.CephFSVolumeSource{}}), "", ""},
		{"cephfs secret", vol(v1.VolumeSource{CephFS: &v1.CephFSVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].cephfs.secretRef", "secrets"},
		{"cinder secret", vol(v1.VolumeSource{Cinder: &v1.CinderVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].cinder.secretRef", "secrets"},
		{"flex volume secret", vol(v1.VolumeSource{FlexVolume: &v1.FlexVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].flexVolume.secretRef", "secrets"},
		{"rbd secret", vol(v1.VolumeSource{RBD: &v1.RBDVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].rbd.secretRef", "secrets"},
		{"iscsi secret", vol(v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].iscsi.secretRef", "secrets"},
		{"scaleIO secret", vol(v1.VolumeSource{ScaleIO: &v1.ScaleIOVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].scaleIO.secretRef", "secrets"},
		{"storageos secret", vol(v1.VolumeSource{StorageOS: &v1.StorageOSVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}), "spec.volumes[1].storageos.secretRef", "secrets"},
		{"projected config map", vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{}}, {ConfigMap: &v1.ConfigMapProjection{}}}}}),
			"spec.volumes[1].projected.sources[1].configMap", "configmaps"},
		{"glusterfs", vol(v1.VolumeSource{Glusterfs: &v1.GlusterfsVolumeSource{EndpointsName: "e"}}), "spec.volumes[1].glusterfs", "endpoints (via glusterFS volumes)"},
		{"ephemeral", vol(v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}), "spec.volumes[1].ephemeral", "persistentvolumeclaims (via ephemeral volumes)"},
		{"projected trust bundle", vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{}}}}}),
			"spec.volumes[1].projected.sources[0].clusterTrustBundle", "clustertrustbundles"},
		{"projected pod certificate", vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{PodCertificate: &v1.PodCertificateProjection{}}}}}),
			"spec.volumes[1].projected.sources[0].podCertificate", "podcertificates"},
		{"secrets of every volume before other objects", &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{
			{Name: "c", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
			{Name: "s", VolumeSource: v1.VolumeSource{RBD: &v1.RBDVolumeSource{SecretRef: &v1.LocalObjectReference{Name: "s"}}}}}}},
			"spec.volumes[1].rbd.secretRef", "secrets"},
		{"resource claims", &v1.Pod{Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "gpu"}}}}, "spec.resourceClaims", "resourceclaims"},
		{"init container", &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i", EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{}}}}}}},
			"spec.initContainers[0].envFrom[0].secretRef", "secrets"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			field, resource := staticPodReference(c.pod)
			if field != c.field || resource != c.resource {
				t.Errorf("staticPodReference = %q, %q; want %q, %q", field, resource, c.field, c.resource)
			}
		})
	}
}

func TestStaticPodProblems(t *testing.T) {
	pod := func(name, source string, doc int, sa string) *Pod {
		return &Pod{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{ServiceAccountName: sa}},
			Origin: Origin{Source: source, Doc: doc}}
	}
	set := &Set{
		Pods: []*Pod{pod("etcd", "m/etcd.yaml", 1, ""), pod("api", "m/api.yaml", 1, "kube-apiserver"),
			pod("second", "m/etcd.yaml", 2, ""), pod("piped", "stdin", 2, "")},
		ConfigMaps: []*ConfigMap{{ConfigMap: &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}}, Origin: Origin{Source: "m/api.yaml", Doc: 2}}},
	}
	var got []string
	for _, e := range StaticPodProblems(set) {
		got = append(got, e.Error())
	}
	want := []string{
		`m/api.yaml: document 1 (Pod "api"): spec.serviceAccountName: a kubelet refuses this static pod: static pods may not reference serviceaccounts`,
		`m/etcd.yaml: document 2 (Pod "second"): a kubelet reads only the first document of a static pod manifest; put each pod in a file of its own`,
		`m/api.yaml: document 2 (ConfigMap "cfg"): a kubelet reads only the first document of a static pod manifest; put each pod in a file of its own`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("StaticPodProblems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
