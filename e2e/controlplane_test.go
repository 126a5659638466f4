//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/e2e/kubeletoracle"
)

// The control plane's node (docs/bootstrap.md, "The control plane under
// podrun"): kubeadm's /etc/kubernetes is the test's directory, bind
// mounted there for the test's duration (kubeadm writes that path into
// the manifests' hostPath volumes); the API server advertises a host-local
// address on a link of the test's own (a bridge without ports: this
// kernel has no dummy links), so that every connection stays on the node
// (kubeadm refuses a loopback advertise address).
const (
	cpKubernetesDir = "/etc/kubernetes"
	cpLink          = "podrun-cp"
	cpAddress       = "10.254.254.1"
	cpNamespace     = "podrun-controlplane"
)

// cpComponents are kubeadm's four static pods, with the UID each gets from
// the kubeadm patch the test writes: a pod is adopted only when its
// manifest gives its UID (docs/handover.md).
var cpComponents = []struct{ name, uid string }{
	{"etcd", "0b6c4c39-8f0e-4d3a-9a51-1c2d3e4f5a61"},
	{"kube-apiserver", "0b6c4c39-8f0e-4d3a-9a51-1c2d3e4f5a62"},
	{"kube-controller-manager", "0b6c4c39-8f0e-4d3a-9a51-1c2d3e4f5a63"},
	{"kube-scheduler", "0b6c4c39-8f0e-4d3a-9a51-1c2d3e4f5a64"},
}

// cpPorts are the host ports kubeadm's control plane listens on.
var cpPorts = []int{2379, 2380, 2381, 6443, 10257, 10259}

// cpKubeadmConfig is the node's kubeadm configuration: NODE, DATA, FLEX,
// PATCHES, CRI and VERSION are filled in.
const cpKubeadmConfig = `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: ADDRESS
  bindPort: 6443
nodeRegistration:
  name: NODE
  criSocket: CRI
patches:
  directory: PATCHES
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: VERSION
clusterName: podrun-test
etcd:
  local:
    dataDir: DATA
controllerManager:
  extraArgs:
  - name: flex-volume-plugin-dir
    value: FLEX
`

// TestKubeletControlPlane: kubeadm v1.37.2 writes a control-plane node's
// /etc/kubernetes (certificates, kubeconfigs, the etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler manifests); podrun runs the
// four manifests as they are on the oracle kubelet's containerd with
// --static-pod-names; the API server answers /readyz to kubeadm's admin
// credentials and a namespace is created through it. Then the kubelet
// starts with kubeadm's kubelet.conf and static pod dir, registers its
// Node, creates the mirror pods, and `podrun handover --all` reports all
// four adopted: the same containers, no restart, and every /readyz poll
// answered throughout. Its second run (supervised) is the node's service:
// podrun run --supervise brings the four up (READY=1 on systemd's
// socket), etcd's process is killed from the host, podrun restarts it,
// the API server takes a write again and podrun keeps running; then the
// kubelet starts and the supervised run hands the four over itself (all
// adopted, no restart during the hand-over, every poll answered) and
// exits 0.
//
// It needs the oracle kubelet (make conformance-kubelet starts it) and the
// control-plane images (hack/testbed.sh controlplane-images, which that
// target runs first); it leaves the kubelet running with its standard
// configuration.
func TestKubeletControlPlane(t *testing.T) {
	k, err := kubeletoracle.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	kubeadm := os.Getenv("PODRUN_TESTBED_KUBEADM")
	if kubeadm == "" {
		t.Fatal("PODRUN_TESTBED_KUBEADM is not set: run `bash hack/testbed.sh controlplane-images`, then eval \"$(bash hack/testbed.sh env)\"")
	}
	cgroupRoot := os.Getenv("PODRUN_TESTBED_KUBELET_CGROUP_ROOT")
	if cgroupRoot == "" {
		t.Fatal("PODRUN_TESTBED_KUBELET_CGROUP_ROOT is not set: eval \"$(bash hack/testbed.sh env)\" after kubelet-up")
	}
	podsRoot := kubeletPodsRoot(cgroupRoot)
	kubelet := shape
	const driverEnv = "PODRUN_TESTBED_KUBELET_CGROUP_DRIVER"
	if kubelet.Driver, err = parseCgroupDriver(driverEnv, cmp.Or(os.Getenv(driverEnv), shape.Driver)); err != nil {
		t.Fatal(err)
	}
	version := cmp.Or(os.Getenv("PODRUN_TESTBED_KUBELET_VERSION"), "v1.37.2")
	for _, mode := range []struct {
		name string
		// supervised: podrun run --supervise (as the node's service runs
		// it) instead of -d and podrun handover: etcd's process is killed
		// under it before the kubelet comes, and the run hands the pods
		// over itself once the kubelet's healthz answers.
		supervised bool
	}{{"detached", false}, {"supervised", true}} {
		t.Run(mode.name, func(t *testing.T) {
			controlPlane(t, k, kubeadm, podsRoot, kubelet, version, mode.supervised)
		})
	}
}

