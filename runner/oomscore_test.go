package runner

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestOOMScoreAdj(t *testing.T) {
	const capacity = 4 << 30 // 4Gi
	res := func(req, lim string) v1.ResourceRequirements {
		r := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
		if req != "" {
			r.Requests[v1.ResourceMemory] = resource.MustParse(req)
		}
		if lim != "" {
			r.Limits[v1.ResourceMemory] = resource.MustParse(lim)
		}
		return r
	}
	guaranteed := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
	}
	always := v1.ContainerRestartPolicyAlways
	cases := []struct {
		name     string
		pod      v1.PodSpec
		sidecar  bool // score the first init container
		capacity int64
		want     int64
	}{
		{name: "BestEffort", pod: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}, want: 1000},
		{name: "Guaranteed", pod: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: guaranteed}}}, want: -997},
		{name: "node-critical", pod: v1.PodSpec{PriorityClassName: "system-node-critical", Containers: []v1.Container{{Name: "a"}}}, want: -997},
		{name: "Burstable: 1Gi of 4Gi", pod: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: res("1Gi", "")}}}, want: 750},
		{name: "Burstable without a memory request is 999, not 1000",
			pod: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: res("", "1Gi")}}}, want: 999},
		{name: "Burstable requesting everything is at least 3",
			pod: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: res("4Gi", "")}}}, want: 3},
		{name: "a sidecar is capped at the smallest regular container's score", sidecar: true,
			pod: v1.PodSpec{
				InitContainers: []v1.Container{{Name: "s", RestartPolicy: &always, Resources: res("512Mi", "")}},
				Containers:     []v1.Container{{Name: "a", Resources: res("2Gi", "")}, {Name: "b", Resources: res("1Gi", "")}},
			}, want: 750},
		{name: "a sidecar with a bigger request keeps its own", sidecar: true,
			pod: v1.PodSpec{
				InitContainers: []v1.Container{{Name: "s", RestartPolicy: &always, Resources: res("2Gi", "")}},
				Containers:     []v1.Container{{Name: "a", Resources: res("1Gi", "")}},
			}, want: 500},
		{name: "unknown capacity leaves Burstable at 999", capacity: -1,
			pod: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: res("1Gi", "")}}}, want: 999},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.pod}
			c := &pod.Spec.Containers[0]
			if tc.sidecar {
				c = &pod.Spec.InitContainers[0]
			}
			capa := int64(capacity)
			if tc.capacity < 0 {
				capa = 0
			}
			if got := oomScoreAdj(pod, c, capa); got != tc.want {
				t.Errorf("oomScoreAdj = %d, want %d", got, tc.want)
			}
		})
	}
}
