//go:build e2e

package e2e

// Finding the runtime: -r and --runtime-endpoint (unix:// or a bare path),
// $CONTAINER_RUNTIME_ENDPOINT, the flag over the variable, and the errors
// that name the sockets tried when none answers.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podrun/podrun/cri"
)

func TestE2ERuntimeEndpointFlagAndEnv(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("endpoint/pod.yaml")
	// -r with the variable unset.
	r := e.runPodrun([]string{"-q", "-r", rtEndpoint, "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 0)
	// --runtime-endpoint, bare path form.
	r = e.runPodrun([]string{"-q", "--runtime-endpoint", strings.TrimPrefix(rtEndpoint, "unix://"), "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 0)
	// The variable alone.
	r = e.runPodrun([]string{"-q", "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT="+rtEndpoint)
	expectCode(t, r, 0)
	if r.stdout != "hi\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
	// The flag wins over the variable.
	bad := "unix://" + filepath.Join(t.TempDir(), "nothing.sock")
	r = e.runPodrun([]string{"-q", "-r", rtEndpoint, "-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT="+bad)
	expectCode(t, r, 0)
}

func TestE2ERuntimeEndpointBad(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("endpoint/bad.yaml")
	sock := filepath.Join(t.TempDir(), "nothing.sock")
	r := e.runPodrun([]string{"-r", "unix://" + sock, "-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, sock) {
		t.Errorf("the error does not name the socket %s\n%s", sock, r)
	}
	// The same through the variable.
	r = e.runPodrun([]string{"-f", m}, "", "CONTAINER_RUNTIME_ENDPOINT=unix://"+sock)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, sock) {
		t.Errorf("the error does not name the socket %s\n%s", sock, r)
	}
	expectNothingCreated(t, e)
}

func TestE2ERuntimeEndpointDefaultsNoneAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The testbed never uses the default sockets; if a runtime answers on one
	// of them this test cannot check the error.
	for _, ep := range cri.DefaultEndpoints {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, err := cri.Dial(ctx, ep)
		cancel()
		if err == nil {
			c.Close()
			t.Fatalf("a runtime answers on the default endpoint %s: this test needs none to answer", ep)
		}
	}
	r := e.runPodrun([]string{"-f", testdata("endpoint/none.yaml")}, "", "CONTAINER_RUNTIME_ENDPOINT")
	expectCode(t, r, 125)
	for _, ep := range cri.DefaultEndpoints {
		if !strings.Contains(r.stderr, strings.TrimPrefix(ep, "unix://")) {
			t.Errorf("the error does not name the socket %s\n%s", ep, r)
		}
	}
	expectNothingCreated(t, e)
}
