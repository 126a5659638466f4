package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestKubeletSigns(t *testing.T) {
	sb := func(ns, name string, ready bool, labels ...string) *runtimeapi.PodSandbox {
		l := map[string]string{labelPodNamespace: ns, labelPodName: name, labelPodUID: "u-" + name}
		for _, k := range labels {
			l[k] = "true"
		}
		st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		if ready {
			st = runtimeapi.PodSandboxState_SANDBOX_READY
		}
		return &runtimeapi.PodSandbox{Labels: l, State: st}
	}
	const url = "http://127.0.0.1:10248/healthz"
	cases := []struct {
		name    string
		healthy bool
		sbs     []*runtimeapi.PodSandbox
		want    []string
	}{
		{name: "nothing", sbs: nil},
		{name: "podrun's pods and stopped ones", sbs: []*runtimeapi.PodSandbox{
			sb("kube-system", "etcd-n1", true, LabelManaged), sb("default", "old", false),
			{Labels: map[string]string{"app": "crictl"}, State: runtimeapi.PodSandboxState_SANDBOX_READY},
		}},
		{name: "healthz", healthy: true, want: []string{"its healthz (" + url + ") answers ok"}},
		{name: "a kubelet's pods", sbs: []*runtimeapi.PodSandbox{
			sb("kube-system", "kube-proxy-x", true), sb("default", "a", true), sb("default", "b", true), sb("default", "c", true),
		}, want: []string{"the runtime runs pods a kubelet made (default/a, default/b, default/c and 1 more)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := kubeletSigns(url, c.healthy, c.sbs)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("kubeletSigns = %q, want %q", got, c.want)
			}
		})
	}
}

// TestCheckNoKubelet: the check over a runtime and a healthz server, as a
// run makes it.
func TestCheckNoKubelet(t *testing.T) {
	_, rt, _, _ := factsRuntime(t)
	ctx := context.Background()
	if err := CheckNoKubelet(ctx, rt, "http://127.0.0.1:1/healthz"); err != nil {
		t.Errorf("nothing listening, no pods: %v", err)
	}
	kubelet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok"))
			return
		}
		http.NotFound(w, r)
	}))
	defer kubelet.Close()
	err := CheckNoKubelet(ctx, rt, kubelet.URL+"/healthz")
	if err == nil || !strings.Contains(err.Error(), "a kubelet is at work on this node: its healthz ("+kubelet.URL+"/healthz) answers ok") ||
		!strings.Contains(err.Error(), "--ignore-running-kubelet") {
		t.Errorf("a kubelet's healthz: %v", err)
	}
	if err := CheckNoKubelet(ctx, rt, kubelet.URL+"/other"); err != nil {
		t.Errorf("a 404: %v", err)
	}
	if _, err := rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "kube-proxy-n1", Namespace: "kube-system", Uid: "u1"},
		Labels:   map[string]string{labelPodName: "kube-proxy-n1", labelPodNamespace: "kube-system", labelPodUID: "u1"},
	}, ""); err != nil {
		t.Fatal(err)
	}
	err = CheckNoKubelet(ctx, rt, "")
	if err == nil || !strings.Contains(err.Error(), "the runtime runs pods a kubelet made (kube-system/kube-proxy-n1)") {
		t.Errorf("a kubelet's pod on the runtime: %v", err)
	}
}
