//go:build e2e

package e2e

// Faults end to end: podrun stopped at every stage of a run (SIGKILL, and
// the next run reclaims everything; SIGINT and SIGTERM, and podrun tears
// everything down itself), a closed stdout and a lost terminal, a full log
// dir and a full --root-dir, a runtime that rejects a call, and several
// podruns at once, some killed. Each ends with nothing of it left (the
// harness's check, and at once after each stop).
//
// A stage that leaves nothing to wait for is reached with podrun's
// test-only pause points (runner/testpause.go: PODRUN_TEST_PAUSE_AT makes
// podrun write the stage to a file and block until interrupted); the others
// with what they show: a pull through a registry proxy that holds the
// connection, the init container's output, the probe's mark in a hostPath.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
)

// A fault stage: how the test gets podrun there.
type faultStage struct {
	name string
	// pause is the pause point (runner.Pause*) that holds podrun at the
	// stage; "" when the stage shows itself (pull, init, probe).
	pause string
	// left: SIGKILL at this stage leaves something to reclaim.
	left bool
}

var faultStages = []faultStage{
	{name: "admitted", pause: runner.PauseAdmitted},
	{name: "cgroup", pause: runner.PauseCgroup, left: true},
	{name: "volumes", pause: runner.PauseVolumes, left: true},
	{name: "pull", left: true},
	{name: "sandbox", pause: runner.PauseSandbox, left: true},
	{name: "init", left: true},
	{name: "probe", left: true},
	{name: "teardown", pause: runner.PauseTeardown, left: true},
}

var signalName = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP",
}

// TestE2EFaultStages stops podrun at every stage of a run: SIGKILL, after
// which the next run in the root dir reclaims everything; and SIGINT and
// SIGTERM, after which podrun has torn everything down itself and exits 130
// or 143.
func TestE2EFaultStages(t *testing.T) {
	t.Parallel()
	for _, st := range faultStages {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT, syscall.SIGTERM} {
			t.Run(st.name+"/"+signalName[sig], func(t *testing.T) {
				t.Parallel()
				faultAtStage(t, st, sig)
			})
		}
	}
}

func faultAtStage(t *testing.T, st faultStage, sig syscall.Signal) {
	e := newEnv(t)
	name := "e2e-fault-" + st.name + "-" + randomSuffix(t)
	mark := t.TempDir()
	vars := map[string]string{
		"NAME": name, "MARK_DIR": mark, "IMAGE": "busybox:1.36",
		"INIT_SCRIPT": "true", "MAIN_SCRIPT": "echo main-running; exec sleep 3600", "PROBE_SCRIPT": "true",
	}
	var reg *stallRegistry
	switch st.name {
	case "pull":
		reg = newStallRegistry(t)
		vars["IMAGE"] = reg.image()
	case "init":
		vars["INIT_SCRIPT"] = "echo init-running; exec sleep 3600"
	case "probe":
		vars["PROBE_SCRIPT"] = "touch /mark/probing; exec sleep 3600"
	case "teardown":
		vars["MAIN_SCRIPT"] = "echo main-done"
	}
	var pairs []string
	for k, v := range vars {
		pairs = append(pairs, k, v)
	}
	m := fromTemplate(t, "faults/stage.yaml", pairs...)
	var envChanges []string
	pauseFile := filepath.Join(t.TempDir(), "paused")
	if st.pause != "" {
		envChanges = []string{runner.EnvTestPauseAt + "=" + st.pause, runner.EnvTestPauseFile + "=" + pauseFile}
	}
	p := e.startPodrun([]string{"-f", m}, "", envChanges...)

	// Wait for the stage.
	switch {
	case st.pause != "":
		waitForFile(t, p, pauseFile, st.pause+"\n", 60*time.Second)
	case st.name == "pull":
		// The pull starts ahead, with the run (runner/prefetch.go); the
		// stage is main's turn, which waits for it: the init container
		// has run, so the data dir, cgroup and sandbox are all made.
		reg.waitHeld(t, p, 60*time.Second)
		p.waitStderr("Started container init", 60*time.Second)
	case st.name == "init":
		p.waitStdout("init-running", 60*time.Second)
	case st.name == "probe":
		waitForFile(t, p, filepath.Join(mark, "probing"), "", 60*time.Second)
	}

	if sig != syscall.SIGKILL {
		p.signal(sig)
		r := p.result(60 * time.Second)
		want := map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[sig]
		expectCode(t, r, want)
		// At once, before any other podrun could reclaim what it left.
		expectNothingLeft(t, e, fmt.Sprintf("podrun ended after %s at stage %s", signalName[sig], st.name))
		return
	}

	// SIGSTOP first: what a killed podrun leaves is looked at while its
	// owner still counts as alive, so no other test's podrun reclaims it
	// meanwhile.
	p.signal(syscall.SIGSTOP)
	left := append(e.leftovers(e.root), e.nodeLeftovers()...)
	p.signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code != -1 {
		t.Fatalf("podrun exit %d after SIGKILL", code)
	}
	switch {
	case st.left && len(left) == 0:
		t.Errorf("SIGKILL at stage %s left nothing to reclaim: the stage was not reached", st.name)
	case !st.left && len(left) > 0:
		t.Errorf("SIGKILL at stage %s left:\n  %s", st.name, strings.Join(left, "\n  "))
	}
	t.Logf("SIGKILL at stage %s left %d things:\n  %s", st.name, len(left), strings.Join(left, "\n  "))

	// The next run in the root dir reclaims all of it.
	r := e.runPodrun([]string{"-f", fromTemplate(t, "faults/quick.yaml", "NAME", name+"-next")}, "")
	expectCode(t, r, 0)
	expectNothingLeft(t, e, "the next run after SIGKILL at stage "+st.name)
}

