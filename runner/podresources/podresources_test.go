package podresources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMemoryLimit(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	c := func(name, limit string, sidecar bool) v1.Container {
		ctr := v1.Container{Name: name}
		if limit != "" {
			ctr.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse(limit)}
		}
		if sidecar {
			ctr.RestartPolicy = &always
		}
		return ctr
	}
	for _, tc := range []struct {
		name       string
		init, ctrs []v1.Container
		want       int64
	}{
		{"sum of containers", nil, []v1.Container{c("a", "100Mi", false), c("b", "50Mi", false)}, 150 << 20},
		{"an unlimited container: none", nil, []v1.Container{c("a", "100Mi", false), c("b", "", false)}, 0},
		{"a larger init container", []v1.Container{c("i", "1Gi", false)}, []v1.Container{c("a", "100Mi", false)}, 1 << 30},
		{"sidecars add to the containers and to later init containers",
			[]v1.Container{c("s", "10Mi", true), c("i", "100Mi", false)}, []v1.Container{c("a", "50Mi", false)}, 110 << 20},
		{"an unlimited init container: none", []v1.Container{c("i", "", false)}, []v1.Container{c("a", "50Mi", false)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{InitContainers: tc.init, Containers: tc.ctrs}}
			if got := MemoryLimit(pod); got != tc.want {
				t.Errorf("MemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}
