package main

import (
	"context"
	"strings"
	"testing"

	"github.com/podrun/podrun/cri"
)

const detachedPod = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.28
    command: [sleep, infinity]
`

// TestCLIReplace: a second `podrun -d` of a running detached pod exits 125
// naming --replace; `podrun --replace -d` stops it and runs the pod anew,
// leaving one sandbox, the new run's.
func TestCLIReplace(t *testing.T) {
	s, ep := startFake(t)
	root, m := t.TempDir(), writeManifest(t, detachedPod)
	if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "-d", "-f", m); code != 0 {
		t.Fatalf("podrun -d: exit %d\n%s", code, errOut)
	}
	_, errOut, code := podrunAt(t, ep, "--root-dir", root, "-d", "-f", m)
	if code != 125 || !strings.Contains(errOut, "is already running (detached); stop it with `podrun down default/web`, or run with --replace") {
		t.Errorf("second podrun -d: exit %d, want 125 naming --replace\n%s", code, errOut)
	}
	_, errOut, code = podrunAt(t, ep, "--root-dir", root, "--replace", "-d", "-f", m)
	if code != 0 || !strings.Contains(errOut, "Replacing: stopping the detached pod default/web") {
		t.Errorf("podrun --replace -d: exit %d, want 0, saying it replaces the pod\n%s", code, errOut)
	}
	rt, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if sbs, err := rt.ListPodSandbox(context.Background(), nil); err != nil || len(sbs) != 1 || len(s.SandboxHandlers()) != 2 {
		t.Errorf("sandboxes %v (%v), %d made: want one left of two", sbs, err, len(s.SandboxHandlers()))
	}
	if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "down", "web"); code != 0 {
		t.Errorf("down: exit %d\n%s", code, errOut)
	}
}
