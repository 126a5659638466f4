package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/podrun/podrun/cri/fake"
)

// podrunAt runs the CLI in-process against the fake runtime and returns
// stdout, stderr and the exit status.
func podrunAt(t *testing.T, endpoint string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb strings.Builder
	if endpoint != "" {
		args = append([]string{"--runtime-endpoint", endpoint}, args...)
	}
	// Runs against the fake runtime make no pod cgroups on the host.
	if i := slices.IndexFunc(args, func(a string) bool { return a == "-f" || a == "--filename" }); i >= 0 &&
		!slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--cgroup-") }) {
		args = slices.Insert(slices.Clone(args), i, "--cgroup-root=")
	}
	code := run(append([]string{"podrun"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func writeManifest(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func startFake(t *testing.T) (*fake.Server, string) {
	t.Helper()
	s, ep := fake.Start(t)
	s.AddImages("busybox:1.28")
	fakeCNI(t, s)
	return s, ep
}

const jobPod = `apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.28
    command: [sh, -c, 'echo hello; exit 7']
`
