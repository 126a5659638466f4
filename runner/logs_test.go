package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseCRILogLine(t *testing.T) {
	cases := []struct {
		name   string
		line   string
		stream string
		tag    string
		text   string
		ok     bool
	}{
		{name: "a full stdout line", line: "2026-01-02T03:04:05.123456789Z stdout F hello world", stream: "stdout", tag: "F", text: "hello world", ok: true},
		{name: "a partial stderr line", line: "2026-01-02T03:04:05Z stderr P part", stream: "stderr", tag: "P", text: "part", ok: true},
		{name: "an empty message", line: "2026-01-02T03:04:05Z stdout F", stream: "stdout", tag: "F", text: "", ok: true},
		{name: "an empty message after the tag's space", line: "2026-01-02T03:04:05Z stdout F ", stream: "stdout", tag: "F", text: "", ok: true},
		{name: "spaces inside the message are kept", line: "t stdout F  two  spaces ", stream: "stdout", tag: "F", text: " two  spaces ", ok: true},
		{name: "a tag with extra colon-separated fields", line: "t stdout F:x hi", stream: "stdout", tag: "F", text: "hi", ok: true},
		{name: "an unknown stream is not a CRI line", line: "t stdin F hi", ok: false},
		{name: "too few fields is not a CRI line", line: "just-text", ok: false},
		{name: "a plain line of output is not a CRI line", line: "hello world", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream, tag, text, ok := parseCRILogLine([]byte(tc.line))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if stream != tc.stream || tag != tc.tag || string(text) != tc.text {
				t.Errorf("parseCRILogLine = %q %q %q, want %q %q %q", stream, tag, text, tc.stream, tc.tag, tc.text)
			}
		})
	}
}

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
	appendFile(t, path, strings.Join([]string{
		ts + " stdout F one",
		ts + " stderr F err one",
		ts + " stdout P two-a ",
		ts + " stderr P err-",
		ts + " stdout P two-b ",
		ts + " stdout F two-c",
		ts + " stderr F two",
		"not a cri line",
		ts + " stdout F three",
	}, "\n")+"\n")
	var out, errOut syncBuffer
	tl := startTailer(path, "[p] ", &logSink{stdout: &out, stderr: &errOut})
	tl.finish()
	if want := "[p] one\n[p] two-a two-b two-c\n[p] not a cri line\n[p] three\n"; out.String() != want {
		t.Errorf("stdout =\n%q\nwant\n%q", out.String(), want)
	}
	if want := "[p] err one\n[p] err-two\n"; errOut.String() != want {
		t.Errorf("stderr =\n%q\nwant\n%q", errOut.String(), want)
	}
}

func TestTailerFlushesAnUnterminatedLastLineAtFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, ts+" stdout F done\n"+ts+" stdout F no newline")
	var out syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out})
	tl.finish()
	if want := "done\nno newline\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
}

func TestTailerFlushesAPendingPartialLineAtFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	appendFile(t, path, ts+" stderr P cut short\n")
	var out, errOut syncBuffer
	tl := startTailer(path, "", &logSink{stdout: &out, stderr: &errOut})
	tl.finish()
	if errOut.String() != "cut short\n" || out.String() != "" {
		t.Errorf("stdout = %q, stderr = %q; want the partial line on stderr", out.String(), errOut.String())
	}
}

func TestTailerFollowsOutputWrittenLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	var out syncBuffer
	// The file does not exist yet when the tailer starts.
	tl := startTailer(path, "", &logSink{stdout: &out})
	defer tl.finish()
	appendFile(t, path, ts+" stdout F first\n")
	waitFor(t, "the first line", 2*time.Second, func() bool { return out.String() == "first\n" })
	// Half a line is held back until its end arrives.
	appendFile(t, path, ts+" stdout F sec")
	time.Sleep(3 * logPollInterval)
	if got := out.String(); got != "first\n" {
		t.Errorf("stdout = %q before the line was complete", got)
	}
	appendFile(t, path, "ond\n")
	waitFor(t, "the second line", 2*time.Second, func() bool { return out.String() == "first\nsecond\n" })
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
	s.write("stdout", "p", []byte("x\n")) // must not panic
	var errOut syncBuffer
	s = &logSink{stderr: &errOut}
	s.write("stdout", "", []byte("dropped\n"))
	s.write("stderr", "", []byte("kept\n"))
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