// expectNothingLeft fails the test unless nothing of the test's runs is
// left now (the harness's check, at a moment of the test's choosing).
func expectNothingLeft(t *testing.T, e *env, when string) {
	t.Helper()
	if left := append(e.leftovers(e.root), e.nodeLeftovers()...); len(left) > 0 {
		t.Errorf("%s: left behind:\n  %s", when, strings.Join(left, "\n  "))
	}
}

// waitForFile waits until path exists and, when want is not "", holds it;
// it fails the test (fatally) if podrun ends first or timeout passes.
func waitForFile(t *testing.T, p *proc, path, want string, timeout time.Duration) {
	t.Helper()
	timeout = scaled(timeout)
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), want) {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("podrun ended (exit %d) before %s held %q.\nstdout:\n%s\nstderr:\n%s",
				p.code, path, want, p.stdout.String(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not hold %q within %s.\nstdout:\n%s\nstderr:\n%s", path, want, timeout, p.stdout.String(), p.stderr.String())
		}
	}
}

// stallRegistry is a TCP proxy in front of the testbed's mirror registry,
// known to the testbed's containerd as the registry 127.0.0.1:<port> (a
// hosts.toml of its own in the testbed's certs.d, trusting the testbed's CA;
// removed after the test). It holds every connection without forwarding a
// byte until release: a pull from it is in flight, its TLS handshake
// unanswered, until then.
type stallRegistry struct {
	host     string // 127.0.0.1:<port>
	upstream string
	ln       net.Listener
	accepted chan struct{} // a value per connection

	mu       sync.Mutex
	released bool
	held     []net.Conn
}

func newStallRegistry(t *testing.T) *stallRegistry {
	t.Helper()
	upstream, ca, dir := os.Getenv("PODRUN_TESTBED_MIRROR"), os.Getenv("PODRUN_TESTBED_CA"), os.Getenv("PODRUN_TESTBED_DIR")
	if upstream == "" || ca == "" || dir == "" {
		t.Fatal("PODRUN_TESTBED_MIRROR, _CA or _DIR is not set (eval \"$(bash hack/testbed.sh env)\")")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &stallRegistry{host: ln.Addr().String(), upstream: upstream, ln: ln, accepted: make(chan struct{}, 64)}
	hostsDir := filepath.Join(dir, "certs.d", r.host)
	if err := os.MkdirAll(hostsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	server := "https://" + r.host + "/v2/docker.io"
	hosts := fmt.Sprintf("server = %q\nca = %q\noverride_path = true\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n  override_path = true\n",
		server, ca, server, ca)
	if err := os.WriteFile(filepath.Join(hostsDir, "hosts.toml"), []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	go r.serve()
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for _, c := range r.held {
			c.Close()
		}
		r.held = nil
		r.mu.Unlock()
		os.RemoveAll(hostsDir)
		// A pull that got through leaves the image under this host's name.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if img, err := rtClient.ImageStatus(ctx, r.image()); err == nil && img != nil {
			rtClient.RemoveImage(ctx, r.image())
		}
	})
	return r
}

// image is busybox:latest of the mirror through the proxy (latest: pulled
// every time).
func (r *stallRegistry) image() string { return r.host + "/library/busybox:latest" }

func (r *stallRegistry) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		if r.released {
			r.mu.Unlock()
			go r.forward(c)
		} else {
			r.held = append(r.held, c)
			r.mu.Unlock()
		}
		select {
		case r.accepted <- struct{}{}:
		default:
		}
	}
}

// release forwards the held connections and every later one.
func (r *stallRegistry) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = true
	for _, c := range r.held {
		go r.forward(c)
	}
	r.held = nil
}

