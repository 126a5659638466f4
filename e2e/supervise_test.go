//go:build e2e

package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// waitReady waits for READY=1 from the supervised podrun p, failing at
// once with its output if it ends first.
func (n *notifySocket) waitReady(t *testing.T, p *proc, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		n.mu.Lock()
		got := append([]string(nil), n.got...)
		n.mu.Unlock()
		if indexOf(got, "READY=1") >= 0 {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("podrun ended before READY=1 (notifications %q)\n%s", got, p.result(time.Second))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no READY=1 within %s; notifications %q\n%s", within, got, p.result(time.Second))
		}
	}
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
	// systemd's status lines tell of the restart. The runtime lists the
	// new instance running as soon as StartContainer returns, a moment
	// before podrun reports it: wait for the line.
	for deadline := time.Now().Add(scaled(10 * time.Second)); ; time.Sleep(100 * time.Millisecond) {
		got := notify.waitFor(t, "Started container app", 0)
		if strings.Count(strings.Join(got, "\n"), "Started container app") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("notifications %q: want a second Started", got)
			break
		}
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

// TestSystemdSupervisedUnit: podrun installed as a node installs it and
// run by the node's systemd. The Debian package hack/release.sh builds
// (PODRUN_E2E_DEB; hack/guest.sh builds it for the guest) is installed
// with dpkg: /usr/bin/podrun reports the package's version and commit,
// the man page and completions are where the package says, and
// podrun-bootstrap.service (docs/examples/podrun-bootstrap.service) is
// installed but not enabled. The unit runs as shipped, its ExecStart
// untouched; a drop-in gives it the runtime's socket
// (CONTAINER_RUNTIME_ENDPOINT), as a node whose containerd is not at the
// default path would, and the manifest is in /etc/kubernetes/manifests.
// systemctl start returns once the pod is Ready (Type=notify), a
// container killed from the host comes back with the unit still active,
// systemctl stop leaves the unit inactive, not failed, with nothing
// behind, and dpkg --purge removes every file the package brought. It
// needs systemd as PID 1 and a machine of its own (it writes
// /etc/kubernetes/manifests and uses /var/lib/podrun): the systemd guest
// runs it (hack/guest.sh); elsewhere it fails. Its name has no "E2E":
// make e2e (-run E2E) on the host leaves it to the guest.
func TestSystemdSupervisedUnit(t *testing.T) {
	if b, err := os.ReadFile("/proc/1/comm"); err != nil || strings.TrimSpace(string(b)) != "systemd" {
		t.Fatalf("systemd is not PID 1 here (%q, %v): run it in the systemd guest (hack/guest.sh)", b, err)
	}
	deb := os.Getenv("PODRUN_E2E_DEB")
	if deb == "" {
		t.Fatal("PODRUN_E2E_DEB is not set: the podrun .deb to install (bash hack/release.sh deb DIR builds it; hack/guest.sh sets it)")
	}
	run := func(name string, args ...string) (string, error) {
		out, err := exec.Command(name, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(name string, args ...string) string {
		t.Helper()
		out, err := run(name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	const (
		unitName     = "podrun-bootstrap.service"
		manifestsDir = "/etc/kubernetes/manifests"
		stateDir     = "/var/lib/podrun"
	)
	if out, err := run("dpkg-query", "-W", "-f=${Status}", "podrun"); err == nil && strings.Contains(out, "installed") {
		t.Fatalf("podrun is installed here already (%s): this test installs and purges it, on a machine of its own", out)
	}
	for _, dir := range []string{manifestsDir, stateDir} {
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%s exists: this test needs a machine where podrun never ran (the guest)", dir)
		}
	}

	// Installed.
	version := must("dpkg-deb", "-f", deb, "Version")
	must("dpkg", "-i", deb)
	files := strings.Fields(must("dpkg-query", "-L", "podrun"))
	t.Cleanup(func() {
		run("systemctl", "stop", unitName)
		os.RemoveAll("/run/systemd/system/" + unitName + ".d")
		if out, err := run("dpkg", "--purge", "podrun"); err != nil {
			t.Errorf("dpkg --purge podrun: %v\n%s", err, out)
		}
		run("systemctl", "daemon-reload")
		run("systemctl", "reset-failed", unitName)
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				t.Errorf("after dpkg --purge: %s is still there", f)
			}
		}
		os.RemoveAll("/etc/kubernetes")
		// The state dir podrun made: empty by now (checked below).
		os.Remove(stateDir)
	})
	for _, want := range []string{"/usr/bin/podrun", "/usr/lib/systemd/system/" + unitName,
		"/usr/share/man/man1/podrun.1.gz", "/usr/share/bash-completion/completions/podrun",
		"/usr/share/zsh/vendor-completions/_podrun", "/usr/share/fish/vendor_completions.d/podrun.fish"} {
		if !slices.Contains(files, want) {
			t.Errorf("the package has no %s (dpkg -L: %v)", want, files)
		}
	}
	// podrun version: "podrun v0.0.0-...": the package's version is the
	// same with Debian's ordering characters (hack/release.sh deb_version).
	pv := must("/usr/bin/podrun", "version")
	debOf := strings.NewReplacer("-", ".", "+", ".")
	var got string
	if f := strings.Fields(pv); len(f) >= 2 {
		got = strings.TrimPrefix(f[1], "v")
		if i := strings.Index(got, "-"); i >= 0 {
			got = got[:i] + "~" + debOf.Replace(got[i+1:])
		}
		got = debOf.Replace(got)
	}
	if got != version {
		t.Errorf("/usr/bin/podrun version says %q: as a package version %q, want %q (the .deb's)", pv, got, version)
	}
	if !strings.Contains(pv, "commit") {
		t.Errorf("/usr/bin/podrun version: %q names no commit", pv)
	}
	if out, _ := run("systemctl", "is-enabled", unitName); out != "disabled" {
		t.Errorf("systemctl is-enabled %s: %q, want disabled (installed, not enabled)", unitName, out)
	}
	if out := must("bash", "-c", "source /usr/share/bash-completion/completions/podrun && complete -p podrun"); !strings.Contains(out, "podrun") {
		t.Errorf("the bash completion registers nothing for podrun: %q", out)
	}

	// The unit as shipped, with the runtime's socket from a drop-in.
	dropIn := "/run/systemd/system/" + unitName + ".d"
	if err := os.MkdirAll(dropIn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dropIn, "50-runtime.conf"),
		[]byte("[Service]\nEnvironment=CONTAINER_RUNTIME_ENDPOINT="+rtEndpoint+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := strconv.FormatInt(37_000_000+time.Now().UnixNano()%1_000_000, 10)
	if err := os.MkdirAll(manifestsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifestsDir, "unit.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: unit}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox
    command: [sleep, "`+marker+`"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	podName := "unit-" + strings.ToLower(host)
	must("systemctl", "daemon-reload")
	// Type=notify: start returns once podrun sent READY=1.
	if out, err := run("systemctl", "start", unitName); err != nil {
		j, _ := run("journalctl", "-u", unitName, "--no-pager", "-n", "50")
		t.Fatalf("systemctl start: %v %s\n%s", err, out, j)
	}
	if out, _ := run("systemctl", "is-active", unitName); out != "active" {
		t.Fatalf("after start: %s, want active", out)
	}
	if exe, err := os.Readlink("/proc/" + must("systemctl", "show", "-P", "MainPID", unitName) + "/exe"); err != nil || exe != "/usr/bin/podrun" {
		t.Errorf("the unit's main process runs %q (%v), want the package's /usr/bin/podrun", exe, err)
	}
	if sbs := sandboxesOf(t, podName); len(sbs) != 1 {
		t.Fatalf("after start: %d sandboxes of %s, want 1", len(sbs), podName)
	}

	if out, err := exec.Command("pkill", "-KILL", "-f", "^sleep "+marker+"$").CombinedOutput(); err != nil {
		t.Fatalf("pkill: %v %s", err, out)
	}
	deadline := time.Now().Add(scaled(60 * time.Second))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ctrs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
			LabelSelector: map[string]string{"io.kubernetes.pod.name": podName}})
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
	if out, _ := run("systemctl", "is-active", unitName); out != "active" {
		t.Errorf("after the restart: %s, want active", out)
	}

	if out, err := run("systemctl", "stop", unitName); err != nil {
		t.Fatalf("systemctl stop: %v %s", err, out)
	}
	if out, _ := run("systemctl", "is-failed", unitName); out == "failed" {
		t.Errorf("after stop: failed; want inactive (SuccessExitStatus=143)")
	}
	if sbs := sandboxesOf(t, podName); len(sbs) != 0 {
		t.Errorf("after stop: %d sandboxes of %s, want none", len(sbs), podName)
	}
	e := &env{t: t}
	for _, l := range e.leftovers(stateDir) {
		t.Errorf("left behind in %s: %s", stateDir, l)
	}
}
