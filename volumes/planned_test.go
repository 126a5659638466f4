package volumes

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A planned set names the paths SetUp would give each volume and subpath,
// and makes none of them.
func TestPlannedMounts(t *testing.T) {
	podDir := filepath.Join(t.TempDir(), "pods", "uid")
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "uid"},
		Spec: v1.PodSpec{
			Volumes: []v1.Volume{
				{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
				{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/lib/data"}}},
				{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"}}}},
				{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mysecret"}}},
			},
			Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{
				{Name: "scratch", MountPath: "/scratch"},
				{Name: "host", MountPath: "/data", ReadOnly: true},
				{Name: "conf", MountPath: "/etc/conf/level", SubPath: "SPECIAL_LEVEL"},
				{Name: "creds", MountPath: "/creds"},
				{Name: "scratch", MountPath: "/work", SubPathExpr: "$(POD)/work"},
			}}},
		},
	}
	vols, err := Plan(pod, objs, Node{})
	if err != nil {
		t.Fatal(err)
	}
	// The subPathExpr is not expanded (POD has no value here): its target
	// does not depend on it, and the pre-flight judged it.
	mounts, err := Planned(podDir, pod, vols).ContainerMounts(&pod.Spec.Containers[0], Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		container, host string
		readOnly        bool
	}{
		{"/scratch", filepath.Join(podDir, "volumes", PluginEmptyDir, "scratch"), false},
		{"/data", "/var/lib/data", true},
		{"/etc/conf/level", filepath.Join(podDir, "volume-subpaths", "conf", "c", "2"), true}, // configMap volumes are read-only
		{"/creds", filepath.Join(podDir, "volumes", PluginSecret, "creds"), true},
		{"/work", filepath.Join(podDir, "volume-subpaths", "scratch", "c", "4"), false},
	}
	if len(mounts) != len(want) {
		t.Fatalf("%d mounts, want %d", len(mounts), len(want))
	}
	for i, w := range want {
		m := mounts[i]
		if m.ContainerPath != w.container || m.HostPath != w.host || m.Readonly != w.readOnly {
			t.Errorf("mount %d: %s from %s (ro %v), want %s from %s (ro %v)", i, m.ContainerPath, m.HostPath, m.Readonly, w.container, w.host, w.readOnly)
		}
	}
	if _, err := os.Stat(filepath.Dir(podDir)); !os.IsNotExist(err) {
		t.Errorf("planning made %s: %v", filepath.Dir(podDir), err)
	}
	// Where the subpath target is what prepareSubPath mounts.
	if got := subPathTarget(podDir, "conf", "c", 2); got != want[2].host {
		t.Errorf("subPathTarget %s", got)
	}
}