// controlPlane is one run of TestKubeletControlPlane: podrun run -d and
// podrun handover, or podrun run --supervise with etcd killed under it.
func controlPlane(t *testing.T, k *kubeletoracle.Kubelet, kubeadm, podsRoot string, kubelet nodeShape, version string, supervised bool) {

	// Nothing of a control plane may be here already.
	for _, p := range cpPorts {
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			t.Fatalf("port %d, which kubeadm's control plane listens on, is taken: %v", p, err)
		}
		l.Close()
	}
	if _, err := net.InterfaceByName(cpLink); err == nil {
		t.Fatalf("link %s exists already (left by a run that was cut off? `ip link del %s`)", cpLink, cpLink)
	}
	createdDir := false
	if entries, err := os.ReadDir(cpKubernetesDir); errors.Is(err, os.ErrNotExist) {
		createdDir = true
	} else if err != nil {
		t.Fatal(err)
	} else if len(entries) > 0 {
		t.Fatalf("%s holds %d entries: this node has a Kubernetes configuration; the test runs only where %s is absent or empty", cpKubernetesDir, len(entries), cpKubernetesDir)
	}

	ctx := context.Background()
	rt, err := cri.Dial(ctx, k.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// Closed after every cleanup below, which use it.
	t.Cleanup(func() { rt.Close() })
	// As the test found the kubelet: standalone, its own static pod dir.
	standard := []string{"PODRUN_TESTBED_KUBELET_KUBECONFIG=", "PODRUN_TESTBED_KUBELET_STATIC_POD_PATH="}
	t.Cleanup(func() { testbedEnv(t, standard, "kubelet-up") })

	// The test's /etc/kubernetes, bind mounted on the real one. The
	// directory is made before anything is mounted in it: its removal
	// (a cleanup) runs after the unmount.
	e := newEnv(t)
	dir := t.TempDir()
	etcKube := filepath.Join(dir, "etc-kubernetes")
	for _, d := range []string{etcKube, filepath.Join(dir, "patches"), filepath.Join(dir, "flexvolume")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if createdDir {
		if err := os.Mkdir(cpKubernetesDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount(etcKube, cpKubernetesDir, "", syscall.MS_BIND, ""); err != nil {
		if createdDir {
			os.Remove(cpKubernetesDir)
		}
		t.Fatalf("bind mount of %s on %s: %v", etcKube, cpKubernetesDir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(cpKubernetesDir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", cpKubernetesDir, err)
		}
		if createdDir {
			if err := os.Remove(cpKubernetesDir); err != nil {
				t.Errorf("removing %s, which the test made: %v", cpKubernetesDir, err)
			}
		}
	})
	// The API server's address: a link of the test's own.
	run(t, "ip", "link", "add", cpLink, "type", "bridge")
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "link", "del", cpLink).CombinedOutput(); err != nil {
			t.Errorf("ip link del %s: %v\n%s", cpLink, err, out)
		}
	})
	run(t, "ip", "addr", "add", cpAddress+"/32", "dev", cpLink)
	run(t, "ip", "link", "set", cpLink, "up")

	// 1. kubeadm writes the node's /etc/kubernetes.
	for _, c := range cpComponents {
		patch := fmt.Sprintf("metadata:\n  uid: %s\n", c.uid)
		if err := os.WriteFile(filepath.Join(dir, "patches", c.name+"+strategic.yaml"), []byte(patch), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := strings.NewReplacer("ADDRESS", cpAddress, "NODE", k.NodeName, "CRI", k.Endpoint,
		"PATCHES", filepath.Join(dir, "patches"), "VERSION", version,
		"DATA", filepath.Join(dir, "etcd"), "FLEX", filepath.Join(dir, "flexvolume")).Replace(cpKubeadmConfig)
	configFile := filepath.Join(dir, "kubeadm.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, phase := range [][]string{{"certs", "all"}, {"kubeconfig", "all"}, {"etcd", "local"}, {"control-plane", "all"}} {
		run(t, kubeadm, append(append([]string{"init", "phase"}, phase...), "--config", configFile)...)
	}
	manifests := filepath.Join(cpKubernetesDir, "manifests")
	for _, c := range cpComponents {
		m, err := os.ReadFile(filepath.Join(manifests, c.name+".yaml"))
		if err != nil {
			t.Fatalf("kubeadm wrote no manifest for %s: %v", c.name, err)
		}
		if !strings.Contains(string(m), "uid: "+c.uid) {
			t.Fatalf("kubeadm's %s manifest lacks the patched metadata.uid %s:\n%s", c.name, c.uid, m)
		}
	}
	api, err := cpClient(filepath.Join(cpKubernetesDir, "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}

	// 2. The node before its kubelet: podrun runs the four manifests.
	testbed(t, "kubelet-stop")
	podrunArgs := []string{"-r", k.Endpoint}
	kubeletStarted := false
	t.Cleanup(func() {
		// The kubelet stops its pods when their manifests go; their
		// sandboxes are removed here as its garbage collector would later.
		// podrun's copies (before a hand-over) go with handover and down.
		for _, c := range cpComponents {
			os.Remove(filepath.Join(manifests, c.name+".yaml"))
		}
		if kubeletStarted {
			for _, c := range cpComponents {
				removeSandboxesOf(t, rt, c.name+"-"+k.NodeName, 120*time.Second)
			}
		}
		e.runPodrun(append([]string{"handover", "--all"}, podrunArgs...), "")
		e.runPodrun(append([]string{"down", "--all"}, podrunArgs...), "")
		if kubeletStarted {
			for _, c := range cpComponents {
				waitGone(t, kubelet.controllerDir("memory", kubelet.podCgroup(podsRoot, cpQOS(c.name), c.uid)), 60*time.Second)
			}
		}
		// Back to standard before /etc/kubernetes goes.
		testbedEnv(t, standard, "kubelet-up")
	})
	start := time.Now()
	runArgs := append([]string{"run"}, append(podrunArgs, "--static-pod-names", "--node-name", k.NodeName,
		"--cgroup-root", podsRoot, "-f", manifests)...)
	var supervisor *proc
	var readyAfter time.Duration
	if supervised {
		// Not -q: the run says on stderr what it handed over.
		notify := listenNotify(t)
		supervisor = e.startPodrun(append(runArgs, "--supervise", "--kubelet-healthz", k.HealthzURL), "",
			"NOTIFY_SOCKET="+notify.path)
		t.Cleanup(func() {
			select {
			case <-supervisor.done:
			default:
				stopNow(t, supervisor) // a failed test's supervisor
			}
		})
		readyAfter, err = api.waitReadyz(start.Add(scaled(330 * time.Second)))
		if err != nil {
			t.Errorf("the API server under podrun --supervise: %v", err)
		}
		notify.waitReady(t, supervisor, scaled(340*time.Second))
	} else {
		pr := e.startPodrun(append(runArgs, "-q", "-d", "--wait=ready", "--timeout", scaled(300*time.Second).String()), "")
		readyAfter, err = api.waitReadyz(start.Add(scaled(330 * time.Second)))
		if err != nil {
			t.Errorf("the API server under podrun: %v", err)
		}
		expectCode(t, pr.result(scaled(340*time.Second)), 0)
	}
	if err != nil {
		t.FailNow()
	}
	allReady := time.Since(start)
	t.Logf("podrun started the control plane: the API server answered /readyz %s after podrun started; all four pods Ready after %s",
		readyAfter.Round(100*time.Millisecond), allReady.Round(100*time.Millisecond))

	// A client of the API server, with kubeadm's admin credentials. Their
	// group, kubeadm:cluster-admins, is bound to cluster-admin by kubeadm
	// once the API server is up (with super-admin.conf, the first time
	// kubeadm init's phases need a client): the upload-config phase does
	// it, as in kubeadm init, and uploads the kubeadm-config ConfigMap.
	run(t, kubeadm, "init", "phase", "upload-config", "kubeadm", "--config", configFile)
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, cpNamespace)
	if code, body, err := api.do("POST", "/api/v1/namespaces", ns); err != nil || code != http.StatusCreated {
		t.Fatalf("creating namespace %s: %d %v\n%s", cpNamespace, code, err, body)
	}
	if code, body, err := api.do("GET", "/api/v1/namespaces/"+cpNamespace, ""); err != nil || code != http.StatusOK {
		t.Fatalf("reading namespace %s back: %d %v\n%s", cpNamespace, code, err, body)
	}

	recovery := ""
	if supervised {
		// A crash under the node's service: etcd's process killed from
		// the host. podrun restarts it as the kubelet would, the API
		// server serves writes again, and podrun keeps running.
		kill := time.Now()
		pattern := "^etcd .*--data-dir=" + filepath.Join(dir, "etcd")
		if out, err := exec.Command("pkill", "-KILL", "-f", pattern).CombinedOutput(); err != nil {
			t.Fatalf("pkill -f %q: %v %s", pattern, err, out)
		}
		waitRestarted(t, rt, "etcd-"+k.NodeName, scaled(120*time.Second))
		cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after-etcd-kill"}}`
		var recovered time.Duration
		for deadline := time.Now().Add(scaled(180 * time.Second)); ; time.Sleep(500 * time.Millisecond) {
			code, body, err := api.do("POST", "/api/v1/namespaces/"+cpNamespace+"/configmaps", cm)
			if err == nil && code == http.StatusCreated {
				recovered = time.Since(kill)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the API server after etcd's kill: no write within 180s: %d %v %s", code, err, body)
			}
		}
		select {
		case <-supervisor.done:
			t.Fatalf("podrun --supervise ended after etcd's kill\n%s", supervisor.result(time.Second))
		default:
		}
		// The controller manager and the scheduler renew their leases
		// every 2 s and give up after 10 s without: a while for any
		// restart the outage causes to happen before the snapshot below.
		time.Sleep(scaled(15 * time.Second))
		recovery = fmt.Sprintf("; etcd killed under podrun --supervise: restarted, and the API server took a write again %s after the kill",
			recovered.Round(100*time.Millisecond))
		t.Log(strings.TrimPrefix(recovery, "; "))
	}

	before := map[string][]string{}
	restartsBefore := map[string]int32{}
	for _, c := range cpComponents {
		before[c.name] = runningContainers(t, rt, c.name+"-"+k.NodeName)
		if len(before[c.name]) != 1 {
			t.Fatalf("podrun's %s: %d running containers, want 1", c.name, len(before[c.name]))
		}
		restartsBefore[c.name] = restartCountOf(t, rt, first(before[c.name]))
	}

	// 3. A client polls /readyz from now on; the hand-over waits; the
	// kubelet starts with kubeadm's kubeconfig and static pod dir.
	poll := startPoll(api.pollClient(), api.server+"/readyz", 100*time.Millisecond)
	ho := supervisor
	if !supervised {
		ho = e.startPodrun(append([]string{"handover", "--all", "--timeout", scaled(300 * time.Second).String()}, podrunArgs...), "")
	}
	kubeletStart := time.Now()
	kubeletStarted = true
	testbedEnv(t, []string{"PODRUN_TESTBED_KUBELET_KUBECONFIG=" + filepath.Join(cpKubernetesDir, "kubelet.conf"),
		"PODRUN_TESTBED_KUBELET_STATIC_POD_PATH=" + manifests}, "kubelet-up")
	res := ho.result(scaled(330 * time.Second))
	expectCode(t, res, 0)
	for _, c := range cpComponents {
		if supervised {
			// The supervised run says it on stderr, then exits 0.
			if !strings.Contains(res.stderr, "pod/"+c.name+"-"+k.NodeName+": adopted\n") {
				t.Errorf("podrun --supervise: %s not adopted\n%s", c.name, res)
			}
		} else if !strings.Contains(res.stdout, "kube-system/"+c.name+"-"+k.NodeName+"\tadopted\t") {
			t.Errorf("handover: %s not adopted\n%s", c.name, res)
		}
	}

	// 4. The Node and the mirror pods in the API server, the kubelet's
	// pods Ready; then a little more polling.
	err = api.waitFor(scaled(120*time.Second), "/api/v1/nodes/"+k.NodeName, func(b []byte) bool { return true })
	if err != nil {
		t.Errorf("the kubelet's Node %s: %v", k.NodeName, err)
	}
	nodeAfter := time.Since(kubeletStart)
	err = api.waitFor(scaled(120*time.Second), "/api/v1/namespaces/kube-system/pods", func(b []byte) bool {
		var l v1.PodList
		if json.Unmarshal(b, &l) != nil {
			return false
		}
		n := 0
		for _, p := range l.Items {
			for _, c := range cpComponents {
				if p.Name == c.name+"-"+k.NodeName && p.Annotations["kubernetes.io/config.mirror"] != "" {
					n++
				}
			}
		}
		return n == len(cpComponents)
	})
	if err != nil {
		t.Errorf("the mirror pods of the four: %v", err)
	}
	mirrorsAfter := time.Since(kubeletStart)
	restarts := map[string]int32{}
	var changed []string
	for _, c := range cpComponents {
		kp := waitKubeletReady(t, k, c.name+"-"+k.NodeName, 120*time.Second)
		// The hand-over's: the kubelet's count less podrun's before it.
		restarts[c.name] = -restartsBefore[c.name]
		for _, cs := range kp.Status.ContainerStatuses {
			restarts[c.name] += cs.RestartCount
		}
	}
	readyAll := time.Since(kubeletStart)
	time.Sleep(time.Second)
	gap, failed, total := poll.stop()
	for _, c := range cpComponents {
		after := runningContainers(t, rt, c.name+"-"+k.NodeName)
		if first(before[c.name]) != first(after) {
			changed = append(changed, fmt.Sprintf("%s %s -> %s", c.name, short(first(before[c.name])), short(first(after))))
		}
	}
	var rs []string
	sum := int32(0)
	for _, c := range cpComponents {
		rs = append(rs, fmt.Sprintf("%s %d", c.name, restarts[c.name]))
		sum += restarts[c.name]
	}
	lines := []string{
		fmt.Sprintf("control plane %s under podrun%s: the API server answered /readyz %s after podrun started; the four pods Ready after %s; namespace %s created%s",
			version, map[bool]string{true: " --supervise", false: " -d"}[supervised], readyAfter.Round(100*time.Millisecond), allReady.Round(100*time.Millisecond), cpNamespace, recovery),
		fmt.Sprintf("control plane handed over to kubelet %s by %s: all four adopted; the Node registered and the four mirror pods there by %s and %s after the kubelet started, its four pods Ready by %s; longest time without an answer from /readyz %s (%d of %d polls failed); restarts during the hand-over %s",
			k.Version, map[bool]string{true: "the supervised run itself", false: "podrun handover"}[supervised], nodeAfter.Round(100*time.Millisecond), mirrorsAfter.Round(100*time.Millisecond), readyAll.Round(100*time.Millisecond),
			gap.Round(10*time.Millisecond), failed, total, strings.Join(rs, ", ")),
	}
	for _, l := range lines {
		t.Log(l)
	}
	if f := os.Getenv("PODRUN_CONFORMANCE_REPORT"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintln(fh, strings.Join(lines, "\n"))
			fh.Close()
		}
	}
	// As TestKubeletHandover: on an emulated node a stall shorter than
	// pollStallTolerance (scaled) is the machine's; on the host every poll
	// must be answered.
	if timeoutScale > 1 && failed != 0 && gap < scaled(pollStallTolerance) {
		t.Logf("hand-over: %d failed polls, at most %s without an answer, taken as the emulated machine's stall (under %s)", failed, gap, scaled(pollStallTolerance))
		failed = 0
	}
	if failed != 0 || sum != 0 || len(changed) != 0 {
		t.Errorf("hand-over: %d failed /readyz polls, restarts %s, containers changed %v; want none, none, none", failed, strings.Join(rs, ", "), changed)
	}
	r := e.runPodrun(append([]string{"ps", "-o", "wide"}, podrunArgs...), "")
	expectCode(t, r, 0)
	for _, c := range cpComponents {
		expectMatch(t, r.stdout, `(?m)^`+c.name+"-"+k.NodeName+` +1/1 +Running .* kubelet\s*$`)
	}
}

// waitRestarted waits until the pod name runs a container that is a
// restart (attempt 1 or more).
func waitRestarted(t *testing.T, rt *cri.Client, name string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		ctrs, err := rt.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
			LabelSelector: map[string]string{"io.kubernetes.pod.name": name}})
		if err != nil {
			t.Fatal(err)
		}
		if len(ctrs) == 1 && ctrs[0].GetMetadata().GetAttempt() >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no restarted container running %s after its process was killed (running: %v)", name, within, ctrs)
		}
	}
}

