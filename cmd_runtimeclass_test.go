package main

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runtimeClasses are a RuntimeClass the fake runtime has a handler for
// (runc, with an overhead) and one it has not (kata).
const runtimeClassesYAML = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: runc}
handler: runc
overhead: {podFixed: {memory: 32Mi}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
`

// TestCLIRuntimeClass: a pod of a RuntimeClass whose handler the runtime
// reports runs, with the class's overhead in the pod -o json prints; one
// whose handler the runtime lacks is refused before anything is made (exit
// 125), naming the file, the document and the field.
func TestCLIRuntimeClass(t *testing.T) {
	s, ep := startFake(t)
	s.SetRuntimeHandlers([]*runtimeapi.RuntimeHandler{{Name: ""}, {Name: "runc"}})
	classes := writeManifest(t, runtimeClassesYAML)
	pod := strings.Replace(strings.Replace(jobPod, "exit 7", "exit 0", 1), "spec:\n", "spec:\n  runtimeClassName: runc\n", 1)

	out, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "-o", "json", "-f", classes, "-f", writeManifest(t, pod))
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, errOut)
	}
	var p v1.Pod
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("stdout: %v\n%s", err, out)
	}
	if p.Spec.Overhead.Memory().String() != "32Mi" {
		t.Errorf("spec.overhead %v, want the class's memory: 32Mi", p.Spec.Overhead)
	}
	if got := strings.Join(s.SandboxHandlers(), " "); got != "job=runc" {
		t.Errorf("sandboxes made %q, want job=runc", got)
	}

	m := writeManifest(t, strings.Replace(pod, "runtimeClassName: runc", "runtimeClassName: kata", 1))
	_, errOut, code = podrunAt(t, ep, "--root-dir", t.TempDir(), "-f", classes, "-f", m)
	want := "podrun: " + m + `: document 1: pod default/job: spec.runtimeClassName: RuntimeClass "kata" has handler "kata", which the runtime does not have (its handlers, from CRI Status: the default, "runc"); a kubelet's RunPodSandbox would fail` + "\n"
	if code != 125 || errOut != want {
		t.Errorf("exit %d, stderr\n%s\nwant 125 and\n%s", code, errOut, want)
	}
	if got := s.SandboxHandlers(); len(got) != 1 {
		t.Errorf("the refused run made a sandbox: %q", got)
	}
}
