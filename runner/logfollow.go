package runner

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
)

// A run's live output: a tailer per container instance reads its log file
// as the runtime writes it and decodes it as it grows (criStream), into
// the run's log sink.
//
// It does not follow with ReadLogs, for what following costs the runtime
// (issue 19): ReadLogs watches the log's directory with inotify for as
// long as it follows, and the runtime writes a container's log a line at a
// time, each write raising an inotify event in the runtime's own write
// call. A container printing 20 MB of 2-byte lines took containerd 2.4 26 s
// of CPU alone and 37 s with a watcher that read what came every 10 ms.
// A tailer watches only while the log is quiet: once two reads in a row
// find output it drops the watch and reads again every followPause until
// a read finds nothing, then watches again. A line that comes after a
// quiet spell is read at once; a container that prints without pause is
// read in chunks, the runtime paying nothing for it.
//
// criStream decodes as ReadLogs does the same bytes (no tail, since or
// timestamps); FuzzCRILog holds the two to the same output on any file.
//
// The runtime writes the log after the container has printed it, and can
// be behind when it reports the container exited: containerd's CRI logger
// reads the container's output from a pipe and writes it a line at a time,
// and its exit handling waits for the pipe's copy, not for those writes
// (internal/cri/server/container_start.go createContainerLoggers closes
// the file only once both loggers are done). A container that printed
// 20 MB of 2-byte lines up to its exit lost its last 110 KB in podrun's
// output on containerd 1.6 when the tailer stopped at the end the file had
// when the exit was seen. So a tailer of an instance that has exited, and
// whose log was still growing when it was told so, reads on until the log
// has not grown for drainQuiet (ReadLogs, following, stops once the
// container is not running and the log has been quiet for a second). A
// log that was quiet then is read to its end at once: nothing is behind.

const (
	// followPause is how long a tailer whose last read found output waits
	// before it reads again, unwatched.
	followPause = 10 * time.Millisecond
	// followCheck is how long a watched log is left unread at most, as
	// ReadLogs looks again every second whatever inotify says.
	followCheck = time.Second
	// logPollInterval is how often a tailer that cannot watch its log (no
	// inotify instance to be had, every follow slot taken) reads it.
	logPollInterval = 250 * time.Millisecond
	// readSize is the size of a tailer's reads.
	readSize = 64 << 10
	// drainQuiet is how long the log of an exited instance, growing when
	// its tailer was told to finish, must not grow for the runtime to
	// count as done writing it; drainMax bounds the wait.
	drainQuiet = 250 * time.Millisecond
	drainMax   = 10 * time.Second
)

// maxFollowing is how many of a run's tailers watch their logs at once.
// Each watch holds an inotify instance, and Linux allows a user 128 of
// them by default, shared with the runtime and everything else running as
// root. A tailer that finds no free slot reads its log every logPollInterval
// and tries again at its next quiet spell.
const maxFollowing = 64

// tailer streams one container instance's log to the sink while it runs.
type tailer struct {
	path    string
	stopped atomic.Bool   // finish was called: the instance writes nothing more
	exited  atomic.Bool   // the instance has exited: its log may still grow a little
	stop    chan struct{} // closed with it
	once    sync.Once
	done    chan struct{}
	// newWatcher makes the inotify watcher; tests make it fail.
	newWatcher func() (*fsnotify.Watcher, error)
}

func startTailer(path, prefix string, sink *logSink) *tailer {
	t := newTailer(path)
	go t.run(sink, prefix)
	return t
}

func newTailer(path string) *tailer {
	return &tailer{path: path, stop: make(chan struct{}), done: make(chan struct{}), newWatcher: fsnotify.NewWatcher}
}

func (t *tailer) run(sink *logSink, prefix string) {
	defer close(t.done)
	out, errw := lineWriters(sink, prefix)
	defer sink.flush() // last, after the unfinished lines
	defer errw.flush(true)
	defer out.flush(true)
	// A file that cannot be read (gone with the pod torn down under it)
	// has been read as far as it could be; there is nothing to report.
	_ = t.follow(sink, &criStream{stdout: out, stderr: errw})
}

// follow reads the log into dec as it grows until finish is called, then
// reads it to its end. The sink writes what it holds each time a read has
// caught up with the log.
func (t *tailer) follow(sink *logSink, dec *criStream) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &logWatch{path: t.path, slots: sink.followSlots, newWatcher: t.newWatcher}
	defer w.close()
	buf := make([]byte, readSize)
	found := false // the last read found output
	for {
		last := t.stopped.Load()
		n, err := readLogChunks(f, buf, dec)
		if err != nil {
			return err
		}
		if last {
			if t.exited.Load() && (n > 0 || found) {
				if err := drain(f, buf, dec, sink, drainQuiet, drainMax); err != nil {
					return err
				}
			}
			dec.end()
			return nil
		}
		sink.flush()
		if n > 0 {
			// Output came: read again after a pause, which gathers what
			// comes meanwhile. Output that keeps coming is read
			// unwatched; a line now and then keeps the watch.
			if found {
				w.unwatch()
			}
			found = true
			t.wait(nil, followPause)
			continue
		}
		found = false
		if !w.watching && w.watch() {
			continue // a write between the read and the watch raised no event
		}
		if w.watching {
			t.wait(w, followCheck)
		} else {
			t.wait(w, logPollInterval)
		}
	}
}

