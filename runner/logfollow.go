package runner

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
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
// criStream (crilog.go) decodes as ReadLogs does the same bytes (no tail,
// since or timestamps); FuzzCRILog holds the two to the same output on any
// file.
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

// readBufs holds the tailers' read buffers (readSize each) between reads:
// a tailer waits far longer than it reads, and a buffer of its own would
// stay in the heap for its container's whole life, 64 KiB a container,
// most of a 50-pod run's live heap for logs that are mostly empty.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readSize); return &b }}

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
	found := false // the last read found output
	for {
		last := t.stopped.Load()
		buf := readBufs.Get().(*[]byte)
		n, err := readLogChunks(f, *buf, dec)
		if err == nil && last && t.exited.Load() && (n > 0 || found) {
			err = drain(f, *buf, dec, sink, drainQuiet, drainMax)
		}
		readBufs.Put(buf)
		if err != nil {
			return err
		}
		if last {
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

// close gives up the watcher and its follow slot without waiting for
// the close: closing an inotify instance that has held a watch waits in
// the kernel for the end of an SRCU grace period (fsnotify's mark reaper),
// 15 to 20 ms in about half the runs measured here (strace -T), and that
// wait sat between each pod's StopPodSandbox and its RemovePodSandbox.
// The slot is given back once the instance is gone.
func (l *logWatch) close() {
	if l.w == nil {
		return
	}
	w, slots := l.w, l.slots
	l.w = nil
	go func() {
		w.Close()
		if slots != nil {
			<-slots
		}
	}()
}
