//go:build e2e

package e2e

// podrun run NAME --image IMAGE (the pod kubectl run would create), -i's
// attach of podrun's stdin to the container with stdin: true, -t's
// terminal, and --image/--env overrides of a manifest's pods, end to end.

import (
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestE2ERunNameStdin: data piped into podrun comes into the container's
// stdin through CRI Attach, its end closes the container's stdin
// (stdinOnce), and the run exits with the container's status.
func TestE2ERunNameStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-run-i-" + randomSuffix(t)

	r := e.runPodrun([]string{"run", name, "-i", "--image", "busybox", "--", "wc", "-c"}, "data\n")
	expectCode(t, r, 0)
	if r.stdout != "5\n" {
		t.Errorf("echo data | podrun run -i -- wc -c: stdout %q, want \"5\\n\"\n%s", r.stdout, r)
	}

	// The container's exit status is the run's; what it read comes out.
	r = e.runPodrun([]string{"run", "-q", name, "-i", "--image", "busybox", "--", "sh", "-c", "cat; exit 3"}, "hello\nworld\n")
	expectCode(t, r, 3)
	if r.stdout != "hello\nworld\n" {
		t.Errorf("cat; exit 3: stdout %q, want the input back\n%s", r.stdout, r)
	}

	// Nothing is lost however fast the container reads: 1 MiB, counted.
	big := strings.Repeat("0123456789abcdef", 1<<16)
	r = e.runPodrun([]string{"run", "-q", name, "-i", "--image", "busybox", "--", "wc", "-c"}, big)
	expectCode(t, r, 0)
	if want := strconv.Itoa(len(big)) + "\n"; r.stdout != want {
		t.Errorf("1 MiB: stdout %q, want %q", r.stdout, want)
	}

	// A container that does not read its stdin and is gone before the
	// attach: its output, its status, no warning.
	r = e.runPodrun([]string{"run", "-q", name, "-i", "--image", "busybox", "--", "sh", "-c", "echo quick; exit 4"}, "unread\n")
	expectCode(t, r, 4)
	if r.stdout != "quick\n" || r.stderr != "" {
		t.Errorf("a container that does not read: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	// -o json: the pod kubectl run would create, Succeeded, its output on
	// stderr.
	r = e.runPodrun([]string{"run", "-q", name, "-i", "--image", "busybox:1.28", "--env", "GREETING=hi", "-o", "json", "--", "sh", "-c", "read l; echo $GREETING $l"}, "there\n")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	c := containerStatus(t, p, name)
	if p.Status.Phase != "Succeeded" || p.Labels["run"] != name || !p.Spec.Containers[0].Stdin || !p.Spec.Containers[0].StdinOnce ||
		p.Spec.RestartPolicy != "Never" || !strings.HasSuffix(c.Image, "busybox:1.28") {
		t.Errorf("pod: phase %s, labels %v, container %+v, restartPolicy %s, image %s", p.Status.Phase, p.Labels, p.Spec.Containers[0], p.Spec.RestartPolicy, c.Image)
	}
	if r.stderr != "hi there\n" {
		t.Errorf("-o json: stderr %q, want the container's output", r.stderr)
	}
}

// TestE2EImageOverride: --image CONTAINER=IMAGE changes the image that
// runs, of a regular and of an init container, and --env sets a variable
// in every container, replacing the manifest's.
func TestE2EImageOverride(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-override-" + randomSuffix(t)
	pod := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: `+name+`}
spec:
  restartPolicy: Never
  initContainers:
  - {name: setup, image: busybox:1.36, command: [sh, -c, 'echo setup $GREETING']}
  containers:
  - name: main
    image: busybox:1.36
    command: [sh, -c, 'echo main $GREETING']
    env: [{name: GREETING, value: manifest}]
`)
	r := e.runPodrun([]string{"-q", "-o", "json", "--image", "main=busybox:1.28", "--image", "setup=busybox:1.35", "--env", "GREETING=a,b", "-f", pod}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if img := containerStatus(t, p, "main").Image; !strings.HasSuffix(img, "busybox:1.28") {
		t.Errorf("main ran %s, want busybox:1.28", img)
	}
	var setup string
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name == "setup" {
			setup = s.Image
		}
	}
	if !strings.HasSuffix(setup, "busybox:1.35") {
		t.Errorf("setup ran %q, want busybox:1.35", setup)
	}
	expectLines(t, r.stderr, "[pod/"+name+"/setup] setup a,b", "[pod/"+name+"/main] main a,b")

	// A container the pod has not: nothing starts.
	r = e.runPodrun([]string{"-q", "--image", "nope=busybox:1.28", "-f", pod}, "")
	expectCode(t, r, 125)
	if want := "podrun: --image nope=busybox:1.28: pod " + name + " has no container \"nope\" (its containers: setup, main)\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// TestE2ERunNameTTY: podrun run -it from a pseudo-terminal: the shell
// gets a terminal of this one's size through the attach, its output comes
// through it once, and podrun exits with its status, the terminal as it
// found it.
func TestE2ERunNameTTY(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-run-tty-" + randomSuffix(t)

	master, slave := openPTY(t, 24, 80)
	before, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(podrunBin, withRoot(e.root, []string{"run", name, "-it", "--rm", "--image", "busybox", "--", "sh"})...)
	cmd.Env = commandEnv([]string{"TMPDIR=" + e.tmpDir})
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
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
	go io.Copy(&out, master)
	typeLine := func(s string) {
		t.Helper()
		if _, err := master.WriteString(s + "\r"); err != nil {
			t.Fatal(err)
		}
	}
	// The shell's first prompt may come before the attach: as kubectl says,
	// press enter.
	deadline := time.Now().Add(scaled(60 * time.Second))
	for !strings.Contains(out.String(), "/ # ") {
		select {
		case <-done:
			t.Fatalf("podrun ended (exit %d) before a prompt:\n%q", cmd.ProcessState.ExitCode(), out.String())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt within 60s:\n%q", out.String())
		}
		typeLine("")
	}
	typeLine("echo marker-$((6*7)); stty size")
	waitRE := func(what string, re *regexp.Regexp) {
		t.Helper()
		deadline := time.Now().Add(scaled(30 * time.Second))
		for !re.MatchString(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30s:\n%q", what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitRE("the command's output", regexp.MustCompile(`\r\nmarker-42\r\n24 80\r\n`))
	typeLine("exit 5")
	select {
	case <-done:
	case <-time.After(scaled(60 * time.Second)):
		t.Fatalf("podrun did not end after the shell exited:\n%q", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Errorf("exit %d, want 5 (the shell's)\n%q", code, out.String())
	}
	// Once: through the attach, not from the log as well.
	if n := strings.Count(out.String(), "marker-42\r\n"); n != 1 {
		t.Errorf("the output shows %d times, want once:\n%q", n, out.String())
	}
	after, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("podrun left the terminal changed: termios %+v, was %+v", *after, *before)
	}
}
