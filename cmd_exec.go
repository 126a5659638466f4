package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/podrun/podrun/runner"
)

// `podrun exec`: kubectl exec for the pods podrun runs. Without -i or -t
// the command runs with CRI ExecSync; with them, in an interactive session
// through the runtime's streaming server (CRI Exec, then client-go's
// remotecommand, as kubectl talks to the kubelet's).

func execCommand(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "exec",
		Usage: "run a command in a container of a pod, as kubectl exec does",
		UsageText: `podrun exec [flags] POD [-c CONTAINER] [-i] [-t] -- COMMAND [ARG...]   (POD: NAME, NAMESPACE/NAME or UID)

# run a command, exit with its status
podrun exec web -- cat /etc/hostname
# an interactive shell in a terminal
podrun exec -it web -- sh
# feed stdin to a command in container app
podrun exec -i web -c app -- tar x -C /srv`,
		UseShortOptionHandling: true,
		Flags: append(runtimeFlags(),
			containerFlag("else the first"),
			&cli.BoolFlag{Name: "stdin", Category: catOutput, Aliases: []string{"i"}, Usage: "pass podrun's stdin to the command"},
			&cli.BoolFlag{Name: "tty", Category: catOutput, Aliases: []string{"t"},
				Usage: "with -i on a terminal: run the command in a terminal (this one in raw mode, resized with it)"},
		),
		Action: func(c *cli.Context) error { return execAction(c, stdin, stdout, stderr) },
	}
}

// execArgs splits `podrun exec`'s arguments into POD and the command
// after "--", with kubectl's rules.
func execArgs(args []string) (pod string, cmd []string, err error) {
	switch {
	case len(args) == 0:
		return "", nil, errors.New("name the pod to run the command in (NAME, NAMESPACE/NAME or UID), then -- COMMAND")
	case len(args) == 1:
		return "", nil, errors.New("you must specify at least one command for the container: podrun exec POD -- COMMAND [ARG...]")
	case args[1] != "--":
		return "", nil, fmt.Errorf("the command goes after --: podrun exec %s -- %s", args[0], strings.Join(args[1:], " "))
	case len(args) == 2:
		return "", nil, errors.New("you must specify at least one command for the container after --")
	}
	return args[0], args[2:], nil
}

func execAction(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	pod, cmd, err := execArgs(c.Args().Slice())
	if err != nil {
		return podrunError(err)
	}
	// remotecommand reports what it cannot copy once the command is done
	// (stdin after the remote end closed) through klog; the exit status
	// and the error podrun returns say what matters.
	klog.SetLogger(logr.Discard())
	quiet, withStdin := boolean(c, "quiet"), boolean(c, "stdin")
	tty, termFd := execTerminal(boolean(c, "tty"), withStdin, stdin, stderr, quiet)
	return withRuntimeUntilSignal(c, func(ctx context.Context, rt runner.Runtime) error {
		target, err := findTarget(ctx, rt, runner.FindExecTarget, pod, str(c, "container"), quiet, stderr)
		if err != nil {
			return err
		}
		var code int
		if !withStdin && !tty {
			code, err = execSync(ctx, rt, target, cmd, stdout, stderr)
		} else {
			var in io.Reader
			if withStdin {
				in = stdin
			}
			code, err = execStream(ctx, rt, target, cmd, in, stdout, stderr, tty, termFd)
		}
		if err != nil {
			return err
		}
		if code != 0 {
			ee := &exitError{code: code}
			if !quiet {
				ee.err = fmt.Errorf("command terminated with exit code %d", code)
			}
			return ee
		}
		return nil
	})
}

// execTerminal says whether the command runs in a terminal (-t), and the
// terminal's fd: as kubectl, a terminal needs stdin (-i), and stdin must
// be a terminal, else a notice says so (unless quiet) and it runs without.
func execTerminal(tty, withStdin bool, stdin io.Reader, stderr io.Writer, quiet bool) (bool, int) {
	if !tty || !withStdin {
		return false, 0
	}
	f, ok := stdin.(*os.File)
	if ok && term.IsTerminal(int(f.Fd())) {
		return true, int(f.Fd())
	}
	if !quiet {
		fmt.Fprintln(stderr, "Unable to use a TTY - input is not a terminal or the right kind of file")
	}
	return false, 0
}

