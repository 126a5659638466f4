package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// An image volume is the runtime's: podrun makes no dir for it, and a
// container's mount of it names the pulled image, read-only, with its
// subPath as the image subpath (the kubelet's makeMounts with ImageVolume).
func TestImageVolume(t *testing.T) {
	podDir := t.TempDir()
	pod := &v1.Pod{Spec: v1.PodSpec{
		Volumes: []v1.Volume{{Name: "art", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "quay.io/crio/artifact:v2", PullPolicy: v1.PullIfNotPresent}}}},
		Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{
			{Name: "art", MountPath: "/volume"},
			{Name: "art", MountPath: "/sub", SubPath: "dir"},
		}}},
	}}
	if err := Check(pod, Objects{}); err != nil {
		t.Fatal(err)
	}
	vols, err := Plan(pod, Objects{}, Node{})
	if err != nil {
		t.Fatal(err)
	}
	if len(vols) != 1 || vols[0].Kind != KindImage || !vols[0].ReadOnly || vols[0].Image != "quay.io/crio/artifact:v2" || vols[0].ImagePullPolicy != v1.PullIfNotPresent {
		t.Fatalf("plan %+v, want one read-only image volume of quay.io/crio/artifact:v2, IfNotPresent", vols)
	}
	// A dry run's configs name the image as written.
	planned, err := Planned(podDir, pod, vols).ContainerMounts(&pod.Spec.Containers[0], Env{})
	if err != nil || len(planned) != 2 || planned[0].Image.GetImage() != "quay.io/crio/artifact:v2" || planned[1].ImageSubPath != "dir" {
		t.Errorf("planned mounts %v, %v: want the image as written", planned, err)
	}
	set, err := SetUp(podDir, pod, vols)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(podDir); len(ents) != 0 {
		t.Errorf("the pod dir holds %v: an image volume has no dir of podrun's", ents)
	}
	if _, err := set.ContainerMounts(&pod.Spec.Containers[0], Env{}); err == nil || !strings.Contains(err.Error(), `image volume "art" of container "c": its image is not pulled`) {
		t.Errorf("mounts before the pull: %v, want an error", err)
	}
	spec := &runtimeapi.ImageSpec{Image: "sha256:abc", UserSpecifiedImage: "quay.io/crio/artifact:v2"}
	set.ResolveImage("art", spec)
	mounts, err := set.ContainerMounts(&pod.Spec.Containers[0], Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mounts) != 2 {
		t.Fatalf("mounts %v", mounts)
	}
	for i, sub := range []string{"", "dir"} {
		m := mounts[i]
		if m.Image != spec || m.HostPath != "" || !m.Readonly || m.ImageSubPath != sub || m.SelinuxRelabel {
			t.Errorf("mount %d = %+v, want the image, read-only, image subpath %q, no host path", i, m, sub)
		}
	}
	if _, err := os.Stat(filepath.Join(podDir, "volume-subpaths")); !os.IsNotExist(err) {
		t.Errorf("a subPath of an image volume made a bind mount dir: %v", err)
	}
	if src := set.MountSource("c", 0); src != "" {
		t.Errorf("MountSource = %q, want none (the runtime's mount)", src)
	}
	if err := set.TearDown(); err != nil {
		t.Error(err)
	}
}
