// Package termprogress draws podrun's progress on a terminal as a live
// status: one line per pod with its phase, the container it waits on, what
// for (pulling an image, ContainerCreating, CrashLoopBackOff, not ready,
// stopping) and for how long, redrawn in place at the bottom of the
// terminal. Routine events (Pulling, Pulled, Created, Started, Killing) only
// change the status; every other event (warnings, failures, back-offs,
// Detached) and every note is printed as a line above it, as
// runner.PlainProgress would print it.
//
// Container output never mixes with the status: the run's output writers
// go through Live.Output, which clears the status before an output line
// and draws it again after, under the one mutex that also guards the
// status. A line that an output write leaves unfinished holds every other
// write to the terminal back until it ends.
//
// Live implements runner.Progress. The frames are a pure function of what
// it was told and the clock (frame), so tests check them on a fake
// terminal.
package termprogress

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources/podresources"
)

// maxPodLines is how many pods the status shows; more are summed up in one
// line.
const maxPodLines = 8

// redrawGap is the least time between two redraws that output lines cause:
// a container that writes fast gets its lines through with the status
// drawn at most this often between them (the ticker draws it when the
// output pauses).
const redrawGap = 100 * time.Millisecond

// routine are the events that only change the status.
var routine = []string{"Pulling", "Pulled", "Created", "Started", "Killing"}

// Options configure a Live.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Width is the terminal's width in columns, asked at each redraw
	// (the terminal may be resized); nil or a result below 20 means 80.
	Width func() int
	// Interval is how often the status is redrawn for its clocks; 0
	// starts no ticker (tests call Redraw).
	Interval time.Duration
}

// Live is the live status on one terminal.
type Live struct {
	mu    sync.Mutex
	term  io.Writer
	opts  Options
	pods  []*podState
	drawn int      // status lines on the screen; the cursor ends the last
	shown []string // the frame on the screen
	last  time.Time
	// midLine: an output write left a line unfinished on the terminal;
	// held are the lines printed meanwhile, written when it ends.
	midLine bool
	held    []string
	stopped bool
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// podState is what Live knows of one pod.
type podState struct {
	pod      *v1.Pod
	status   v1.PodStatus
	pulls    map[string]time.Time // image → when its pull started
	stopping time.Time            // the first Killing event; zero before
	detached time.Time            // the Detached event; zero before
	activity string               // what the frame showed last, and since when
	since    time.Time
}

var _ runner.Progress = (*Live)(nil)

// New starts a live status on term.
func New(term io.Writer, opts Options) *Live {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Live{term: term, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	if opts.Interval <= 0 {
		close(l.done)
		return l
	}
	go func() {
		defer close(l.done)
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.Redraw()
			}
		}
	}()
	return l
}

// Stop ends the live status: the status is cleared, lines still held are
// written, and from then on events and notes are plain lines.
func (l *Live) Stop() {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		var b strings.Builder
		l.clear(&b)
		for _, s := range l.held {
			b.WriteString(s + "\n")
		}
		l.held = nil
		l.stopped = true
		io.WriteString(l.term, b.String())
	})
}

// Event implements runner.Progress.
func (l *Live) Event(pod *v1.Pod, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		io.WriteString(l.term, runner.EventLine(pod, reason, message)+"\n")
		return
	}
	p := l.podFor(pod)
	now := l.opts.Now()
	image, quoted := quotedImage(message)
	switch reason {
	case "Pulling":
		if quoted {
			p.pulls[image] = now
		}
	case "Pulled", "Failed", "BackOff":
		if quoted {
			delete(p.pulls, image)
		}
	case "Killing":
		if p.stopping.IsZero() {
			p.stopping = now
		}
	case "Detached":
		p.detached = now
	}
	if !slices.Contains(routine, reason) {
		l.print(runner.EventLine(pod, reason, message))
	}
	l.redraw(true)
}

