//go:build e2e

package e2e

// podrun logs end to end: the log files of a detached pod read as kubectl
// logs reads them (-c, --tail, --since, --timestamps, --prefix,
// --all-containers, --previous, by NAME, NAMESPACE/NAME or UID), and -f
// following a container across its restart until the pod is gone.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestE2ELogsDetached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-logs"
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-q", "-d", "-f", testdata("logs/detached.yaml")}, "")
	expectCode(t, r, 0)
	sbs := sandboxesOf(t, name)
	if len(sbs) != 1 {
		t.Fatalf("after -d: %d sandboxes of %s", len(sbs), name)
	}
	uid := sbs[0].Labels["io.kubernetes.pod.uid"]
	logs := func(args ...string) result {
		t.Helper()
		return e.runPodrun(append([]string{"logs"}, args...), "")
	}

	// Several containers: name one, as the API server asks.
	r = logs(name)
	expectCode(t, r, 125)
	if want := "podrun: a container name must be specified for pod e2e-logs, choose one of: [setup app side]\n"; r.stderr != want {
		t.Errorf("without -c: stderr %q, want %q", r.stderr, want)
	}
	r = logs(name, "-c", "nope")
	expectCode(t, r, 125)
	if want := "podrun: container nope is not valid for pod e2e-logs\n"; r.stderr != want {
		t.Errorf("-c nope: stderr %q, want %q", r.stderr, want)
	}

	// Each stream on its own, whichever way the pod is named, flags
	// before or after it, and kubectl's POD CONTAINER form.
	for _, args := range [][]string{{name, "-c", "app"}, {"-c", "app", "default/" + name}, {uid, "app"}} {
		r = logs(args...)
		expectCode(t, r, 0)
		if r.stdout != "early\nlate\n" || r.stderr != "warn\n" {
			t.Errorf("logs %v: stdout %q, stderr %q; want early, late and warn", args, r.stdout, r.stderr)
		}
	}

	// --tail counts the lines of both streams, from the end.
	r = logs(name, "-c", "app", "--tail", "2")
	expectCode(t, r, 0)
	if r.stdout != "late\n" || r.stderr != "warn\n" {
		t.Errorf("--tail 2: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	// --timestamps: each line with its RFC3339 time, as the runtime
	// recorded it.
	r = logs(name, "-c", "app", "--timestamps")
	expectCode(t, r, 0)
	stamp := regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(?:Z|[+-]\d\d:\d\d)) (early|late)$`)
	var times []time.Time
	for _, l := range lines(r.stdout) {
		m := stamp.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("--timestamps: line %q is not <RFC3339 time> <text>\n%s", l, r)
		}
		ts, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, ts)
	}
	if len(times) != 2 || times[1].Sub(times[0]) < 2*time.Second {
		t.Fatalf("--timestamps: times %v, want early and late 3 s apart\n%s", times, r)
	}

	// --since: a duration that reaches back to between the two lines.
	mid := times[0].Add(times[1].Sub(times[0]) / 2)
	since := time.Since(mid).Round(time.Millisecond)
	r = logs(name, "-c", "app", "--since", since.String())
	expectCode(t, r, 0)
	if r.stdout != "late\n" || r.stderr != "" {
		t.Errorf("--since %s: stdout %q, stderr %q; want late alone", since, r.stdout, r.stderr)
	}

	// --prefix, and --all-containers in order, init containers first.
	r = logs(name, "-c", "side", "--prefix")
	expectCode(t, r, 0)
	if want := "[pod/e2e-logs/side] side 1\n"; r.stdout != want {
		t.Errorf("--prefix: stdout %q, want %q", r.stdout, want)
	}
	r = logs("--all-containers", "--prefix", name)
	expectCode(t, r, 0)
	expectOnlyLines(t, r.stdout, "[pod/e2e-logs/setup] setup done", "[pod/e2e-logs/app] early", "[pod/e2e-logs/app] late", "[pod/e2e-logs/side] side 1")
	if r.stderr != "[pod/e2e-logs/app] warn\n" {
		t.Errorf("--all-containers --prefix: stderr %q", r.stderr)
	}
	r = logs(name, "--all-containers")
	expectCode(t, r, 0)
	expectOnlyLines(t, r.stdout, "setup done", "early", "late", "side 1")

	// No instance before the one that ran.
	r = logs(name, "-c", "app", "--previous")
	expectCode(t, r, 125)
	if want := "podrun: previous terminated container \"app\" in pod \"e2e-logs\" not found\n"; r.stderr != want {
		t.Errorf("--previous: stderr %q, want %q", r.stderr, want)
	}

	// -f of a container that ended and will not restart (Never) prints its
	// log and ends.
	r = logs("-f", name, "-c", "app")
	expectCode(t, r, 0)
	if r.stdout != "early\nlate\n" {
		t.Errorf("-f: stdout %q", r.stdout)
	}
	if r.elapsed > 15*time.Second {
		t.Errorf("-f of a container that will not restart took %s", r.elapsed)
	}
}

// TestE2ELogsCompleteUpToTheExit: a container printing without pause up
// to its exit has in the run's output all that the runtime wrote of it to
// its log, which --pod-logs-dir keeps after the run: the runtime can still
// be writing the log when it reports the exit, and the run reads on until
// the log is quiet (docs/logs-exec.md). containerd 2.x writes all 4 MB;
// containerd 1.6 itself drops the last 100-odd KB at the exit (its log
// file, and so kubectl logs, lack them), and podrun cannot show more.
func TestE2ELogsCompleteUpToTheExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := t.TempDir()
	r := e.runPodrun([]string{"-q", "--pod-logs-dir", logs, "-f", testdata("logs/burst.yaml")}, "")
	expectCode(t, r, 0)
	files, _ := filepath.Glob(filepath.Join(logs, "default_e2e-logs-burst_*", "burst", "0.log"))
	if len(files) != 1 {
		t.Fatalf("the kept log: %v, want one default_e2e-logs-burst_<uid>/burst/0.log in %s", files, logs)
	}
	written := criLogText(t, files[0])
	if strings.Count(written, "y\n")*2 != len(written) {
		t.Fatalf("the runtime's log holds something else than lines of y (%d bytes)", len(written))
	}
	if r.stdout != written {
		t.Errorf("stdout: %d bytes, %d lines of y; the runtime's log holds %d bytes: the run stopped reading early",
			len(r.stdout), strings.Count(r.stdout, "y\n"), len(written))
	}
	switch {
	case len(written) == 4000000:
	case onContainerd1():
		t.Logf("containerd %s wrote %d of the container's 4000000 bytes to its log (it drops the rest at the exit); the run showed all it wrote", runtimeVersion, len(written))
	default:
		t.Errorf("%s %s wrote %d of the container's 4000000 bytes to its log", runtimeName, runtimeVersion, len(written))
	}
}

// criLogText is the text of a CRI log file's records, as ReadLogs gives
// it: a full record's text with its newline, a partial one's without.
func criLogText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(strings.TrimSuffix(l, "\n"), " ", 4)
		if len(f) != 4 {
			t.Fatalf("%s: not a CRI log record: %q", path, l)
		}
		out.WriteString(f[3])
		if f[2] != "P" {
			out.WriteString("\n")
		}
	}
	return out.String()
}

func TestE2ELogsFollowAcrossRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-logs-restart-" + randomSuffix(t)
	trigger := t.TempDir()
	m := fromTemplate(t, "logs/restart.yaml", "NAME", name, "TRIGGER", trigger)
	run := e.startPodrun([]string{"-f", m, "--timeout", "150s"}, "")
	run.waitStderr("Started container app", 90*time.Second)

	follow := e.startPodrun([]string{"logs", "-f", name}, "")
	follow.waitStdout("attempt 0\n", 30*time.Second)
	// Attempt 0 ends; the container restarts, and -f goes on with the
	// next instance's log from its start.
	if err := os.WriteFile(filepath.Join(trigger, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	follow.waitStdout("attempt 1 runs\n", 60*time.Second)
	expectOnlyLines(t, follow.stdout.String(), "attempt 0", "attempt 0 exits", "attempt 1", "attempt 1 runs")

	// --previous is the instance that ended, the default the one that runs.
	r := e.runPodrun([]string{"logs", "--previous", name}, "")
	expectCode(t, r, 0)
	expectOnlyLines(t, r.stdout, "attempt 0", "attempt 0 exits")
	r = e.runPodrun([]string{"logs", name}, "")
	expectCode(t, r, 0)
	expectOnlyLines(t, r.stdout, "attempt 1", "attempt 1 runs")

	// Once the pod is torn down there is nothing more to follow: -f ends
	// by itself.
	stopNow(t, run)
	if code := follow.wait(30 * time.Second); code != 0 {
		t.Errorf("logs -f after the pod went: exit %d\nstderr:\n%s", code, follow.stderr.String())
	}
	expectOnlyLines(t, follow.stdout.String(), "attempt 0", "attempt 0 exits", "attempt 1", "attempt 1 runs")
	if follow.stderr.String() != "" {
		t.Errorf("logs -f stderr: %q", follow.stderr.String())
	}
}

// A SIGINT ends logs -f of a running container with 130, as it ends any
// podrun command, and says nothing.
func TestE2ELogsFollowInterrupted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-logs-sigint-" + randomSuffix(t)
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-q", "-d", "-f", fromTemplate(t, "exec/exec.yaml", "NAME", name)}, "")
	expectCode(t, r, 0)
	follow := e.startPodrun([]string{"logs", "-f", name, "-c", "app"}, "")
	time.Sleep(2 * time.Second)
	select {
	case <-follow.done:
		t.Fatalf("logs -f of a running container ended by itself (exit %d)\nstderr:\n%s", follow.code, follow.stderr.String())
	default:
	}
	follow.signal(syscall.SIGINT)
	if code := follow.wait(10 * time.Second); code != 130 {
		t.Errorf("logs -f after SIGINT: exit %d, want 130\nstderr:\n%s", code, follow.stderr.String())
	}
	if follow.stderr.String() != "" {
		t.Errorf("logs -f after SIGINT: stderr %q, want nothing", follow.stderr.String())
	}
}

// expectOnlyLines fails the test unless out is exactly the lines of want.
func expectOnlyLines(t *testing.T, out string, want ...string) {
	t.Helper()
	if got := lines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output is\n%s\nwant exactly\n%s", out, strings.Join(want, "\n"))
	}
}
