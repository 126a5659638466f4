package runner

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStopTurns(t *testing.T) {
	regular := func(name string) downContainer { return downContainer{Name: name, Sidecar: -1} }
	side := func(name string, i int) downContainer { return downContainer{Name: name, Sidecar: i} }
	for _, c := range []struct {
		name string
		cs   []downContainer
		want [][]int
	}{
		{"regular containers stop at once", []downContainer{regular("a"), regular("b")}, [][]int{nil, nil}},
		{"a sidecar waits for the regular containers", []downContainer{side("s", 0), regular("a"), regular("b")}, [][]int{{1, 2}, nil, nil}},
		{"sidecars stop in reverse order", []downContainer{side("s0", 0), side("s1", 1), regular("a")}, [][]int{{1, 2}, {2}, nil}},
		{"only sidecars: the last declared goes first", []downContainer{side("s2", 2), side("s0", 0)}, [][]int{nil, {0}}},
		{"nothing", nil, [][]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := stopTurns(c.cs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("stopTurns = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRestoreContainer: what containerAnnotations records, restoreContainer
// reads back; a broken annotation is left out.
func TestRestoreContainer(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	preStop := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo bye"}}}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{
				{Name: "init"},
				{Name: "side", RestartPolicy: &always, Lifecycle: &v1.Lifecycle{PreStop: preStop}},
			},
			Containers: []v1.Container{{Name: "main", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}}}},
		},
	}
	restore := func(c *v1.Container, annotations map[string]string) downContainer {
		if annotations == nil {
			annotations = containerAnnotations(pod, c, 0)
		}
		return restoreContainer(&runtimeapi.Container{Id: "id-" + c.Name, Labels: map[string]string{labelContainerName: c.Name}, Annotations: annotations})
	}
	side := restore(&pod.Spec.InitContainers[1], nil)
	if side.Sidecar != 1 || !reflect.DeepEqual(side.PreStop, preStop) || side.Name != "side" || side.ID != "id-side" {
		t.Errorf("sidecar restored as %+v", side)
	}
	main := restore(&pod.Spec.Containers[0], nil)
	if main.Sidecar != -1 || main.PreStop != nil || !reflect.DeepEqual(main.Ports, pod.Spec.Containers[0].Ports) {
		t.Errorf("main restored as %+v", main)
	}
	if ini := restore(&pod.Spec.InitContainers[0], nil); ini.Sidecar != -1 {
		t.Errorf("a regular init container restored as a sidecar: %+v", ini)
	}
	broken := restore(&pod.Spec.Containers[0], map[string]string{annotationPreStopHandler: "{", annotationSidecar: "x"})
	if broken.PreStop != nil || broken.Sidecar != -1 {
		t.Errorf("broken annotations restored as %+v", broken)
	}
}
