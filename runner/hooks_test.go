package runner

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

// hookEnv is one running container on the fake runtime whose ExecSync
// answers come from exec, and a podRun for its pod.
type hookEnv struct {
	p  *podRun
	rt *cri.Client
	id string

	mu    sync.Mutex
	calls [][]string // ExecSync commands, in order
}

func newHookEnv(t *testing.T, c v1.Container, exec func([]string) fake.ExecResult) *hookEnv {
	t.Helper()
	srv, ep := fake.Start(t)
	srv.SetSecond(10 * time.Millisecond)
	srv.AddImages("busybox")
	rt, err := cri.Dial(context.Background(), ep, cri.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e := &hookEnv{rt: rt}
	srv.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{UntilStopped: true, Exec: func(cmd []string) fake.ExecResult {
			e.mu.Lock()
			e.calls = append(e.calls, cmd)
			e.mu.Unlock()
			if exec == nil {
				return fake.ExecResult{}
			}
			return exec(cmd)
		}}
	})
	ctx := context.Background()
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u"}}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	e.id, err = rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: c.Name}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, e.id); err != nil {
		t.Fatal(err)
	}
	grace := int64(1)
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{c}, TerminationGracePeriodSeconds: &grace}}
	pod.Name, pod.Namespace, pod.UID = "p", "default", "u"
	e.p = &podRun{r: &runState{rt: rt, now: time.Now}, pod: pod, uid: "u", reasons: map[string]waitingReason{},
		ips: map[string][]string{}, observed: &runtimeStatus{}}
	return e
}

func (e *hookEnv) state(t *testing.T) runtimeapi.ContainerState {
	t.Helper()
	st, err := e.rt.ContainerStatus(context.Background(), e.id)
	if err != nil {
		t.Fatal(err)
	}
	return st.State
}

func execHandler(cmd ...string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}
}

func TestPostStartHookSucceeds(t *testing.T) {
	c := v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PostStart: execHandler("touch", "/ready")}}
	e := newHookEnv(t, c, nil)
	if e.p.postStart(context.Background(), e.id, &e.p.pod.Spec.Containers[0]) {
		t.Fatal("postStart reported a failure")
	}
	if !slices.Equal(e.calls[0], []string{"touch", "/ready"}) {
		t.Errorf("exec calls %q", e.calls)
	}
	if s := e.state(t); s != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("container %v, want running", s)
	}
}

func TestPostStartHookFailureKillsTheContainer(t *testing.T) {
	c := v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PostStart: execHandler("false")}}
	e := newHookEnv(t, c, func([]string) fake.ExecResult { return fake.ExecResult{ExitCode: 1, Stderr: []byte("nope")} })
	if !e.p.postStart(context.Background(), e.id, &e.p.pod.Spec.Containers[0]) {
		t.Fatal("postStart reported no failure")
	}
	r := e.p.reasons["c"]
	if r.Reason != "PostStartHookError" || !strings.Contains(r.Message, `Exec lifecycle hook ([false]) for Container "c" in Pod "p_default(u)" failed - error: command 'false' exited with 1: nope`) {
		t.Errorf("waiting reason %+v", r)
	}
	if s := e.state(t); s != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container %v, want exited", s)
	}
}

func TestPreStopHookRunsBeforeTheStop(t *testing.T) {
	c := v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PreStop: execHandler("sh", "-c", "echo bye")}}
	var stateAtHook runtimeapi.ContainerState
	var e *hookEnv
	e = newHookEnv(t, c, func([]string) fake.ExecResult {
		st, _ := e.rt.ContainerStatus(context.Background(), e.id)
		stateAtHook = st.GetState()
		return fake.ExecResult{}
	})
	if err := e.p.killContainer(context.Background(), e.id, "c", "", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(e.calls) != 1 || stateAtHook != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("preStop calls %q, container state during the hook %v", e.calls, stateAtHook)
	}
	if s := e.state(t); s != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container %v, want exited", s)
	}
}

