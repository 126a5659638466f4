package runner

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestDecideHandover(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	settle := 6 * time.Second
	for _, tt := range []struct {
		name string
		v    handoverView
		want handoverStep
	}{
		{"no kubelet yet", handoverView{PodrunReady: true, Adoptable: true, Now: t0, Settle: settle}, handoverWait},
		{"the kubelet answers, not settled", handoverView{PodrunReady: true, Adoptable: true, HealthySince: t0, Now: t0.Add(5 * time.Second), Settle: settle}, handoverWait},
		{"left running for the settle time: adopted", handoverView{PodrunReady: true, Adoptable: true, HealthySince: t0, Now: t0.Add(6 * time.Second), Settle: settle}, handoverRelease},
		{"the kubelet's copy: replace", handoverView{PodrunReady: true, Adoptable: true, KubeletCopy: true, Now: t0, Settle: settle}, handoverReplace},
		{"the kubelet's copy wins over the settle time", handoverView{PodrunReady: true, Adoptable: true, KubeletCopy: true, HealthySince: t0, Now: t0.Add(time.Minute), Settle: settle}, handoverReplace},
		{"podrun's copy killed as an orphan: clean up", handoverView{PodrunReady: false, HealthySince: t0, Now: t0.Add(3 * time.Second), Settle: settle}, handoverCleanUp},
		{"podrun's copy killed and the kubelet's running: replace (removes the rest)", handoverView{PodrunReady: false, KubeletCopy: true, Now: t0, Settle: settle}, handoverReplace},
		{"a UID podrun gave, left running long past the settle time: waits (a slow kubelet's copy is still to come)", handoverView{PodrunReady: true, HealthySince: t0, Now: t0.Add(time.Hour), Settle: settle}, handoverWait},
		{"a UID podrun gave, the kubelet's copy: replace", handoverView{PodrunReady: true, KubeletCopy: true, HealthySince: t0, Now: t0.Add(20 * time.Second), Settle: settle}, handoverReplace},
		{"a UID podrun gave, killed as an orphan: clean up", handoverView{PodrunReady: false, HealthySince: t0, Now: t0.Add(20 * time.Second), Settle: settle}, handoverCleanUp},
	} {
		if got := decideHandover(tt.v); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHasKubeletCopy(t *testing.T) {
	sb := func(id, name, ns, uid string, podrun, ready bool) *runtimeapi.PodSandbox {
		l := map[string]string{labelPodName: name, labelPodNamespace: ns, labelPodUID: uid}
		if podrun {
			l[LabelManaged] = "true"
		}
		st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		if ready {
			st = runtimeapi.PodSandboxState_SANDBOX_READY
		}
		return &runtimeapi.PodSandbox{Id: id, Labels: l, State: st}
	}
	ours := sb("a", "etcd-node1", "kube-system", "u1", true, true)
	for _, tt := range []struct {
		name   string
		others []*runtimeapi.PodSandbox
		want   bool
	}{
		{"nothing else", nil, false},
		{"the kubelet's, ready", []*runtimeapi.PodSandbox{sb("b", "etcd-node1", "kube-system", "u2", false, true)}, true},
		{"the kubelet's, not ready yet", []*runtimeapi.PodSandbox{sb("b", "etcd-node1", "kube-system", "u2", false, false)}, false},
		{"another namespace", []*runtimeapi.PodSandbox{sb("b", "etcd-node1", "default", "u2", false, true)}, false},
		{"another podrun's", []*runtimeapi.PodSandbox{sb("b", "etcd-node1", "kube-system", "u2", true, true)}, false},
		{"the same UID (adopted: the kubelet makes none)", []*runtimeapi.PodSandbox{sb("b", "etcd-node1", "kube-system", "u1", false, true)}, false},
	} {
		if got := hasKubeletCopy(append([]*runtimeapi.PodSandbox{ours}, tt.others...), ours); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
