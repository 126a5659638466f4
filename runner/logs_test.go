package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
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
	tl.finish(false)
	if out.String() != "[p] one\n[p] two\n" || errOut.String() != "[p] err-one\n" {
		t.Errorf("stdout = %q, stderr = %q", out.String(), errOut.String())
	}
}

func TestTailerFollowsOutputWrittenLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, "")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out})
	defer tl.finish(true)
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

// A runtime can still be writing an exited container's log when it reports
// the exit (containerd's CRI logger writes what it read from the pipe after
// the exit handling's wait for the copy): the tailer of an exited instance
// reads on until the log is quiet. On containerd 1.6 a container printing
// 20 MB up to its exit lost its last 110 KB in the run's output.
func TestTailerOfAnExitedInstanceReadsWhatTheRuntimeStillWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, "")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out})
	const batches, perBatch = 60, 50
	wrote := make(chan struct{})
	var want strings.Builder
	var batch []string
	for i := range batches * perBatch {
		fmt.Fprintf(&want, "line %d\n", i)
		batch = append(batch, fmt.Sprintf("%s stdout F line %d", ts, i))
	}
	go func() {
		defer close(wrote)
		for b := range batches {
			appendFile(t, path, lines(batch[b*perBatch:(b+1)*perBatch]...))
			time.Sleep(5 * time.Millisecond)
		}
	}()
	waitFor(t, "some output", 2*time.Second, func() bool { return out.String() != "" })
	tl.finish(true) // the exit is seen while the runtime is behind
	<-wrote
	if got := out.String(); got != want.String() {
		t.Errorf("stdout has %d of the %d lines; the last: %q", strings.Count(got, "\n"), batches*perBatch, lastLine(got))
	}
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
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
	tl.finish(true)
	// The log grew at the end: the tailer reads on until it has been quiet
	// for drainQuiet, and not for ReadLogs' second.
	if d := time.Since(start); d > drainQuiet+700*time.Millisecond {
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
	tl.finish(true)
	if out.String() != "one\ntwo\nthree\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

// A tailer that cannot have an inotify watcher (no instance to be had)
// reads its log every logPollInterval: what comes shows while the
// instance runs, and the rest once it is done, nothing twice.
func TestTailerWithoutInotifyPolls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, lines(ts+" stdout F one", ts+" stderr F err one", ts+" stdout P two-"))
	var out, errOut syncBuffer
	tl := newTailer(path)
	tl.newWatcher = func() (*fsnotify.Watcher, error) {
		return nil, errors.New("too many open files")
	}
	go tl.run(&logSink{stdout: &out, stderr: &errOut}, "[p] ")
	waitFor(t, "the first line", 2*time.Second, func() bool { return out.String() == "[p] one\n" })
	time.Sleep(100 * time.Millisecond) // quiet: a tailer would watch now, and this one cannot
	appendFile(t, path, lines(ts+" stdout F three", ts+" stderr F err two"))
	waitFor(t, "the lines written later", 2*time.Second, func() bool { return out.String() == "[p] one\n[p] two-three\n" })
	appendFile(t, path, ts+" stdout F four\n")
	tl.finish(true)
	if out.String() != "[p] one\n[p] two-three\n[p] four\n" || errOut.String() != "[p] err one\n[p] err two\n" {
		t.Errorf("stdout = %q, stderr = %q", out.String(), errOut.String())
	}
}

func TestTailerOfAMissingFileFinishes(t *testing.T) {
	var out syncBuffer
	tl := startTailer(filepath.Join(t.TempDir(), "never.log"), "", &logSink{stdout: &out})
	done := make(chan struct{})
	go func() { tl.finish(true); tl.finish(true); close(done) }()
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
		ls.finishAll(true)
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
	ls.finishAll(true)
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
		{"/dev/null behind a wrapper that unwraps", wrapped{null}, wrapped{wrapped{null}}, true},
		{"a buffer behind a wrapper", wrapped{&buf}, nil, false},
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
	ls.finishAll(true)
}

// wrapped is a writer that says what it wraps, as main's output guard.
type wrapped struct{ w io.Writer }

func (w wrapped) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w wrapped) Unwrap() io.Writer           { return w.w }

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
	ls.finishAll(true)
	if out.String() != "late\n" {
		t.Errorf("stdout = %q", out.String())
	}
}

// writeRecorder records each write to either of its streams, in order.
type writeRecorder struct {
	mu     sync.Mutex
	writes []recordedWrite
}

type recordedWrite struct {
	stream string
	text   string
}

func (r *writeRecorder) stream(name string) io.Writer { return recorderStream{r, name} }

func (r *writeRecorder) all() []recordedWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedWrite(nil), r.writes...)
}

type recorderStream struct {
	r    *writeRecorder
	name string
}

func (s recorderStream) Write(p []byte) (int, error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.writes = append(s.r.writes, recordedWrite{s.name, string(p)})
	return len(p), nil
}