// execSync runs cmd with CRI ExecSync and copies its output; it returns
// the command's exit code.
func execSync(ctx context.Context, rt runner.Runtime, t runner.ExecTarget, cmd []string, stdout, stderr io.Writer) (int, error) {
	out, errOut, code, err := rt.ExecSync(ctx, t.ContainerID, cmd, 0)
	if err != nil {
		// The runtime's own words (exec failed: executable file not
		// found...), without the client's wrapping that names the
		// container by ID.
		var se interface{ GRPCStatus() *status.Status }
		if errors.As(err, &se) && se.GRPCStatus() != nil {
			err = errors.New(se.GRPCStatus().Message())
		}
		return 0, fmt.Errorf("running %q in container %s of pod %s: %w", cmd, t.Container, t.Pod, err)
	}
	stdout.Write(out)
	stderr.Write(errOut)
	return int(code), nil
}

// execStream runs cmd in an interactive session: CRI Exec for the URL,
// then remotecommand over SPDY, with stdin when in is set and, with tty, a
// terminal: termFd in raw mode (restored however the session ends) and
// its size followed (SIGWINCH). It returns the command's exit code.
func execStream(ctx context.Context, rt runner.Runtime, t runner.ExecTarget, cmd []string, in io.Reader, stdout, stderr io.Writer, tty bool, termFd int) (int, error) {
	raw, err := rt.Exec(ctx, &runtimeapi.ExecRequest{
		ContainerId: t.ContainerID, Cmd: cmd, Tty: tty,
		Stdin: in != nil, Stdout: true, Stderr: !tty, // a terminal has one output
	})
	if err != nil {
		return 0, err
	}
	opts := remotecommand.StreamOptions{Stdin: in, Stdout: stdout, Stderr: stderr, Tty: tty}
	if tty {
		opts.Stderr = nil
	}
	err = streamSession(ctx, raw, opts, termFd)
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitStatus(), nil
	}
	return 0, fmt.Errorf("running %q in container %s of pod %s: %w", cmd, t.Container, t.Pod, err)
}

// streamSession runs the session the runtime's streaming server serves at
// raw, the URL CRI Exec or Attach returned, through remotecommand over
// SPDY. With opts.Tty, termFd is put in raw mode (restored however the
// session ends) and its size followed (SIGWINCH).
func streamSession(ctx context.Context, raw string, opts remotecommand.StreamOptions, termFd int) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the runtime's streaming URL %q is not one podrun can reach", raw)
	}
	// The runtime's streaming server may serve TLS with its own
	// certificate (containerd's enable_tls_streaming), as crictl accepts it.
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "POST", u)
	if err != nil {
		return err
	}
	if opts.Tty {
		state, err := term.MakeRaw(termFd)
		if err != nil {
			return fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		defer term.Restore(termFd, state)
		sizes := watchSize(ctx, termFd)
		defer sizes.stop()
		opts.TerminalSizeQueue = sizes
	}
	return exec.StreamWithContext(ctx, opts)
}

// sizeQueue is the terminal's size for remotecommand: its size at the
// start, then each new size after a SIGWINCH.
type sizeQueue struct {
	ch   chan remotecommand.TerminalSize
	done chan struct{}
}

// watchSize follows the size of the terminal fd until stop or ctx.
func watchSize(ctx context.Context, fd int) *sizeQueue {
	q := &sizeQueue{ch: make(chan remotecommand.TerminalSize, 1), done: make(chan struct{})}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	send := func() {
		w, h, err := term.GetSize(fd)
		if err != nil {
			return
		}
		s := remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
		select { // keep only the newest size
		case <-q.ch:
		default:
		}
		q.ch <- s
	}
	send()
	go func() {
		defer signal.Stop(winch)
		for {
			select {
			case <-winch:
				send()
			case <-q.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return q
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.ch:
		return &s
	case <-q.done:
		return nil
	}
}

func (q *sizeQueue) stop() { close(q.done) }

// findTarget finds the running container a command works in (find:
// runner.FindExecTarget or FindCopyTarget) and, unless quiet, prints on
// stderr the notice kubectl prints when it picked the container itself.
func findTarget(ctx context.Context, rt runner.Runtime, find func(context.Context, runner.Runtime, string, string) (runner.ExecTarget, string, error),
	pod, container string, quiet bool, stderr io.Writer) (runner.ExecTarget, error) {
	target, notice, err := find(ctx, rt, pod, container)
	if err != nil {
		return target, err
	}
	if notice != "" && !quiet {
		fmt.Fprintln(stderr, notice)
	}
	return target, nil
}
