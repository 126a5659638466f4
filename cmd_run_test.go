package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

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

// A pod past its activeDeadlineSeconds: exit 123, the last line says the
// reason, -o json holds the kubelet's reason and message.
func TestCLIDeadlineExceeded(t *testing.T) {
	_, ep := startFake(t)
	m := writeManifest(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: slow}\nspec:\n  restartPolicy: Never\n  activeDeadlineSeconds: 1\n  terminationGracePeriodSeconds: 2\n  containers:\n  - {name: c, image: busybox, command: [sleep, infinity]}\n")
	out, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "-o", "json", "-f", m)
	if code != 123 {
		t.Fatalf("exit %d, want 123\n%s", code, errOut)
	}
	var pod v1.Pod
	if err := json.Unmarshal([]byte(out), &pod); err != nil {
		t.Fatalf("stdout is not one v1.Pod: %v\n%s", err, out)
	}
	if pod.Status.Phase != v1.PodFailed || pod.Status.Reason != "DeadlineExceeded" ||
		pod.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("phase %q reason %q message %q, want Failed and the kubelet's DeadlineExceeded", pod.Status.Phase, pod.Status.Reason, pod.Status.Message)
	}
	for _, want := range []string{
		"pod/slow: DeadlineExceeded: Pod was active on the node longer than the specified deadline\n",
		"pod/slow: failed (phase Failed, reason DeadlineExceeded)\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
