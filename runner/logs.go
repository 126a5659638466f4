package runner

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// logPollInterval is how often a tailer looks for new output once it has
// read everything. Output is shown with at most this delay; at a container's
// end everything is read synchronously, so nothing is lost.
const logPollInterval = 50 * time.Millisecond

// logSink writes container output to podrun's stdout and stderr, a whole
// line at a time so that lines of different containers never interleave.
type logSink struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
}

func (s *logSink) write(stream string, prefix string, line []byte) {
	w := s.stdout
	if stream == "stderr" {
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

// tailer follows one container instance's CRI log file and writes its
// lines to the sink.
type tailer struct {
	path    string
	prefix  string
	sink    *logSink
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	partial map[string][]byte // per stream: partial ("P") chunks not yet ended
}

func startTailer(path, prefix string, sink *logSink) *tailer {
	t := &tailer{path: path, prefix: prefix, sink: sink,
		stop: make(chan struct{}), done: make(chan struct{}), partial: map[string][]byte{}}
	go t.run()
	return t
}

// finish reads everything that is left and waits for the tailer to end.
func (t *tailer) finish() {
	t.once.Do(func() { close(t.stop) })
	<-t.done
}

func (t *tailer) run() {
	defer close(t.done)
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var buf []byte
	chunk := make([]byte, 32*1024)
	for {
		stopping := false
		select {
		case <-t.stop:
			stopping = true
		default:
		}
		if f == nil {
			var err error
			f, err = os.Open(t.path)
			if err != nil {
				if stopping || !errors.Is(err, os.ErrNotExist) {
					return
				}
			}
		}
		if f != nil {
			for {
				n, err := f.Read(chunk)
				buf = append(buf, chunk[:n]...)
				buf = t.emitLines(buf)
				if err != nil || n == 0 {
					break
				}
			}
		}
		if stopping {
			if len(buf) > 0 {
				t.emitLine(append(buf, '\n'))
			}
			t.flushPartial()
			return
		}
		select {
		case <-t.stop:
		case <-time.After(logPollInterval):
		}
	}
}

// emitLines writes every complete line of buf and returns the rest.
func (t *tailer) emitLines(buf []byte) []byte {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return buf
		}
		t.emitLine(buf[:i+1])
		buf = buf[i+1:]
	}
}

// emitLine parses one CRI log line: "<RFC3339Nano> <stream> <P|F> <text>".
func (t *tailer) emitLine(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	stream, tag, text, ok := parseCRILogLine(line)
	if !ok {
		t.sink.write("stdout", t.prefix, append(line, '\n'))
		return
	}
	if tag == "P" {
		t.partial[stream] = append(t.partial[stream], text...)
		return
	}
	out := append(t.partial[stream], text...)
	delete(t.partial, stream)
	t.sink.write(stream, t.prefix, append(out, '\n'))
}

func (t *tailer) flushPartial() {
	for stream, p := range t.partial {
		t.sink.write(stream, t.prefix, append(p, '\n'))
	}
	t.partial = map[string][]byte{}
}

// parseCRILogLine splits a CRI log line into stream, tag and text.
func parseCRILogLine(line []byte) (stream, tag string, text []byte, ok bool) {
	parts := bytes.SplitN(line, []byte(" "), 4)
	if len(parts) < 3 {
		return "", "", nil, false
	}
	stream = string(parts[1])
	if stream != "stdout" && stream != "stderr" {
		return "", "", nil, false
	}
	tag = string(parts[2])
	if len(parts) == 4 {
		text = parts[3]
	}
	// The tag field may carry more than P/F in future (colon-separated).
	if i := bytes.IndexByte([]byte(tag), ':'); i >= 0 {
		tag = tag[:i]
	}
	return stream, tag, append([]byte(nil), text...), true
}

// logSet follows the log files of every container instance of a pod.
type logSet struct {
	sink    *logSink
	podName string
	multi   bool
	mu      sync.Mutex
	tailers map[string]*tailer // container ID → tailer
}

func newLogSet(sink *logSink, podName string, multi bool) *logSet {
	return &logSet{sink: sink, podName: podName, multi: multi, tailers: map[string]*tailer{}}
}

// update starts following every instance that has started, and finishes
// the instances a newer one of the same container has replaced.
func (l *logSet) update(st *runtimeStatus) {
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
			prefix := ""
			if l.multi {
				prefix = "[pod/" + l.podName + "/" + c.Name + "] "
			}
			t = startTailer(c.LogPath, prefix, l.sink)
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
}
