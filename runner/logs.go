package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/klog/v2"
)

// The one CRI log decoder. Every reader of a container's log — a run's
// live output, `podrun logs`, the FallbackToLogsOnError termination
// message and LogTail — decodes it with k8s.io/cri-client's ReadLogs, the
// reader of the kubelet and crictl: the CRI and docker-json formats,
// partial ("P") lines, --since, --tail, timestamps, and following a file
// (inotify on its directory) until the container stops running.

// LogOptions are the decoder's options (TailLines, Since, Follow,
// Timestamp, LimitBytes), as the kubelet's ReadLogs takes them.
type LogOptions = crilogs.LogOptions

// runningFunc tells a follower whether the container still runs, so that
// it keeps waiting for output; a follow ends once it says no and the file
// is read to its end.
type runningFunc func(ctx context.Context, containerID string) (bool, error)

// readLog decodes the CRI log at path into stdout and stderr, each decoded
// chunk in one Write: a full line ends with "\n", a partial one does not
// and the next chunk continues it. With opts.Follow it waits for more
// until running says the container has stopped. ReadLogs logs through
// klog; podrun's log reading stays silent and reports what matters as
// errors.
func readLog(ctx context.Context, path, containerID string, opts *LogOptions, running runningFunc, stdout, stderr io.Writer) error {
	ctx = klog.NewContext(ctx, logr.Discard())
	var rs internalapi.RuntimeService
	if running != nil {
		rs = statusService{running: running}
	}
	return crilogs.ReadLogs(ctx, path, containerID, opts, rs, stdout, stderr)
}

// statusService is the runtime service ReadLogs asks, while following,
// whether the container still runs: its ContainerStatus only, answered by
// a runningFunc (podrun's own CRI client, or a run that knows when an
// instance is done). ReadLogs calls nothing else; the embedded interface
// is nil and any other method would panic.
type statusService struct {
	internalapi.RuntimeService
	running runningFunc
}

func (s statusService) ContainerStatus(ctx context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	ok, err := s.running(ctx, id)
	if err != nil {
		return nil, err
	}
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if ok {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, State: state}}, nil
}

// LogTail is the text of the last lines of a container's CRI log (both
// streams, in order, partial lines joined), cut to its last maxBytes bytes
// when maxBytes > 0: what the kubelet reads for a FallbackToLogsOnError
// termination message (readLastStringFromContainerLogs, 80 lines into a
// 2 KiB ring) and what a report shows of a failed container. An incomplete
// last line is read but does not count as a line.
func LogTail(path string, lines int64, maxBytes int) (string, error) {
	buf := &tailBuffer{max: maxBytes}
	if err := readLog(context.Background(), path, "", &LogOptions{TailLines: &lines}, nil, buf, buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// tailBuffer keeps the last max bytes written to it (all of them when max
// is 0), as the kubelet's circular buffer.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if t.max > 0 && len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.max > 0 && len(t.b) > t.max {
		return string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}

// logSink writes container output to its writers, a whole line at a time
// with its prefix, so that lines of different containers never
// interleave. A nil writer drops its stream.
type logSink struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	// followSlots bounds how many of the run's tailers follow at once
	// (maxFollowing); nil: no bound.
	followSlots chan struct{}
}

// newLogSink is the sink of a run's output. A writer that throws
// everything away (io.Discard, /dev/null) is dropped, so that a run whose
// output nobody reads follows no log at all.
func newLogSink(stdout, stderr io.Writer) *logSink {
	return &logSink{stdout: unlessDiscard(stdout), stderr: unlessDiscard(stderr), followSlots: make(chan struct{}, maxFollowing)}
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
	if prefix != "" {
		io.WriteString(w, prefix)
	}
	w.Write(line)
}

// unlessDiscard is w, or nil when w throws its output away.
func unlessDiscard(w io.Writer) io.Writer {
	if w == nil || w == io.Discard {
		return nil
	}
	if f, ok := w.(*os.File); ok && isDevNull(f) {
		return nil
	}
	return w
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
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			break
		}
		line := p[:i+1]
		if len(w.buf) > 0 {
			line = append(w.buf, line...)
			w.buf = w.buf[:0]
		}
		w.sink.write(w.stream, w.prefix, line)
		p = p[i+1:]
	}
	return n, nil
}

// flush writes a line the log left unfinished (a last partial line),
// ending it with a newline when newline is set.
func (w *lineWriter) flush(newline bool) {
	if len(w.buf) == 0 {
		return
	}
	if newline {
		w.buf = append(w.buf, '\n')
	}
	w.sink.write(w.stream, w.prefix, w.buf)
	w.buf = nil
}

// copyLog decodes the log at path into the sink, a whole line at a time
// with the prefix, and ends a last unfinished line with a newline.
func copyLog(ctx context.Context, path string, sink *logSink, prefix string) error {
	out, errw := lineWriters(sink, prefix)
	err := readLog(ctx, path, "", &LogOptions{}, nil, out, errw)
	out.flush(true)
	errw.flush(true)
	return err
}