// wait waits for d, an event of the watch (none when w is nil), or
// finish.
func (t *tailer) wait(w *logWatch, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.channels()
	}
	select {
	case <-t.stop:
	case <-events:
	case <-errs:
	case <-timer.C:
	}
}

// readLogChunks reads f to its end into dec and says how much it read.
func readLogChunks(f *os.File, buf []byte, dec *criStream) (int, error) {
	total := 0
	for {
		n, err := f.Read(buf)
		if n > 0 {
			dec.write(buf[:n])
			total += n
		}
		if err == io.EOF || (n == 0 && err == nil) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// drain reads the log of an exited instance until it has not grown for
// quiet, or for at most max: what the runtime still writes of it.
func drain(f *os.File, buf []byte, dec *criStream, sink *logSink, quiet, max time.Duration) error {
	start := time.Now()
	grew := start
	for time.Since(grew) < quiet && time.Since(start) < max {
		time.Sleep(followPause)
		n, err := readLogChunks(f, buf, dec)
		if err != nil {
			return err
		}
		if n > 0 {
			grew = time.Now()
			sink.flush()
		}
	}
	return nil
}

// finish reads everything that is left and waits for the tailer to end.
// exited says the instance has exited (not a run detaching from a running
// one): the tailer then also reads what the runtime is still writing.
func (t *tailer) finish(exited bool) {
	t.end(exited)
	<-t.done
}

// end tells the tailer to read to the end and stop, without waiting.
func (t *tailer) end(exited bool) {
	t.once.Do(func() {
		t.exited.Store(exited)
		t.stopped.Store(true)
		close(t.stop)
	})
}

// logWatch is a tailer's inotify watch of its log file, set while the log
// is quiet. The watcher (an inotify instance) and its follow slot are
// kept from the first watch to the end; the watch itself comes and goes.
type logWatch struct {
	path       string
	slots      chan struct{} // the run's follow slots; nil: no bound
	newWatcher func() (*fsnotify.Watcher, error)
	w          *fsnotify.Watcher
	noInotify  bool // the watcher could not be made: poll to the end
	watching   bool
}

// watch sets the watch, and reports whether it could.
func (l *logWatch) watch() bool {
	if l.noInotify {
		return false
	}
	if l.w == nil {
		if l.slots != nil {
			select {
			case l.slots <- struct{}{}:
			default:
				return false // every slot taken: try again at the next quiet spell
			}
		}
		w, err := l.newWatcher()
		if err != nil {
			if l.slots != nil {
				<-l.slots
			}
			l.noInotify = true
			return false
		}
		l.w = w
	}
	if err := l.w.Add(l.path); err != nil {
		return false
	}
	l.watching = true
	return true
}

// unwatch removes the watch: the runtime's writes raise no events.
func (l *logWatch) unwatch() {
	if l.watching {
		_ = l.w.Remove(l.path)
		l.watching = false
	}
}

// channels are the watcher's events and errors; nil (never ready)
// without a watcher.
func (l *logWatch) channels() (<-chan fsnotify.Event, <-chan error) {
	if l.w == nil {
		return nil, nil
	}
	return l.w.Events, l.w.Errors
}

func (l *logWatch) close() {
	if l.w != nil {
		l.w.Close()
		if l.slots != nil {
			<-l.slots
		}
	}
}

// criStream decodes a container log, CRI or docker json, written to it
// in chunks as the file grows, into stdout and stderr: the text of each
// record in one write, as ReadLogs writes it with no options. The first
// line tells the format (CRI, else docker json; a file that is neither
// gives nothing); a line that does not parse is skipped, and so is one
// stamped before year 1 (before any --since, even none); a partial ("P")
// record's text loses its newline; a docker json record of another stream
// ends the decoding, as ReadLogs ends with an error. end decodes an
// unterminated last line, as ReadLogs does at the end of a file it does
// not follow.
type criStream struct {
	stdout, stderr io.Writer
	format         logFormat
	ended          bool   // ReadLogs would have stopped: nothing more is decoded
	carry          []byte // the start of a line whose end is not read yet
}

type logFormat int

const (
	formatUnknown logFormat = iota // no line yet
	formatCRI
	formatDockerJSON
)

// write decodes the whole lines of p and keeps an unfinished last one.
func (d *criStream) write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.carry = append(d.carry, p...)
			return
		}
		line := p[:i+1]
		if len(d.carry) > 0 {
			d.carry = append(d.carry, line...)
			line = d.carry
		}
		d.line(line)
		d.dropCarry()
		p = p[i+1:]
	}
}

