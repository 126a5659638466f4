//go:build e2e

package e2e

// Pulls ahead end to end (issue 18, runner/prefetch.go): podrun pulls
// main's image while the init container runs, yet the events and errors
// are the kubelet's, at each container's turn: a missing image of the
// second container fails the pod (ErrImagePull, 125) only after the first
// ran; a run that ends cancels the pull under way (the runtime does not
// finish it once the registry answers) and leaves nothing; the events
// come in the kubelet's order.

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// expectInOrder fails unless out has a line containing each of want, in
// this order.
func expectInOrder(t *testing.T, out string, want ...string) {
	t.Helper()
	ls := strings.Split(out, "\n")
	last := -1
	for _, w := range want {
		i := slices.IndexFunc(ls, func(l string) bool { return strings.Contains(l, w) })
		if i < 0 {
			t.Errorf("no line with %q in:\n%s", w, out)
			return
		}
		if i < last {
			t.Errorf("%q comes before the line before it in the want list, want after:\n%s", w, out)
		}
		last = i
	}
}

func TestE2EPullAheadLaterImageMissing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-ahead-missing-" + randomSuffix(t)
	m := fromTemplate(t, "images/pull-ahead.yaml", "NAME", name,
		"INIT_SCRIPT", "sleep 2; echo init-ran", "MAIN_IMAGE", "busybox:does-not-exist", "MAIN_POLICY", "IfNotPresent")
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if r.stdout != "[pod/"+name+"/init] init-ran\n" {
		t.Errorf("stdout %q, want the init container's line only\n%s", r.stdout, r)
	}
	// As on a kubelet: the init container runs to its end, then main's
	// image is pulled (ahead, reported now) and fails.
	expectInOrder(t, r.stderr, "Started container init",
		`Pulling: Pulling image "busybox:does-not-exist"`, `ErrImagePull: Failed to pull image "busybox:does-not-exist"`)
	expectNothingLeft(t, e, "after the run")
}

func TestE2EPullAheadCancelled(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"SIGINT", "--timeout"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			reg := newStallRegistry(t)
			name := "e2e-ahead-cancel-" + randomSuffix(t)
			m := fromTemplate(t, "images/pull-ahead.yaml", "NAME", name,
				"INIT_SCRIPT", "echo init-running; exec sleep 3600", "MAIN_IMAGE", reg.image(), "MAIN_POLICY", "IfNotPresent")
			args := []string{"-f", m}
			if how == "--timeout" {
				args = append(args, "--timeout", "4s") // before containerd's TLS handshake timeout (10 s) could end the held pull
			}
			p := e.startPodrun(args, "")
			// main's image is pulled while the init container runs.
			p.waitStdout("init-running", 60*time.Second)
			reg.waitHeld(t, p, 60*time.Second)
			if strings.Contains(p.stderr.String(), "Pulling image") && strings.Contains(p.stderr.String(), reg.host) {
				t.Errorf("main's pull was reported before its turn:\n%s", p.stderr.String())
			}
			want, stopped := 124, "Timeout: timed out"
			if how == "SIGINT" {
				p.signal(syscall.SIGINT)
				want, stopped = 130, "Interrupted: stopping"
			}
			// The pod has stopped syncing: its pulls are cancelled. While
			// podrun tears it down (the init container ignores SIGTERM: 2 s
			// of grace), the registry answers: a pull that went on would
			// end now (one takes well under a second from the mirror).
			p.waitStderr(stopped, 60*time.Second)
			reg.release()
			r := p.result(60 * time.Second)
			expectCode(t, r, want)
			if strings.Contains(r.stderr, `Pulling image "`+reg.image()+`"`) {
				t.Errorf("main had a turn:\n%s", r)
			}
			time.Sleep(scaled(2 * time.Second))
			if img, err := rtClient.ImageStatus(t.Context(), reg.image()); err != nil || img != nil {
				t.Errorf("the runtime pulled %s after the pod stopped: the pull went on (%v)", reg.image(), err)
			}
			expectNothingLeft(t, e, "after the run")
		})
	}
}

// TestE2EPullAheadKubeletOrder: main's image, imagePullPolicy Always, is
// pulled ahead and reported at main's turn: Pulling, Pulled with the
// kubelet's words, Created, Started, after the init container's. (An
// image of its own, through the stalling registry, would show the pull
// under way while init runs, as TestE2EPullAheadCancelled does; but
// removing it after the test, by CRI, would remove the mirror's image of
// the same ID under every name, which parallel tests use.)
func TestE2EPullAheadKubeletOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-ahead-order-" + randomSuffix(t)
	m := fromTemplate(t, "images/pull-ahead.yaml", "NAME", name,
		"INIT_SCRIPT", "echo init-ran", "MAIN_IMAGE", "busybox:1.36", "MAIN_POLICY", "Always")
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 0)
	if r.stdout != "[pod/"+name+"/init] init-ran\n[pod/"+name+"/main] main-ran\n" {
		t.Errorf("stdout %q, want init's line, then main's\n%s", r.stdout, r)
	}
	expectInOrder(t, r.stderr,
		`Pulled: Container image "busybox:1.36" already present on machine`,
		"Created container init", "Started container init",
		`Pulling: Pulling image "busybox:1.36"`,
		`Pulled: Successfully pulled image "busybox:1.36" in `,
		"Created container main", "Started container main")
	if !strings.Contains(r.stderr, " including waiting). Image size: ") {
		t.Errorf("the Pulled event lacks the kubelet's words\n%s", r)
	}
	if n := strings.Count(r.stderr, "Pulling image"); n != 1 {
		t.Errorf("%d Pulling events, want main's alone\n%s", n, r)
	}
	expectNothingLeft(t, e, "after the run")
}
