package sources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Reads that can wait for ever (stdin, a named pipe with no writer yet, a
// terminal) stop when the context is cancelled, so that SIGINT and
// SIGTERM end podrun while it waits for a manifest:
//   - a pipe or FIFO is read through a non-blocking descriptor of its own
//     with the runtime's poller, and a cancelled context sets its read
//     deadline;
//   - anything else that may block (a terminal, a socket, a Reader that is
//     not a file) is read by a goroutine that is left behind on
//     cancellation: podrun exits then, and the read ends with it.

// readStdin reads Options.Stdin.
func readStdin(ctx context.Context, r io.Reader) ([]byte, error) {
	f, ok := r.(*os.File)
	if !ok {
		return readInBackground(ctx, func() ([]byte, error) { return readCapped(r) })
	}
	// A pipe gets a description of its own: O_NONBLOCK on the inherited
	// one would show in every process that shares it.
	return readOpen(ctx, f,
		func() (*os.File, error) { return reopenNonblocking(f) },
		func() ([]byte, error) { return readCapped(f) })
}

// reopenNonblocking opens a new non-blocking read description of the pipe
// f reads, through /proc/self/fd.
func reopenNonblocking(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var p *os.File
	var oerr error
	if err := rc.Control(func(fd uintptr) {
		p, oerr = os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDONLY|unix.O_NONBLOCK, 0)
	}); err != nil {
		return nil, err
	}
	return p, oerr
}

// readFile reads the file, FIFO or device at name. A FIFO is opened
// without waiting for a writer (open(2) would block until one comes,
// deaf to the context) and read with readPipe, which waits for it.
func readFile(ctx context.Context, name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(ctx, f,
		func() (*os.File, error) { return f, nil },
		func() ([]byte, error) {
			// A device: opened again to be read blocking.
			bf, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			defer bf.Close()
			return readCapped(bf)
		})
}

// readOpen reads the open file f by its kind: a regular file at once; a
// pipe or FIFO with readPipe, through the non-blocking description pipe
// returns; anything else, or a pipe without such a description, with
// blocking in the background.
func readOpen(ctx context.Context, f *os.File, pipe func() (*os.File, error), blocking func() ([]byte, error)) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		return readCapped(f)
	case fi.Mode()&os.ModeNamedPipe != 0:
		if p, err := pipe(); err == nil {
			if p != f {
				defer p.Close()
			}
			return readPipe(ctx, p)
		}
	}
	return readInBackground(ctx, blocking)
}

// readInBackground runs read in a goroutine and returns its result, or
// the context's error as soon as it is cancelled.
func readInBackground(ctx context.Context, read func() ([]byte, error)) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := read()
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readPipe reads a non-blocking pipe or FIFO to its end (all writers
// gone) or the cap, or until ctx is cancelled.
//
// A FIFO opened with O_NONBLOCK before any writer reads as at its end
// (read returns 0) until a writer opens it, but poll(2) reports nothing
// for it then, and POLLHUP only once a writer has come and gone: so each
// read waits until poll reports data or a hang-up.
func readPipe(ctx context.Context, f *os.File) ([]byte, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		// Not in the poller: read it blocking, in the background.
		rc.Control(func(fd uintptr) { unix.SetNonblock(int(fd), false) })
		return readInBackground(ctx, func() ([]byte, error) { return readCapped(f) })
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			ready, err := pollIn(int(fd))
			if err != nil {
				rerr = err
				return true
			}
			if !ready {
				return false // wait for the poller
			}
			n, rerr = unix.Read(int(fd), buf)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, err
		case rerr != nil:
			return nil, rerr
		case n == 0:
			return data, nil
		}
		data = append(data, buf[:n]...)
		if len(data) > maxManifestSize {
			return nil, errTooLarge
		}
	}
}

// pollIn tells whether a read of fd would not block: data, a hang-up or
// an error is pending.
func pollIn(fd int) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, err
		}
		return fds[0].Revents != 0, nil
	}
}
