//go:build e2e

package e2e

// Runtime classes end to end (docs/runtime-classes.md): a RuntimeClass of
// the run maps a pod's spec.runtimeClassName to the handler its sandbox is
// made with, checked against the handlers the runtime reports; its
// overhead is added to the pod cgroup. The testbed's containerd has one
// handler, runc: named explicitly it runs, kata is refused.

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// statusHandlers are the runtime handlers, with their features, that the
// runtime reports in CRI Status: "" and runc on containerd 2.x, none on
// containerd 1.6.
func statusHandlers(t *testing.T) []*runtimeapi.RuntimeHandler {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := rtClient.Status(ctx, false)
	if err != nil {
		t.Fatalf("CRI Status: %v", err)
	}
	return st.GetRuntimeHandlers()
}

// reportedHandlers are the names of statusHandlers.
func reportedHandlers(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, h := range statusHandlers(t) {
		names = append(names, h.GetName())
	}
	return names
}

// TestE2ERuntimeClassRunc: a pod whose RuntimeClass names the handler runc
// runs with it (its sandbox says so), its pod cgroup holding the class's
// overhead besides its own resources; where the runtime reports no
// handlers, podrun says it sent runc unchecked.
func TestE2ERuntimeClassRunc(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reported := reportedHandlers(t)
	if len(reported) == 0 && runtimeName == runtimeContainerd && !onContainerd1() {
		t.Fatalf("containerd 2 reports no runtime handlers in CRI Status")
	}
	suffix := randomSuffix(t)
	root, uid := "/podrun/e2e-"+suffix, "e2e-rtclass-"+suffix
	p := e.startPodrun([]string{"--cgroup-root", root, "-f", fromTemplate(t, "runtimeclass/runc.yaml", "UID", uid)}, "")
	p.waitStdout("done-e2e-rtclass-runc", 60*time.Second)

	var handlers []string
	for _, sb := range sandboxesOf(t, "e2e-rtclass-runc") {
		if sb.Labels["io.kubernetes.pod.uid"] == uid {
			handlers = append(handlers, sb.GetRuntimeHandler())
		}
	}
	if strings.Join(handlers, " ") != "runc" {
		t.Errorf("the pod's sandboxes have handlers %q, want one of runc", handlers)
	}
	// 100m requested + 250m of overhead; a 64Mi limit + 32Mi.
	expectCgroup(t, shape.podCgroup(root, v1.PodQOSBurstable, uid),
		cpuShares(milliCPUToShares(350)), memoryLimit(96<<20))
	r := p.result(defaultRunTimeout)
	expectCode(t, r, 0)
	note := `note: pod default/e2e-rtclass-runc: RuntimeClass "e2e-runc": handler "runc" is not checked: the runtime reports no handlers`
	if got := strings.Contains(r.stderr, note); got != (len(reported) == 0) {
		t.Errorf("stderr has the note of an unchecked handler: %v, want %v (handlers reported: %q)\n%s", got, len(reported) == 0, reported, r)
	}
	expectCgroupGone(t, shape.rootCgroup(root))
}

// TestE2ERuntimeClassUnknownHandler: a RuntimeClass whose handler the
// runtime does not have (kata) is refused with 125 before anything is
// created, naming the file, the document and spec.runtimeClassName; where
// the runtime reports no handlers (containerd 1.6) RunPodSandbox refuses it
// and the run ends 125 with the runtime's error, nothing left. A class the
// run lacks is refused before the runtime is asked.
func TestE2ERuntimeClassUnknownHandler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("runtimeclass/kata.yaml")
	r := e.runPodrun([]string{"-f", m}, "")
	expectCode(t, r, 125)
	if strings.Contains(r.stdout, "must-not-run") {
		t.Errorf("the container ran\n%s", r)
	}
	if len(reportedHandlers(t)) > 0 {
		want := m + `: document 2: pod default/e2e-rtclass-kata: spec.runtimeClassName: RuntimeClass "e2e-kata" has handler "kata", which the runtime does not have (its handlers, from CRI Status: `
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
		expectNothingCreated(t, e)
	} else if !strings.Contains(r.stderr, `no runtime for "kata" is configured`) {
		t.Errorf("stderr lacks the runtime's refusal of the handler\n%s", r)
	}
	if sbs := sandboxesOf(t, "e2e-rtclass-kata"); len(sbs) > 0 {
		t.Errorf("sandboxes %v after a refused run", sbs)
	}

	// The pod without its RuntimeClass.
	pod := manifest(t, "pod.yaml", strings.SplitN(readTestdata(t, "runtimeclass/kata.yaml"), "---\n", 2)[1])
	r = e.runPodrun([]string{"-f", pod}, "")
	expectCode(t, r, 125)
	if want := `spec.runtimeClassName: Not found: "e2e-kata": no RuntimeClass "e2e-kata" in the run`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
}
