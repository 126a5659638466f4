//go:build e2e

package kubeletoracle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

// The oracle against the testbed's real kubelet (hack/testbed.sh
// kubelet-up): these fail, never skip, when it is not there.

func oracle(t *testing.T) *Kubelet {
	t.Helper()
	k, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkGone fails unless nothing of the pod is left: no manifest of
// ours, no sandbox or container with its UID, no pod dir.
func checkGone(t *testing.T, k *Kubelet, uid string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(k.StaticPodDir, "*oracle-*"))
	if len(left) > 0 {
		t.Errorf("manifests left in %s: %v", k.StaticPodDir, left)
	}
	ctx := context.Background()
	rt, err := cri.Dial(ctx, k.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	sel := map[string]string{podUIDLabel: uid}
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(sbs)+len(cs) > 0 {
		t.Errorf("pod %s left %d sandboxes and %d containers on the kubelet's runtime", uid, len(sbs), len(cs))
	}
	if _, err := os.Stat(filepath.Join(k.RootDir, "pods", uid)); !os.IsNotExist(err) {
		t.Errorf("pod dir of %s still there (%v)", uid, err)
	}
}

const exit3 = `apiVersion: v1
kind: Pod
metadata:
  name: oracle-exit3
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox:1.36
    command: ["sh", "-c", "echo out; echo err >&2; exit 3"]
`

// TestE2EKubeletOracleRunTwice runs a pod that exits 3 twice: both runs end
// Failed with exit code 3 and reason Error and its output, under the
// kubelet's <name>-<node> name and each with a UID of its own, with the
// status the kubelet writes once it has stopped the sandbox; nothing of
// either is left behind.
func TestE2EKubeletOracleRunTwice(t *testing.T) {
	k := oracle(t)
	ctx := context.Background()
	var uids []string
	for i := range 2 {
		res, err := k.Run(ctx, []byte(exit3), RunOptions{Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		p := res.Pod
		t.Logf("run %d: %s/%s UID %s phase %s in %s", i+1, p.Namespace, p.Name, p.UID, p.Status.Phase, res.Elapsed)
		if want := "oracle-exit3-" + k.NodeName; p.Name != want || p.Namespace != "default" {
			t.Errorf("run %d: pod %s/%s, want default/%s", i+1, p.Namespace, p.Name, want)
		}
		if res.TimedOut || p.Status.Phase != v1.PodFailed {
			t.Errorf("run %d: phase %s (timed out %v), want Failed", i+1, p.Status.Phase, res.TimedOut)
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil {
			t.Fatalf("run %d: container statuses %+v, want one terminated", i+1, p.Status.ContainerStatuses)
		}
		if term := p.Status.ContainerStatuses[0].State.Terminated; term.ExitCode != 3 || term.Reason != "Error" {
			t.Errorf("run %d: terminated with %d %q, want 3 Error", i+1, term.ExitCode, term.Reason)
		}
		// The kubelet's final status, written after it stopped the sandbox.
		if sandboxReady(p) {
			t.Errorf("run %d: PodReadyToStartContainers True: not the kubelet's final status of an ended pod", i+1)
		}
		if got, want := res.Logs["c"], "out\n(stderr) err\n"; got != want {
			t.Errorf("run %d: output %q, want %q", i+1, got, want)
		}
		checkGone(t, k, string(p.UID))
		uids = append(uids, string(p.UID))
	}
	if uids[0] == uids[1] {
		t.Errorf("both runs had UID %s: a rerun must not meet the first run's containers", uids[0])
	}
}

// TestE2EKubeletOracleReady runs a restartPolicy Always pod: the wait ends
// once it is Ready (auto means ready for Always, as in podrun), and the
// pod, whose container traps SIGTERM, is stopped and removed.
func TestE2EKubeletOracleReady(t *testing.T) {
	k := oracle(t)
	res, err := k.Run(context.Background(), []byte(`apiVersion: v1
kind: Pod
metadata:
  name: oracle-ready
  namespace: oracle
spec:
  containers:
  - name: c
    image: busybox:1.36
    command: ["sh", "-c", "trap 'echo bye; exit 0' TERM; echo up; while :; do sleep 1; done"]
`), RunOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pod
	if p.Namespace != "oracle" || res.TimedOut || p.Status.Phase != v1.PodRunning {
		t.Errorf("pod %s/%s phase %s (timed out %v), want oracle/… Running", p.Namespace, p.Name, p.Status.Phase, res.TimedOut)
	}
	ready := false
	for _, c := range p.Status.Conditions {
		ready = ready || c.Type == v1.PodReady && c.Status == v1.ConditionTrue
	}
	if !ready {
		t.Errorf("conditions %+v, want Ready True", p.Status.Conditions)
	}
	// Read after the kubelet stopped it: what the trap printed is there.
	if got := res.Logs["c"]; !strings.HasPrefix(got, "up\n") || !strings.HasSuffix(got, "bye\n") {
		t.Errorf("output %q, want up ... bye", got)
	}
	checkGone(t, k, string(p.UID))
}

// TestE2EKubeletOracleTimeout: a pod that does not end by the timeout is
// returned as last seen, marked TimedOut, and still removed.
func TestE2EKubeletOracleTimeout(t *testing.T) {
	k := oracle(t)
	res, err := k.Run(context.Background(), []byte(`{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "oracle-timeout"},
 "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
  "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}`),
		RunOptions{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Pod.Status.Phase != v1.PodRunning {
		t.Errorf("timed out %v, phase %s; want a timeout while Running", res.TimedOut, res.Pod.Status.Phase)
	}
	if res.FirstSyncLate >= 3*time.Second {
		t.Errorf("FirstSyncLate %s: the wait went on the whole second timeout for a pod that runs", res.FirstSyncLate)
	}
	checkGone(t, k, string(res.Pod.UID))
}

// TestE2EKubeletOracleFirstSyncLate: a pod whose first sync never ends on
// the kubelet (its hostPath volume is not the directory its type says, so
// the kubelet waits for the mount and the status stays the one from before
// the sync) is waited for one timeout more, then returned as it stands:
// TimedOut, Pending, its container ContainerCreating.
func TestE2EKubeletOracleFirstSyncLate(t *testing.T) {
	k := oracle(t)
	const timeout = 3 * time.Second
	res, err := k.Run(context.Background(), []byte(`{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "oracle-first-sync"},
 "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
  "volumes": [{"name": "v", "hostPath": {"path": "/nonexistent/podrun-oracle-first-sync", "type": "Directory"}}],
  "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"],
   "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}}`),
		RunOptions{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Pod.Status.Phase != v1.PodPending {
		t.Errorf("timed out %v, phase %s; want a timeout while Pending", res.TimedOut, res.Pod.Status.Phase)
	}
	if res.FirstSyncLate < timeout-pollInterval || res.Elapsed < 2*timeout {
		t.Errorf("FirstSyncLate %s after %s in all; want about %s more than the %s timeout", res.FirstSyncLate, res.Elapsed, timeout, timeout)
	}
	if cs := res.Pod.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Waiting == nil || cs[0].State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("container statuses %+v; want c waiting ContainerCreating", cs)
	}
	checkGone(t, k, string(res.Pod.UID))
}
