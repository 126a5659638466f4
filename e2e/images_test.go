//go:build e2e

package e2e

// Images end to end: imagePullPolicy Never and Always, a tag the registry
// does not have, the private registry without credentials, and the
// container status -o json reports for a pull that failed.

import (
	"os"
	"strings"
	"testing"
)

func TestE2EImageNeverPullAbsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("images/never-pull.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImageNeverPull") {
		t.Errorf("stderr lacks ErrImageNeverPull\n%s", r)
	}
}

func TestE2EImageNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("images/not-found.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "busybox:does-not-exist") {
		t.Errorf("the error does not name the image\n%s", r)
	}
	if !strings.Contains(r.stderr, "ErrImagePull") {
		t.Errorf("stderr lacks ErrImagePull\n%s", r)
	}
}

func TestE2EOutputAfterImageError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("images/out-never-pull.yaml")}, "")
	expectCode(t, r, 125)
	p := parsePod(t, r.stdout)
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", p.Status.ContainerStatuses)
	}
	// As the kubelet reports it: waiting with reason ErrImageNeverPull.
	w := p.Status.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImageNeverPull" {
		t.Errorf("container state %+v, want waiting with reason ErrImageNeverPull (as the kubelet reports it)", p.Status.ContainerStatuses[0].State)
	}
}

func TestE2EImagePullAlways(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("images/pull-always.yaml")}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, "Pulling") || r.stdout != "pulled\n" {
		t.Errorf("want a Pulling progress line and the container's output\n%s", r)
	}
}

func TestE2EImagePrivateWithoutAuth(t *testing.T) {
	t.Parallel()
	img := os.Getenv("PODRUN_TESTBED_PRIVATE_IMAGE")
	if img == "" {
		t.Fatalf("PODRUN_TESTBED_PRIVATE_IMAGE is not set: export `bash hack/testbed.sh env`")
	}
	e := newEnv(t)
	m := fromTemplate(t, "images/private-noauth.yaml", "IMAGE", img)
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImagePull") || !strings.Contains(r.stderr, img) {
		t.Errorf("stderr lacks ErrImagePull naming %s\n%s", img, r)
	}
}
