package runner_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// TestRunReplace: a second detached run of a running detached pod is
// refused, naming --replace; with Replace it stops the pod first as
// `podrun down` does (its preStop hook runs), then runs, leaving one
// sandbox, the new run's. A pod of the same name whose manifest changed
// (another UID) is replaced too; one a live podrun runs attached refuses
// the run.
func TestRunReplace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var mu sync.Mutex
	var hooks []string
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{UntilStopped: true, Exec: func(cmd []string) fake.ExecResult {
			if cmd[0] == "prestop" {
				mu.Lock()
				hooks = append(hooks, cmd[1])
				mu.Unlock()
			}
			return fake.ExecResult{}
		}}
	})
	pod := func(uid, hook string) *v1.Pod {
		c := ctr("main", "sleep", "infinity")
		c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"prestop", hook}}}}
		p := newPod("web", v1.RestartPolicyAlways, c)
		p.UID = types.UID(uid)
		return p
	}
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	only := func(want string) *runtimeapi.PodSandbox {
		t.Helper()
		sbs, err := e.rt.ListPodSandbox(ctx, nil)
		if err != nil || len(sbs) != 1 || sbs[0].Labels["io.kubernetes.pod.uid"] != want {
			t.Fatalf("sandboxes %v (%v), want one of uid %s", sbs, err, want)
		}
		return sbs[0]
	}
	runOK := func(p *v1.Pod) {
		t.Helper()
		if res := e.run(t, ctx, p); !res.Pods[0].Reached() {
			t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
		}
	}
	runOK(pod("uid-1", "first"))
	first := only("uid-1")

	// Without --replace: refused, the pod left alone.
	_, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{pod("uid-1", "second")}, e.opts)
	if err == nil || !strings.Contains(err.Error(), "already running (detached)") || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("second run: %v, want already running, naming --replace", err)
	}
	if only("uid-1").Id != first.Id || len(hooks) != 0 {
		t.Errorf("the refused run disturbed the pod (hooks %q)", hooks)
	}

	// --replace, the same UID.
	e.opts.Replace = true
	runOK(pod("uid-1", "second"))
	second := only("uid-1")
	if second.Id == first.Id || second.Labels["io.podrun.run"] == first.Labels["io.podrun.run"] {
		t.Errorf("the sandbox left is the first run's")
	}
	if strings.Join(hooks, " ") != "first" {
		t.Errorf("preStop hooks run %q, want the first pod's", hooks)
	}
	for _, want := range []string{"pod/web: Replacing: stopping the detached pod default/web (uid uid-1, run ", "pod/web: Killing: Stopping container main"} {
		if !strings.Contains(e.progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, e.progress.String())
		}
	}

	// --replace of a changed manifest: the old UID's pod goes.
	runOK(pod("uid-2", "third"))
	only("uid-2")
	if strings.Join(hooks, " ") != "first second" {
		t.Errorf("preStop hooks run %q", hooks)
	}
	if _, err := os.Stat(e.opts.RootDir + "/pods/uid-1"); !os.IsNotExist(err) {
		t.Errorf("the replaced pod's data dir is left: %v", err)
	}

	// A pod a live podrun runs attached (this process, not detached).
	if err := runner.Down(ctx, e.rt, []string{"web"}, false, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	e.opts.Replace, e.opts.Owner = false, runner.Owner{RunID: "live", PID: os.Getpid()}
	runOK(pod("uid-3", "live"))
	e.opts.Replace, e.opts.Owner = true, runner.Owner{}
	_, err = runner.Run(ctx, e.rt, e.facts, []*v1.Pod{pod("uid-3", "x")}, e.opts)
	if err == nil || !strings.Contains(err.Error(), "pod default/web: the running pod default/web (uid uid-3) is run by podrun pid") {
		t.Errorf("--replace of a live run's pod: %v, want refused", err)
	}
	only("uid-3")
	if err := runner.Down(ctx, e.rt, []string{"web"}, false, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	e.assertTornDown(t)
}

// TestRunReplaceInterrupted: a signal while --replace stops the running
// pod does not cut the stop short; the pod goes whole, and the new one is
// not started.
func TestRunReplaceInterrupted(t *testing.T) {
	e := newEnv(t)
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	p := newPod("web", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity"))
	if res := e.run(t, context.Background(), p); !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	e.opts.Replace = true
	e.srv.Delay("StopContainer", 50*second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for deadline := time.Now().Add(runLimit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if strings.Contains(e.progress.String(), "Killing: Stopping container main") {
				return
			}
		}
	}()
	_, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{p}, e.opts)
	if err == nil || !strings.Contains(err.Error(), "--replace: interrupted: the running pod was stopped, the new one not started") {
		t.Errorf("Run: %v, want interrupted after the stop", err)
	}
	e.assertTornDown(t)
}
