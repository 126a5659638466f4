package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
)

// brokenPipe is a stdout whose reader goes away after the first write, as
// `podrun -f pod.yaml | head -1`'s does.
type brokenPipe struct {
	mu     sync.Mutex
	writes int
	got    strings.Builder
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	if b.writes > 1 {
		return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}
	}
	b.got.Write(p)
	return len(p), nil
}

// TestCLIClosedStdoutTearsDown: once stdout's reader is gone (EPIPE),
// podrun stops writing, stops the pods, tears everything down and exits
// 141, instead of dying by SIGPIPE with the pod left running.
func TestCLIClosedStdoutTearsDown(t *testing.T) {
	s, ep := startFake(t)
	var out []fake.LogLine
	for i := range 200 {
		out = append(out, fake.LogLine{Text: "line", After: time.Duration(i) * 20 * time.Millisecond})
	}
	s.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{Output: out, UntilStopped: true, TermExitCode: fake.Code(0)}
	})
	root := t.TempDir()
	m := writeManifest(t, strings.Replace(jobPod, "echo hello; exit 7", "while true; do echo line; done", 1))
	stdout := &brokenPipe{}
	var stderr strings.Builder
	code := run([]string{"podrun", "--runtime-endpoint", ep, "--cgroup-root=", "--root-dir", root, "-f", m},
		strings.NewReader(""), stdout, &stderr)
	if code != 141 {
		t.Fatalf("exit %d, want 141\nstderr:\n%s", code, stderr.String())
	}
	// The first write holds whole lines, as many as the run had read
	// (the sink writes lines together); nothing is written after the
	// one that failed.
	if got := stdout.got.String(); got == "" || strings.ReplaceAll(got, "line\n", "") != "" {
		t.Errorf("stdout got %q before it closed, want whole lines", got)
	}
	if stdout.writes != 2 {
		t.Errorf("%d writes reached stdout, want two: the one that worked and the one that failed", stdout.writes)
	}
	for _, want := range []string{"podrun: stdout is closed (broken pipe): stopping the pods", "Interrupted: stopping"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	calls := s.Calls()
	for _, want := range []string{"StopContainer", "RemovePodSandbox"} {
		if !slices.Contains(calls, want) {
			t.Errorf("no %s after stdout closed: calls %v", want, calls)
		}
	}
	for _, sub := range []string{"pods", "logs"} {
		if entries, _ := os.ReadDir(filepath.Join(root, sub)); len(entries) != 0 {
			t.Errorf("left in %s: %v", sub, entries)
		}
	}
}

// TestOutputGuard: the first EPIPE of either output interrupts the run
// once (141; a second interruption would force the containers' kill), and
// later writes are dropped.
func TestOutputGuard(t *testing.T) {
	in := newInterrupts()
	defer in.stop()
	stdout, stderr := &brokenPipe{writes: 1}, &brokenPipe{writes: 1}
	out, errOut := guardOutputs(in, stdout, stderr)
	for range 3 {
		if n, err := out.Write([]byte("x\n")); n != 2 || err != nil {
			t.Errorf("write after EPIPE: %d, %v; want the write dropped without an error", n, err)
		}
		errOut.Write([]byte("y\n"))
	}
	if stdout.writes != 2 || stderr.writes != 2 {
		t.Errorf("writes reaching stdout %d, stderr %d; want one each (the one that failed)", stdout.writes-1, stderr.writes-1)
	}
	if code := in.exitCode(); code != 141 {
		t.Errorf("exit code %d, want 141", code)
	}
	select {
	case <-in.ctx.Done():
	default:
		t.Error("the run's context is not cancelled")
	}
	select {
	case <-in.force:
		t.Error("both outputs closing counted as two interruptions: force is closed")
	default:
	}
	in.interrupt(130)
	select {
	case <-in.force:
	default:
		t.Error("a signal after the closed output does not force")
	}
	if code := in.exitCode(); code != 141 {
		t.Errorf("exit code %d after a later signal, want the first interruption's 141", code)
	}
}

// TestOutputGuardUnwraps: the guards say what they guard, so that a run
// whose stdout and stderr are /dev/null follows no log (the runner drops
// a writer that is /dev/null, guarded or not): a guard hid it, and every
// run followed every log, its output thrown away.
func TestOutputGuardUnwraps(t *testing.T) {
	in := newInterrupts()
	defer in.stop()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	out, errOut := guardOutputs(in, null, os.Stderr)
	for _, tc := range []struct {
		name    string
		w, want io.Writer
	}{{"stdout", out, null}, {"stderr", errOut, os.Stderr}} {
		u, ok := tc.w.(interface{ Unwrap() io.Writer })
		if !ok || u.Unwrap() != tc.want {
			t.Errorf("the %s guard does not unwrap to the writer it guards", tc.name)
		}
	}
}

// TestCLIClosedStdoutAtTheEnd: with -o json the pod document is podrun's
// only stdout; a reader gone by then makes the exit 141, not 0, though
// the run itself went well and is torn down.
func TestCLIClosedStdoutAtTheEnd(t *testing.T) {
	_, ep := startFake(t)
	root := t.TempDir()
	m := writeManifest(t, strings.Replace(jobPod, "exit 7", "exit 0", 1))
	var stderr strings.Builder
	code := run([]string{"podrun", "--runtime-endpoint", ep, "--cgroup-root=", "--root-dir", root, "-o", "json", "-f", m},
		strings.NewReader(""), &brokenPipe{writes: 1}, &stderr)
	if code != 141 {
		t.Fatalf("exit %d, want 141\nstderr:\n%s", code, stderr.String())
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "pods")); len(entries) != 0 {
		t.Errorf("pod dirs left: %v", entries)
	}
}
