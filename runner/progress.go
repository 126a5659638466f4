package runner

import (
	"fmt"
	"io"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Progress receives podrun's own progress during a run (Wiring.Progress;
// nil for --quiet): each pod's events, named like the kubelet's (Pulling,
// Started, BackOff, Unhealthy, ...), each pod's status whenever the run
// works it out, and notes that belong to no pod event. It must be safe for
// concurrent use: every pod of a run reports from its own goroutine.
//
// PlainProgress prints events and notes as lines, for pipes, logs and CI;
// package runner/report/termprogress draws a live status on a terminal.
type Progress interface {
	// Event is one event of pod: the kubelet's reason and message.
	Event(pod *v1.Pod, reason, message string)
	// PodStatus is pod's status as the run last worked it out.
	PodStatus(pod *v1.Pod, status v1.PodStatus)
	// Note is a line of its own (a warning about the node, an outcome).
	Note(message string)
}

// PlainProgress writes to w one line per event ("pod/NAME: REASON:
// MESSAGE") and per note, each in one Write; it ignores statuses.
func PlainProgress(w io.Writer) Progress { return &plainProgress{w: w} }

type plainProgress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainProgress) Event(pod *v1.Pod, reason, message string) {
	p.Note(EventLine(pod, reason, message))
}

func (p *plainProgress) PodStatus(*v1.Pod, v1.PodStatus) {}

func (p *plainProgress) Note(message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, message+"\n")
}

// EventLine is how an event reads as a line of progress.
func EventLine(pod *v1.Pod, reason, message string) string {
	return fmt.Sprintf("pod/%s: %s: %s", pod.Name, reason, message)
}

// TeeProgress reports to every one of ps that is not nil; nil when none is.
func TeeProgress(ps ...Progress) Progress {
	var t teeProgress
	for _, p := range ps {
		if p != nil {
			t = append(t, p)
		}
	}
	switch len(t) {
	case 0:
		return nil
	case 1:
		return t[0]
	}
	return t
}

type teeProgress []Progress

func (t teeProgress) Event(pod *v1.Pod, reason, message string) {
	for _, p := range t {
		p.Event(pod, reason, message)
	}
}

func (t teeProgress) PodStatus(pod *v1.Pod, status v1.PodStatus) {
	for _, p := range t {
		p.PodStatus(pod, status)
	}
}

func (t teeProgress) Note(message string) {
	for _, p := range t {
		p.Note(message)
	}
}
