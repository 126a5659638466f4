//go:build e2e

package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestE2EBootstrapExample runs the worked example of docs/bootstrap.md as
// a user would: the kubeadm-shaped etcd static pod (the real etcd of
// Debian's etcd-server, on the host's network, data in a host directory,
// probed over HTTP on 127.0.0.1) and a web server, from one manifests
// directory, left running with --detach --wait=ready; then ps, logs, exec
// etcdctl, and down --all, which leaves nothing but etcd's data.
//
// It reads the manifests from docs/examples/bootstrap and changes only
// etcd's host data directory, to one of the test's. Not parallel: down
// --all stops every podrun pod on the node, so it runs while no other test
// of this process runs.
func TestE2EBootstrapExample(t *testing.T) {
	requireLowerOOMScoreAdj(t, "etcd is "+oomCritical)
	e := newEnv(t)
	const node = "boot-node"
	dataDir := filepath.Join(t.TempDir(), "etcd")
	dir := filepath.Join(t.TempDir(), "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(repoRoot, "docs", "examples", "bootstrap")
	entries, err := os.ReadDir(example)
	if err != nil {
		t.Fatalf("the example's manifests: %v", err)
	}
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(example, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if en.Name() == "etcd.yaml" {
			if !strings.Contains(s, "path: /var/lib/etcd\n") {
				t.Fatalf("%s: no hostPath /var/lib/etcd to move to the test's dir", en.Name())
			}
			s = strings.Replace(s, "path: /var/lib/etcd\n", "path: "+dataDir+"\n", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, en.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	downed := false
	t.Cleanup(func() {
		if !downed {
			e.runPodrun([]string{"down", "--all"}, "")
		}
	})

	// Up: both pods running and Ready when podrun returns.
	r := e.runPodrun([]string{"-q", "--detach", "--wait=ready", "--timeout", "120s",
		"--static-pod-names", "--node-name", node, "-f", dir}, "")
	expectCode(t, r, 0)

	// ps: the kubelet's static pod names, Running and Ready.
	r = e.runPodrun([]string{"ps"}, "")
	expectCode(t, r, 0)
	expectMatch(t, r.stdout,
		`(?m)^kube-system +etcd-boot-node +1/1 +Running +0 `,
		`(?m)^default +web-boot-node +1/1 +Running +0 `)
	infos := e.ps(t)
	etcd, web := findPS(infos, "etcd-"+node), findPS(infos, "web-"+node)
	if etcd == nil || web == nil {
		t.Fatalf("ps -o json: etcd %v, web %v; want both", etcd, web)
	}
	if etcd.Pod.Spec.NodeName != node || etcd.Pod.Annotations["kubernetes.io/config.source"] != "file" ||
		etcd.Pod.Annotations["kubernetes.io/config.hash"] != etcd.UID {
		t.Errorf("etcd: nodeName %q, annotations %v; want the kubelet's static pod ones", etcd.Pod.Spec.NodeName, etcd.Pod.Annotations)
	}
	if etcd.Pod.Status.Phase != v1.PodRunning || !podReady(etcd.Pod) || !podReady(web.Pod) {
		t.Errorf("phases %s/%s, ready %v/%v; want Running and Ready", etcd.Pod.Status.Phase, web.Pod.Status.Phase, podReady(etcd.Pod), podReady(web.Pod))
	}

	// logs: etcd's own log, as kubectl logs shows it.
	r = e.runPodrun([]string{"logs", "kube-system/etcd-" + node}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout+r.stderr, "ready to serve client requests") {
		t.Errorf("logs: no \"ready to serve client requests\"\n%s", r)
	}

	// exec: etcdctl in the etcd container, its exit status podrun's.
	r = e.runPodrun([]string{"exec", "kube-system/etcd-" + node, "--", "etcdctl", "endpoint", "health"}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout+r.stderr, "127.0.0.1:2379 is healthy") {
		t.Errorf("etcdctl endpoint health: not healthy\n%s", r)
	}
	r = e.runPodrun([]string{"exec", "kube-system/etcd-" + node, "--", "etcdctl", "put", "bootstrap", "done"}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"exec", "kube-system/etcd-" + node, "--", "etcdctl", "get", "nokey-" + node}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"exec", "kube-system/etcd-" + node, "--", "etcdctl", "--dial-timeout=1s", "--endpoints=127.0.0.1:1", "endpoint", "health"}, "")
	expectCode(t, r, 1) // etcdctl's own exit status for an unhealthy endpoint

	// The services answer: etcd on the host's loopback, the web server on
	// its pod IP.
	if body, err := httpGet(t, "http://127.0.0.1:2381/health", 10*time.Second); err != nil || !strings.Contains(body, `"health":"true"`) {
		t.Errorf("etcd /health on 127.0.0.1:2381: %q, %v", body, err)
	}
	if ip := web.Pod.Status.PodIP; ip == "" {
		t.Errorf("web: no pod IP in ps -o json")
	} else if body, err := httpGet(t, "http://"+ip+"/", 10*time.Second); err != nil || !strings.Contains(body, "Welcome to nginx!") {
		t.Errorf("web on %s: %q, %v", ip, body, err)
	}

	// down --all: both pods gone (the cleanliness check covers sandboxes,
	// containers, dirs, mounts and cgroups); etcd's data is the user's and
	// stays, as it would after the kubelet removed the pod.
	r = e.runPodrun([]string{"down", "--all"}, "")
	expectCode(t, r, 0)
	downed = true
	r = e.runPodrun([]string{"ps"}, "")
	expectCode(t, r, 0)
	if strings.Contains(r.stdout, node) {
		t.Errorf("ps after down --all still shows the pods\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "member")); err != nil {
		t.Errorf("etcd's data dir after down: %v; want it kept", err)
	}
}

// TestE2EBootstrapLooksForAKubelet: a run with --static-pod-names refuses
// to start where a kubelet is at work, before it creates anything: a
// healthz answering ok (a server of the test's on 127.0.0.1 stands in for
// the kubelet's), or a pod on the runtime with the kubelet's labels and
// not podrun's (made here through CRI, as a kubelet makes its sandboxes).
// --ignore-running-kubelet goes ahead. Not parallel: the kubelet-made
// sandbox would stop the other tests' static-named runs.
func TestE2EBootstrapLooksForAKubelet(t *testing.T) {
	e := newEnv(t)
	file := manifest(t, "lone.yaml", `apiVersion: v1
kind: Pod
metadata: {name: lone}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["true"]}]
`)
	static := []string{"--static-pod-names", "--node-name", "look-node", "-f", file}

	kubelet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer kubelet.Close()
	r := e.runPodrun(append([]string{"--kubelet-healthz", kubelet.URL + "/healthz"}, static...), "")
	expectCode(t, r, 125)
	expectMatch(t, r.stderr, `a kubelet is at work on this node: its healthz \(`+regexp.QuoteMeta(kubelet.URL)+`/healthz\) answers ok\. .*--ignore-running-kubelet`)
	expectNothingCreated(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	uid := "look-" + randomSuffix(t)
	id, err := rtClient.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "kube-proxy-look", Namespace: "kube-system", Uid: uid},
		Labels: map[string]string{"io.kubernetes.pod.name": "kube-proxy-look", "io.kubernetes.pod.namespace": "kube-system",
			"io.kubernetes.pod.uid": uid},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}},
	}, "")
	if err != nil {
		t.Fatalf("a kubelet's sandbox: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := rtClient.StopPodSandbox(ctx, id); err != nil {
			t.Errorf("stopping the kubelet's sandbox: %v", err)
		}
		if err := rtClient.RemovePodSandbox(ctx, id); err != nil {
			t.Errorf("removing the kubelet's sandbox: %v", err)
		}
	})
	r = e.runPodrun(append([]string{"--kubelet-healthz", ""}, static...), "")
	expectCode(t, r, 125)
	expectMatch(t, r.stderr, `a kubelet is at work on this node: the runtime runs pods a kubelet made \(kube-system/kube-proxy-look\)`)
	expectNothingCreated(t, e)

	r = e.runPodrun(append([]string{"--ignore-running-kubelet", "--kubelet-healthz", kubelet.URL + "/healthz"}, static...), "")
	expectCode(t, r, 0)
}
