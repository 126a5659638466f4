package sources

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadAsync runs Load in the background; the result arrives on the channel.
func loadAsync(ctx context.Context, specs []string, opts Options) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := Load(ctx, specs, opts)
		done <- err
	}()
	return done
}

// waitLoad returns Load's error, failing the test if it takes over 10 s.
func waitLoad(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Load still reading 10 s after its context was cancelled")
		return nil
	}
}

// newPipe is an os.Pipe closed at the end of the test.
func newPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pod.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// openWriter opens a FIFO for writing; it blocks until a reader opens it.
func openWriter(t *testing.T, p string) *os.File {
	t.Helper()
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestLoadStopsReadingWhenCancelled(t *testing.T) {
	// Cancelled while the read waits: the delay only lets Load get there
	// first; cancelled earlier, the test passes as well.
	const delay = 100 * time.Millisecond
	t.Run("stdin pipe whose writer never writes", func(t *testing.T) {
		r, _ := newPipe(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		err := waitLoad(t, loadAsync(ctx, []string{"-"}, Options{Stdin: r}))
		if !errors.Is(err, context.Canceled) || err.Error() != "stdin: reading: context canceled" {
			t.Errorf("error %v, want stdin: reading: context canceled", err)
		}
	})
	t.Run("stdin pipe with half a manifest", func(t *testing.T) {
		r, w := newPipe(t)
		w.WriteString("apiVersion: v1\n")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		if err := waitLoad(t, loadAsync(ctx, []string{"-"}, Options{Stdin: r})); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
	t.Run("stdin that is not a file", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		if err := waitLoad(t, loadAsync(ctx, []string{"-"}, Options{Stdin: r})); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
	t.Run("FIFO without a writer", func(t *testing.T) {
		p := mkfifo(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(delay, cancel)
		err := waitLoad(t, loadAsync(ctx, []string{p}, Options{}))
		if !errors.Is(err, context.Canceled) || err.Error() != p+": reading: context canceled" {
			t.Errorf("error %v, want %s: reading: context canceled", err, p)
		}
	})
	t.Run("FIFO whose writer stays open", func(t *testing.T) {
		p := mkfifo(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := loadAsync(ctx, []string{p}, Options{})
		w := openWriter(t, p)
		w.WriteString("apiVersion: v1\n")
		time.AfterFunc(delay, cancel)
		if err := waitLoad(t, done); !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	})
	t.Run("FIFO in a directory is skipped", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, "a.fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "b.yaml"), podYAML)
		set, err := Load(context.Background(), []string{dir}, Options{})
		if err != nil || len(set.Pods) != 1 {
			t.Errorf("Load: %v", err)
		}
	})
}

func TestLoadReadsPipesAndFIFOsToTheEnd(t *testing.T) {
	t.Run("stdin pipe", func(t *testing.T) {
		r, w := newPipe(t)
		go func() {
			// Two writes apart, so that the reader waits between them.
			w.WriteString(podYAML[:20])
			time.Sleep(50 * time.Millisecond)
			w.WriteString(podYAML[20:])
			w.Close()
		}()
		set, err := Load(context.Background(), []string{"-"}, Options{Stdin: r})
		if err != nil || len(set.Pods) != 1 {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("stdin pipe whose writer is gone", func(t *testing.T) {
		r, w := newPipe(t)
		w.WriteString(podYAML)
		w.Close()
		set, err := Load(context.Background(), []string{"-"}, Options{Stdin: r})
		if err != nil || len(set.Pods) != 1 {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("empty stdin pipe", func(t *testing.T) {
		r, w := newPipe(t)
		w.Close()
		_, err := Load(context.Background(), []string{"-"}, Options{Stdin: r})
		if err == nil || err.Error() != "stdin: no objects found" {
			t.Fatalf("error %v, want stdin: no objects found", err)
		}
	})
	t.Run("stdin file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "pod.yaml")
		writeFile(t, p, podYAML)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		set, err := Load(context.Background(), []string{"-"}, Options{Stdin: f})
		if err != nil || len(set.Pods) != 1 {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("FIFO whose writer comes later", func(t *testing.T) {
		// A FIFO opened without a writer must wait for one, not read as
		// empty.
		p := mkfifo(t)
		done := loadAsync(context.Background(), []string{p}, Options{})
		time.Sleep(100 * time.Millisecond)
		w := openWriter(t, p)
		w.WriteString(podYAML[:20])
		time.Sleep(50 * time.Millisecond)
		w.WriteString(podYAML[20:])
		w.Close()
		if err := waitLoad(t, done); err != nil {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("FIFO whose writer came and went", func(t *testing.T) {
		p := mkfifo(t)
		done := loadAsync(context.Background(), []string{p}, Options{})
		w := openWriter(t, p)
		w.WriteString(podYAML)
		w.Close()
		if err := waitLoad(t, done); err != nil {
			t.Fatalf("Load: %v", err)
		}
	})
}

// endless reads as an endless stream of '#'.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// TestLoadCapsEverySource: a 100 MB document from any source is refused
// after 10 MiB is read.
func TestLoadCapsEverySource(t *testing.T) {
	const hundredMB = 100 << 20
	writeHundred := func(w io.WriteCloser) {
		chunk := []byte(strings.Repeat("#", 1<<20))
		for i := 0; i < hundredMB>>20; i++ {
			if _, err := w.Write(chunk); err != nil {
				break // the reader stopped, as it should
			}
		}
		w.Close()
	}
	want := func(t *testing.T, err error, source string) {
		t.Helper()
		if err == nil || err.Error() != source+": reading: larger than the 10 MiB limit" && err.Error() != source+": larger than the 10 MiB limit" {
			t.Errorf("error %v, want %s: ... larger than the 10 MiB limit", err, source)
		}
	}
	t.Run("stdin pipe", func(t *testing.T) {
		r, w := newPipe(t)
		go writeHundred(w)
		_, err := Load(context.Background(), []string{"-"}, Options{Stdin: r})
		r.Close()
		want(t, err, "stdin")
	})
	t.Run("stdin reader", func(t *testing.T) {
		_, err := Load(context.Background(), []string{"-"}, Options{Stdin: endless{}})
		want(t, err, "stdin")
	})
	t.Run("FIFO", func(t *testing.T) {
		p := mkfifo(t)
		done := make(chan error, 1)
		go func() { _, err := Load(context.Background(), []string{p}, Options{}); done <- err }()
		w := openWriter(t, p)
		go writeHundred(w)
		want(t, waitLoad(t, done), p)
	})
	t.Run("character device", func(t *testing.T) {
		_, err := Load(context.Background(), []string{"/dev/zero"}, Options{})
		want(t, err, "/dev/zero")
	})
	t.Run("file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "big.yaml")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(hundredMB); err != nil { // sparse: zeros
			t.Fatal(err)
		}
		f.Close()
		_, err = Load(context.Background(), []string{p}, Options{})
		want(t, err, p)
		_, err = Load(context.Background(), []string{filepath.Dir(p)}, Options{})
		want(t, err, p)
	})
}

// TestPipesAreReadThroughThePoller: stdin pipes and FIFOs do not fall back
// to a read left blocked in the background.
func TestPipesAreReadThroughThePoller(t *testing.T) {
	r, _ := newPipe(t)
	p, err := reopenNonblocking(r)
	if err != nil {
		t.Fatalf("reopening the stdin pipe: %v", err)
	}
	defer p.Close()
	if err := p.SetReadDeadline(time.Time{}); err != nil {
		t.Errorf("the reopened pipe is not in the poller: %v", err)
	}
	fifo, err := os.OpenFile(mkfifo(t), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	if err := fifo.SetReadDeadline(time.Time{}); err != nil {
		t.Errorf("the FIFO is not in the poller: %v", err)
	}
}
