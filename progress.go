package main

import (
	"io"
	"os"
	"time"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/termprogress"
)

// liveInterval is how often the live status redraws its clocks.
const liveInterval = 250 * time.Millisecond

// startLiveProgress makes a run's progress a live status on the terminal
// when stderr is one, podrun is not in CI and not --quiet (package
// runner/termprogress): the container output writers that share the
// terminal go through it, so that their lines never mix with the status.
// Otherwise the progress stays plain lines. It returns what stops the
// status (at once, and again harmlessly): before the outcome lines.
func startLiveProgress(opts *runner.Options, stderr io.Writer) (stop func()) {
	errFile, ok := stderr.(*os.File)
	if opts.Progress == nil || !ok || !termprogress.Wanted(termprogress.IsTerminal(errFile), os.Getenv("CI"), os.Getenv("TERM")) {
		return func() {}
	}
	live := termprogress.New(errFile, termprogress.Options{
		Width:    func() int { return termprogress.Width(errFile) },
		Interval: liveInterval,
	})
	opts.Progress = live
	for _, w := range []*io.Writer{&opts.Stdout, &opts.Stderr} {
		f, ok := (*w).(*os.File)
		if g, guarded := (*w).(*outputGuard); guarded {
			// A terminal needs no guard: it never breaks a pipe.
			f, ok = g.w.(*os.File)
		}
		if ok && termprogress.IsTerminal(f) {
			*w = live.Output(f)
		}
	}
	return live.Stop
}
