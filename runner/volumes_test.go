package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

func TestRunRefusesAPodWhoseConfigMapIsMissingBeforeAnything(t *testing.T) {
	e := newEnv(t)
	ok := newPod("fine", v1.RestartPolicyNever, sh("c", "true"))
	bad := newPod("needs-config", v1.RestartPolicyNever, sh("c", "true"))
	bad.Spec.Volumes = []v1.Volume{
		{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "game-demo"}}}},
		{Name: "claim", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
	}
	_, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{ok, bad}, e.opts)
	if err == nil {
		t.Fatal("Run accepted a pod whose ConfigMap the run lacks")
	}
	for _, want := range []string{
		`pod default/needs-config: volume "config": configmap "game-demo" not found in namespace "default"`,
		`pod default/needs-config: volume "claim": persistentVolumeClaim volumes are not supported`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	e.assertTornDown(t)
	if _, err := os.Stat(filepath.Join(e.opts.RootDir, "pods")); !os.IsNotExist(err) {
		t.Errorf("the run made its pods dir: %v", err)
	}
}

func TestRunMountsVolumesIntoContainers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (tmpfs and bind mounts): run the unit tests as root, as make test does")
	}
	e := newEnv(t)
	var mu sync.Mutex
	mounts := map[string][]*runtimeapi.Mount{}
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		mu.Lock()
		defer mu.Unlock()
		mounts[cfg.Metadata.Name] = cfg.Mounts
		return fake.CommandBehavior(cfg, second)
	})
	e.opts.ConfigMaps = []*v1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"}, Data: map[string]string{"k": "v"}}}
	c := sh("c", "true")
	c.Env = []v1.EnvVar{{Name: "SUB", Value: "logs"}}
	c.VolumeMounts = []v1.VolumeMount{
		{Name: "cache", MountPath: "/cache"},
		{Name: "cfg", MountPath: "/etc/cfg"},
		{Name: "cache", MountPath: "/logs", SubPathExpr: "$(SUB)/c"},
	}
	pod := newPod("vols", v1.RestartPolicyNever, c)
	pod.Spec.Volumes = []v1.Volume{
		{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: volPtr(resource.MustParse("1Mi"))}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
	}
	res := e.run(t, context.Background(), pod)
	if !res.Pods[0].Reached() {
		t.Fatalf("pod %s: %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	podDir := filepath.Join(e.opts.RootDir, "pods", "vols-uid")
	want := []*runtimeapi.Mount{
		{ContainerPath: "/cache", HostPath: filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "cache"), SelinuxRelabel: true},
		{ContainerPath: "/etc/cfg", HostPath: filepath.Join(podDir, "volumes", "kubernetes.io~configmap", "cfg"), Readonly: true, SelinuxRelabel: true},
		{ContainerPath: "/logs", HostPath: filepath.Join(podDir, "volume-subpaths", "cache", "c", "2")},
	}
	mu.Lock()
	got := mounts["c"]
	mu.Unlock()
	if len(got) < len(want) {
		t.Fatalf("mounts %v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].String() != w.String() {
			t.Errorf("mount %d: %v\nwant %v", i, got[i], w)
		}
	}
	// Teardown unmounted the tmpfs and the subpath before removing the pod dir.
	e.assertTornDown(t)
}

func volPtr[T any](v T) *T { return &v }
