//go:build e2e

// End-to-end tests of the podrun binary against the real testbed
// (hack/testbed.sh): a containerd with the CRI plugin, a CNI bridge and local
// registries. Run them with `make e2e`, or:
//
//	make build && set -a && eval "$(bash hack/testbed.sh env)" && set +a &&
//	go test -count=1 -tags e2e -run E2E -v ./
//
// TestMain builds the binary once and refuses to run (exit 1, never a skip)
// when CONTAINER_RUNTIME_ENDPOINT is unset or the runtime does not answer:
// the end-to-end tier must not pass silently without a testbed.
//
// Every test runs podrun with its own --root-dir and, after the test, checks
// that the runtime holds no sandbox or container of that root dir or of a
// podrun process the test started, and that the root dir holds no pod data
// dir and no pod log dir (see newEnv).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
)

var (
	podrunBin   string      // the binary under test, built by TestMain
	rtClient    *cri.Client // the testbed's runtime, for the cleanliness checks
	rtEndpoint  string      // CONTAINER_RUNTIME_ENDPOINT
	manifestDir string      // absolute testdata/e2e
)

// defaultRunTimeout bounds every podrun invocation unless a test says otherwise.
const defaultRunTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	os.Exit(e2eMain(m))
}

func e2eMain(m *testing.M) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: "+format+"\n", args...)
		return 1
	}
	rtEndpoint = os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
	if rtEndpoint == "" {
		return fail("CONTAINER_RUNTIME_ENDPOINT is not set: the e2e tests need the testbed.\n" +
			"  bash hack/testbed.sh up && set -a && eval \"$(bash hack/testbed.sh env)\" && set +a")
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	manifestDir = filepath.Join(wd, "testdata", "e2e")

	tmp, err := os.MkdirTemp("", "podrun-e2e-bin-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	podrunBin = filepath.Join(tmp, "podrun")
	build := exec.Command("go", "build", "-o", podrunBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fail("building podrun: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rtClient, err = cri.Dial(ctx, rtEndpoint)
	if err != nil {
		return fail("the testbed's runtime at %s does not answer (bash hack/testbed.sh up?): %v", rtEndpoint, err)
	}
	defer rtClient.Close()
	if err := rtClient.CheckReady(ctx, true); err != nil {
		return fail("the testbed's runtime at %s is not ready: %v", rtEndpoint, err)
	}
	return m.Run()
}

// ---------------------------------------------------------------- harness --

// env is one test's podrun environment: its root dir and the podrun
// processes it started.
type env struct {
	t    *testing.T
	root string

	mu   sync.Mutex
	pids map[int]bool
}

// newEnv makes a root dir for the test (not yet created: podrun creates
// it) and registers the cleanliness check, which runs after every cleanup
// the test registers later (a `podrun down` of its detached pods, say).
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, root: filepath.Join(t.TempDir(), "root"), pids: map[int]bool{}}
	t.Cleanup(func() { e.checkClean(e.root) })
	return e
}

// otherRoot makes a second root dir for the test, checked clean as well.
func (e *env) otherRoot() string {
	root := filepath.Join(e.t.TempDir(), "root2")
	e.t.Cleanup(func() { e.checkClean(root) })
	return root
}

// checkClean fails the test when the runtime holds a sandbox or container
// of root or of a podrun the test ran, or root holds a pod or log dir.
func (e *env) checkClean(root string) {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.mu.Lock()
	pids := map[string]bool{}
	for pid := range e.pids {
		pids[strconv.Itoa(pid)] = true
	}
	e.mu.Unlock()

	managed := map[string]string{runner.LabelManaged: "true"}
	sbs, err := rtClient.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: managed})
	if err != nil {
		t.Errorf("cleanliness check: listing sandboxes: %v", err)
		return
	}
	left := map[string]bool{}
	for _, sb := range sbs {
		if sb.Annotations[runner.AnnotationRootDir] == root || pids[sb.Labels[runner.LabelPID]] {
			left[sb.Id] = true
			t.Errorf("left behind in the runtime: sandbox %s of pod %s/%s (state %s, podrun pid %s, root %s)",
				short(sb.Id), sb.Labels["io.kubernetes.pod.namespace"], sb.Labels["io.kubernetes.pod.name"],
				sb.State, sb.Labels[runner.LabelPID], sb.Annotations[runner.AnnotationRootDir])
		}
	}
	ctrs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: managed})
	if err != nil {
		t.Errorf("cleanliness check: listing containers: %v", err)
		return
	}
	for _, c := range ctrs {
		if left[c.PodSandboxId] || pids[c.Labels[runner.LabelPID]] {
			t.Errorf("left behind in the runtime: container %s %q of pod %s (state %s, podrun pid %s)",
				short(c.Id), c.GetMetadata().GetName(), c.Labels["io.kubernetes.pod.name"], c.State, c.Labels[runner.LabelPID])
		}
	}
	for _, sub := range []string{"pods", "logs"} {
		entries, err := os.ReadDir(filepath.Join(root, sub))
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("cleanliness check: %v", err)
		}
		for _, en := range entries {
			t.Errorf("left behind in the root dir: %s", filepath.Join(root, sub, en.Name()))
		}
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running podrun.
type proc struct {
	t       *testing.T
	args    []string
	cmd     *exec.Cmd
	stdout  syncBuffer
	stderr  syncBuffer
	started time.Time
	done    chan struct{}
	code    int
	ended   time.Time
}

// withRoot puts --root-dir ROOT into args: after the subcommand for run, ps
// and down, in front otherwise (the root command's flags).
func withRoot(root string, args []string) []string {
	if len(args) > 0 && (args[0] == "run" || args[0] == "ps" || args[0] == "down") {
		return append([]string{args[0], "--root-dir", root}, args[1:]...)
	}
	return append([]string{"--root-dir", root}, args...)
}

// commandEnv is this process's environment with changes: "NAME=value" sets,
// a bare "NAME" unsets.
func commandEnv(changes []string) []string {
	out := []string{}
	drop := map[string]bool{}
	for _, c := range changes {
		name, _, _ := strings.Cut(c, "=")
		drop[name] = true
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			out = append(out, kv)
		}
	}
	for _, c := range changes {
		if strings.Contains(c, "=") {
			out = append(out, c)
		}
	}
	return out
}

// startPodrunRaw starts podrun with exactly args.
func (e *env) startPodrunRaw(args []string, stdin string, envChanges ...string) *proc {
	e.t.Helper()
	p := &proc{t: e.t, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(podrunBin, args...)
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	p.cmd.Env = commandEnv(envChanges)
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		e.t.Fatalf("starting podrun %v: %v", args, err)
	}
	e.mu.Lock()
	e.pids[p.cmd.Process.Pid] = true
	e.mu.Unlock()
	go func() {
		p.cmd.Wait()
		p.ended = time.Now()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	// Never leave a podrun running after the test.
	e.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// startPodrun starts podrun with this test's --root-dir.
func (e *env) startPodrun(args []string, stdin string, envChanges ...string) *proc {
	e.t.Helper()
	return e.startPodrunRaw(withRoot(e.root, args), stdin, envChanges...)
}

// wait waits for podrun to end, killing it (and failing the test) after
// timeout, and returns its exit code (-1 when killed by a signal).
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("podrun %s did not end within %s; killed it.\nstdout:\n%s\nstderr:\n%s",
			strings.Join(p.args, " "), timeout, p.stdout.String(), p.stderr.String())
	}
	return p.code
}