func (r *stallRegistry) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", r.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// waitHeld waits until the runtime has connected to the proxy (a pull is
// in flight); it fails the test (fatally) if podrun ends first or timeout
// passes.
func (r *stallRegistry) waitHeld(t *testing.T, p *proc, timeout time.Duration) {
	t.Helper()
	select {
	case <-r.accepted:
	case <-p.done:
		t.Fatalf("podrun ended (exit %d) before pulling from %s.\nstderr:\n%s", p.code, r.host, p.stderr.String())
	case <-time.After(timeout):
		t.Fatalf("no pull from %s within %s.\nstderr:\n%s", r.host, timeout, p.stderr.String())
	}
}

// TestE2EFaultClosedStdout: `podrun -f pod.yaml | head -1` — once stdout's
// reader is gone, podrun stops the pod and tears everything down, exit
// 141. It used to die by SIGPIPE with the pod left running.
func TestE2EFaultClosedStdout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-fault-pipe-" + randomSuffix(t)
	m := fromTemplate(t, "faults/chatty.yaml", "NAME", name)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := e.startPodrunCmd(withRoot(e.root, []string{"-f", m}), "", func(cmd *exec.Cmd) { cmd.Stdout = pw })
	pw.Close() // podrun holds the only writer
	// head -1: read one line, then go away.
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading podrun's stdout: %v\nstderr:\n%s", err, p.stderr.String())
	}
	pr.Close()
	r := p.result(60 * time.Second)
	expectCode(t, r, 141)
	if !strings.HasPrefix(line, "line") {
		t.Errorf("first line %q, want the container's output", line)
	}
	if !strings.Contains(r.stderr, "podrun: stdout is closed (broken pipe): stopping the pods") {
		t.Errorf("stderr does not say why it stopped\n%s", r)
	}
	expectNothingLeft(t, e, "after stdout closed")
}

// TestE2EFaultSIGHUP: a lost terminal (SIGHUP) tears down as SIGTERM does,
// exit 129. It used to kill podrun with the pod left running.
func TestE2EFaultSIGHUP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := fromTemplate(t, "faults/chatty.yaml", "NAME", "e2e-fault-hup-"+randomSuffix(t))
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStdout("line2\n", 60*time.Second)
	p.signal(syscall.SIGHUP)
	r := p.result(60 * time.Second)
	expectCode(t, r, 129)
	if !strings.Contains(r.stderr, "Interrupted: stopping") {
		t.Errorf("stderr lacks the Interrupted event\n%s", r)
	}
	expectNothingLeft(t, e, "after SIGHUP")
}

// mountTmpfs mounts a tmpfs of size at dir (made if missing) until the
// test's cleanups run (before the harness's check, registered earlier).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mounting a tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
}

// fill writes zeros to a file in dir until its filesystem is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return
		}
	}
}

// expectRootClean fails the test if a root dir that is a mount point holds
// anything of the test's runs (the harness's check less the mount itself).
func expectRootClean(t *testing.T, e *env, when string) {
	t.Helper()
	var left []string
	for _, l := range append(e.leftovers(e.root), e.nodeLeftovers()...) {
		if l != "mount "+e.root {
			left = append(left, l)
		}
	}
	if len(left) > 0 {
		t.Errorf("%s: left behind:\n  %s", when, strings.Join(left, "\n  "))
	}
}

// TestE2EFaultLogDirFull: the runtime cannot write a container's output to
// a full log dir and drops it. podrun says so, naming the log dir, and does
// not report success (125). It used to exit 0 with 2,560 of 20,000 lines
// and a raw CRI log fragment. The same pod with room for its log prints
// every line and succeeds.
func TestE2EFaultLogDirFull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const count = 20000
	logs := filepath.Join(t.TempDir(), "logs")
	mountTmpfs(t, logs, "256k")
	name := "e2e-fault-logs-" + randomSuffix(t)
	r := e.runPodrun([]string{"--pod-logs-dir", logs, "-f", fromTemplate(t, "faults/lines.yaml", "NAME", name, "COUNT", strconv.Itoa(count))}, "")
	expectCode(t, r, 125)
	if n := len(lines(r.stdout)); n >= count {
		t.Errorf("%d lines printed from a 256k log dir, want fewer than %d", n, count)
	}
	expectMatch(t, r.stderr, `^podrun: \S+/lines.yaml: document 1: pod default/`+name+`: container output lost: the runtime could not write all of it to the log dir `+
		regexp.QuoteMeta(logs)+`/default_`+name+`_[0-9a-f-]+ \(.*its filesystem has no space left\)$`)
	expectNothingLeft(t, e, "after the run")

	ok := e.runPodrun([]string{"-q", "-f", fromTemplate(t, "faults/lines.yaml", "NAME", name+"-room", "COUNT", strconv.Itoa(count))}, "")
	expectCode(t, ok, 0)
	if n := len(lines(ok.stdout)); n != count {
		t.Errorf("%d lines printed with room for the log, want %d", n, count)
	}
}

