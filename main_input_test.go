package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildPodrun builds the podrun binary into a temp dir.
func buildPodrun(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(t.TempDir(), "podrun")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building podrun: %v\n%s", err, out)
	}
	return bin
}

// waitForFD waits until process pid holds a descriptor other than those
// in skip whose link satisfies match.
func waitForFD(t *testing.T, pid int, what string, match func(link string) bool, skip ...string) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && match(link) && !contains(skip, e.Name()) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("podrun (pid %d) never opened %s", pid, what)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCLISignalWhileReadingAManifest: SIGINT or SIGTERM while podrun waits
// for a manifest on stdin (`sleep 30 | podrun -f -`) or on a named pipe
// with no writer ends it at once with 130 or 143.
func TestCLISignalWhileReadingAManifest(t *testing.T) {
	bin := buildPodrun(t)
	for _, sig := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		for _, src := range []string{"stdin", "fifo"} {
			t.Run(src+"/"+sig.sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				args := []string{"--root-dir", filepath.Join(dir, "root"), "--cgroup-root=", "-f"}
				cmd := exec.Command(bin)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				// wait tells when podrun is reading: it holds the FIFO
				// open, or a descriptor of its own of the stdin pipe.
				var wait func(pid int)
				switch src {
				case "stdin":
					r, w, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					defer w.Close() // a writer that never writes, as `sleep 30 |`
					cmd.Stdin = r
					cmd.Args = append(append(cmd.Args, args...), "-")
					var st syscall.Stat_t
					if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
						t.Fatal(err)
					}
					pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
					wait = func(pid int) {
						r.Close()
						waitForFD(t, pid, "its own descriptor of the stdin pipe", func(l string) bool { return l == pipe }, "0")
					}
				case "fifo":
					fifo := filepath.Join(dir, "pod.fifo")
					if err := syscall.Mkfifo(fifo, 0o600); err != nil {
						t.Fatal(err)
					}
					cmd.Args = append(append(cmd.Args, args...), fifo)
					wait = func(pid int) {
						waitForFD(t, pid, fifo, func(l string) bool { return l == fifo })
					}
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				defer cmd.Process.Kill()
				wait(cmd.Process.Pid)
				sent := time.Now()
				if err := cmd.Process.Signal(sig.sig); err != nil {
					t.Fatal(err)
				}
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					t.Fatalf("podrun still running 10 s after %v; stderr:\n%s", sig.sig, stderr.String())
				}
				if code := cmd.ProcessState.ExitCode(); code != sig.code {
					t.Errorf("exit status %d, want %d; stderr:\n%s", code, sig.code, stderr.String())
				}
				if !strings.Contains(stderr.String(), "podrun: interrupted: ") {
					t.Errorf("stderr %q does not say it was interrupted", stderr.String())
				}
				t.Logf("exited %v after the signal: %s", time.Since(sent).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
			})
		}
	}
}