// restartCountOf is the restart count podrun recorded on a container (the
// kubelet's annotation, which an adopting kubelet reads).
func restartCountOf(t *testing.T, rt *cri.Client, id string) int32 {
	t.Helper()
	st, err := rt.ContainerStatus(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(st.GetAnnotations()["io.kubernetes.container.restartCount"])
	if err != nil {
		t.Fatalf("container %s: restartCount annotation: %v", short(id), err)
	}
	return int32(n)
}

// cpQOS is the QoS class of kubeadm's control-plane pods: requests only,
// so Burstable.
func cpQOS(string) v1.PodQOSClass { return v1.PodQOSBurstable }

// run runs a host command and fails the test if it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// testbedEnv runs hack/testbed.sh with args and the environment changed
// by env ("NAME=value"; an empty value unsets for the script's purpose).
func testbedEnv(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot, "hack", "testbed.sh")}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/testbed.sh %s (%s): %v\n%s", strings.Join(args, " "), strings.Join(env, " "), err, out)
	}
}

// cpAPI is a client of the API server with a kubeconfig's credentials.
type cpAPI struct {
	server string
	tls    *tls.Config
	client *http.Client
}

// cpClient reads a kubeconfig as kubeadm writes it: one cluster with
// certificate-authority-data, one user with client-certificate-data and
// client-key-data.
func cpClient(kubeconfig string) (*cpAPI, error) {
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority-data"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Cert string `json:"client-certificate-data"`
				Key  string `json:"client-key-data"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return nil, fmt.Errorf("%s: %w", kubeconfig, err)
	}
	if len(kc.Clusters) != 1 || len(kc.Users) != 1 {
		return nil, fmt.Errorf("%s: %d clusters and %d users, want one of each", kubeconfig, len(kc.Clusters), len(kc.Users))
	}
	dec := func(field, s string) ([]byte, error) {
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(d) == 0 {
			return nil, fmt.Errorf("%s: %s: not base64 data (%v)", kubeconfig, field, err)
		}
		return d, nil
	}
	ca, err := dec("clusters[0].cluster.certificate-authority-data", kc.Clusters[0].Cluster.CA)
	if err != nil {
		return nil, err
	}
	cert, err := dec("users[0].user.client-certificate-data", kc.Users[0].User.Cert)
	if err != nil {
		return nil, err
	}
	key, err := dec("users[0].user.client-key-data", kc.Users[0].User.Key)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("%s: the user's certificate and key: %w", kubeconfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no CA certificate in clusters[0].cluster.certificate-authority-data", kubeconfig)
	}
	cfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
	return &cpAPI{server: kc.Clusters[0].Cluster.Server, tls: cfg,
		client: &http.Client{Timeout: scaled(10 * time.Second), Transport: &http.Transport{TLSClientConfig: cfg}}}, nil
}

// pollClient is a client for the /readyz poll: a poll fails when the API
// server has not answered within a second (times
// PODRUN_E2E_TIMEOUT_SCALE); connections are kept between polls.
func (a *cpAPI) pollClient() *http.Client {
	return &http.Client{Timeout: scaled(time.Second), Transport: &http.Transport{TLSClientConfig: a.tls}}
}

func (a *cpAPI) do(method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, a.server+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitReadyz polls /readyz every 100 ms until it says ok or deadline; it
// returns the time from its call to the first ok.
func (a *cpAPI) waitReadyz(deadline time.Time) (time.Duration, error) {
	start := time.Now()
	var last string
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		code, body, err := a.do("GET", "/readyz", "")
		if err == nil && code == http.StatusOK {
			return time.Since(start), nil
		}
		last = fmt.Sprintf("%d %v %s", code, err, body)
	}
	return 0, fmt.Errorf("/readyz not ok after %s; last answer: %s", time.Since(start).Round(time.Second), last)
}

// waitFor GETs path every 200 ms until it answers 200 with a body ok
// accepts, for at most within.
func (a *cpAPI) waitFor(within time.Duration, path string, ok func([]byte) bool) error {
	start := time.Now()
	var last string
	for time.Since(start) < within {
		code, body, err := a.do("GET", path, "")
		if err == nil && code == http.StatusOK && ok(body) {
			return nil
		}
		last = fmt.Sprintf("%d %v %.300s", code, err, body)
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("GET %s: not there after %s; last answer: %s", path, within, last)
}