// end decodes the unterminated last line, if any.
func (d *criStream) end() {
	if len(d.carry) > 0 {
		d.line(d.carry)
		d.dropCarry()
	}
}

func (d *criStream) dropCarry() {
	if cap(d.carry) > 4*readSize {
		d.carry = nil // the room of one huge line is not kept
	} else {
		d.carry = d.carry[:0]
	}
}

// line decodes one line, with its newline when it has one.
func (d *criStream) line(l []byte) {
	if d.ended {
		return
	}
	if d.format == formatUnknown {
		// ReadLogs' getParseFunc: the first format whose parser takes the
		// first line.
		if _, _, _, ok := parseCRILine(l); ok {
			d.format = formatCRI
		} else if _, _, _, ok := parseDockerJSONLine(l); ok {
			d.format = formatDockerJSON
		} else {
			d.ended = true
			return
		}
	}
	parse := parseCRILine
	if d.format == formatDockerJSON {
		parse = parseDockerJSONLine
	}
	stream, text, early, ok := parse(l)
	if !ok || early {
		return
	}
	switch runtimeapi.LogStreamType(stream) {
	case runtimeapi.Stdout:
		d.stdout.Write(text)
	case runtimeapi.Stderr:
		d.stderr.Write(text)
	default:
		d.ended = true
	}
}

// parseCRILine is ReadLogs' parseCRILog: "<time> <stream> <tag> <text>",
// the time RFC 3339 with optional fractional seconds, the stream stdout or
// stderr, the tag P (partial) or another, with colon-separated extras. A
// partial record's text loses its newline. early says the time is before
// year 1.
func parseCRILine(l []byte) (stream string, text []byte, early, ok bool) {
	i := bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	if early, ok = criTime(l[:i]); !ok {
		return "", nil, false, false
	}
	l = l[i+1:]
	i = bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	switch s := l[:i]; string(s) {
	case string(runtimeapi.Stdout):
		stream = string(runtimeapi.Stdout)
	case string(runtimeapi.Stderr):
		stream = string(runtimeapi.Stderr)
	default:
		return "", nil, false, false
	}
	l = l[i+1:]
	i = bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	tag := l[:i]
	if c := bytes.IndexByte(tag, runtimeapi.LogTagDelimiter[0]); c >= 0 {
		tag = tag[:c]
	}
	if string(tag) == string(runtimeapi.LogTagPartial) && l[len(l)-1] == '\n' {
		l = l[:len(l)-1]
	}
	return stream, l[i+1:], early, true
}

// criTime checks a CRI record's time as ReadLogs parses it
// (time.Parse(RFC3339NanoLenient)), and says whether it is before year 1.
// The runtimes' own form is checked here without time.Parse, which costs
// more than the rest of a short line's decoding.
func criTime(ts []byte) (early, ok bool) {
	if rfc3339Plain(ts) {
		return false, true
	}
	t, err := time.Parse(crilogs.RFC3339NanoLenient, string(ts))
	if err != nil {
		return false, false
	}
	return t.Before(time.Time{}), true
}

// rfc3339Plain reports whether ts is "2006-01-02T15:04:05[.digits]Z" or
// with a "±07:00" zone, each field in its range, the year from 2 on: what
// time.Parse's RFC 3339 fast path takes (parseRFC3339), so that Parse
// takes it too, and which can be no time before year 1. False says only
// that time.Parse must decide.
func rfc3339Plain(ts []byte) bool {
	if len(ts) < 20 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' {
		return false
	}
	year, ok1 := digits(ts[0:4])
	month, ok2 := digits(ts[5:7])
	day, ok3 := digits(ts[8:10])
	hour, ok4 := digits(ts[11:13])
	minute, ok5 := digits(ts[14:16])
	sec, ok6 := digits(ts[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 2 || month < 1 || month > 12 ||
		day < 1 || day > daysInMonth(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	rest := ts[19:]
	if len(rest) >= 2 && rest[0] == '.' && isDigit(rest[1]) {
		n := 2
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		rest = rest[n:]
	}
	if len(rest) == 1 && rest[0] == 'Z' {
		return true
	}
	if len(rest) != len("-07:00") || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	zh, ok1 := digits(rest[1:3])
	zm, ok2 := digits(rest[4:6])
	return ok1 && ok2 && zh <= 23 && zm <= 59
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func daysInMonth(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// dockerJSONRecord is a line of docker's json-file log, as ReadLogs reads it.
type dockerJSONRecord struct {
	Log     string    `json:"log,omitempty"`
	Stream  string    `json:"stream,omitempty"`
	Created time.Time `json:"time"`
}

// parseDockerJSONLine is ReadLogs' parseDockerJSONLog: any JSON object,
// its stream not checked here.
func parseDockerJSONLine(l []byte) (stream string, text []byte, early, ok bool) {
	r := &dockerJSONRecord{}
	if err := json.Unmarshal(l, r); err != nil {
		return "", nil, false, false
	}
	return r.Stream, []byte(r.Log), r.Created.Before(time.Time{}), true
}
