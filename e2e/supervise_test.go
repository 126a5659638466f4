//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// notifySocket is a stand-in for systemd's NOTIFY_SOCKET: the datagrams a
// supervised podrun sends, in order.
type notifySocket struct {
	path string
	mu   sync.Mutex
	got  []string
}

func listenNotify(t *testing.T) *notifySocket {
	t.Helper()
	n := &notifySocket{path: filepath.Join(t.TempDir(), "notify")}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 8192)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.got = append(n.got, string(buf[:k]))
			n.mu.Unlock()
		}
	}()
	return n
}

// waitFor waits for a datagram holding s and returns every datagram so far.
func (n *notifySocket) waitFor(t *testing.T, s string, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n.mu.Lock()
		got := append([]string(nil), n.got...)
		n.mu.Unlock()
		for _, d := range got {
			if strings.Contains(d, s) {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notification with %q within %s; got %q", s, within, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2ESupervise: `podrun run --supervise` as a node's service runs it:
// READY=1 to systemd's socket once the pod is Ready; a container whose
// process is killed from the host comes back (restart count 1) and the
// pod is Ready again, podrun still running; SIGTERM tears the pod down
// with STOPPING=1 first, exit 143 (the unit's SuccessExitStatus).
func TestE2ESupervise(t *testing.T) {
	e := newEnv(t)
	notify := listenNotify(t)
	marker := strconv.FormatInt(36_000_000+time.Now().UnixNano()%1_000_000, 10) // seconds to sleep, unique to the test
	file := manifest(t, "svc.yaml", `apiVersion: v1
kind: Pod
metadata: {name: svc}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: [sleep, "`+marker+`"]
    readinessProbe:
      exec: {command: ["true"]}
      periodSeconds: 1
`)
	p := e.startPodrun([]string{"run", "--supervise", "-f", file}, "", "NOTIFY_SOCKET="+notify.path)
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			stopNow(t, p) // a failed test's supervisor
		}
	})
	notify.waitFor(t, "READY=1", scaled(90*time.Second))

	// Kill the container's process from the host, as a crash would.
	if out, err := exec.Command("pkill", "-KILL", "-f", "^sleep "+marker+"$").CombinedOutput(); err != nil {
		t.Fatalf("pkill: %v %s", err, out)
	}
	deadline := time.Now().Add(scaled(60 * time.Second))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ctrs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
			LabelSelector: map[string]string{"io.kubernetes.pod.name": "svc"}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(ctrs) == 1 && ctrs[0].Metadata.Attempt == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed container did not come back (running: %v)\n%s", ctrs, p.result(time.Second))
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case <-p.done:
		t.Fatalf("podrun ended while supervising\n%s", p.result(time.Second))
	default:
	}
	// systemd's status lines tell of the restart.
	if got := notify.waitFor(t, "Started container app", 0); strings.Count(strings.Join(got, "\n"), "Started container app") < 2 {
		t.Errorf("notifications %q: want a second Started", got)
	}

	p.signal(syscall.SIGTERM)
	if code := p.wait(scaled(60 * time.Second)); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143\n%s", code, p.result(time.Second))
	}
	got := notify.waitFor(t, "STOPPING=1", time.Second)
	if i, j := indexOf(got, "READY=1"), indexOf(got, "STOPPING=1"); i < 0 || j < i {
		t.Errorf("notifications %q: want READY=1, then STOPPING=1", got)
	}
}

// indexOf is the index of the first datagram holding s, -1 if none.
func indexOf(datagrams []string, s string) int {
	for i, d := range datagrams {
		if strings.Contains(d, s) {
			return i
		}
	}
	return -1
}

// TestSystemdSupervisedUnit: the unit file docs/bootstrap.md ships
// (docs/examples/podrun-bootstrap.service), run by the node's systemd
// with its ExecStart pointed at the binary under test and a manifest of
// the test's: systemctl start returns once the pod is Ready (Type=notify),
// a container killed from the host comes back with the unit still active,
// and systemctl stop leaves the unit inactive, not failed, with nothing
// behind. It needs systemd as PID 1: the systemd guest runs it
// (hack/guest.sh); elsewhere it fails. Its name has no "E2E": make e2e
// (-run E2E) on the host leaves it to the guest.
func TestSystemdSupervisedUnit(t *testing.T) {
	if b, err := os.ReadFile("/proc/1/comm"); err != nil || strings.TrimSpace(string(b)) != "systemd" {
		t.Fatalf("systemd is not PID 1 here (%q, %v): run it in the systemd guest (hack/guest.sh)", b, err)
	}
	e := newEnv(t)
	unit, err := os.ReadFile(filepath.Join(repoRoot, "docs", "examples", "podrun-bootstrap.service"))
	if err != nil {
		t.Fatal(err)
	}
	marker := strconv.FormatInt(37_000_000+time.Now().UnixNano()%1_000_000, 10)
	file := manifest(t, "unit.yaml", `apiVersion: v1
kind: Pod
metadata: {name: unit}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: [sleep, "`+marker+`"]
`)
	const execStart = "ExecStart=/usr/bin/podrun run --supervise --static-pod-names -f /etc/kubernetes/manifests\n"
	if !strings.Contains(string(unit), execStart) {
		t.Fatalf("the unit file has no %q to point at the test's binary", execStart)
	}
	text := strings.Replace(string(unit), execStart, fmt.Sprintf("ExecStart=%s run -r %s --root-dir %s --supervise --static-pod-names --node-name unit-node -f %s\n",
		podrunBin, rtEndpoint, e.root, file), 1)
	name := "podrun-e2e-" + marker + ".service"
	path := filepath.Join("/run/systemd/system", name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	systemctl := func(args ...string) (string, error) {
		out, err := exec.Command("systemctl", args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	t.Cleanup(func() {
		systemctl("stop", name)
		os.Remove(path)
		systemctl("daemon-reload")
		systemctl("reset-failed", name)
	})
	if out, err := systemctl("daemon-reload"); err != nil {
		t.Fatalf("daemon-reload: %v %s", err, out)
	}
	// Type=notify: start returns once podrun sent READY=1.
	if out, err := systemctl("start", name); err != nil {
		j, _ := exec.Command("journalctl", "-u", name, "--no-pager", "-n", "50").CombinedOutput()
		t.Fatalf("systemctl start: %v %s\n%s", err, out, j)
	}
	if out, _ := systemctl("is-active", name); out != "active" {
		t.Fatalf("after start: %s, want active", out)
	}
	if sbs := sandboxesOf(t, "unit-unit-node"); len(sbs) != 1 {
		t.Fatalf("after start: %d sandboxes of unit-unit-node, want 1", len(sbs))
	}

	if out, err := exec.Command("pkill", "-KILL", "-f", "^sleep "+marker+"$").CombinedOutput(); err != nil {
		t.Fatalf("pkill: %v %s", err, out)
	}
	deadline := time.Now().Add(scaled(60 * time.Second))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ctrs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
			LabelSelector: map[string]string{"io.kubernetes.pod.name": "unit-unit-node"}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(ctrs) == 1 && ctrs[0].Metadata.Attempt == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed container did not come back (running: %v)", ctrs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out, _ := systemctl("is-active", name); out != "active" {
		t.Errorf("after the restart: %s, want active", out)
	}

	if out, err := systemctl("stop", name); err != nil {
		t.Fatalf("systemctl stop: %v %s", err, out)
	}
	if out, _ := systemctl("is-failed", name); out == "failed" {
		t.Errorf("after stop: failed; want inactive (SuccessExitStatus=143)")
	}
}
