package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestCopyLogDecodes(t *testing.T) {
	cases := []struct {
		name           string
		log            string
		stdout, stderr string
	}{
		{
			name: "CRI lines of both streams, partial lines joined per stream",
			log: lines(
				ts+" stdout F one",
				ts+" stderr F err one",
				ts+" stdout P two-a ",
				ts+" stderr P err-",
				ts+" stdout P two-b ",
				ts+" stdout F two-c",
				ts+" stderr F two",
				ts+" stdout F three"),
			stdout: "[p] one\n[p] two-a two-b two-c\n[p] three\n",
			stderr: "[p] err one\n[p] err-two\n",
		},
		{
			name:   "a tag with colon-separated extras and an empty message",
			log:    lines(ts+" stdout F:x:y d", ts+" stdout F "),
			stdout: "[p] d\n[p] \n",
		},
		{
			name:   "a line that does not parse is skipped, as the kubelet skips it",
			log:    lines(ts+" stdout F a", "not a cri line", ts+" stdout F b"),
			stdout: "[p] a\n[p] b\n",
		},
		{
			name: "docker json lines",
			log: lines(`{"log":"out\n","stream":"stdout","time":"2026-01-02T03:04:05.000000001Z"}`,
				`{"log":"par","stream":"stderr","time":"2026-01-02T03:04:05.000000002Z"}`,
				`{"log":"tial\n","stream":"stderr","time":"2026-01-02T03:04:05.000000003Z"}`),
			stdout: "[p] out\n",
			stderr: "[p] partial\n",
		},
		{
			name:   "an unterminated last line is ended",
			log:    ts + " stdout F done\n" + ts + " stdout F no newline",
			stdout: "[p] done\n[p] no newline\n",
		},
		{
			name:   "a pending partial line is ended",
			log:    lines(ts + " stderr P cut short"),
			stderr: "[p] cut short\n",
		},
		{name: "an empty log", log: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0.log")
			appendFile(t, path, tc.log)
			var out, errOut syncBuffer
			if err := copyLog(context.Background(), path, &logSink{stdout: &out, stderr: &errOut}, "[p] "); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("stdout =\n%q\nstderr =\n%q\nwant\n%q\n%q", out.String(), errOut.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

// lines joins CRI log lines, each ended with a newline.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// syncBuffer is a bytes.Buffer safe to read while a tailer writes to it.
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

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

const ts = "2026-01-02T03:04:05.000000001Z"

func TestTailerWritesAWholeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, lines(ts+" stdout F one", ts+" stderr P err-", ts+" stdout F two", ts+" stderr F one"))
	var out, errOut syncBuffer
	tl := startTailer(path, "[p] ", &logSink{stdout: &out, stderr: &errOut})
	tl.finish()
	if out.String() != "[p] one\n[p] two\n" || errOut.String() != "[p] err-one\n" {
		t.Errorf("stdout = %q, stderr = %q", out.String(), errOut.String())
	}
}

func TestTailerFollowsOutputWrittenLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, "")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out})
	defer tl.finish()
	appendFile(t, path, ts+" stdout F first\n")
	waitFor(t, "the first line", 2*time.Second, func() bool { return out.String() == "first\n" })
	// Half a line is held back until its end arrives.
	appendFile(t, path, ts+" stdout P sec\n")
	time.Sleep(200 * time.Millisecond)
	if got := out.String(); got != "first\n" {
		t.Errorf("stdout = %q before the line was complete", got)
	}
	appendFile(t, path, ts+" stdout F ond\n")
	waitFor(t, "the second line", 2*time.Second, func() bool { return out.String() == "first\nsecond\n" })
}

// finish wakes a tailer that waits for output at once, not at ReadLogs'
// periodic check a second later, and it still reads the last lines.
func TestTailerFinishIsPrompt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, ts+" stdout F one\n")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out})
	waitFor(t, "the first line", 2*time.Second, func() bool { return out.String() == "one\n" })
	time.Sleep(100 * time.Millisecond) // waiting for more
	appendFile(t, path, ts+" stdout F two\n")
	start := time.Now()
	tl.finish()
	if d := time.Since(start); d > 700*time.Millisecond {
		t.Errorf("finish took %s, want it prompt", d)
	}
	if out.String() != "one\ntwo\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

// A tailer that gets no follow slot (every inotify instance the run may
// take is in use) reads its log whole when it is finished.
func TestTailerWithoutAFollowSlotReadsAtFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, ts+" stdout F one\n")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out, followSlots: make(chan struct{})}) // never a free slot
	appendFile(t, path, ts+" stdout F two\n"+ts+" stdout P three")
	tl.finish()
	if out.String() != "one\ntwo\nthree\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

// A follow that breaks off (no inotify instance to be had) after writing
// part of the log: the rest comes once the instance is done, nothing
// twice.
func TestTailerFollowBrokenOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, lines(ts+" stdout F one", ts+" stderr F err one", ts+" stdout P two-"))
	var out, errOut syncBuffer
	tl := newTailer(path)
	tl.follow = func(ctx context.Context, path, id string, opts *LogOptions, running runningFunc, stdout, stderr io.Writer) error {
		if err := readLog(ctx, path, id, &LogOptions{}, nil, stdout, stderr); err != nil {
			return err
		}
		return errors.New("failed to create fsnotify watcher: too many open files")
	}
	go tl.run(&logSink{stdout: &out, stderr: &errOut}, "[p] ")
	waitFor(t, "the first line", 2*time.Second, func() bool { return out.String() == "[p] one\n" })
	appendFile(t, path, lines(ts+" stdout F three", ts+" stderr F err two"))
	tl.finish()
	if out.String() != "[p] one\n[p] two-three\n" || errOut.String() != "[p] err one\n[p] err two\n" {
		t.Errorf("stdout = %q, stderr = %q", out.String(), errOut.String())
	}
}

