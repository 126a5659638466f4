package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

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

func TestCLIExitCodeOfFailedContainer(t *testing.T) {
	_, ep := startFake(t)
	root := t.TempDir()
	out, errOut, code := podrunAt(t, ep, "--root-dir", root, "-f", writeManifest(t, jobPod))
	if code != 7 {
		t.Fatalf("exit %d, want 7\nstderr:\n%s", code, errOut)
	}
	if out != "hello\n" {
		t.Errorf("stdout %q, want the container's output %q", out, "hello\n")
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "pods")); len(entries) != 0 {
		t.Errorf("pod dirs left behind: %v", entries)
	}
}

func TestCLIRunSubcommandIsTheDefault(t *testing.T) {
	_, ep := startFake(t)
	m := writeManifest(t, strings.Replace(jobPod, "exit 7", "exit 0", 1))
	for _, args := range [][]string{{"-f", m}, {"run", "-f", m}} {
		if _, errOut, code := podrunAt(t, ep, append(args, "--root-dir", t.TempDir(), "-q")...); code != 0 {
			t.Errorf("podrun %v: exit %d, want 0\n%s", args, code, errOut)
		}
	}
}

func TestCLIMisspelledFieldCreatesNothing(t *testing.T) {
	s, ep := startFake(t)
	m := writeManifest(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    image: busybox\n    comand: [sh]\n")
	_, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "-f", m)
	if code != 125 {
		t.Fatalf("exit %d, want 125", code)
	}
	want := m + `: document 1 (Pod "web"): spec.containers[0].comand: unknown field`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q does not contain %q", errOut, want)
	}
	if calls := s.Calls(); len(calls) != 0 {
		t.Errorf("the runtime was called for a bad manifest: %v", calls)
	}
}

func TestCLIOutputJSONHoldsOnlyThePod(t *testing.T) {
	_, ep := startFake(t)
	out, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "-o", "json", "-f", writeManifest(t, jobPod))
	if code != 7 {
		t.Fatalf("exit %d, want 7\n%s", code, errOut)
	}
	var pod v1.Pod
	if err := json.Unmarshal([]byte(out), &pod); err != nil {
		t.Fatalf("stdout is not one v1.Pod: %v\n%s", err, out)
	}
	if pod.Kind != "Pod" || pod.Status.Phase != v1.PodFailed {
		t.Errorf("kind %q phase %q, want Pod Failed", pod.Kind, pod.Status.Phase)
	}
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil ||
		pod.Status.ContainerStatuses[0].State.Terminated.ExitCode != 7 {
		t.Errorf("container statuses %+v, want one terminated with exit code 7", pod.Status.ContainerStatuses)
	}
	if !strings.Contains(errOut, "hello") {
		t.Errorf("container output should go to stderr with -o json; stderr:\n%s", errOut)
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := parseHeaders([]string{"a:hello", "b: again", "a:world"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Values("A"); len(got) != 2 || got[0] != "hello" || got[1] != "world" {
		t.Errorf("a = %v, want [hello world] in order", got)
	}
	if h.Get("B") != "again" {
		t.Errorf("b = %q", h.Get("B"))
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		heap uint64
		want int64
	}{
		{0, 24 << 20},
		{3 << 20, 24 << 20}, // 50 small pods: the least limit
		{6 << 20, 24 << 20},
		{7 << 20, 28 << 20}, // past it, four times the manifests' heap
		{400 << 20, 1600 << 20},
		{math.MaxUint64, 4 << 60},
	} {
		if got := memoryLimit(tc.heap); got != tc.want {
			t.Errorf("memoryLimit(%d) = %d, want %d", tc.heap, got, tc.want)
		}
	}
}