func TestPreStopHookIsCutAtTheGracePeriod(t *testing.T) {
	c := v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 30}}}}
	e := newHookEnv(t, c, nil)
	start := time.Now()
	if err := e.p.killContainer(context.Background(), e.id, "c", "", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("kill took %s with a 1 s grace period and a 30 s preStop sleep", d)
	}
}

// TestPreStopHookRunsOutAGracePeriodBeyondADuration: with
// terminationGracePeriodSeconds of MaxInt64 the preStop hook runs to its
// end. The hook's timer wrapped around to -1 s: it was abandoned at once
// ("did not complete in the grace period") and the container stopped.
func TestPreStopHookRunsOutAGracePeriodBeyondADuration(t *testing.T) {
	c := v1.Container{Name: "c", Lifecycle: &v1.Lifecycle{PreStop: execHandler("drain")}}
	var mu sync.Mutex
	finished := false
	e := newHookEnv(t, c, func([]string) fake.ExecResult {
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		finished = true
		return fake.ExecResult{}
	})
	grace := int64(math.MaxInt64)
	e.p.pod.Spec.TerminationGracePeriodSeconds = &grace
	var out syncBuf
	e.p.r.opts.Progress = PlainProgress(&out)
	if err := e.p.killContainer(context.Background(), e.id, "c", "", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !finished {
		t.Error("the preStop hook was abandoned before its end")
	}
	if strings.Contains(out.String(), "did not complete in the grace period") {
		t.Errorf("events:\n%s", out.String())
	}
}

// syncBuf is a strings.Builder safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestHTTPHookIgnoresTheStatusCode(t *testing.T) {
	var ua string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.UserAgent()
		w.WriteHeader(500)
	}))
	defer srv.Close()
	host, port := splitAddr(t, srv.Listener.Addr().String())
	g := &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt32(int32(port))}
	if err := httpHook(context.Background(), g, &v1.Container{}, host); err != nil {
		t.Fatalf("500 failed the hook: %v", err)
	}
	if ua != "kube-lifecycle/"+kubeVersion {
		t.Errorf("User-Agent %q", ua)
	}
	srv.Close()
	if err := httpHook(context.Background(), g, &v1.Container{}, host); err == nil {
		t.Error("a refused connection did not fail the hook")
	}
}

func TestExecProbeAgainstTheRuntime(t *testing.T) {
	c := v1.Container{Name: "c", Env: []v1.EnvVar{{Name: "F", Value: "/healthy"}, {Name: "R", ValueFrom: &v1.EnvVarSource{}}}}
	e := newHookEnv(t, c, func(cmd []string) fake.ExecResult {
		switch cmd[0] {
		case "slow":
			return fake.ExecResult{Took: time.Hour}
		case "false":
			return fake.ExecResult{ExitCode: 1, Stdout: []byte("bad")}
		}
		return fake.ExecResult{}
	})
	ctx := context.Background()
	probe := func(cmd ...string) (probeOutcome, string, error) {
		return runProbe(ctx, e.rt, &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: cmd}}}, &c, e.id, "")
	}
	if r, _, err := probe("cat", "$(F)", "$(R)", "$(X)"); r != probeRunSuccess || err != nil {
		t.Fatalf("cat: %v %v", r, err)
	}
	if got := e.calls[len(e.calls)-1]; !slices.Equal(got, []string{"cat", "/healthy", "", "$(X)"}) {
		t.Errorf("command expanded to %q", got)
	}
	if r, out, err := probe("false"); r != probeRunFailure || out != "bad" || err != nil {
		t.Errorf("false: %v %q %v", r, out, err)
	}
	if r, out, err := probe("slow"); r != probeRunFailure || out != `command "slow" timed out` || err != nil {
		t.Errorf("slow: %v %q %v", r, out, err)
	}
}
