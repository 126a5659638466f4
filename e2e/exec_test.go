//go:build e2e

package e2e

// podrun exec end to end: a command's output and exit status through CRI
// ExecSync; stdin and a terminal through the runtime's streaming server,
// the terminal a real pseudo-terminal driven as a user's would be (tty,
// stty size, a resize, exit status, the local terminal restored).

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestE2EExec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-exec-" + randomSuffix(t)
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-q", "-d", "-f", fromTemplate(t, "exec/exec.yaml", "NAME", name)}, "")
	expectCode(t, r, 0)
	ex := func(stdin string, args ...string) result {
		t.Helper()
		return e.runPodrun(append([]string{"exec"}, args...), stdin)
	}

	// The command's exit status is podrun's, as kubectl's; the first
	// container by default, with kubectl's notice.
	r = ex("", name, "--", "sh", "-c", "exit 3")
	expectCode(t, r, 3)
	if want := "Defaulted container \"app\" out of: app, side\npodrun: command terminated with exit code 3\n"; r.stderr != want {
		t.Errorf("exit 3: stderr %q, want %q", r.stderr, want)
	}
	// -q keeps podrun's own words back; the command's stay.
	r = ex("", "-q", name, "--", "sh", "-c", "echo out; echo err >&2; exit 7")
	expectCode(t, r, 7)
	if r.stdout != "out\n" || r.stderr != "err\n" {
		t.Errorf("-q: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	// -c, and each stream on its own; the command runs in that container.
	r = ex("", name, "-c", "side", "--", "sh", "-c", "hostname; echo err >&2")
	expectCode(t, r, 0)
	if r.stdout != name+"\n" || r.stderr != "err\n" {
		t.Errorf("-c side: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r = ex("", "-c", "nope", name, "--", "true")
	expectCode(t, r, 125)
	if want := "podrun: container nope is not valid for pod " + name + " out of: app, side\n"; r.stderr != want {
		t.Errorf("-c nope: stderr %q, want %q", r.stderr, want)
	}
	// A command the runtime cannot start: podrun's error, the runtime's words.
	r = ex("", "-c", "app", name, "--", "no-such-command")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, `executable file not found`) {
		t.Errorf("no-such-command: stderr %q", r.stderr)
	}

	// -i: stdin through the streaming server, to its end, and the exit
	// status back.
	r = ex("hello\nworld\n", "-i", "-c", "app", name, "--", "sh", "-c", "cat; exit 4")
	expectCode(t, r, 4)
	if r.stdout != "hello\nworld\n" {
		t.Errorf("-i: stdout %q, want the input back", r.stdout)
	}
	r = ex("", "-i", "-c", "app", name, "--", "sh", "-c", "echo streamed; echo err >&2")
	expectCode(t, r, 0)
	if r.stdout != "streamed\n" || r.stderr != "err\n" {
		t.Errorf("-i: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

// TestE2EExecNotRunning: a container that exited has nothing to exec into.
func TestE2EExecNotRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-exec-done"
	e.downOnCleanup(name)
	expectCode(t, e.runPodrun([]string{"-q", "-d", "-f", testdata("exec/done.yaml")}, ""), 0)
	r := e.runPodrun([]string{"exec", name, "--", "true"}, "")
	expectCode(t, r, 125)
	if want := "podrun: cannot exec into container once of pod default/e2e-exec-done: it is not running (exited with code 0)\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// TestE2EExecTTY: exec -it from a pseudo-terminal, as from a user's
// terminal: the command gets a terminal of its own, of this one's size,
// resized with it; podrun exits with the command's status and leaves this
// terminal as it found it.
func TestE2EExecTTY(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-exec-tty-" + randomSuffix(t)
	e.downOnCleanup(name)
	expectCode(t, e.runPodrun([]string{"-q", "-d", "-f", fromTemplate(t, "exec/exec.yaml", "NAME", name)}, ""), 0)

	master, slave := openPTY(t, 24, 80)
	before, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(podrunBin, withRoot(e.root, []string{"exec", "-it", name, "-c", "app", "--", "sh"})...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// podrun leads a session whose controlling terminal is the pty, as a
	// shell's job does: the terminal's resizes signal it (SIGWINCH).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	})
	var out syncBuffer
	go io.Copy(&out, master) // ends with EIO once podrun is gone
	waitFor := func(what string, re *regexp.Regexp) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !re.MatchString(out.String()) {
			select {
			case <-done:
				t.Fatalf("podrun ended (exit %d) before %s:\n%q", cmd.ProcessState.ExitCode(), what, out.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30s:\n%q", what, out.String())
			}
		}
	}
	typeLine := func(s string) {
		t.Helper()
		if _, err := master.WriteString(s + "\r"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("shell prompt", regexp.MustCompile(`/ # `))
	typeLine("tty")
	waitFor("the command's own terminal", regexp.MustCompile(`\r\n/dev/pts/\d+\r\n`))
	typeLine("stty size")
	waitFor("the terminal's size", regexp.MustCompile(`\r\n24 80\r\n`))
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
		t.Fatal(err)
	}
	// The resize reaches the remote terminal asynchronously: ask until it
	// shows.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "\r\n40 100\r\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the resize to 40x100 did not reach the command's terminal:\n%q", out.String())
		}
		typeLine("stty size")
		time.Sleep(300 * time.Millisecond)
	}
	typeLine("exit 5")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("podrun did not end after the shell exited:\n%q", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Errorf("exit %d, want 5 (the shell's)\n%q", code, out.String())
	}
	after, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("podrun left the terminal changed: termios %+v, was %+v", *after, *before)
	}
}

// openPTY opens a pseudo-terminal of rows x cols and returns its master
// and its slave (the side a program's stdio gets).
func openPTY(t *testing.T, rows, cols uint16) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
	return m, s
}
