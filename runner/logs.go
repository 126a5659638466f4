package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A run's live output: a pod's log set (logSet) follows each container
// instance's log with a tailer (logfollow.go), which decodes it with the
// CRI log decoder (crilog.go) into the run's log sink (logSink), which
// writes it, a whole line at a time with its prefix, to the run's stdout
// and stderr.

// logSink writes container output to its writers, a whole line at a time
// with its prefix, so that lines of different containers never
// interleave. A nil writer drops its stream.
//
// A buffered sink (a run's: newLogSink) gathers the lines and writes many
// in one write: a container that prints fast is not slowed by a write per
// line (issue 19: a 2-byte line each, 20 MB of them, took 54 s under
// podrun against 36 s on the runtime alone). What it holds goes out as
// soon as a follower has read its log to the end (the usual case: a line
// appears at once), before a line of the other stream (the two keep their
// order relative to each other, as when they share a terminal), once it
// holds maxPending bytes, and at the latest flushInterval after the first
// line it holds. Lines are never split: one longer than maxPending goes
// out whole, in a write of its own.
type logSink struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	// followSlots bounds how many of the run's tailers follow at once
	// (maxFollowing); nil: no bound.
	followSlots chan struct{}

	buffered bool      // hold lines until flush; otherwise each line is written at once
	pending  []byte    // whole lines not written yet, with their prefixes
	to       io.Writer // the writer pending goes to
	timer    *time.Timer
	armed    bool // timer runs: pending is written at the latest when it fires
}

// flushInterval bounds how long a buffered sink holds a line when its
// follower goes on reading (a long backlog, say); one that has read its
// log to the end writes it at once. Short enough that live output looks
// live, long enough that the timer costs nothing.
const flushInterval = 50 * time.Millisecond

// maxPending is how much a buffered sink gathers before it writes: big
// enough that a fast container's lines go out in few writes, small enough
// to stay in the cache.
const maxPending = 64 << 10

// newLogSink is the buffered sink of a run's output. A writer that throws
// everything away (io.Discard, /dev/null, also behind a wrapper that
// unwraps to it) is dropped, so that a run whose output nobody reads
// follows no log at all.
func newLogSink(stdout, stderr io.Writer) *logSink {
	return &logSink{stdout: unlessDiscard(stdout), stderr: unlessDiscard(stderr),
		followSlots: make(chan struct{}, maxFollowing), buffered: true}
}

// discards reports whether the sink drops both streams.
func (s *logSink) discards() bool { return s.stdout == nil && s.stderr == nil }

func (s *logSink) write(stream runtimeapi.LogStreamType, prefix string, line []byte) {
	w := s.stdout
	if stream == runtimeapi.Stderr {
		w = s.stderr
	}
	if w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.to != w || len(s.pending)+len(prefix)+len(line) > maxPending {
		s.flushLocked()
		s.to = w
	}
	s.pending = append(s.pending, prefix...)
	s.pending = append(s.pending, line...)
	switch {
	case !s.buffered || len(s.pending) >= maxPending:
		s.flushLocked()
	case !s.armed:
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(flushInterval, s.timedFlush)
		} else {
			s.timer.Reset(flushInterval)
		}
	}
}

// flush writes the lines the sink holds.
func (s *logSink) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
}

func (s *logSink) timedFlush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = false
	s.flushLocked()
}

func (s *logSink) flushLocked() {
	if len(s.pending) == 0 {
		return
	}
	// A write error is the writer's to handle (main's output guard stops
	// the run on a closed stdout); the lines are gone either way.
	_, _ = s.to.Write(s.pending)
	if cap(s.pending) > 4*maxPending {
		s.pending = nil // the room of one huge line is not kept
	} else {
		s.pending = s.pending[:0]
	}
	if s.armed {
		// Nothing is held: the timer would wake the run for nothing. (One
		// that has fired already flushes nothing, or a line written
		// since, early.)
		s.timer.Stop()
		s.armed = false
	}
}

// unlessDiscard is w, or nil when w throws its output away: io.Discard,
// /dev/null, or a writer that wraps one of them and says so with an
// Unwrap() io.Writer method (main's output guard).
func unlessDiscard(w io.Writer) io.Writer {
	inner := w
	for {
		if inner == nil || inner == io.Discard {
			return nil
		}
		if f, ok := inner.(*os.File); ok && isDevNull(f) {
			return nil
		}
		u, ok := inner.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		inner = u.Unwrap()
	}
}

