package main

// Where a run writes: the wiring of its output, apart from its
// configuration (runConfig says only -o and --quiet). podrun's stdout and
// stderr are guarded against a reader that goes away (outputGuard), the
// containers' output goes to one of them, and podrun's own progress is
// plain lines, or a live status on a terminal (startLiveProgress).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/report/termprogress"
)

// runOutputs are the writers of a run.
type runOutputs struct {
	stdout io.Writer // podrun's stdout: the final pods with -o json|yaml

	// containerStdout and containerStderr take the containers' output.
	containerStdout, containerStderr io.Writer
	// progress takes podrun's own progress; nil for --quiet.
	progress runner.Progress
}

// plainOutputs are a run's outputs on podrun's stdout and stderr. With -o
// json or yaml stdout holds the final pods, so containers write to
// stderr; --quiet drops podrun's own progress lines.
func plainOutputs(cfg runConfig, stdout, stderr io.Writer) runOutputs {
	out := runOutputs{stdout: stdout, containerStdout: stdout, containerStderr: stderr, progress: runner.PlainProgress(stderr)}
	if cfg.Output != "text" {
		out.containerStdout = stderr
	}
	if cfg.Quiet {
		out.progress = nil
	}
	return out
}

// startOutputs wires a run's outputs: podrun's stdout and stderr guarded
// (guardOutputs), the progress live on a terminal (startLiveProgress). It
// returns them and what stops the live status.
func startOutputs(cfg runConfig, terminal bool, in *interrupts, stdout, stderr io.Writer) (runOutputs, func()) {
	guardedOut, guardedErr := guardOutputs(in, stdout, stderr)
	out := plainOutputs(cfg, guardedOut, guardedErr)
	if terminal {
		// -t's terminal is the container's: no live status redraws it, and
		// what podrun and the other containers write there ends its lines
		// with \r\n, as the terminal in raw mode needs.
		return rawTerminalOutputs(out, guardedErr), func() {}
	}
	return startLiveProgress(out, stderr)
}

// liveInterval is how often the live status redraws its clocks.
const liveInterval = 250 * time.Millisecond

// startLiveProgress makes a run's progress a live status on the terminal
// when stderr is one, podrun is not in CI and not --quiet (package
// runner/report/termprogress): the container output writers that share the
// terminal go through it, so that their lines never mix with the status.
// Otherwise the progress stays plain lines. It returns out with the live
// status and its writers, and what stops the status (at once, and again
// harmlessly): before the outcome lines.
func startLiveProgress(out runOutputs, stderr io.Writer) (runOutputs, func()) {
	errFile, ok := stderr.(*os.File)
	if out.progress == nil || !ok || !termprogress.Wanted(termprogress.IsTerminal(errFile), os.Getenv("CI"), os.Getenv("TERM")) {
		return out, func() {}
	}
	live := termprogress.New(errFile, termprogress.Options{
		Width:    func() int { return termprogress.Width(errFile) },
		Interval: liveInterval,
	})
	out.progress = live
	out.containerStdout = liveOutput(live, out.containerStdout)
	out.containerStderr = liveOutput(live, out.containerStderr)
	return out, live.Stop
}

// liveOutput is w through the live status when w is the terminal, else w.
func liveOutput(live *termprogress.Live, w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if g, guarded := w.(*outputGuard); guarded {
		// A terminal needs no guard: it never breaks a pipe.
		f, ok = g.w.(*os.File)
	}
	if ok && termprogress.IsTerminal(f) {
		return live.Output(f)
	}
	return w
}

// outputGuard is podrun's stdout or stderr during a run. SIGPIPE is
// ignored, so a write to a pipe whose reader is gone (`podrun -f pod.yaml
// | head -1`) fails with EPIPE instead of killing podrun with its pods left
// running: the guard then calls closed once and drops every later write,
// and the run stops and tears down as after a signal (exit 141).
type outputGuard struct {
	w      io.Writer
	closed func()
	gone   atomic.Bool
}

func (g *outputGuard) Write(p []byte) (int, error) {
	if g.gone.Load() {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		if g.gone.CompareAndSwap(false, true) {
			g.closed()
		}
		return len(p), nil
	}
	return n, err
}

// Unwrap is the writer the guard guards: the run's log sink drops a
// stream whose writer is /dev/null (runner's unlessDiscard), guarded or not.
func (g *outputGuard) Unwrap() io.Writer { return g.w }

// guardOutputs wraps podrun's stdout and stderr in outputGuards that
// interrupt the run, once, when either has lost its reader.
func guardOutputs(in *interrupts, stdout, stderr io.Writer) (io.Writer, io.Writer) {
	var once sync.Once
	lost := func() (first bool) {
		once.Do(func() { first = true; in.interrupt(runner.ExitSIGPIPE) })
		return first
	}
	errOut := &outputGuard{w: stderr, closed: func() { lost() }}
	out := &outputGuard{w: stdout, closed: func() {
		if lost() {
			fmt.Fprintln(errOut, "podrun: stdout is closed (broken pipe): stopping the pods")
		}
	}}
	return out, errOut
}
