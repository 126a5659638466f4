//go:build e2e

package e2e

// One run of podrun end to end: its exit status (the first failed container
// in spec order, init containers first), the containers' output on podrun's
// own stdout and stderr, the wait modes, --timeout, -o json/yaml, several
// pods at once, -q, podrun run, --pod-logs-dir and --node-name.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestE2EExitCodeFailingContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("run/exit7.yaml")}, "")
	expectCode(t, r, 7)
	if r.stdout != "about to fail\n" {
		t.Errorf("stdout %q, want the container's one line without prefix", r.stdout)
	}
}

func TestE2EExitCodeSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("run/exit0.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "all good\n" {
		t.Errorf("stdout %q, want %q", r.stdout, "all good\n")
	}
}

func TestE2EExitCodeInitContainerFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("run/init-fail.yaml")}, "")
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
	r := e.runPodrun([]string{"-f", testdata("run/first-failed.yaml")}, "")
	// "late" (spec order 1) exits 3 a second after "early" (spec order 2) exits 4.
	expectCode(t, r, 3)
}

func TestE2EStreamsCompleteAndSeparate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("run/streams.yaml")}, "")
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
	r := e.runPodrun([]string{"-q", "-f", testdata("run/prefix.yaml")}, "")
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

	// One container: no prefix.
	r = e.runPodrun([]string{"-q", "-f", testdata("run/prefix-one.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "plain\n" || r.stderr != "plainerr\n" {
		t.Errorf("one container: want unprefixed lines\n%s", r)
	}
}

func TestE2EWaitComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, mode := range []string{"complete", "auto"} {
		r := e.runPodrun([]string{"-o", "json", "--wait", mode, "-f", testdata("run/wait-complete.yaml")}, "")
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
	for _, mode := range []string{"ready", "auto"} {
		r := e.runPodrun([]string{"-o", "json", "--wait", mode, "-f", testdata("run/wait-ready.yaml")}, "")
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
	r := e.runPodrun([]string{"-o", "json", "--wait", "none", "-f", testdata("run/wait-none.yaml")}, "")
	expectCode(t, r, 0)
	if r.elapsed > 15*time.Second {
		t.Errorf("--wait none took %s: it should return once started", r.elapsed)
	}
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending {
		t.Errorf("phase %q, want Running (started, not finished)", p.Status.Phase)
	}
}

func TestE2ETimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"--timeout", "2s", "-o", "json", "-f", testdata("run/timeout.yaml")}, "")
	expectCode(t, r, 124)
	if r.elapsed < 2*time.Second || r.elapsed > 20*time.Second {
		t.Errorf("run took %s; want a little over 2s", r.elapsed)
	}
	p := parsePod(t, r.stdout)
	if p.Name != "e2e-timeout" {
		t.Errorf("-o json after a timeout printed pod %q", p.Name)
	}
}

func TestE2EOutputJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("run/output-json.yaml")}, "")
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
	r := e.runPodrun([]string{"-o", "yaml", "-f", testdata("run/output-yaml-list.yaml")}, "")
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

// TestE2EPodsRunConcurrently is not parallel so that other tests' load does
// not blur the timing.
func TestE2EPodsRunConcurrently(t *testing.T) {
	e := newEnv(t)
	// The overhead of one quick pod, for scale.
	base := e.runPodrun([]string{"-q", "-f", testdata("run/concurrent-base.yaml")}, "")
	expectCode(t, base, 0)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("run/concurrent.yaml")}, "")
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

func TestE2ELongLineAndUnterminatedTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("run/longline.yaml")}, "")
	expectCode(t, r, 0)
	want := strings.Repeat("a", 100000) + "\ntail-without-newline"
	if strings.TrimSuffix(r.stdout, "\n") != want {
		t.Errorf("stdout is %d bytes, want the 100000-byte line and the tail (%d bytes); ends %q", len(r.stdout), len(want), r.stdout[max(0, len(r.stdout)-40):])
	}
}

func TestE2ESeveralPodsExitCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("run/several-exit.yaml")}, "")
	expectCode(t, r, 4)
}

func TestE2ERunSubcommandSameAsRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("run/run-cmd.yaml")
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
	m := testdata("run/quiet.yaml")
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

func TestE2EPodLogsDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := filepath.Join(t.TempDir(), "podlogs")
	r := e.runPodrun([]string{"-o", "json", "--pod-logs-dir", logs, "-f", testdata("run/logsdir.yaml")}, "")
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
	uidOf := func(args ...string) (*v1.Pod, result) {
		r := e.runPodrun(append([]string{"-q", "-o", "json", "-f", testdata("run/node.yaml")}, args...), "")
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