func lineWriters(sink *logSink, prefix string) (stdout, stderr *lineWriter) {
	return &lineWriter{sink: sink, stream: runtimeapi.Stdout, prefix: prefix},
		&lineWriter{sink: sink, stream: runtimeapi.Stderr, prefix: prefix}
}

// maxFollowing is how many of a run's tailers follow at once. Each holds
// an inotify instance while it follows, and Linux allows a user 128 of
// them by default, shared with the runtime and everything else running as
// root. A tailer waits for a slot; one that is finished before it got one
// reads its log whole.
const maxFollowing = 64

// tailer streams one container instance's log to the sink while it runs.
type tailer struct {
	path    string
	stopped atomic.Bool   // finish was called: the instance writes nothing more
	stop    chan struct{} // closed with it
	once    sync.Once
	done    chan struct{}
	// follow is readLog; tests make it fail.
	follow func(ctx context.Context, path, containerID string, opts *LogOptions, running runningFunc, stdout, stderr io.Writer) error
}

func startTailer(path, prefix string, sink *logSink) *tailer {
	t := newTailer(path)
	go t.run(sink, prefix)
	return t
}

func newTailer(path string) *tailer {
	return &tailer{path: path, stop: make(chan struct{}), done: make(chan struct{}), follow: readLog}
}

func (t *tailer) run(sink *logSink, prefix string) {
	defer close(t.done)
	ctx := context.Background()
	out, errw := lineWriters(sink, prefix)
	defer errw.flush(true)
	defer out.flush(true)
	slots := sink.followSlots
	if slots == nil {
		slots = make(chan struct{}, 1)
	}
	select {
	case slots <- struct{}{}:
		defer func() { <-slots }()
	case <-t.stop:
		// A file that went away (the pod torn down under it) has been
		// read as far as it could be; there is nothing to report.
		_ = readLog(ctx, t.path, "", &LogOptions{}, nil, out, errw)
		return
	}
	outN, errN := &countingWriter{w: out}, &countingWriter{w: errw}
	if err := t.follow(ctx, t.path, "", &LogOptions{Follow: true}, t.running, outN, errN); err == nil {
		return
	}
	// Following broke off (no inotify instance to be had, say) after
	// writing what it had read. The decoder gives the same output for the
	// same start of a file, so once the instance is done its log is read
	// again and what was written already is skipped.
	<-t.stop
	_ = readLog(ctx, t.path, "", &LogOptions{}, nil, &skipWriter{w: out, n: outN.n}, &skipWriter{w: errw, n: errN.n})
}

// countingWriter counts what goes through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return c.w.Write(p)
}

// skipWriter drops the first n bytes written to it.
type skipWriter struct {
	w io.Writer
	n int
}

func (s *skipWriter) Write(p []byte) (int, error) {
	l := len(p)
	if s.n >= l {
		s.n -= l
		return l, nil
	}
	p, s.n = p[s.n:], 0
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return l, nil
}

// running is the tailer's answer to ReadLogs' question: the instance runs
// until finish says otherwise. The run knows when an instance is done, so
// following asks the runtime nothing.
func (t *tailer) running(context.Context, string) (bool, error) {
	return !t.stopped.Load(), nil
}

// finish reads everything that is left and waits for the tailer to end.
func (t *tailer) finish() {
	t.once.Do(func() {
		t.stopped.Store(true)
		close(t.stop)
		wake(t.path)
	})
	<-t.done
}

// wake makes a follower of the log at path look again at once rather
// than at its next periodic check (a second): ReadLogs waits for inotify
// events on the log's directory, and a chmod to the file's own mode
// raises one (IN_ATTRIB) without changing anything.
func wake(path string) {
	if fi, err := os.Stat(path); err == nil {
		_ = os.Chmod(path, fi.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	}
}

// logSet follows the log files of every container instance of a pod.
type logSet struct {
	sink    *logSink
	podName string
	multi   bool
	mu      sync.Mutex
	tailers map[string]*tailer // container ID → tailer
	// waiting are the instances that have started but whose log file the
	// runtime has not made yet, by container ID: followed from the next
	// update that finds the file, or read at the end.
	waiting map[string]*containerStatus
}

func newLogSet(sink *logSink, podName string, multi bool) *logSet {
	return &logSet{sink: sink, podName: podName, multi: multi,
		tailers: map[string]*tailer{}, waiting: map[string]*containerStatus{}}
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
		t, ok := l.tailers[c.ID]
		if !ok {
			if _, err := os.Stat(c.LogPath); errors.Is(err, os.ErrNotExist) {
				l.waiting[c.ID] = c
				continue
			}
			delete(l.waiting, c.ID)
			t = startTailer(c.LogPath, l.prefix(c.Name), l.sink)
			l.tailers[c.ID] = t
		}
		if newest[c.Name] != c.ID && c.State == stateExited {
			t.finish()
		}
	}
}

// finishAll reads what is left of every log and stops following.
func (l *logSet) finishAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.tailers {
		t.finish()
	}
	for id, c := range l.waiting {
		_ = copyLog(context.Background(), c.LogPath, l.sink, l.prefix(c.Name))
		delete(l.waiting, id)
	}
}