// A run's sink writes many lines at once, whole: the lines of two
// containers, each with its prefix, in the order they came, none split.
func TestLogSinkWritesWholeLinesInFewWrites(t *testing.T) {
	var rec writeRecorder
	s := newLogSink(rec.stream("stdout"), rec.stream("stderr"))
	var want strings.Builder
	const n = 20000
	for i := range n {
		prefix := "[pod/p/a] "
		if i%3 == 0 {
			prefix = "[pod/p/b] "
		}
		line := fmt.Sprintf("line %d\n", i)
		s.write(runtimeapi.Stdout, prefix, []byte(line))
		want.WriteString(prefix + line)
	}
	s.flush()
	writes := rec.all()
	var got strings.Builder
	for _, w := range writes {
		if w.stream != "stdout" || !strings.HasSuffix(w.text, "\n") {
			t.Fatalf("a write of %d bytes to %s does not end a line: %q", len(w.text), w.stream, w.text[max(0, len(w.text)-40):])
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(w.text, "\n"), "\n") {
			if !strings.HasPrefix(l, "[pod/p/") {
				t.Fatalf("a write holds a line without its prefix: %q", l)
			}
		}
		got.WriteString(w.text)
	}
	if got.String() != want.String() {
		t.Errorf("the output differs from the lines written, in order")
	}
	if len(writes) > want.Len()/maxPending+1 {
		t.Errorf("%d writes for %d lines (%d bytes): want at most one per %d bytes", len(writes), n, want.Len(), maxPending)
	}
}

// Lines of the two streams go out in the order they came: what the sink
// holds of one stream is written before a line of the other.
func TestLogSinkKeepsTheOrderOfTheStreams(t *testing.T) {
	var rec writeRecorder
	s := newLogSink(rec.stream("stdout"), rec.stream("stderr"))
	for _, l := range []struct{ stream, text string }{
		{"stdout", "out 1\n"}, {"stdout", "out 2\n"}, {"stderr", "err 1\n"}, {"stdout", "out 3\n"}, {"stderr", "err 2\n"}, {"stderr", "err 3\n"},
	} {
		s.write(runtimeapi.LogStreamType(l.stream), "", []byte(l.text))
	}
	s.flush()
	want := []recordedWrite{{"stdout", "out 1\nout 2\n"}, {"stderr", "err 1\n"}, {"stdout", "out 3\n"}, {"stderr", "err 2\nerr 3\n"}}
	if got := rec.all(); !slices.Equal(got, want) {
		t.Errorf("writes %q, want %q", got, want)
	}
}

// A line the sink holds goes out within flushInterval though nothing more
// comes and nobody flushes.
func TestLogSinkFlushesAfterTheInterval(t *testing.T) {
	var rec writeRecorder
	s := newLogSink(rec.stream("stdout"), nil)
	start := time.Now()
	s.write(runtimeapi.Stdout, "", []byte("alone\n"))
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("written at once: %q; want the line held", got)
	}
	waitFor(t, "the line", flushInterval+2*time.Second, func() bool { return len(rec.all()) == 1 })
	if d := time.Since(start); d < flushInterval {
		t.Errorf("written after %s, before flushInterval (%s)", d, flushInterval)
	}
	if got := rec.all(); got[0].text != "alone\n" {
		t.Errorf("wrote %q", got)
	}
	// And again: the timer serves every line held after a write.
	s.write(runtimeapi.Stdout, "", []byte("again\n"))
	waitFor(t, "the second line", flushInterval+2*time.Second, func() bool { return len(rec.all()) == 2 })
}

// A line longer than the sink gathers goes out whole, in one write of
// its own, after what the sink held before it.
func TestLogSinkWritesALongLineWhole(t *testing.T) {
	var rec writeRecorder
	s := newLogSink(rec.stream("stdout"), nil)
	long := strings.Repeat("x", 3*maxPending) + "\n"
	s.write(runtimeapi.Stdout, "", []byte("short\n"))
	s.write(runtimeapi.Stdout, "[p] ", []byte(long))
	s.write(runtimeapi.Stdout, "", []byte("after\n"))
	s.flush()
	want := []recordedWrite{{"stdout", "short\n"}, {"stdout", "[p] " + long}, {"stdout", "after\n"}}
	if got := rec.all(); !slices.Equal(got, want) {
		t.Errorf("%d writes of %v bytes, want the long line alone and whole", len(got), writeSizes(got))
	}
}

func writeSizes(ws []recordedWrite) []int {
	var n []int
	for _, w := range ws {
		n = append(n, len(w.text))
	}
	return n
}

// `podrun logs`' sink is not buffered: each line is written at once, with
// its prefix, in one write.
func TestLogSinkUnbufferedWritesEachLine(t *testing.T) {
	var rec writeRecorder
	s := &logSink{stdout: rec.stream("stdout")}
	s.write(runtimeapi.Stdout, "[p] ", []byte("one\n"))
	if got := rec.all(); !slices.Equal(got, []recordedWrite{{"stdout", "[p] one\n"}}) {
		t.Errorf("writes %q", got)
	}
}

// A tailer on a run's sink keeps up with a container that prints many
// short lines: they go out in few writes, whole and in order.
func TestTailerWritesAFastLogInFewWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	const n = 50000
	var log, want strings.Builder
	for i := range n {
		fmt.Fprintf(&log, "%s stdout F y%d\n", ts, i)
		fmt.Fprintf(&want, "y%d\n", i)
	}
	appendFile(t, path, "")
	var rec writeRecorder
	tl := startTailer(path, "", newLogSink(rec.stream("stdout"), rec.stream("stderr")))
	appendFile(t, path, log.String())
	tl.finish(true)
	var got strings.Builder
	writes := rec.all()
	for _, w := range writes {
		got.WriteString(w.text)
	}
	if got.String() != want.String() {
		t.Fatalf("stdout differs from the %d lines written", n)
	}
	if len(writes) > want.Len()/maxPending+10 {
		t.Errorf("%d writes for %d lines", len(writes), n)
	}
}