// waitStderr waits until podrun's stderr contains s; it fails the test
// (fatally) if podrun ends first or timeout passes.
func (p *proc) waitStderr(s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.stderr.String(), s) {
		select {
		case <-p.done:
			if strings.Contains(p.stderr.String(), s) {
				return
			}
			p.t.Fatalf("podrun ended (exit %d) before printing %q.\nstdout:\n%s\nstderr:\n%s",
				p.code, s, p.stdout.String(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("podrun did not print %q within %s.\nstderr:\n%s", s, timeout, p.stderr.String())
		}
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signalling podrun: %v", err)
	}
}

// result is a finished podrun.
type result struct {
	args           []string
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("podrun %s\nexit %d after %s\n--- stdout:\n%s\n--- stderr:\n%s",
		strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

func (p *proc) result(timeout time.Duration) result {
	p.t.Helper()
	code := p.wait(timeout)
	return result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String(), code: code, elapsed: p.ended.Sub(p.started)}
}

// runPodrun runs podrun with this test's --root-dir, stdin and environment
// changes ("NAME=value" sets, "NAME" unsets) and returns what it printed and
// its exit code.
func (e *env) runPodrun(args []string, stdin string, envChanges ...string) result {
	e.t.Helper()
	return e.startPodrun(args, stdin, envChanges...).result(defaultRunTimeout)
}

// runPodrunRaw runs podrun with exactly args (no --root-dir added).
func (e *env) runPodrunRaw(args []string, stdin string, envChanges ...string) result {
	e.t.Helper()
	return e.startPodrunRaw(args, stdin, envChanges...).result(defaultRunTimeout)
}

// runPodrun is the plain form for tests that need no pod state: podrun with
// args as given, in a fresh env (root dir and cleanliness check included).
func runPodrun(t *testing.T, args []string, stdin string, envChanges ...string) (stdout, stderr string, exitCode int) {
	t.Helper()
	r := newEnv(t).runPodrun(args, stdin, envChanges...)
	return r.stdout, r.stderr, r.code
}

// expectCode fails the test unless podrun exited with want.
func expectCode(t *testing.T, r result, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit code %d, want %d\n%s", r.code, want, r)
	}
}

// manifest writes content to a file in a temp dir and returns its path.
func manifest(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// testdata is the absolute path of testdata/e2e/NAME.
func testdata(name string) string { return filepath.Join(manifestDir, name) }

// podManifest is a one-container pod.
func podManifest(name, restartPolicy, image string, grace int, command string) string {
	s := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: %d
  containers:
  - name: c
    image: %s
`, name, restartPolicy, grace, image)
	if command != "" {
		b, _ := json.Marshal([]string{"sh", "-c", command})
		s += "    command: " + string(b) + "\n"
	}
	return s
}

// idlePod is a pod that runs until SIGTERM (the pause stand-in exits 0 on it).
func idlePod(name, restartPolicy string) string {
	return podManifest(name, restartPolicy, "registry.k8s.io/pause:3.10", 3, "")
}

// parsePod decodes podrun's -o json/yaml output of one pod.
func parsePod(t *testing.T, out string) *v1.Pod {
	t.Helper()
	var p v1.Pod
	if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
		t.Fatalf("stdout is not one v1.Pod: %v\n%s", err, out)
	}
	if p.Kind != "Pod" || p.APIVersion != "v1" {
		t.Errorf("document is %s %s, want v1 Pod", p.APIVersion, p.Kind)
	}
	return &p
}

// parseList decodes podrun's -o json/yaml output of several pods.
func parseList(t *testing.T, out string) []*v1.Pod {
	t.Helper()
	var l v1.List
	if err := yaml.UnmarshalStrict([]byte(out), &l); err != nil {
		t.Fatalf("stdout is not one v1.List: %v\n%s", err, out)
	}
	if l.Kind != "List" || l.APIVersion != "v1" {
		t.Errorf("document is %s %s, want v1 List", l.APIVersion, l.Kind)
	}
	var pods []*v1.Pod
	for i, item := range l.Items {
		var p v1.Pod
		if err := yaml.UnmarshalStrict(item.Raw, &p); err != nil {
			t.Fatalf("item %d is not a v1.Pod: %v", i, err)
		}
		if p.Kind != "Pod" {
			t.Errorf("item %d is a %q, want Pod", i, p.Kind)
		}
		pods = append(pods, &p)
	}
	return pods
}

func podNames(pods []*v1.Pod) []string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	return names
}

// lines splits output into lines, dropping the last empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// sandboxesOf lists podrun sandboxes whose pod has name (any namespace).
func sandboxesOf(t *testing.T, name string) []*runtimeapi.PodSandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sbs, err := rtClient.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{
		runner.LabelManaged: "true", "io.kubernetes.pod.name": name}})
	if err != nil {
		t.Fatalf("listing sandboxes: %v", err)
	}
	return sbs
}

// podDirs lists <root>/pods.
func podDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "pods"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		out = append(out, en.Name())
	}
	return out
}

// expectNothingCreated checks that podrun, refusing its input, did not
// create the root dir, nor any sandbox of it.
func expectNothingCreated(t *testing.T, e *env) {
	t.Helper()
	var names []string
	entries, _ := os.ReadDir(e.root)
	for _, en := range entries {
		// The remembered CNI validation (cni/cache.go) is node state,
		// written by the network check that precedes every run.
		if en.Name() != "cni-validated" {
			names = append(names, en.Name())
		}
	}
	if len(names) > 0 {
		t.Errorf("root dir %s holds %v after refused input; want nothing created", e.root, names)
	}
	// Sandboxes are checked by the cleanliness check (by root dir and pid).
}

// ------------------------------------------------------- 1: exit, streams --

func TestE2EExitCodeFailingContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("exit7.yaml")}, "")
	expectCode(t, r, 7)
	if r.stdout != "about to fail\n" {
		t.Errorf("stdout %q, want the container's one line without prefix", r.stdout)
	}
}

func TestE2EExitCodeSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("exit0.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "all good\n" {
		t.Errorf("stdout %q, want %q", r.stdout, "all good\n")
	}
}

func TestE2EExitCodeInitContainerFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("init-fail.yaml")}, "")
	expectCode(t, r, 5)
	if strings.Contains(r.stdout, "main-must-not-run") {
		t.Errorf("the regular container ran after an init container failed:\n%s", r)
	}
	for _, want := range []string{"[pod/e2e-init-fail/init-ok] init-ok ran\n", "[pod/e2e-init-fail/init-bad] init-bad ran\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r)
		}
	}
}

func TestE2EExitCodeFirstFailedInSpecOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("first-failed.yaml")}, "")
	// "late" (spec order 1) exits 3 a second after "early" (spec order 2) exits 4.
	expectCode(t, r, 3)
}

func TestE2EStreamsCompleteAndSeparate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("streams.yaml")}, "")
	expectCode(t, r, 0)
	check := func(stream, got, word string) {
		t.Helper()
		ls := lines(got)
		bad := 0
		for i := 0; i < 2000; i++ {
			want := fmt.Sprintf("%s %d", word, i+1)
			if i >= len(ls) || ls[i] != want {
				got := "<missing>"
				if i < len(ls) {
					got = strconv.Quote(ls[i])
				}
				t.Errorf("%s line %d: got %s, want %q", stream, i+1, got, want)
				if bad++; bad > 5 {
					break
				}
			}
		}
		if len(ls) != 2000 {
			t.Errorf("%s has %d lines, want exactly 2000 (%s 1..2000, no prefix, nothing else)", stream, len(ls), word)
		}
	}
	check("stdout", r.stdout, "out")
	check("stderr", r.stderr, "err")
}

func TestE2EPrefixOnlyWithSeveralContainers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("prefix.yaml")}, "")
	expectCode(t, r, 0)
	for _, c := range []struct{ stream, got, want string }{
		{"stdout", r.stdout, "[pod/e2e-prefix/one] hello from one\n"},
		{"stdout", r.stdout, "[pod/e2e-prefix/two] hello from two\n"},
		{"stderr", r.stderr, "[pod/e2e-prefix/one] warn from one\n"},
		{"stderr", r.stderr, "[pod/e2e-prefix/two] warn from two\n"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s lacks %q\n%s", c.stream, c.want, r)
		}
	}
	if len(lines(r.stdout)) != 2 || len(lines(r.stderr)) != 2 {
		t.Errorf("want 2 lines on each stream\n%s", r)
	}

	// One container: no prefix (checked on exit0.yaml's twin, inline so that
	// it does not collide with TestE2EExitCodeSuccess).
	r = e.runPodrun([]string{"-q", "-f", manifest(t, "one.yaml", podManifest("e2e-prefix-one", "Never", "busybox:1.28", 2, "echo plain; echo plainerr >&2"))}, "")
	expectCode(t, r, 0)
	if r.stdout != "plain\n" || r.stderr != "plainerr\n" {
		t.Errorf("one container: want unprefixed lines\n%s", r)
	}
}

// ------------------------------------------------------------ 2: sources --

func TestE2ESourceFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", manifest(t, "pod.yaml", podManifest("e2e-src-file", "Never", "busybox:1.28", 2, "echo from file"))}, "")
	expectCode(t, r, 0)
	if r.stdout != "from file\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func TestE2ESourceDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("dir")}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	// Files 1.yaml, 10.yaml, 2.yaml in sorted order; .hidden.yaml and sub/ skipped.
	want := []string{"e2e-dir-one", "e2e-dir-ten", "e2e-dir-two"}
	if got := podNames(pods); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pods %v, want %v (sorted by file name, dotfiles and subdirs skipped)", got, want)
	}
	for _, p := range pods {
		if p.Status.Phase != v1.PodSucceeded {
			t.Errorf("pod %s phase %q, want Succeeded", p.Name, p.Status.Phase)
		}
	}
	if strings.Contains(r.stderr, "must not run") || strings.Contains(r.stderr, "e2e-dir-hidden") || strings.Contains(r.stderr, "e2e-dir-nested") {
		t.Errorf("a dotfile or subdir pod ran\n%s", r)
	}
}

func TestE2ESourceStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", "-"}, podManifest("e2e-src-stdin", "Never", "busybox:1.28", 2, "echo from stdin"))
	expectCode(t, r, 0)
	if r.stdout != "from stdin\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func TestE2ESourceURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := podManifest("e2e-src-url", "Never", "busybox:1.28", 2, "echo from url")
	var mu sync.Mutex
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.Header.Get("X-Token"))
		mu.Unlock()
		switch {
		case r.URL.Path != "/pod.yaml":
			http.NotFound(w, r)
		case r.Header.Get("X-Token") != "abc":
			http.Error(w, "forbidden", http.StatusForbidden)
		default:
			w.Write([]byte(body))
		}
	}))
	defer srv.Close()

	// Refusals first, while nothing may exist. Without the header the
	// server answers 403: anything but 200 is an error.
	r := e.runPodrun([]string{"-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, srv.URL+"/pod.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// 404.
	url404 := srv.URL + "/missing.yaml"
	r = e.runPodrun([]string{"-f", url404}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, url404) || !strings.Contains(r.stderr, "404") {
		t.Errorf("the error does not name the URL and the status 404\n%s", r)
	}
	expectNothingCreated(t, e)

	r = e.runPodrun([]string{"-q", "--manifest-url-header", "X-Token:abc", "-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 0)
	if r.stdout != "from url\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
	mu.Lock()
	if len(tokens) == 0 || tokens[len(tokens)-1] != "abc" {
		t.Errorf("server saw X-Token %q, want %q last", tokens, "abc")
	}
	mu.Unlock()
}

func TestE2ESourceSeveralMultiDocAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("multi.yaml"), "-f", testdata("list.yaml")}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	want := []string{"e2e-multi-a", "e2e-multi-b", "e2e-list-a", "e2e-list-b"}
	if got := podNames(pods); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pods %v, want %v", got, want)
	}
	for _, w := range []string{"[pod/e2e-multi-a/c] multi a", "[pod/e2e-multi-b/c] multi b", "[pod/e2e-list-a/c] list a", "[pod/e2e-list-b/c] list b"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q (container output goes to stderr with -o json)\n%s", w, r)
		}
	}
}

// ---------------------------------------------------------- 3: bad input --

func TestE2EBadInputUnknownField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("bad-field.yaml")}, "")
	expectCode(t, r, 125)
	want := `bad-field.yaml: document 2 (Pod "web"): spec.containers[0].comand: unknown field`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	if strings.Contains(r.stdout+r.stderr, "must not run") {
		t.Errorf("a container ran\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputUnsupportedKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("bad-kind.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "Deployment") || !strings.Contains(r.stderr, "bad-kind.yaml") {
		t.Errorf("the error does not name the file and the kind Deployment\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputDuplicatePod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("dup.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "e2e-dup") {
		t.Errorf("the error does not name the pod\n%s", r)
	}
	// The same pod twice through two -f.
	r = e.runPodrun([]string{"-f", testdata("exit0.yaml"), "-f", testdata("exit0.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "e2e-exit0") {
		t.Errorf("the error does not name the pod\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputMissingFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	missing := testdata("does-not-exist.yaml")
	r := e.runPodrun([]string{"-f", missing}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "does-not-exist.yaml") {
		t.Errorf("the error does not name the file\n%s", r)
	}
	expectNothingCreated(t, e)
}

// ------------------------------------------------------ 4: runtime dial --

func TestE2ERuntimeEndpointFlagAndEnv(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-endpoint", "Never", "busybox:1.28", 2, "echo hi"))
	// -r with the variable unset.
	r := e.runPodrun([]string{"-q", "-r", rtEndpoint, "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 0)
	// --runtime-endpoint, bare path form.
	r = e.runPodrun([]string{"-q", "--runtime-endpoint", strings.TrimPrefix(rtEndpoint, "unix://"), "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 0)
	// The variable alone.
	r = e.runPodrun([]string{"-q", "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT="+rtEndpoint)
	expectCode(t, r, 0)
	if r.stdout != "hi\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
	// The flag wins over the variable.
	bad := "unix://" + filepath.Join(t.TempDir(), "nothing.sock")
	r = e.runPodrun([]string{"-q", "-r", rtEndpoint, "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT="+bad)
	expectCode(t, r, 0)
}

func TestE2ERuntimeEndpointBad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-endpoint-bad", "Never", "busybox:1.28", 2, "echo must not run"))
	sock := filepath.Join(t.TempDir(), "nothing.sock")
	r := e.runPodrun([]string{"-r", "unix://" + sock, "-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, sock) {
		t.Errorf("the error does not name the socket %s\n%s", sock, r)
	}
	// The same through the variable.
	r = e.runPodrun([]string{"-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT=unix://"+sock)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, sock) {
		t.Errorf("the error does not name the socket %s\n%s", sock, r)
	}
	expectNothingCreated(t, e)
}

func TestE2ERuntimeEndpointDefaultsNoneAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The testbed never uses the default sockets; if a runtime answers on one
	// of them this test cannot check the error.
	for _, ep := range cri.DefaultEndpoints {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := cri.Dial(ctx, ep)
		cancel()
		if err == nil {
			c.Close()
			t.Fatalf("a runtime answers on the default endpoint %s: this test needs none to answer", ep)
		}
	}
	m := manifest(t, "pod.yaml", podManifest("e2e-endpoint-none", "Never", "busybox:1.28", 2, "echo must not run"))
	r := e.runPodrun([]string{"-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 125)
	for _, ep := range cri.DefaultEndpoints {
		if !strings.Contains(r.stderr, strings.TrimPrefix(ep, "unix://")) {
			t.Errorf("the error does not name the socket %s\n%s", ep, r)
		}
	}
	expectNothingCreated(t, e)
}

// ---------------------------------------------------------------- 5: wait --

func TestE2EWaitComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-wait-complete", "Never", "busybox:1.28", 2, "sleep 1; echo done"))
	for _, mode := range []string{"complete", "auto"} {
		r := e.runPodrun([]string{"-o", "json", "--wait", mode, "-f", m}, "")
		expectCode(t, r, 0)
		if !strings.Contains(r.stderr, "done\n") {
			t.Errorf("--wait %s returned before the container finished\n%s", mode, r)
		}
		if p := parsePod(t, r.stdout); p.Status.Phase != v1.PodSucceeded {
			t.Errorf("--wait %s: phase %q, want Succeeded", mode, p.Status.Phase)
		}
	}
}

func TestE2EWaitReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-wait-ready
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 3
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
`)
	for _, mode := range []string{"ready", "auto"} {
		r := e.runPodrun([]string{"-o", "json", "--wait", mode, "-f", m}, "")
		expectCode(t, r, 0)
		p := parsePod(t, r.stdout)
		if p.Status.Phase != v1.PodRunning {
			t.Errorf("--wait %s: phase %q, want Running (as observed when the wait ended)", mode, p.Status.Phase)
		}
		ready := false
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			t.Errorf("--wait %s: no Ready=True condition: %+v", mode, p.Status.Conditions)
		}
		if r.elapsed > 15*time.Second {
			t.Errorf("--wait %s took %s", mode, r.elapsed)
		}
	}
}