// isDevNull reports whether f is /dev/null (the same character device).
func isDevNull(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// lineWriter gathers what the decoder writes for one stream into whole
// lines and hands each to the sink with its prefix.
type lineWriter struct {
	sink   *logSink
	stream runtimeapi.LogStreamType
	prefix string
	lines  lineSplitter
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.lines.split(p, w.write)
	return len(p), nil
}

func (w *lineWriter) write(line []byte) { w.sink.write(w.stream, w.prefix, line) }

// flush writes a line the log left unfinished (a last partial line),
// ending it with a newline when newline is set.
func (w *lineWriter) flush(newline bool) {
	w.lines.rest(func(line []byte) {
		if newline {
			line = append(line, '\n')
		}
		w.write(line)
	})
}

// copyLog decodes the log at path into the sink, a whole line at a time
// with the prefix, ends a last unfinished line with a newline and writes
// out what the sink holds.
func copyLog(ctx context.Context, path string, sink *logSink, prefix string) error {
	out, errw := lineWriters(sink, prefix)
	err := readLog(ctx, path, "", &logOptions{}, nil, out, errw)
	out.flush(true)
	errw.flush(true)
	sink.flush()
	return err
}

func lineWriters(sink *logSink, prefix string) (stdout, stderr *lineWriter) {
	return &lineWriter{sink: sink, stream: runtimeapi.Stdout, prefix: prefix},
		&lineWriter{sink: sink, stream: runtimeapi.Stderr, prefix: prefix}
}

// logSet follows the log files of every container instance of a pod.
type logSet struct {
	sink    *logSink
	podName string
	multi   bool
	mu      sync.Mutex
	tailers map[string]*tailer // container ID → tailer
	names   map[string]string  // container ID → container name, of the tailers
	// waiting are the instances that have started but whose log file the
	// runtime has not made yet, by container ID: followed from the next
	// update that finds the file, or read at the end.
	waiting map[string]*containerStatus
	// skipped are the instances whose output comes through -i's attach
	// (a terminal), by container ID: never followed.
	skipped map[string]bool
}

func newLogSet(sink *logSink, podName string, multi bool) *logSet {
	return &logSet{sink: sink, podName: podName, multi: multi,
		tailers: map[string]*tailer{}, names: map[string]string{}, waiting: map[string]*containerStatus{}, skipped: map[string]bool{}}
}

// skip never follows the instance id: its output comes another way.
func (l *logSet) skip(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skipped[id] = true
}

func (l *logSet) prefix(container string) string {
	if !l.multi {
		return ""
	}
	return "[pod/" + l.podName + "/" + container + "] "
}

// update starts following every instance that has started, and finishes
// the instances a newer one of the same container has replaced. A run
// whose output goes nowhere follows nothing.
func (l *logSet) update(st *runtimeStatus) {
	if l.sink.discards() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	newest := map[string]string{}
	for _, c := range st.Containers {
		if _, ok := newest[c.Name]; !ok {
			newest[c.Name] = c.ID
		}
	}
	// Oldest first, so that an instance's output is all written before
	// that of the instance that replaced it.
	for i := len(st.Containers) - 1; i >= 0; i-- {
		c := st.Containers[i]
		if c.LogPath == "" || c.State == stateCreated {
			continue
		}
		t := l.follow(c)
		if t != nil && newest[c.Name] != c.ID && c.State == stateExited {
			t.finish(true)
		}
	}
}

// started follows a container instance the run has just started, before
// its postStart hook runs: the hook runs synchronously, for as long as it
// takes, and the container writes its log meanwhile (issue 19: a line
// printed at once showed only once a 5 s hook had ended, and never when
// the run was interrupted during the hook). The instances of the same
// container it replaces are read to their end first, so that their
// output comes before its.
func (l *logSet) started(id, name, path string) {
	if l.sink.discards() || path == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.tailers[id]; ok {
		return
	}
	for oid, t := range l.tailers {
		if l.names[oid] == name {
			t.finish(true) // an instance replaced by a new start has exited
		}
	}
	for oid, c := range l.waiting {
		if c.Name == name {
			_ = copyLog(context.Background(), c.LogPath, l.sink, l.prefix(c.Name))
			delete(l.waiting, oid)
		}
	}
	l.follow(&containerStatus{ID: id, Name: name, LogPath: path})
}

// follow starts the tailer of instance c unless it has one, and returns
// it; nil while its log file is not there (c waits for it).
func (l *logSet) follow(c *containerStatus) *tailer {
	if t, ok := l.tailers[c.ID]; ok || l.skipped[c.ID] {
		return t
	}
	if _, err := os.Stat(c.LogPath); errors.Is(err, os.ErrNotExist) {
		l.waiting[c.ID] = c
		return nil
	}
	delete(l.waiting, c.ID)
	t := startTailer(c.LogPath, l.prefix(c.Name), l.sink)
	l.tailers[c.ID] = t
	l.names[c.ID] = c.Name
	return t
}

// finishAll reads what is left of every log and stops following, all at
// once. exited says the pod's containers have been stopped (teardown), not
// left running (a detach): the tailers then also read what the runtime is
// still writing.
func (l *logSet) finishAll(exited bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.tailers {
		t.end(exited)
	}
	for _, t := range l.tailers {
		<-t.done
	}
	for id, c := range l.waiting {
		_ = copyLog(context.Background(), c.LogPath, l.sink, l.prefix(c.Name))
		delete(l.waiting, id)
	}
}