// TestE2EFaultRootDirFull: --root-dir on a full filesystem (a small tmpfs)
// — full from the start, podrun cannot make the pod's data dir: 125 with
// the error naming it; filling up during the run (the pod's log is under
// the root dir), the output is lost: 125 naming the log dir. Either way
// teardown removes everything.
func TestE2EFaultRootDirFull(t *testing.T) {
	t.Parallel()
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		mountTmpfs(t, e.root, "1m")
		fill(t, e.root)
		r := e.runPodrun([]string{"-f", fromTemplate(t, "faults/quick.yaml", "NAME", "e2e-fault-rootfull-"+randomSuffix(t))}, "")
		expectCode(t, r, 125)
		expectMatch(t, r.stderr, `^podrun: \S+/quick.yaml: document 1: pod default/e2e-fault-rootfull-[0-9a-f]+: writing pod owner record: write `+
			regexp.QuoteMeta(e.root)+`/pods/\.new-[^ ]+/podrun-owner.json: no space left on device$`)
		expectRootClean(t, e, "after the run")
	})
	t.Run("fills-up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		mountTmpfs(t, e.root, "512k")
		name := "e2e-fault-rootfills-" + randomSuffix(t)
		r := e.runPodrun([]string{"-f", fromTemplate(t, "faults/lines.yaml", "NAME", name, "COUNT", "20000")}, "")
		expectCode(t, r, 125)
		expectMatch(t, r.stderr, `^podrun: \S+/lines.yaml: document 1: pod default/`+name+`: container output lost: the runtime could not write all of it to the log dir `+
			regexp.QuoteMeta(e.root)+`/logs/default_`+name+`_[0-9a-f-]+ \(`)
		expectRootClean(t, e, "after the run")
	})
}

// TestE2EFaultRuntimeRejects: the runtime refuses a call — a Localhost
// seccomp profile that is missing or not a profile (CreateContainer), an
// entrypoint the image lacks (StartContainer on containerd; CreateContainer
// on CRI-O, whose runc create already looks the entrypoint up). podrun
// reports the runtime's error and exits as documented (125 for
// CreateContainerError; the container's StartError 128 under
// restartPolicy Never), and tears down. The runtime's words are its own
// (docs/cri-o.md).
func TestE2EFaultRuntimeRejects(t *testing.T) {
	t.Parallel()
	profiles := t.TempDir()
	if err := os.WriteFile(filepath.Join(profiles, "bad.json"), []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		code   int
		stderr string // a regexp
	}
	// created is podrun's error for the case's container the runtime
	// refused to create, up to the runtime's words.
	created := func(file, name string) string {
		return `podrun: \S+/` + file + `\.yaml: document 1: pod default/e2e-fault-` + name + `-[0-9a-f]+: CreateContainerError: creating container "c": .*`
	}
	for _, tc := range []struct {
		name             string
		manifest         func(t *testing.T, name string) string
		containerd, crio outcome
	}{
		{name: "seccomp-missing",
			manifest: func(t *testing.T, name string) string {
				return fromTemplate(t, "faults/seccomp.yaml", "NAME", name, "PROFILE", "missing.json")
			},
			containerd: outcome{125, created("seccomp", "seccomp-missing") + `cannot load seccomp profile "` + regexp.QuoteMeta(filepath.Join(profiles, "missing.json")) + `"`},
			// internal/config/seccomp/seccomp.go
			crio: outcome{125, created("seccomp", "seccomp-missing") + `setup seccomp: unable to load local profile "` + regexp.QuoteMeta(filepath.Join(profiles, "missing.json")) + `": open `}},
		{name: "seccomp-invalid",
			manifest: func(t *testing.T, name string) string {
				return fromTemplate(t, "faults/seccomp.yaml", "NAME", name, "PROFILE", "bad.json")
			},
			containerd: outcome{125, created("seccomp", "seccomp-invalid") + `seccomp profile failed "` + regexp.QuoteMeta(filepath.Join(profiles, "bad.json")) + `"`},
			// CRI-O reads the file, then decodes its bytes: the error
			// does not name the file.
			crio: outcome{125, created("seccomp", "seccomp-invalid") + `setup seccomp: .*load local profile: decoding seccomp profile failed: invalid character`}},
		{name: "entrypoint",
			manifest: func(t *testing.T, name string) string {
				return fromTemplate(t, "faults/entrypoint.yaml", "NAME", name)
			},
			containerd: outcome{128, `Failed: Error: RunContainerError: .*/no/such/entrypoint`},
			crio:       outcome{125, created("entrypoint", "entrypoint") + `exec: \\"/no/such/entrypoint\\": stat /no/such/entrypoint: no such file or directory`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := byRuntime(t, tc.containerd, tc.crio)
			e := newEnv(t)
			name := "e2e-fault-" + tc.name + "-" + randomSuffix(t)
			r := e.runPodrun([]string{"--seccomp-profile-root", profiles, "-f", tc.manifest(t, name)}, "")
			expectCode(t, r, want.code)
			expectMatch(t, r.stderr, want.stderr)
			expectNothingLeft(t, e, "after the run")
		})
	}
}