func TestE2EWaitNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Would run 60 s; exits 0 on SIGTERM so that the teardown is quick.
	m := manifest(t, "pod.yaml", podManifest("e2e-wait-none", "Never", "busybox:1.28", 3, "trap 'exit 0' TERM; echo started; sleep 60 & wait"))
	r := e.runPodrun([]string{"-o", "json", "--wait", "none", "-f", m}, "")
	expectCode(t, r, 0)
	if r.elapsed > 15*time.Second {
		t.Errorf("--wait none took %s: it should return once started", r.elapsed)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
		t.Errorf("phase %q, want Running (started, not finished)", p.Status.Phase)
	}
}

// ------------------------------------------------------------- 6: timeout --

func TestE2ETimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", idlePod("e2e-timeout", "Never"))
	r := e.runPodrun([]string{"--timeout", "2s", "-o", "json", "-f", m}, "")
	expectCode(t, r, 124)
	if r.elapsed < 2*time.Second || r.elapsed > 20*time.Second {
		t.Errorf("run took %s; want a little over 2s", r.elapsed)
	}
	p := parsePod(t, r.stdout)
	if p.Name != "e2e-timeout" {
		t.Errorf("-o json after a timeout printed pod %q", p.Name)
	}
}

// -------------------------------------------------------------- 7: output --

