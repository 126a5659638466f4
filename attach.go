package main

// -i: podrun's stdin streamed into the container with stdin: true, as
// kubectl run -i and kubectl attach do: CRI Attach once the container has
// started, then client-go's remotecommand to the runtime's streaming
// server (streamSession, which exec shares). The container's output
// comes from its log as every container's does, or, with -t on a
// terminal, through the attach, in raw mode (the run then does not follow
// that instance's log, so nothing shows twice). The run's exit status is
// the container's, as for any run.
//
// No data is lost before the attach connects: a container with stdin:
// true has its stdin held open by the runtime, which buffers nothing and
// blocks its reads until the attach writes; with stdinOnce the runtime
// closes it when the attach's stdin ends (the end of podrun's), which is
// how `wc -c` sees its end.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/report/termprogress"
	"github.com/podrun/podrun/sources"
)

// attachDrain bounds how long a run that has ended waits for a terminal
// attach to hand over the last of the container's output and restore the
// terminal; the runtime ends the attach when the container exits, well
// before the teardown is done.
const attachDrain = 2 * time.Second

// attachment is a run's -i: nil without it.
type attachment struct {
	pod       *v1.Pod
	container *v1.Container
	stdin     io.Reader
	stderr    io.Writer
	quiet     bool
	tty       bool // attached as a terminal: -t, the container has one, stdin is one
	termFd    int

	cancel context.CancelFunc
	done   chan struct{} // closed when the attach has ended; nil before it starts
}

// attachTarget is -i's container: the one container of the run's pods with
// stdin: true (init containers and sidecars too), refused before anything
// starts when there is none or more than one. With -t, a terminal when
// podrun's stdin is one and the container has one (as kubectl attach,
// with its notices otherwise).
func attachTarget(cfg runConfig, set *sources.Set, stdin io.Reader, stderr io.Writer) (*attachment, error) {
	if !cfg.Attach {
		return nil, nil
	}
	var found []string
	var at *attachment
	for _, p := range set.Pods {
		for _, c := range allContainers(p.Pod) {
			if c.Stdin {
				found = append(found, "pod "+p.Name+" container "+c.Name)
				at = &attachment{pod: p.Pod, container: c, stdin: stdin, stderr: stderr, quiet: cfg.Quiet}
			}
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("-i streams podrun's stdin into the container with stdin: true, and no container has it (podrun run NAME -i gives it its container)")
	case len(found) > 1:
		return nil, fmt.Errorf("-i streams podrun's stdin into one container, and %d have stdin: true: %s", len(found), strings.Join(found, ", "))
	}
	if cfg.TTY && !at.container.TTY && !cfg.Quiet {
		fmt.Fprintf(stderr, "Unable to use a TTY - container %s did not allocate one\n", at.container.Name)
	}
	at.tty, at.termFd = execTerminal(cfg.TTY && at.container.TTY, true, stdin, stderr, cfg.Quiet)
	return at, nil
}

// allContainers are a pod's init containers (sidecars among them), then
// its containers.
func allContainers(p *v1.Pod) []*v1.Container {
	var out []*v1.Container
	for i := range p.Spec.InitContainers {
		out = append(out, &p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		out = append(out, &p.Spec.Containers[i])
	}
	return out
}

// terminal says whether the attach is a terminal's.
func (a *attachment) terminal() bool { return a != nil && a.tty }

// start is the run's Wiring.Attach: the attach, on rt, with the container's
// output to out's writers when it comes through the attach.
func (a *attachment) start(rt *cri.Client, out runOutputs) *runner.Attach {
	if a == nil {
		return nil
	}
	// remotecommand reports what it cannot copy once the attach is over
	// through klog; the run says what matters.
	klog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	return &runner.Attach{PodUID: a.pod.UID, Container: a.container.Name, Output: a.tty,
		Start: func(id string) {
			a.done = make(chan struct{})
			go func() {
				defer close(a.done)
				a.run(ctx, rt, id, out)
			}()
		}}
}

// run attaches to the container instance id until the runtime ends the
// attach (the stdin has ended, or the container) or the run does.
func (a *attachment) run(ctx context.Context, rt *cri.Client, id string, out runOutputs) {
	req := &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Tty: a.tty, Stdout: a.tty}
	opts := remotecommand.StreamOptions{Stdin: a.stdin, Tty: a.tty}
	if a.tty {
		opts.Stdout = out.containerStdout
		if w, ok := opts.Stdout.(crlfWriter); ok {
			opts.Stdout = w.w // the container's terminal ends its lines itself
		}
	}
	if a.tty && !a.quiet {
		// What the container wrote before the attach is not sent again.
		fmt.Fprintln(a.stderr, "If you don't see a command prompt, try pressing enter.")
	}
	raw, err := rt.Attach(ctx, req)
	if err == nil {
		err = streamSession(ctx, raw, opts, a.termFd)
	}
	if err == nil || ctx.Err() != nil || a.quiet {
		return
	}
	// A container that has already exited (one that did not read its
	// stdin) cannot be attached to; its output is in its log all the same.
	st, serr := rt.ContainerStatus(context.Background(), id)
	if serr == nil && st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		return
	}
	fmt.Fprintf(a.stderr, "podrun: warning: attaching to container %s of pod %s: %v\n", a.container.Name, a.pod.Name, err)
}

// finish ends the attach once the run is over: a terminal's is given
// attachDrain to hand over the last output and restore the terminal; the
// stdin's alone has nothing more to do.
func (a *attachment) finish() {
	if a == nil || a.cancel == nil {
		return
	}
	if a.done != nil && a.tty {
		select {
		case <-a.done:
		case <-time.After(attachDrain):
		}
	}
	a.cancel()
	if a.done != nil {
		select { // the terminal is restored as the session returns
		case <-a.done:
		case <-time.After(attachDrain):
		}
	}
}

// rawTerminalOutputs is out for a run whose terminal -t has in raw mode:
// plain progress lines, and what podrun and the other containers write to
// the terminal with its lines ended by \r\n.
func rawTerminalOutputs(out runOutputs, stderr io.Writer) runOutputs {
	if out.progress != nil {
		out.progress = runner.PlainProgress(crlfOnTerminal(stderr))
	}
	out.containerStdout = crlfOnTerminal(out.containerStdout)
	out.containerStderr = crlfOnTerminal(out.containerStderr)
	return out
}

// crlfOnTerminal is w writing \r\n for \n when w is a terminal, else w.
func crlfOnTerminal(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if g, guarded := w.(*outputGuard); guarded {
		f, ok = g.w.(*os.File)
	}
	if !ok || !termprogress.IsTerminal(f) {
		return w
	}
	return crlfWriter{w}
}

type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write([]byte(strings.ReplaceAll(string(p), "\n", "\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