// PodStatus implements runner.Progress.
func (l *Live) PodStatus(pod *v1.Pod, status v1.PodStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.podFor(pod).status = status
	l.redraw(true)
}

// Note implements runner.Progress.
func (l *Live) Note(message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		io.WriteString(l.term, message+"\n")
		return
	}
	l.print(message)
	l.redraw(true)
}

// Redraw draws the status again if it changed (its clocks, say).
func (l *Live) Redraw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.redraw(true)
}

// Output wraps a writer of container output that shares the terminal:
// each write clears the status first, and once a line is complete the
// status is drawn again (at most every redrawGap; the ticker catches up).
func (l *Live) Output(w io.Writer) io.Writer { return &output{l: l, w: w} }

type output struct {
	l *Live
	w io.Writer
}

func (o *output) Write(b []byte) (int, error) {
	l := o.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return o.w.Write(b)
	}
	if !l.midLine && l.drawn > 0 {
		var s strings.Builder
		l.clear(&s)
		io.WriteString(l.term, s.String())
	}
	n, err := o.w.Write(b)
	if len(b) > 0 {
		l.midLine = b[len(b)-1] != '\n'
	}
	if !l.midLine {
		held := l.held
		l.held = nil
		for _, s := range held {
			l.print(s)
		}
		// Held lines were events, which redraw at once; output alone
		// redraws at most every redrawGap.
		l.redraw(len(held) > 0)
	}
	return n, err
}

func (l *Live) podFor(pod *v1.Pod) *podState {
	for _, p := range l.pods {
		if p.pod.Namespace == pod.Namespace && p.pod.Name == pod.Name {
			return p
		}
	}
	p := &podState{pod: pod, pulls: map[string]time.Time{}}
	l.pods = append(l.pods, p)
	return p
}

// print writes a line above the status (held while an output line is
// unfinished).
func (l *Live) print(line string) {
	if l.midLine {
		l.held = append(l.held, line)
		return
	}
	var b strings.Builder
	l.clear(&b)
	b.WriteString(line + "\n")
	io.WriteString(l.term, b.String())
}

// clear adds to b what erases the status and leaves the cursor where its
// first line began.
func (l *Live) clear(b *strings.Builder) {
	if l.drawn == 0 {
		return
	}
	b.WriteString("\r")
	if l.drawn > 1 {
		fmt.Fprintf(b, "\x1b[%dA", l.drawn-1)
	}
	b.WriteString("\x1b[J")
	l.drawn, l.shown = 0, nil
}

// redraw draws the frame of now unless it is on the screen already, an
// output line is unfinished, or (for a redraw after output, !always) the
// last draw was less than redrawGap ago.
func (l *Live) redraw(always bool) {
	if l.stopped || l.midLine {
		return
	}
	now := l.opts.Now()
	if !always && l.drawn == 0 && now.Sub(l.last) < redrawGap {
		return
	}
	width := 80
	if l.opts.Width != nil {
		if w := l.opts.Width(); w >= 20 {
			width = w
		}
	}
	f := frame(l.pods, now, width)
	if l.drawn == len(f) && slices.Equal(f, l.shown) {
		return
	}
	var b strings.Builder
	l.clear(&b)
	b.WriteString(strings.Join(f, "\n"))
	l.drawn, l.shown, l.last = len(f), f, now
	io.WriteString(l.term, b.String())
}