func TestE2EOutputJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-out-json
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: ok
    image: busybox:1.28
    command: ["sh", "-c", "echo hello-stdout"]
  - name: bad
    image: busybox:1.28
    command: ["sh", "-c", "sleep 0.5; echo bad-stderr >&2; exit 3"]
`)
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "")
	expectCode(t, r, 3)
	if !json.Valid([]byte(r.stdout)) {
		t.Fatalf("stdout is not one JSON document\n%s", r)
	}
	p := parsePod(t, r.stdout)
	st := p.Status
	if p.Name != "e2e-out-json" {
		t.Errorf("name %q", p.Name)
	}
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %q, want Failed", st.Phase)
	}
	if len(st.Conditions) == 0 {
		t.Errorf("no conditions")
	}
	if !onPodNetwork(t, st.PodIP) {
		t.Errorf("podIP %q, want one in %s", st.PodIP, os.Getenv("PODRUN_TESTBED_POD_SUBNET"))
	}
	if st.StartTime == nil || st.StartTime.IsZero() {
		t.Errorf("no startTime")
	}
	want := map[string]struct {
		code   int32
		reason string
	}{"ok": {0, "Completed"}, "bad": {3, "Error"}}
	if len(st.ContainerStatuses) != 2 {
		t.Fatalf("%d containerStatuses, want 2: %+v", len(st.ContainerStatuses), st.ContainerStatuses)
	}
	for _, cs := range st.ContainerStatuses {
		w, ok := want[cs.Name]
		if !ok {
			t.Errorf("unexpected container status %q", cs.Name)
			continue
		}
		term := cs.State.Terminated
		if term == nil {
			t.Errorf("container %s: state %+v, want terminated", cs.Name, cs.State)
			continue
		}
		if term.ExitCode != w.code || term.Reason != w.reason {
			t.Errorf("container %s: exit %d reason %q, want %d %q", cs.Name, term.ExitCode, term.Reason, w.code, w.reason)
		}
		if cs.RestartCount != 0 {
			t.Errorf("container %s: restartCount %d", cs.Name, cs.RestartCount)
		}
		if cs.ContainerID == "" || cs.ImageID == "" {
			t.Errorf("container %s: containerID %q imageID %q, want both set", cs.Name, cs.ContainerID, cs.ImageID)
		}
		if term.StartedAt.IsZero() || term.FinishedAt.IsZero() {
			t.Errorf("container %s: startedAt/finishedAt not set", cs.Name)
		}
	}
	if !strings.Contains(r.stderr, "[pod/e2e-out-json/ok] hello-stdout\n") || !strings.Contains(r.stderr, "[pod/e2e-out-json/bad] bad-stderr\n") {
		t.Errorf("container logs did not go to stderr\n%s", r)
	}
}

func TestE2EOutputYAMLList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pods.yaml", podManifest("e2e-out-y1", "Never", "busybox:1.28", 2, "echo y1")+"---\n"+
		podManifest("e2e-out-y2", "Never", "busybox:1.28", 2, "echo y2"))
	r := e.runPodrun([]string{"-o", "yaml", "-f", m}, "")
	expectCode(t, r, 0)
	if strings.HasPrefix(strings.TrimSpace(r.stdout), "{") {
		t.Errorf("-o yaml printed JSON\n%s", r)
	}
	pods := parseList(t, r.stdout)
	if got := podNames(pods); strings.Join(got, ",") != "e2e-out-y1,e2e-out-y2" {
		t.Fatalf("pods %v", got)
	}
	for _, p := range pods {
		if p.Status.Phase != v1.PodSucceeded || len(p.Status.ContainerStatuses) != 1 {
			t.Errorf("pod %s: phase %q, %d container statuses", p.Name, p.Status.Phase, len(p.Status.ContainerStatuses))
			continue
		}
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
			t.Errorf("pod %s: container state %+v, want terminated 0 Completed", p.Name, p.Status.ContainerStatuses[0].State)
		}
	}
	for _, w := range []string{"[pod/e2e-out-y1/c] y1\n", "[pod/e2e-out-y2/c] y2\n"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q\n%s", w, r)
		}
	}
}

// ---------------------------------------------------------- 8: detach --

// psInfo is `podrun ps -o json`'s entry.
type psInfo struct {
	Name     string `json:"name"`
	UID      string `json:"uid"`
	PID      int    `json:"pid"`
	Detached bool   `json:"detached"`
	Orphaned bool   `json:"orphaned"`
	State    string `json:"state"`
}

func (e *env) ps(t *testing.T) []psInfo {
	t.Helper()
	r := e.runPodrun([]string{"ps", "-o", "json"}, "")
	expectCode(t, r, 0)
	var out []psInfo
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("ps -o json: %v\n%s", err, r)
	}
	return out
}

func findPS(infos []psInfo, name string) *psInfo {
	for i := range infos {
		if infos[i].Name == name {
			return &infos[i]
		}
	}
	return nil
}

// downOnCleanup tears the named pods down after the test if still there.
func (e *env) downOnCleanup(names ...string) {
	e.t.Cleanup(func() {
		for _, n := range names {
			if len(sandboxesOf(e.t, n)) > 0 {
				r := e.runPodrun([]string{"down", n}, "")
				if r.code != 0 {
					e.t.Errorf("cleanup: podrun down %s:\n%s", n, r)
				}
			}
		}
	})
}

func TestE2EDetachPsDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-detach"
	m := manifest(t, "pod.yaml", idlePod(name, "Always"))
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-d", "-f", m}, "")
	expectCode(t, r, 0)
	if r.elapsed > 20*time.Second {
		t.Errorf("-d took %s", r.elapsed)
	}
	sbs := sandboxesOf(t, name)
	if len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("after -d: %d sandboxes of %s, want one ready", len(sbs), name)
	}
	uid := sbs[0].Labels["io.kubernetes.pod.uid"]
	if dirs := podDirs(t, e.root); len(dirs) != 1 || dirs[0] != uid {
		t.Errorf("pod dirs %v, want [%s]", dirs, uid)
	}

	// ps, table and json.
	r = e.runPodrun([]string{"ps"}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, name) || !strings.Contains(r.stdout, "detached") {
		t.Errorf("ps does not list %s as detached\n%s", name, r)
	}
	info := findPS(e.ps(t), name)
	if info == nil || !info.Detached || info.Orphaned || info.UID != uid {
		t.Errorf("ps -o json entry for %s: %+v, want detached, not orphaned, uid %s", name, info, uid)
	}

	// A second run of the same pod while it is detached.
	r = e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "already running") {
		t.Errorf("second run: stderr lacks \"already running\"\n%s", r)
	}
	if sbs := sandboxesOf(t, name); len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("the refused second run disturbed the detached pod: %d sandboxes", len(sbs))
	}

	// down NAME removes it fully.
	r = e.runPodrun([]string{"down", name}, "")
	expectCode(t, r, 0)
	if sbs := sandboxesOf(t, name); len(sbs) != 0 {
		t.Errorf("after down: %d sandboxes of %s remain", len(sbs), name)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 0 {
		t.Errorf("after down: pod dirs %v remain", dirs)
	}
	if info := findPS(e.ps(t), name); info != nil {
		t.Errorf("after down: ps still lists %+v", info)
	}
	// down of a pod that is not there.
	r = e.runPodrun([]string{"down", name}, "")
	if r.code == 0 {
		t.Errorf("down of a pod that is gone: exit 0, want an error\n%s", r)
	}
}

// TestE2EDownAll is not parallel: `down --all` tears down every podrun pod
// on the node, which would take other tests' pods with it.
func TestE2EDownAll(t *testing.T) {
	e := newEnv(t)
	names := []string{"e2e-downall-1", "e2e-downall-2"}
	e.downOnCleanup(names...)
	// Other podrun pods on the node (another session's run) would go too.
	deadline := time.Now().Add(30 * time.Second)
	for {
		infos, err := runner.List(context.Background(), rtClient)
		if err != nil {
			t.Fatal(err)
		}
		live := infos[:0]
		for _, in := range infos {
			if !in.Orphaned { // orphans are garbage: any run reclaims them
				live = append(live, in)
			}
		}
		if len(live) == 0 {
			break
		}
		infos = live
		if time.Now().After(deadline) {
			t.Skipf("not running `podrun down --all`: other podrun pods run on this node and would be torn down: %+v", infos)
		}
		time.Sleep(time.Second)
	}
	m := manifest(t, "pods.yaml", idlePod(names[0], "Always")+"---\n"+idlePod(names[1], "Always"))
	r := e.runPodrun([]string{"-d", "-q", "-f", m}, "")
	expectCode(t, r, 0)
	for _, n := range names {
		if len(sandboxesOf(t, n)) != 1 {
			t.Fatalf("after -d: no sandbox of %s", n)
		}
	}
	if dirs := podDirs(t, e.root); len(dirs) != 2 {
		t.Errorf("pod dirs %v, want 2", dirs)
	}
	r = e.runPodrun([]string{"down", "--all"}, "")
	expectCode(t, r, 0)
	for _, n := range names {
		if sbs := sandboxesOf(t, n); len(sbs) != 0 {
			t.Errorf("after down --all: %d sandboxes of %s remain", len(sbs), n)
		}
	}
	if len(e.ps(t)) != 0 {
		t.Errorf("after down --all, ps lists pods")
	}
}

// ------------------------------------------------------------- 9: signals --

func TestE2ESignalSIGINT(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", idlePod("e2e-sigint", "Never"))
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStderr("Started", 60*time.Second)
	if len(sandboxesOf(t, "e2e-sigint")) != 1 {
		t.Errorf("no sandbox while running")
	}
	p.signal(syscall.SIGINT)
	sent := time.Now()
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if d := time.Since(sent); d > 15*time.Second {
		t.Errorf("teardown after SIGINT took %s", d)
	}
}

func TestE2ESignalSIGTERM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", idlePod("e2e-sigterm", "Never"))
	p := e.startPodrun([]string{"-o", "json", "-f", m}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGTERM)
	r := p.result(60 * time.Second)
	expectCode(t, r, 143)
	// -o prints the final pod whatever the outcome, a signal included.
	if pod := parsePod(t, r.stdout); pod.Name != "e2e-sigterm" {
		t.Errorf("-o json after SIGTERM printed pod %q", pod.Name)
	}
}

func TestE2ESignalSecondSIGINTForces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Ignores SIGTERM; a 30 s grace period.
	m := manifest(t, "pod.yaml", podManifest("e2e-sigforce", "Never", "busybox:1.28", 30, "trap '' TERM; echo ignoring-term; while true; do sleep 1; done"))
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStdout("ignoring-term", 60*time.Second) // the trap is set
	p.signal(syscall.SIGINT)
	sent := time.Now()
	p.waitStderr("Killing", 10*time.Second) // teardown has begun and waits on the grace period
	time.Sleep(500 * time.Millisecond)
	select {
	case <-p.done:
		t.Fatalf("podrun ended before the second SIGINT (exit %d): the container should have held it for 30s\n%s", p.code, p.stderr.String())
	default:
	}
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if d := time.Since(sent); d > 8*time.Second {
		t.Errorf("the run ended %s after the first SIGINT; the second should have killed the container at once\n%s", d, r)
	}
}

// ------------------------------------------------------------ 10: reclaim --

// TestE2EReclaimAfterKill9 is not parallel: any podrun run reclaims the
// orphan, and the test wants its own run to do it.
func TestE2EReclaimAfterKill9(t *testing.T) {
	e := newEnv(t)
	orphan, keep := "e2e-orphan", "e2e-orphan-detached"
	e.downOnCleanup(keep)

	// A detached pod, which a later run must not reclaim.
	r := e.runPodrun([]string{"-d", "-q", "-f", manifest(t, "keep.yaml", idlePod(keep, "Always"))}, "")
	expectCode(t, r, 0)

	// A running podrun, killed with SIGKILL.
	p := e.startPodrun([]string{"-f", manifest(t, "orphan.yaml", idlePod(orphan, "Never"))}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGKILL)
	if code := p.wait(10 * time.Second); code != -1 {
		t.Fatalf("podrun exit %d after SIGKILL", code)
	}
	sbs := sandboxesOf(t, orphan)
	if len(sbs) != 1 {
		t.Fatalf("after kill -9: %d sandboxes of %s, want the orphan", len(sbs), orphan)
	}
	orphanUID := sbs[0].Labels["io.kubernetes.pod.uid"]
	if _, err := os.Stat(filepath.Join(e.root, "pods", orphanUID)); err != nil {
		t.Fatalf("after kill -9: the orphan's pod dir: %v", err)
	}
	if info := findPS(e.ps(t), orphan); info == nil || !info.Orphaned {
		t.Errorf("ps -o json entry for the orphan %+v, want orphaned", info)
	}

	// Another podrun, another pod, another root dir: it reclaims the orphan
	// (sandbox, containers, data dir under the first root) and leaves the
	// detached pod alone.
	other := e.otherRoot()
	r = e.runPodrunRaw(withRoot(other, []string{"-f", manifest(t, "reclaimer.yaml", podManifest("e2e-reclaimer", "Never", "busybox:1.28", 2, "echo reclaimer ran"))}), "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, orphan) {
		t.Errorf("the next run did not report reclaiming %s\n%s", orphan, r)
	}
	if sbs := sandboxesOf(t, orphan); len(sbs) != 0 {
		t.Errorf("after the next run: %d sandboxes of the orphan remain", len(sbs))
	}
	if _, err := os.Stat(filepath.Join(e.root, "pods", orphanUID)); !os.IsNotExist(err) {
		t.Errorf("after the next run: the orphan's pod dir remains (%v)", err)
	}
	if sbs := sandboxesOf(t, keep); len(sbs) != 1 || sbs[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("the detached pod was reclaimed: %d sandboxes", len(sbs))
	} else if _, err := os.Stat(filepath.Join(e.root, "pods", sbs[0].Labels["io.kubernetes.pod.uid"])); err != nil {
		t.Errorf("the detached pod's data dir was reclaimed: %v", err)
	}

	// The same with the next run in the same root dir.
	p = e.startPodrun([]string{"-f", manifest(t, "orphan2.yaml", idlePod(orphan+"-2", "Never"))}, "")
	p.waitStderr("Started", 60*time.Second)
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	r = e.runPodrun([]string{"-q", "-f", manifest(t, "reclaimer2.yaml", podManifest("e2e-reclaimer-2", "Never", "busybox:1.28", 2, "echo reclaimer ran"))}, "")
	expectCode(t, r, 0)
	if sbs := sandboxesOf(t, orphan+"-2"); len(sbs) != 0 {
		t.Errorf("after the next run: %d sandboxes of the orphan remain", len(sbs))
	}
	if len(sandboxesOf(t, keep)) != 1 {
		t.Errorf("the detached pod was reclaimed")
	}

	r = e.runPodrun([]string{"down", keep}, "")
	expectCode(t, r, 0)
}

// ----------------------------------------------------------------- 11: CLI --

func TestE2EVersion(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runPodrun(t, []string{"version"}, "")
	if code != 0 || !strings.HasPrefix(stdout, "podrun ") {
		t.Errorf("podrun version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestE2EHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrunRaw([]string{"--help"}, "")
	expectCode(t, r, 0)
	help := r.stdout + r.stderr
	for _, w := range []string{
		"--filename", "-f", "--runtime-endpoint", "-r", "CONTAINER_RUNTIME_ENDPOINT", "--root-dir",
		"--pod-logs-dir", "--wait", "auto", "complete", "ready", "none", "--timeout", "--detach", "-d",
		"--output", "-o", "json", "yaml", "--node-name", "--manifest-url-header", "--quiet", "-q",
		"version", "ps", "down", "124", "125", "130", "143",
	} {
		if !strings.Contains(help, w) {
			t.Errorf("--help does not mention %q", w)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

func TestE2ERunSubcommandSameAsRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-run-cmd", "Never", "busybox:1.28", 2, "echo same; echo same-err >&2; exit 7"))
	a := e.runPodrun([]string{"-q", "-f", m}, "")
	b := e.runPodrun([]string{"run", "-q", "-f", m}, "")
	expectCode(t, a, 7)
	expectCode(t, b, 7)
	if a.stdout != b.stdout || a.stderr != b.stderr {
		t.Errorf("podrun -f and podrun run -f differ:\n%s\n%s", a, b)
	}
}

func TestE2EQuiet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-quiet", "Never", "busybox:1.28", 2, "echo out"))
	loud := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, loud, 0)
	if !strings.Contains(loud.stderr, "pod/e2e-quiet: Started") {
		t.Errorf("without -q: no progress line on stderr\n%s", loud)
	}
	if loud.stdout != "out\n" {
		t.Errorf("progress went to stdout\n%s", loud)
	}
	quiet := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, quiet, 0)
	if quiet.stderr != "" || quiet.stdout != "out\n" {
		t.Errorf("with -q: stderr must be empty\n%s", quiet)
	}
	quiet = e.runPodrun([]string{"--quiet", "-f", m}, "")
	expectCode(t, quiet, 0)
	if quiet.stderr != "" {
		t.Errorf("with --quiet: stderr must be empty\n%s", quiet)
	}
}

// -------------------------------------------------------------- 12: images --

func TestE2EImageNeverPullAbsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-never-pull
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: podrun.invalid/e2e/absent:1
    imagePullPolicy: Never
`)
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImageNeverPull") {
		t.Errorf("stderr lacks ErrImageNeverPull\n%s", r)
	}
}