// TestE2EFaultConcurrentRuns: two, then ten podruns at once on the node,
// in one root dir and one --cgroup-root, each running a Burstable pod
// until stopped; some are killed (SIGKILL) and some stopped (SIGTERM),
// then another run starts. It reclaims the killed runs' pods (their owners
// are gone) and no other: the survivors' containers run on untouched, and
// the shared burstable cgroup's shares are the kubelet's for the pods
// still in it (all of them, then the survivors'). Stopping the survivors
// removes everything, the cgroup root too.
func TestE2EFaultConcurrentRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		runs            int
		killed, stopped []int
	}{
		{name: "two", runs: 2, killed: []int{1}},
		{name: "ten", runs: 10, killed: []int{1, 4, 7}, stopped: []int{2, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) { concurrentRuns(t, tc.runs, tc.killed, tc.stopped) })
	}
}

func concurrentRuns(t *testing.T, runs int, killed, stopped []int) {
	e := newEnv(t)
	suffix := randomSuffix(t)
	cgRoot := "/podrun/e2e-conc-" + suffix
	qos := shape.qosCgroup(cgRoot, v1.PodQOSBurstable)
	// expectShares fails the test unless the burstable QoS cgroup's cpu
	// shares are the kubelet's for the pods of runs (run i requests
	// (i+1)*100m).
	expectShares := func(when string, runs []int) {
		t.Helper()
		var requests []int64
		for _, i := range runs {
			requests = append(requests, int64(i+1)*100)
		}
		for _, m := range cgroupMismatches(qos, burstableShares(requests...)) {
			t.Errorf("%s: %s", when, m)
		}
	}
	type run struct {
		name, ctr string
		p         *proc
	}
	all := make([]*run, runs)
	for i := range all {
		name := fmt.Sprintf("e2e-conc-%s-%d", suffix, i)
		m := fromTemplate(t, "faults/burstable.yaml", "NAME", name, "CPU", fmt.Sprintf("%dm", (i+1)*100))
		all[i] = &run{name: name, p: e.startPodrun([]string{"--cgroup-root", cgRoot, "-f", m}, "")}
	}
	var everyRun []int
	for i, r := range all {
		r.p.waitStdout(r.name+"-running\n", 90*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		id, err := runningContainer(ctx, r.p, r.name, "c")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		r.ctr = id
		everyRun = append(everyRun, i)
	}
	expectShares(fmt.Sprintf("with %d runs' pods", runs), everyRun)

	gone := map[int]bool{}
	for _, i := range killed {
		all[i].p.signal(syscall.SIGKILL)
		if code := all[i].p.wait(10 * time.Second); code != -1 {
			t.Errorf("run %d: exit %d after SIGKILL", i, code)
		}
		gone[i] = true
	}
	for _, i := range stopped {
		all[i].p.signal(syscall.SIGTERM)
		gone[i] = true
	}
	for _, i := range stopped {
		if code := all[i].p.wait(60 * time.Second); code != 143 {
			t.Errorf("run %d: exit %d after SIGTERM, want 143\n%s", i, code, all[i].p.stderr.String())
		}
	}
	// The next run: it (or any other podrun of the node) reclaims the
	// killed runs' pods, and only theirs.
	next := e.runPodrun([]string{"--cgroup-root", cgRoot, "-f", fromTemplate(t, "faults/quick.yaml", "NAME", "e2e-conc-"+suffix+"-next")}, "")
	expectCode(t, next, 0)
	var survivors []int
	for i, r := range all {
		if gone[i] {
			if n := len(sandboxesOf(t, r.name)); n != 0 {
				t.Errorf("run %d, killed or stopped: %d sandboxes of its pod left after the next run", i, n)
			}
			continue
		}
		survivors = append(survivors, i)
		select {
		case <-r.p.done:
			t.Errorf("run %d ended (exit %d) while others were killed and reclaimed\n%s", i, r.p.code, r.p.stderr.String())
			continue
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		id, err := runningContainer(ctx, r.p, r.name, "c")
		cancel()
		if err != nil || id != r.ctr {
			t.Errorf("run %d: its container %s is no longer the one running (%q, %v)", i, short(r.ctr), short(id), err)
		}
		if n := strings.Count(r.p.stdout.String(), r.name+"-running\n"); n != 1 {
			t.Errorf("run %d: its container started %d times", i, n)
		}
		if strings.Contains(next.stderr, r.name) {
			t.Errorf("the next run touched run %d's pod %s:\n%s", i, r.name, next.stderr)
		}
	}
	expectShares(fmt.Sprintf("with the survivors' pods %v", survivors), survivors)
	for _, i := range survivors {
		all[i].p.signal(syscall.SIGTERM)
	}
	for _, i := range survivors {
		if code := all[i].p.wait(60 * time.Second); code != 143 {
			t.Errorf("run %d: exit %d after SIGTERM, want 143\n%s", i, code, all[i].p.stderr.String())
		}
	}
	expectNothingLeft(t, e, "after every run")
	expectCgroupGone(t, shape.rootCgroup(cgRoot))
}

// restartEnv says the fault tests may restart the testbed's containerd.
// make test sets it for CI, where the suite has the testbed to itself;
// elsewhere set it only for a testbed of one's own (hack/testbed.sh up
// --flavor scratch).
const restartEnv = "PODRUN_E2E_RESTART_RUNTIME"

// requireRestartable fails the test unless restartEnv allows restarting
// the runtime: a restart disturbs everyone else on the testbed.
func requireRestartable(t *testing.T) {
	t.Helper()
	if onCRIO() {
		// The runtime the tests restart is the testbed's containerd
		// (hack/testbed.sh restart-containerd): restarting that while
		// podrun speaks to CRI-O would check nothing.
		t.Fatalf("this test restarts the testbed's containerd; the runtime at %s is CRI-O, which the harness cannot restart: run it on the containerd testbed (make e2e-crio leaves it out)", rtEndpoint)
	}
	if os.Getenv(restartEnv) != "1" {
		t.Fatalf("this test restarts the testbed's containerd (%s), disturbing everyone else on it: "+
			"set %s=1 only on a testbed of your own (make test sets it for CI; on a shared machine: "+
			"bash hack/testbed.sh up --flavor scratch, then its env)", rtEndpoint, restartEnv)
	}
}

// restartRuntime restarts the testbed's containerd (SIGTERM, then the same
// binary and config), leaving its pods and shims running. whileDown, when
// not nil, runs once the old containerd is gone, before the new one starts
// answering.
func restartRuntime(t *testing.T, whileDown func()) {
	t.Helper()
	pidFile := filepath.Join(os.Getenv("PODRUN_TESTBED_DIR"), "run", "containerd.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the testbed's containerd: %v", err)
	}
	old := strings.TrimSpace(string(b))
	cmd := exec.Command("bash", filepath.Join(repoRoot, "hack", "testbed.sh"), "restart-containerd")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if whileDown != nil {
		for {
			if _, err := os.Readlink("/proc/" + old + "/exe"); err != nil {
				break // gone (a zombie has no exe)
			}
			time.Sleep(10 * time.Millisecond)
		}
		whileDown()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("restarting containerd: %v\n%s", err, out.String())
	}
	t.Logf("%s", strings.TrimSpace(out.String()))
}

// TestE2EFaultRuntimeRestart restarts containerd while podrun pulls an
// image (through a proxy that holds the pull), while the runtime makes the
// pod's sandbox (held by the pod cgroup, frozen beforehand, in which the
// sandbox's process waits), and while teardown stops a container that
// ignores SIGTERM. Each run ends as it would have — exit 0 after the pull
// and the sandbox, 130 after the SIGINT — with nothing left. Not parallel:
// no other test may see the runtime go away.
func TestE2EFaultRuntimeRestart(t *testing.T) {
	requireRestartable(t)
	t.Run("pull", func(t *testing.T) {
		e := newEnv(t)
		name := "e2e-restart-pull-" + randomSuffix(t)
		reg := newStallRegistry(t)
		m := fromTemplate(t, "faults/restart.yaml", "NAME", name, "UID", name, "IMAGE", reg.image())
		p := e.startPodrun([]string{"-f", m}, "")
		reg.waitHeld(t, p, 60*time.Second)
		restartRuntime(t, nil)
		reg.release()
		r := p.result(defaultRunTimeout)
		expectCode(t, r, 0)
		if r.stdout != name+"-done\n" {
			t.Errorf("stdout %q, want the container's line\n%s", r.stdout, r)
		}
		expectNothingLeft(t, e, "after the run")
	})
	t.Run("sandbox", func(t *testing.T) {
		e := newEnv(t)
		name := "e2e-restart-sandbox-" + randomSuffix(t)
		// The pod is BestEffort under the default --cgroup-root: its cgroup,
		// made frozen before podrun runs (v1: in the freezer hierarchy; v2:
		// cgroup.freeze), holds the sandbox's first process and so the
		// runtime's RunPodSandbox.
		rel := shape.podCgroup("/podrun", v1.PodQOSBestEffort, name)
		makeCgroup(t, rel, "freezer")
		state, frozen, thawed := shape.freezer(rel)
		thaw := func() { os.WriteFile(state, []byte(thawed), 0o644) }
		t.Cleanup(thaw) // before makeCgroup's removal
		if err := os.WriteFile(state, []byte(frozen), 0o644); err != nil {
			t.Fatal(err)
		}
		m := fromTemplate(t, "faults/restart.yaml", "NAME", name, "UID", name, "IMAGE", "busybox:1.36")
		p := e.startPodrun([]string{"-f", m}, "")
		sandboxID := shape.sandboxOfCgroup(waitFrozenProcess(t, p, filepath.Dir(state), 60*time.Second))
		// Thawed while containerd is down: the shim goes on making the
		// sandbox without it.
		restartRuntime(t, thaw)
		r := p.result(defaultRunTimeout)
		expectCode(t, r, 0)
		if !strings.Contains(r.stderr, "FailedCreatePodSandBox: Failed to create pod sandbox: ") {
			t.Errorf("stderr lacks the FailedCreatePodSandBox event of the call cut short\n%s", r)
		}
		expectNothingLeft(t, e, "after the run")
		// What containerd itself may keep of the sandbox it was making is
		// out of podrun's reach (it speaks CRI only): say so if there is any.
		for _, mnt := range mountsUnder(t, os.Getenv("PODRUN_TESTBED_DIR")) {
			if strings.Contains(mnt, sandboxID) {
				t.Logf("containerd keeps a mount of the sandbox it was making when restarted: %s", mnt)
			}
		}
		// And the shim it had started for it: containerd, back, cannot
		// load it (its bundle was half made) and forgets it, but the
		// process lives on until the testbed goes down (kill_shims).
		for _, pid := range processesWithArg(t, sandboxID) {
			t.Logf("containerd left the shim of the sandbox it was making when restarted: pid %d", pid)
		}
	})
	t.Run("teardown", func(t *testing.T) {
		e := newEnv(t)
		const grace = 5
		m := fromTemplate(t, "faults/stubborn.yaml", "NAME", "e2e-restart-teardown-"+randomSuffix(t), "GRACE", strconv.Itoa(grace))
		p := e.startPodrun([]string{"-f", m}, "")
		p.waitStdout("ignoring-term", 60*time.Second)
		p.signal(syscall.SIGINT)
		p.waitStderr("Killing: Stopping container c", 10*time.Second)
		sent := time.Now()
		restartRuntime(t, nil)
		r := p.result(60 * time.Second)
		expectCode(t, r, 130)
		// The stop, made again once the runtime is back, waits out the
		// grace period once more at most.
		if d := time.Since(sent); d > 2*grace*time.Second+20*time.Second {
			t.Errorf("teardown went on %s after the restart", d.Round(time.Second))
		}
		expectNothingLeft(t, e, "after the run")
	})
}

// waitFrozenProcess waits until a process waits in a child cgroup of the
// frozen cgroup dir (the sandbox's: its ID, or with systemd its scope) and
// returns that child's name.
func waitFrozenProcess(t *testing.T, p *proc, dir string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		entries, _ := os.ReadDir(dir)
		for _, en := range entries {
			if b, err := os.ReadFile(filepath.Join(dir, en.Name(), "cgroup.procs")); en.IsDir() && err == nil && len(strings.TrimSpace(string(b))) > 0 {
				return en.Name()
			}
		}
		select {
		case <-p.done:
			t.Fatalf("podrun ended (exit %d) before the sandbox's process waited in %s\n%s", p.code, dir, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process waits in %s within %s\n%s", dir, timeout, p.stderr.String())
		}
	}
}

// TestE2ETwoRunsOfOnePodAtOnce: two podruns of one pod that both find it
// not running (the first paused after making the pod's data dir, before
// its sandbox): the second is refused as a pod already running, naming
// the first's pid, exit 125, and leaves nothing of its own and nothing of
// the first's removed; the first then runs on. Before, the second failed
// with a raw `rename .../pods/.new-... file exists`.
func TestE2ETwoRunsOfOnePodAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("faults/twice.yaml")
	pauseFile := filepath.Join(t.TempDir(), "paused")
	first := e.startPodrun([]string{"-f", m}, "", runner.EnvTestPauseAt+"="+runner.PauseCgroup, runner.EnvTestPauseFile+"="+pauseFile)
	waitForFile(t, first, pauseFile, runner.PauseCgroup+"\n", 60*time.Second)
	dirs := podDirs(t, e.root)
	if len(dirs) != 1 {
		t.Fatalf("the first run, paused: pod dirs %v, want its one", dirs)
	}

	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	want := fmt.Sprintf("pod default/e2e-twice (uid %s) is already running (by podrun pid %d); stop it with `podrun down default/e2e-twice`", dirs[0], first.cmd.Process.Pid)
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "rename") {
		t.Errorf("the second run's error, want %q\n%s", want, r)
	}
	if got := podDirs(t, e.root); len(got) != 1 || got[0] != dirs[0] {
		t.Errorf("after the second run: pod dirs %v, want the first run's %v alone", got, dirs)
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", dirs[0], "podrun-owner.json")); err != nil {
		t.Errorf("the second run touched the first's data dir: %v", err)
	}

	first.signal(syscall.SIGINT)
	expectCode(t, first.result(60*time.Second), 130)
	// The pod again, now that nothing runs it.
	expectCode(t, e.runPodrun([]string{"-q", "-f", m}, ""), 0)
}

