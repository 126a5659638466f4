package runner_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner"
)

// classPod is a pod that exits 0, of RuntimeClass class.
func classPod(name, class string) *v1.Pod {
	p := newPod(name, v1.RestartPolicyNever, sh("main", "exit 0"))
	p.Spec.RuntimeClassName = &class
	return p
}

// TestRunWithARuntimeClass: a pod's sandbox is made with its RuntimeClass's
// handler, one without a class with the default; a handler the runtime
// does not report, or a class the run lacks, refuses the run before
// anything is created.
func TestRunWithARuntimeClass(t *testing.T) {
	e := newEnv(t)
	e.srv.SetRuntimeHandlers([]*runtimeapi.RuntimeHandler{{Name: ""}, {Name: "runc"}})
	e.facts.RuntimeHandlers = []*runtimeapi.RuntimeHandler{{Name: ""}, {Name: "runc"}}
	e.opts.RuntimeClasses = []*nodev1.RuntimeClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "runc"}, Handler: "runc"},
		{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata"},
	}
	ctx := context.Background()
	res := e.run(t, ctx, classPod("explicit", "runc"), newPod("plain", v1.RestartPolicyNever, sh("main", "exit 0")))
	for _, r := range res.Pods {
		if !r.Reached() {
			t.Errorf("pod %s: outcome %s, err %v", r.Pod.Name, r.Outcome, r.Err)
		}
	}
	if got := strings.Join(e.srv.SandboxHandlers(), " "); got != "explicit=runc plain=" && got != "plain= explicit=runc" {
		t.Errorf("RunPodSandbox handlers %q, want explicit=runc and plain with the default", got)
	}
	e.assertTornDown(t)

	for _, tc := range []struct{ pod, err string }{
		{"kata", `pod default/kata: spec.runtimeClassName: RuntimeClass "kata" has handler "kata", which the runtime does not have (its handlers, from CRI Status: the default, "runc")`},
		{"gvisor", `pod default/gvisor: spec.runtimeClassName: runtimeclass.node.k8s.io "gvisor" not found`},
	} {
		_, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{classPod(tc.pod, tc.pod), classPod("fine", "runc")}, e.opts)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Run of %s: %v, want %s", tc.pod, err, tc.err)
		}
	}
	if made := e.srv.SandboxHandlers(); len(made) != 2 {
		t.Errorf("refused runs made sandboxes: %q", made)
	}
	e.assertTornDown(t)
}

// TestRunWithAHandlerTheRuntimeDoesNotReport: a runtime that reports no
// handlers (containerd 1.6) is sent the handler unchecked, with a note; a
// handler it has runs, one it lacks fails the sandbox with the runtime's
// error (exit 125), and nothing is left.
func TestRunWithAHandlerTheRuntimeDoesNotReport(t *testing.T) {
	e := newEnv(t)
	e.srv.SetUnreportedHandlers("runc")
	e.opts.RuntimeClasses = []*nodev1.RuntimeClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "runc"}, Handler: "runc"},
		{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata"},
	}
	ctx := context.Background()
	res := e.run(t, ctx, classPod("ok", "runc"))
	if !res.Pods[0].Reached() {
		t.Errorf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if want := `note: pod default/ok: RuntimeClass "runc": handler "runc" is not checked: the runtime reports no handlers`; !strings.Contains(e.progress.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, e.progress.String())
	}
	res = e.run(t, ctx, classPod("vm", "kata"))
	if r := res.Pods[0]; r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError ||
		r.Err == nil || !strings.Contains(r.Err.Error(), `no runtime for "kata" is configured`) {
		t.Errorf("outcome %s, exit %d, err %v: want 125 with the runtime's refusal", r.Outcome, res.ExitCode(0), r.Err)
	}
	e.assertTornDown(t)
}

// TestDryRunRuntimeHandler: a dry run gives the handler RunPodSandbox
// would be sent, notes that it did not check it, and refuses a class the
// run lacks as the run does.
func TestDryRunRuntimeHandler(t *testing.T) {
	e := newEnv(t)
	e.facts.NoRuntime = true
	e.opts.RuntimeClasses = []*nodev1.RuntimeClass{{ObjectMeta: metav1.ObjectMeta{Name: "vm"}, Handler: "kata",
		Overhead: &nodev1.Overhead{PodFixed: v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}}}}
	res, err := runner.DryRun(e.facts, []*v1.Pod{classPod("a", "vm"), newPod("b", v1.RestartPolicyNever, sh("main", "exit 0"))}, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pods[0].RuntimeHandler != "kata" || res.Pods[1].RuntimeHandler != "" {
		t.Errorf("handlers %q and %q, want kata and the default", res.Pods[0].RuntimeHandler, res.Pods[1].RuntimeHandler)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), `pod default/a: RuntimeClass "vm": handler "kata" is not checked`) {
		t.Errorf("notes lack the handler's:\n%s", strings.Join(res.Notes, "\n"))
	}
	if _, err := runner.DryRun(e.facts, []*v1.Pod{classPod("c", "gvisor")}, e.opts); err == nil || !strings.Contains(err.Error(), `runtimeclass.node.k8s.io "gvisor" not found`) {
		t.Errorf("DryRun of a class the run lacks: %v", err)
	}
}