func TestE2EImageNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-no-image", "Never", "busybox:does-not-exist", 2, "echo must not run"))
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "busybox:does-not-exist") {
		t.Errorf("the error does not name the image\n%s", r)
	}
	if !strings.Contains(r.stderr, "ErrImagePull") {
		t.Errorf("stderr lacks ErrImagePull\n%s", r)
	}
}

// --------------------------------------------------------- 13: concurrency --

// TestE2EPodsRunConcurrently is not parallel so that other tests' load does
// not blur the timing.
func TestE2EPodsRunConcurrently(t *testing.T) {
	e := newEnv(t)
	m := manifest(t, "pods.yaml", podManifest("e2e-conc-a", "Never", "busybox:1.28", 2, "sleep 2")+"---\n"+
		podManifest("e2e-conc-b", "Never", "busybox:1.28", 2, "sleep 2"))
	// The overhead of one quick pod, for scale.
	base := e.runPodrun([]string{"-q", "-f", manifest(t, "base.yaml", podManifest("e2e-conc-base", "Never", "busybox:1.28", 2, "true"))}, "")
	expectCode(t, base, 0)
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "")
	expectCode(t, r, 0)
	t.Logf("one quick pod: %s; two pods sleeping 2s each: %s", base.elapsed, r.elapsed)
	// In sequence they would take 4s + twice the overhead.
	if limit := 2*time.Second + base.elapsed + time.Second; r.elapsed > limit {
		t.Errorf("two pods sleeping 2s each took %s (> %s): not run concurrently?", r.elapsed, limit)
	}
	pods := parseList(t, r.stdout)
	if len(pods) == 2 && len(pods[0].Status.ContainerStatuses) == 1 && len(pods[1].Status.ContainerStatuses) == 1 {
		a, b := pods[0].Status.ContainerStatuses[0].State.Terminated, pods[1].Status.ContainerStatuses[0].State.Terminated
		if a != nil && b != nil && (b.StartedAt.After(a.FinishedAt.Time) || a.StartedAt.After(b.FinishedAt.Time)) {
			t.Errorf("the containers did not overlap: a %s-%s, b %s-%s", a.StartedAt, a.FinishedAt, b.StartedAt, b.FinishedAt)
		}
	}
}