// TestE2EDownAllSweepsAKilledRunWithoutSandbox: a podrun killed while its
// pod ran, whose sandbox the runtime then lost (its state wiped: here the
// test removes it through CRI), leaves the pod's data dir and cgroup with
// nothing on the runtime to find them by; `podrun down --all` of the root
// dir takes them, saying so.
func TestE2EDownAllSweepsAKilledRunWithoutSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-sweep-" + randomSuffix(t)
	m := fromTemplate(t, "faults/stage.yaml", "NAME", name, "MARK_DIR", t.TempDir(), "IMAGE", "busybox:1.36",
		"INIT_SCRIPT", "true", "MAIN_SCRIPT", "echo main-running; exec sleep 3600", "PROBE_SCRIPT", "true")
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStdout("main-running", 60*time.Second)
	// The sandbox goes while podrun is stopped (SIGSTOP), not after it is
	// killed: a dead podrun's sandbox is any run's to reclaim, and another
	// test's run would race this test's removal (containerd then fails
	// one of two concurrent RemovePodSandbox calls) or take the data dir
	// with it. Once the sandbox is gone, nothing names this root dir but
	// the test.
	p.signal(syscall.SIGSTOP)
	sbs := sandboxesOf(t, name)
	if len(sbs) != 1 {
		t.Fatalf("%d sandboxes of %s, want 1", len(sbs), name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scaled(60*time.Second))
	defer cancel()
	if err := rtClient.StopPodSandbox(ctx, sbs[0].Id); err != nil {
		t.Fatal(err)
	}
	if err := rtClient.RemovePodSandbox(ctx, sbs[0].Id); err != nil {
		t.Fatal(err)
	}
	// A process the runtime lost below the pod's cgroup, as containerd 2.4
	// loses a sandbox's `runc init` (in the sandbox's own cgroup) when its
	// client dies during RunPodSandbox: in a child cgroup of the pod
	// cgroup in every hierarchy, with no sandbox of the pod on the runtime.
	// The kubelet kills such a process before it removes the cgroup; so
	// must podrun.
	stray := strayInPodCgroup(t, e, sbs[0].Metadata.Uid)
	p.signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code != -1 {
		t.Fatalf("podrun exit %d after SIGKILL", code)
	}
	left := append(e.leftovers(e.root), e.nodeLeftovers()...)
	if len(left) == 0 {
		t.Fatal("the killed run left nothing without its sandbox: the test shows nothing")
	}
	t.Logf("without its sandbox, the killed run left:\n  %s", strings.Join(left, "\n  "))

	r := e.runPodrun([]string{"down", "--all"}, "")
	expectCode(t, r, 0)
	if want := "pod/" + name + ": removing the data dir, log dir and cgroup that podrun pid "; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	stray.expectKilled(t)
	expectNothingLeft(t, e, "podrun down --all after a killed run lost its sandbox")
}

