package main

// Signals: the first SIGINT, SIGTERM or SIGHUP cancels what a command is
// doing and gives its exit status (128 + the signal), the second forces
// what is left (a run's teardown kills its containers at once).

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/podrun/podrun/runner"
)

// interrupts ends a run early: the first SIGINT, SIGTERM or SIGHUP, or
// output (closed: podrun's stdout or stderr lost its reader), cancels ctx
// and sets the exit status (130, 143, 129, 141: 128 + the signal, as a
// shell reports a process the signal killed, though podrun first tears
// everything down); the second closes force.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	force  chan struct{}
	ch     chan os.Signal
	done   chan struct{}

	mu   sync.Mutex
	n    int
	code int
}

// interruptSignals are the signals that stop a run, with their exit status.
var interruptSignals = map[os.Signal]int{
	syscall.SIGINT:  runner.ExitSIGINT,
	syscall.SIGTERM: runner.ExitSIGTERM,
	syscall.SIGHUP:  runner.ExitSIGHUP,
}

func newInterrupts() *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, force: make(chan struct{}), ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(in.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case s := <-in.ch:
				in.interrupt(interruptSignals[s])
			case <-in.done:
				return
			}
		}
	}()
	return in
}

// interrupt counts one interruption with its exit status.
func (in *interrupts) interrupt(code int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.n++
	switch in.n {
	case 1:
		in.code = code
		in.cancel()
	case 2:
		close(in.force)
	}
}

// exitCode is the first interruption's exit status, 0 before any.
func (in *interrupts) exitCode() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.code
}

func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.done)
	in.cancel()
}

// signals cancels the returned context on the first SIGINT, SIGTERM or
// SIGHUP and closes force on the second. code reports 130, 143 or 129 once
// signalled.
func signals() (ctx context.Context, force <-chan struct{}, code func() int, stop func()) {
	in := newInterrupts()
	return in.ctx, in.force, in.exitCode, in.stop
}