// ------------------------------------------------------------ 14: network --

func TestE2EHostNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-hostnet
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  hostNetwork: true
  containers:
  - name: c
    image: busybox:1.28
    command: ["sh", "-c", "cat /proc/net/dev"]
`)
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %q", p.Status.Phase)
	}
	if onPodNetwork(t, p.Status.PodIP) {
		t.Errorf("hostNetwork pod got a pod-network IP %s", p.Status.PodIP)
	}
	if p.Status.PodIP != "" && p.Status.HostIP != "" && p.Status.PodIP != p.Status.HostIP {
		t.Errorf("hostNetwork pod: podIP %s, want the host IP %s", p.Status.PodIP, p.Status.HostIP)
	}
	// The container sees the host's interfaces: every one of ours.
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(host))
	for sc.Scan() {
		name, _, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && !strings.Contains(name, "|") && !strings.HasPrefix(name, "veth") && !strings.Contains(r.stderr, " "+name+":") && !strings.Contains(r.stderr, "\n"+name+":") {
			t.Errorf("the container does not see the host interface %s\n%s", name, r.stderr)
		}
	}
}

func TestE2EPodIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-podip", "Never", "busybox:1.28", 2, "ip -4 -o addr show eth0 || ifconfig eth0"))
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if !onPodNetwork(t, p.Status.PodIP) {
		t.Fatalf("podIP %q, want one in %s", p.Status.PodIP, os.Getenv("PODRUN_TESTBED_POD_SUBNET"))
	}
	if len(p.Status.PodIPs) == 0 || p.Status.PodIPs[0].IP != p.Status.PodIP {
		t.Errorf("podIPs %+v, want [%s]", p.Status.PodIPs, p.Status.PodIP)
	}
	if !strings.Contains(r.stderr, p.Status.PodIP) {
		t.Errorf("the container's eth0 does not carry the podIP %s\n%s", p.Status.PodIP, r.stderr)
	}
}

// ------------------------------------------------------------- more sources --

func TestE2ESourceHTTPSLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := podManifest("e2e-src-https", "Never", "busybox:1.28", 2, "echo from https")
	big := strings.Repeat("#", 11<<20) + "\n" + podManifest("e2e-src-big", "Never", "busybox:1.28", 2, "echo must not run")
	hang := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pod.yaml":
			w.Write([]byte(body))
		case "/big.yaml":
			w.Write([]byte(big))
		case "/hang.yaml":
			select {
			case <-hang:
			case <-time.After(30 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer func() { close(hang); srv.Close() }()
	// podrun trusts the test server through SSL_CERT_FILE.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var pemBuf bytes.Buffer
	pemBuf.WriteString("-----BEGIN CERTIFICATE-----\n")
	enc := base64Lines(srv.Certificate().Raw)
	pemBuf.WriteString(enc)
	pemBuf.WriteString("-----END CERTIFICATE-----\n")
	if err := os.WriteFile(ca, pemBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sslEnv := "SSL_CERT_FILE=" + ca

	// Anything over 10 MiB is refused.
	r := e.runPodrun([]string{"-f", srv.URL + "/big.yaml"}, "", sslEnv)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, srv.URL+"/big.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// A server that does not answer: 10 s timeout.
	r = e.runPodrun([]string{"-f", srv.URL + "/hang.yaml"}, "", sslEnv)
	expectCode(t, r, 125)
	if r.elapsed < 9*time.Second || r.elapsed > 20*time.Second {
		t.Errorf("a hanging URL failed after %s, want about 10s", r.elapsed)
	}
	if !strings.Contains(r.stderr, srv.URL+"/hang.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// Without trusting the server's certificate.
	r = e.runPodrun([]string{"-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 125)
	expectNothingCreated(t, e)

	r = e.runPodrun([]string{"-q", "-f", srv.URL + "/pod.yaml"}, "", sslEnv)
	expectCode(t, r, 0)
	if r.stdout != "from https\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 64 {
		out.WriteString(s[:64] + "\n")
		s = s[64:]
	}
	out.WriteString(s + "\n")
	return out.String()
}

func TestE2ESourceJSONPodListConfigMap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jsonPod := write("pod.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e2e-json"},
  "spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":2,
  "containers":[{"name":"c","image":"busybox:1.28","command":["sh","-c","echo from json"]}]}}`)
	podList := write("podlist.yaml", `apiVersion: v1
kind: PodList
items:
- metadata: {name: e2e-podlist-a}
  spec:
    restartPolicy: Never
    terminationGracePeriodSeconds: 2
    containers: [{name: c, image: "busybox:1.28", command: ["sh", "-c", "echo podlist a"]}]
`)
	withCM := write("with-cm.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: e2e-cm}
data: {k: v}
---
apiVersion: v1
kind: Secret
metadata: {name: e2e-secret}
stringData: {k: v}
---
{apiVersion: "v1", kind: "Pod", metadata: {name: "e2e-kyaml"},
 spec: {restartPolicy: "Never", terminationGracePeriodSeconds: 2,
  containers: [{name: "c", image: "busybox:1.28", command: ["sh", "-c", "echo from kyaml"]}]}}
`)
	r := e.runPodrun([]string{"-o", "json", "-f", jsonPod, "-f", podList, "-f", withCM}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	if got := strings.Join(podNames(pods), ","); got != "e2e-json,e2e-podlist-a,e2e-kyaml" {
		t.Errorf("pods %s, want e2e-json,e2e-podlist-a,e2e-kyaml", got)
	}
	for _, w := range []string{"from json", "podlist a", "from kyaml"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q\n%s", w, r)
		}
	}
}

// --------------------------------------------------------------- usage --

func TestE2EUsageErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("exit0.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-f"},
		{[]string{"run"}, "-f"},
		{[]string{"--wait", "bogus", "-f", m}, "bogus"},
		{[]string{"-o", "xml", "-f", m}, "xml"},
		{[]string{"--bogus", "-f", m}, "bogus"},
		{[]string{"run", "--bogus", "-f", m}, "bogus"},
		{[]string{"-f", m, "extra"}, "extra"},
		{[]string{"--timeout", "soon", "-f", m}, "soon"},
		{[]string{"--manifest-url-header", "novalue", "-f", m}, "novalue"},
		{[]string{"down"}, "--all"},
	} {
		r := e.runPodrun(c.args, "")
		if r.code != 125 {
			t.Errorf("podrun %v: exit %d, want 125\n%s", c.args, r.code, r)
		}
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("podrun %v: stderr lacks %q\n%s", c.args, c.want, r)
		}
		if strings.Contains(r.stdout, "all good") {
			t.Errorf("podrun %v ran the pod", c.args)
		}
	}
	expectNothingCreated(t, e)
}

// ------------------------------------------------- logs dir, node, config --

func TestE2EPodLogsDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := filepath.Join(t.TempDir(), "podlogs")
	m := manifest(t, "pod.yaml", podManifest("e2e-logsdir", "Never", "busybox:1.28", 2, "echo kept-line; echo kept-err >&2"))
	r := e.runPodrun([]string{"-o", "json", "--pod-logs-dir", logs, "-f", m}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	file := filepath.Join(logs, "default_e2e-logsdir_"+string(p.UID), "c", "0.log")
	b, err := os.ReadFile(file)
	if err != nil {
		entries, _ := filepath.Glob(filepath.Join(logs, "*", "*", "*"))
		t.Fatalf("the pod log is not kept at %s: %v (found %v)", file, err, entries)
	}
	for _, w := range []string{" stdout F kept-line\n", " stderr F kept-err\n"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("%s lacks a CRI log line %q:\n%s", file, w, b)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "logs", "default_e2e-logsdir_"+string(p.UID))); err == nil {
		t.Errorf("a log dir was made under --root-dir too")
	}
}

func TestE2ENodeNameAndUID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-node", "Never", "busybox:1.28", 2, "true"))
	uidOf := func(args ...string) (*v1.Pod, result) {
		r := e.runPodrun(append([]string{"-q", "-o", "json", "-f", m}, args...), "")
		expectCode(t, r, 0)
		return parsePod(t, r.stdout), r
	}
	a, _ := uidOf("--node-name", "E2E-Node-A")
	if a.Spec.NodeName != "e2e-node-a" {
		t.Errorf("spec.nodeName %q, want e2e-node-a (lower-cased)", a.Spec.NodeName)
	}
	a2, _ := uidOf("--node-name", "e2e-node-a")
	b, _ := uidOf("--node-name", "e2e-node-b")
	if a.UID == "" || a.UID != a2.UID {
		t.Errorf("same source, content and node: UIDs %q and %q, want equal", a.UID, a2.UID)
	}
	if a.UID == b.UID {
		t.Errorf("another node name gave the same UID %q", a.UID)
	}
	host, _ := os.Hostname()
	d, _ := uidOf()
	if d.Spec.NodeName != strings.ToLower(host) {
		t.Errorf("default spec.nodeName %q, want the host name %q", d.Spec.NodeName, strings.ToLower(host))
	}
}

func TestE2EContainerConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-config
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: busybox:1.28
    workingDir: /tmp
    env:
    - {name: A, value: alpha}
    - {name: B, value: "$(A)-beta"}
    command: ["sh", "-c"]
    args: ["echo cwd=$(pwd) B=$B host=$(hostname) arg=$(A)"]
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	if want := "cwd=/tmp B=alpha-beta host=e2e-config arg=alpha\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

// ----------------------------------------------------- output edge cases --

func TestE2EOutputAfterImageError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-out-never-pull
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: podrun.invalid/e2e/absent:2
    imagePullPolicy: Never
`)
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "")
	expectCode(t, r, 125)
	p := parsePod(t, r.stdout)
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", p.Status.ContainerStatuses)
	}
	// As the kubelet reports it: waiting with reason ErrImageNeverPull.
	w := p.Status.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImageNeverPull" {
		t.Errorf("container state %+v, want waiting with reason ErrImageNeverPull (as the kubelet reports it)", p.Status.ContainerStatuses[0].State)
	}
}

func TestE2ELongLineAndUnterminatedTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// 100 000 bytes in one line (the runtime splits it into partial log
	// entries), then a last line without a newline.
	m := manifest(t, "pod.yaml", podManifest("e2e-longline", "Never", "busybox:1.28", 2,
		`head -c 100000 /dev/zero | tr '\0' a; echo; printf 'tail-without-newline'`))
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	want := strings.Repeat("a", 100000) + "\ntail-without-newline"
	if strings.TrimSuffix(r.stdout, "\n") != want {
		t.Errorf("stdout is %d bytes, want the 100000-byte line and the tail (%d bytes); ends %q", len(r.stdout), len(want), r.stdout[max(0, len(r.stdout)-40):])
	}
}

func TestE2ESeveralPodsExitCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pods.yaml", podManifest("e2e-multi-ok", "Never", "busybox:1.28", 2, "true")+"---\n"+
		podManifest("e2e-multi-fail", "Never", "busybox:1.28", 2, "exit 4"))
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 4)
}

func TestE2EAlreadyRunningLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", idlePod("e2e-live-twice", "Never"))
	p := e.startPodrun([]string{"-f", m}, "")
	p.waitStderr("Started", 60*time.Second)
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "already running") {
		t.Errorf("stderr lacks \"already running\"\n%s", r)
	}
	select {
	case <-p.done:
		t.Fatalf("the first podrun ended (exit %d) when the second was refused", p.code)
	default:
	}
	if sbs := sandboxesOf(t, "e2e-live-twice"); len(sbs) != 1 {
		t.Errorf("%d sandboxes, want the first run's one", len(sbs))
	}
	p.signal(syscall.SIGINT)
	expectCode(t, p.result(60*time.Second), 130)
}