// strayProcess is a process a test put in a pod's cgroup.
type strayProcess struct {
	cmd    *exec.Cmd
	exited chan error
}

// strayInPodCgroup starts a process and moves it into a child cgroup
// ("stray") of the pod cgroup of the pod uid, in every hierarchy the pod
// cgroup is in (on cgroup v2 a cgroup that passes controllers to its
// children holds no process itself, so the child); it is killed after
// the test if still there.
func strayInPodCgroup(t *testing.T, e *env, uid string) *strayProcess {
	t.Helper()
	var dirs []string
	for _, pod := range podCgroupsOf(e, uid) {
		dir := filepath.Join(pod, "stray")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dir) })
		// A v1 cpuset cgroup takes a process once it has cpus and mems.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(pod, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		t.Fatalf("no pod cgroup of pod %s (%s)", uid, shape)
	}
	s := &strayProcess{cmd: exec.Command("sleep", "3600"), exited: make(chan error, 1)}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { s.exited <- s.cmd.Wait(); close(reaped) }()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-reaped })
	for _, dir := range dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(s.cmd.Process.Pid)), 0o644); err != nil {
			t.Fatalf("moving a process into cgroup %s: %v", dir, err)
		}
	}
	t.Logf("process %d put in %s", s.cmd.Process.Pid, strings.Join(dirs, ", "))
	return s
}

// expectKilled fails the test unless the process was killed (SIGKILL).
func (s *strayProcess) expectKilled(t *testing.T) {
	t.Helper()
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the process left in the pod cgroup ended with %v, want SIGKILL", err)
		}
	case <-time.After(scaled(5 * time.Second)):
		t.Errorf("the process left in the pod cgroup (pid %d) still runs", s.cmd.Process.Pid)
	}
}