// frame is the status at now: a line per pod (the first maxPodLines-1 and
// a count of the others when there are more), each cut to width-1 columns
// so that the terminal never wraps it. It records each pod's activity and
// since when.
func frame(pods []*podState, now time.Time, width int) []string {
	shown := pods
	if len(pods) > maxPodLines {
		shown = pods[:maxPodLines-1]
	}
	nameWidth := 0
	for _, p := range shown {
		nameWidth = max(nameWidth, utf8.RuneCountInString(p.pod.Name))
	}
	var out []string
	for _, p := range shown {
		what, since := activity(p)
		if what != p.activity {
			p.activity, p.since = what, now
		}
		if since.IsZero() {
			since = p.since
		}
		phase := string(p.status.Phase)
		if phase == "" {
			phase = string(v1.PodPending)
		}
		line := fmt.Sprintf("pod/%-*s  %-9s  %s  %s", nameWidth, p.pod.Name, phase, what, elapsed(now.Sub(since)))
		out = append(out, cut(line, width-1))
	}
	if len(shown) < len(pods) {
		out = append(out, fmt.Sprintf("... and %d more pods", len(pods)-len(shown)))
	}
	return out
}

// activity is what the pod waits on now, and since when if that is known
// better than from when the frame first showed it (a pull's start).
func activity(p *podState) (string, time.Time) {
	if !p.stopping.IsZero() {
		return "stopping", p.stopping
	}
	if !p.detached.IsZero() {
		return "detached, left running", p.detached
	}
	if len(p.pulls) > 0 {
		image, since := "", time.Time{}
		for img, t := range p.pulls {
			if since.IsZero() || t.Before(since) || (t.Equal(since) && img < image) {
				image, since = img, t
			}
		}
		return containerUsing(p.pod, image) + "pulling " + image, since
	}
	st := p.status
	sidecar := map[string]bool{}
	for i := range p.pod.Spec.InitContainers {
		sidecar[p.pod.Spec.InitContainers[i].Name] = podresources.IsSidecar(&p.pod.Spec.InitContainers[i])
	}
	for _, c := range st.InitContainerStatuses {
		switch s := c.State; {
		case s.Waiting != nil:
			return c.Name + ": " + s.Waiting.Reason, time.Time{}
		case s.Running != nil && !sidecar[c.Name]:
			return c.Name + ": running (init)", time.Time{}
		case s.Terminated != nil && s.Terminated.ExitCode != 0 && !sidecar[c.Name]:
			return c.Name + ": " + exited(s.Terminated), time.Time{}
		}
	}
	done := 0
	for _, c := range st.ContainerStatuses {
		switch s := c.State; {
		case s.Waiting != nil:
			return c.Name + ": " + s.Waiting.Reason, time.Time{}
		case s.Running != nil && !c.Ready:
			return c.Name + ": not ready", time.Time{}
		case s.Terminated != nil && s.Terminated.ExitCode != 0:
			return c.Name + ": " + exited(s.Terminated), time.Time{}
		case s.Terminated != nil:
			done++
		}
	}
	switch {
	case len(st.ContainerStatuses) == 0:
		return "starting", time.Time{}
	case done == len(st.ContainerStatuses):
		return "completed", time.Time{}
	case done > 0:
		return "running, " + strconv.Itoa(done) + " completed", time.Time{}
	}
	return "running", time.Time{}
}

func exited(t *v1.ContainerStateTerminated) string {
	s := "exited " + strconv.Itoa(int(t.ExitCode))
	if t.Reason != "" && t.Reason != "Error" {
		s += " (" + t.Reason + ")"
	}
	return s
}

// containerUsing is "NAME: " of the first container of pod that runs
// image, or "" if none does.
func containerUsing(pod *v1.Pod, image string) string {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.Image == image {
				return c.Name + ": "
			}
		}
	}
	return ""
}

// quotedImage is the first double-quoted string of an event message: the
// image of the Pulling, Pulled, Failed and BackOff events of a pull.
func quotedImage(message string) (string, bool) {
	i := strings.IndexByte(message, '"')
	if i < 0 {
		return "", false
	}
	s, err := strconv.QuotedPrefix(message[i:])
	if err != nil {
		return "", false
	}
	u, err := strconv.Unquote(s)
	return u, err == nil
}

// elapsed is a duration as the status shows it: 7s, 1m05s, 2h03m.
func elapsed(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// cut shortens s to at most n runes, ending it with "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