func TestE2ESignalOutputDuringTeardown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// On SIGTERM the container says goodbye and exits 0; podrun must not
	// lose that line while tearing down.
	m := manifest(t, "pod.yaml", podManifest("e2e-sig-bye", "Never", "busybox:1.28", 5,
		"trap 'echo goodbye-on-term; exit 0' TERM; echo hello; while true; do sleep 0.1; done"))
	p := e.startPodrun([]string{"-o", "yaml", "-f", m}, "")
	p.waitStderr("hello", 60*time.Second)
	// Running: its pod dir and log dir exist.
	if len(podDirs(t, e.root)) != 1 {
		t.Errorf("while running: pod dirs %v, want one", podDirs(t, e.root))
	}
	if entries, _ := os.ReadDir(filepath.Join(e.root, "logs")); len(entries) != 1 {
		t.Errorf("while running: %d log dirs, want one", len(entries))
	}
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	if !strings.Contains(r.stderr, "goodbye-on-term\n") {
		t.Errorf("the container's last line, printed during teardown, is missing\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if len(pod.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", pod.Status.ContainerStatuses)
	}
}

func TestE2EImagePrivateWithoutAuth(t *testing.T) {
	t.Parallel()
	img := os.Getenv("PODRUN_TESTBED_PRIVATE_IMAGE")
	if img == "" {
		t.Fatalf("PODRUN_TESTBED_PRIVATE_IMAGE is not set: export `bash hack/testbed.sh env`")
	}
	e := newEnv(t)
	m := manifest(t, "pod.yaml", podManifest("e2e-private-noauth", "Never", img, 2, "echo must not run"))
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImagePull") || !strings.Contains(r.stderr, img) {
		t.Errorf("stderr lacks ErrImagePull naming %s\n%s", img, r)
	}
}

func TestE2EImagePullAlways(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: e2e-pull-always
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: docker.io/library/busybox:1.36
    imagePullPolicy: Always
    command: ["sh", "-c", "echo pulled"]
`)
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, "Pulling") || r.stdout != "pulled\n" {
		t.Errorf("want a Pulling progress line and the container's output\n%s", r)
	}
}

// TestE2ESignalEarly sends SIGINT at moments spread over podrun's start-up
// (dialing, checking the runtime, reclaiming, creating the sandbox, pulling,
// starting): every time podrun must exit 130 once everything is torn down,
// so that running the same pod again at once works.
func TestE2ESignalEarly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", idlePod("e2e-sig-early", "Never"))
	// From 25 ms on: before podrun has installed its signal handler (Go
	// start-up, flag parsing) SIGINT kills it, and it has created nothing.
	for delay := 25 * time.Millisecond; delay <= 300*time.Millisecond; delay += 25 * time.Millisecond {
		p := e.startPodrun([]string{"-f", m}, "")
		time.Sleep(delay)
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			r := p.result(time.Second)
			t.Errorf("podrun ended before SIGINT %s after start (the pod never ends): exit %d\n%s", delay, r.code, r)
			continue
		}
		r := p.result(60 * time.Second)
		switch {
		case r.code == -1 && r.stderr == "":
			t.Logf("SIGINT %s after start came before podrun's signal handler", delay)
		case r.code != 130:
			t.Errorf("SIGINT %s after start: exit %d, want 130\n%s", delay, r.code, r)
		}
		if dirs := podDirs(t, e.root); len(dirs) != 0 {
			t.Errorf("SIGINT %s after start: pod dirs %v left", delay, dirs)
		}
		// The pod again, at once: nothing of the interrupted run may be in
		// the way (a sandbox still being created holds the sandbox name).
		again := e.runPodrun([]string{"-q", "--wait", "none", "-f", m}, "")
		if again.code != 0 {
			t.Errorf("after SIGINT %s after start: the next run of the same pod: exit %d, want 0\n%s", delay, again.code, again)
			// Let the leftover settle (a later run reclaims it) so that the
			// next delay is tried on a clean runtime; say how long it took.
			start := time.Now()
			for again.code != 0 && time.Since(start) < 20*time.Second {
				time.Sleep(500 * time.Millisecond)
				again = e.runPodrun([]string{"-q", "--wait", "none", "-f", m}, "")
			}
			t.Logf("the same pod could run again %s later (exit %d)", time.Since(start).Round(100*time.Millisecond), again.code)
		}
	}
}

func TestE2EDownByUIDAndNamespacedName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := "e2e-down-uid", "e2e-down-nsname"
	e.downOnCleanup(a, b)
	m := manifest(t, "pods.yaml", idlePod(a, "Always")+"---\n"+idlePod(b, "Always"))
	r := e.runPodrun([]string{"-d", "-q", "-f", m}, "")
	expectCode(t, r, 0)
	sbs := sandboxesOf(t, a)
	if len(sbs) != 1 {
		t.Fatalf("after -d: %d sandboxes of %s", len(sbs), a)
	}
	uid := sbs[0].Labels["io.kubernetes.pod.uid"]
	r = e.runPodrun([]string{"down", uid}, "")
	expectCode(t, r, 0)
	if len(sandboxesOf(t, a)) != 0 {
		t.Errorf("down UID left the sandbox of %s", a)
	}
	if len(sandboxesOf(t, b)) != 1 {
		t.Errorf("down UID of %s took %s too", a, b)
	}
	r = e.runPodrun([]string{"down", "default/" + b}, "")
	expectCode(t, r, 0)
	if len(sandboxesOf(t, b)) != 0 {
		t.Errorf("down NAMESPACE/NAME left the sandbox of %s", b)
	}
}
