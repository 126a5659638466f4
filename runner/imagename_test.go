package runner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCheckImageNames: every image that is not a reference is named by
// its field; the Result shows each pod as the kubelet would, Pending with
// its containers waiting.
func TestCheckImageNames(t *testing.T) {
	pod := func(name string, init, main string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: main}}}}
		if init != "" {
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: init}}
		}
		return p
	}
	if res, err := checkImageNames([]*v1.Pod{pod("ok", "busybox", "registry.test:5000/app@sha256:"+strings.Repeat("a", 64))}); res != nil || err != nil {
		t.Errorf("valid names refused: %v", err)
	}
	res, err := checkImageNames([]*v1.Pod{pod("ok", "", "busybox"), pod("bad", "Init:X", "<image>")})
	want := `pod default/bad: spec.initContainers[0].image: InvalidImageName: Failed to apply default image tag "Init:X": couldn't parse image name "Init:X": invalid reference format: repository name (library/Init) must be lowercase` + "\n" +
		`pod default/bad: spec.containers[0].image: InvalidImageName: Failed to apply default image tag "<image>": couldn't parse image name "<image>": invalid reference format`
	if err == nil || err.Error() != want {
		t.Fatalf("err:\n%v\nwant:\n%s", err, want)
	}
	ok, bad := res.Pods[0], res.Pods[1]
	if ok.Err == nil || !strings.Contains(ok.Err.Error(), "another pod of the run") || ok.Status.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("the valid pod: %+v", ok)
	}
	if bad.Status.Phase != v1.PodPending || bad.Status.InitContainerStatuses[0].State.Waiting.Reason != "InvalidImageName" ||
		bad.Status.ContainerStatuses[0].State.Waiting.Reason != "InvalidImageName" {
		t.Errorf("the pod with invalid names: %+v", bad.Status)
	}
	if res.ExitCode(0) != ExitPodrunError {
		t.Errorf("exit %d, want 125", res.ExitCode(0))
	}
}