func TestTailerOfAMissingFileFinishes(t *testing.T) {
	var out syncBuffer
	tl := startTailer(filepath.Join(t.TempDir(), "never.log"), "", &logSink{stdout: &out})
	done := make(chan struct{})
	go func() { tl.finish(); tl.finish(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("finish of a tailer on a missing file did not return")
	}
	if out.String() != "" {
		t.Errorf("stdout = %q, want nothing", out.String())
	}
}

func TestLogSinkWithoutWritersDropsOutput(t *testing.T) {
	s := &logSink{}
	s.write(runtimeapi.Stdout, "p", []byte("x\n")) // must not panic
	var errOut syncBuffer
	s = &logSink{stderr: &errOut}
	s.write(runtimeapi.Stdout, "", []byte("dropped\n"))
	s.write(runtimeapi.Stderr, "", []byte("kept\n"))
	if errOut.String() != "kept\n" {
		t.Errorf("stderr = %q", errOut.String())
	}
}

func TestLogSetPrefixesOnlyWhenMulti(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c", "0.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, ts+" stdout F hi\n")
	st := &runtimeStatus{Containers: []*containerStatus{{ID: "c0", Name: "c", State: stateExited, LogPath: path}}}
	for _, multi := range []bool{false, true} {
		var out syncBuffer
		ls := newLogSet(&logSink{stdout: &out}, "web", multi)
		ls.update(st)
		ls.finishAll()
		want := "hi\n"
		if multi {
			want = "[pod/web/c] hi\n"
		}
		if out.String() != want {
			t.Errorf("multi=%v: stdout = %q, want %q", multi, out.String(), want)
		}
	}
}

func TestLogSetWritesAReplacedInstanceBeforeItsSuccessor(t *testing.T) {
	dir := t.TempDir()
	p0, p1 := filepath.Join(dir, "0.log"), filepath.Join(dir, "1.log")
	appendFile(t, p0, ts+" stdout F from 0\n")
	appendFile(t, p1, ts+" stdout F from 1\n")
	var out syncBuffer
	ls := newLogSet(&logSink{stdout: &out}, "web", false)
	ls.update(&runtimeStatus{Containers: []*containerStatus{
		{ID: "c1", Name: "c", State: stateRunning, LogPath: p1, RestartCount: 1},
		{ID: "c0", Name: "c", State: stateExited, LogPath: p0},
		{ID: "c2", Name: "d", State: stateCreated, LogPath: filepath.Join(dir, "created.log")},
	}})
	// The replaced instance was finished synchronously.
	if !strings.HasPrefix(out.String(), "from 0\n") {
		t.Errorf("stdout = %q, want the old instance's output first", out.String())
	}
	ls.finishAll()
	if out.String() != "from 0\nfrom 1\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if _, ok := ls.tailers["c2"]; ok {
		t.Errorf("a created container is followed before it started")
	}
}

// A run whose output goes nowhere follows no log: writers that discard
// everything are dropped.
func TestNewLogSinkDropsDiscardingWriters(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	regular, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	var buf syncBuffer
	cases := []struct {
		name           string
		stdout, stderr io.Writer
		discards       bool
	}{
		{"nil writers", nil, nil, true},
		{"io.Discard", io.Discard, io.Discard, true},
		{"/dev/null", null, null, true},
		{"/dev/null and a buffer", null, &buf, false},
		{"a regular file", regular, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newLogSink(tc.stdout, tc.stderr).discards(); got != tc.discards {
				t.Errorf("discards() = %v, want %v", got, tc.discards)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, ts+" stdout F hi\n")
	ls := newLogSet(newLogSink(null, io.Discard), "web", false)
	ls.update(&runtimeStatus{Containers: []*containerStatus{{ID: "c0", Name: "c", State: stateRunning, LogPath: path}}})
	if len(ls.tailers) != 0 {
		t.Errorf("a run without output followed %d logs", len(ls.tailers))
	}
	ls.finishAll()
}

// An instance whose log file the runtime has not made yet is followed
// from the update that finds it, or read at the end.
func TestLogSetWaitsForALogFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	var out syncBuffer
	ls := newLogSet(&logSink{stdout: &out}, "web", false)
	st := &runtimeStatus{Containers: []*containerStatus{{ID: "c0", Name: "c", State: stateRunning, LogPath: path}}}
	ls.update(st)
	if len(ls.tailers) != 0 || ls.waiting["c0"] == nil {
		t.Fatalf("tailers %v, waiting %v: want the instance waiting for its file", ls.tailers, ls.waiting)
	}
	appendFile(t, path, ts+" stdout F late\n")
	ls.finishAll()
	if out.String() != "late\n" {
		t.Errorf("stdout = %q", out.String())
	}
}
