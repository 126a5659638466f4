package podresources

import (
	"math"
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

// TestValueSaturates: a pod's totals become int64s without wrapping
// around: validation bounds each quantity, not their sum.
func TestValueSaturates(t *testing.T) {
	sum := resource.MustParse("5e18")
	sum.Add(resource.MustParse("5e18"))
	neg := sum.DeepCopy()
	neg.Neg()
	for _, tc := range []struct {
		q           resource.Quantity
		value, mill int64
	}{
		{resource.MustParse("0"), 0, 0},
		{resource.MustParse("1Gi"), 1 << 30, 1 << 30 * 1000},
		{resource.MustParse("100m"), 1, 100},
		{resource.MustParse("9223372036854775807"), math.MaxInt64, math.MaxInt64},
		{resource.MustParse("9223372036854775807m"), 9223372036854776, math.MaxInt64},
		{sum, math.MaxInt64, math.MaxInt64}, // Value() was 0
		{resource.MustParse("1e400"), math.MaxInt64, math.MaxInt64},
		{neg, math.MinInt64, math.MinInt64},
	} {
		if got := Value(tc.q); got != tc.value {
			t.Errorf("Value(%s) = %d, want %d", tc.q.String(), got, tc.value)
		}
		if got := MilliValue(tc.q); got != tc.mill {
			t.Errorf("MilliValue(%s) = %d, want %d", tc.q.String(), got, tc.mill)
		}
	}
}

// TestMemoryLimitOfContainersBeyondAnInt64: two containers of 5e18 bytes
// give the pod cgroup the largest limit, not a negative one.
func TestMemoryLimitOfContainersBeyondAnInt64(t *testing.T) {
	c := v1.Container{Name: "a", Resources: v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("5e18"), v1.ResourceCPU: resource.MustParse("1")},
		Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("5e18"), v1.ResourceCPU: resource.MustParse("1")},
	}}
	d := *c.DeepCopy()
	d.Name = "b"
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{c, d}}}
	if got := MemoryLimit(pod); got != math.MaxInt64 {
		t.Errorf("MemoryLimit = %d, want %d", got, int64(math.MaxInt64))
	}
}
