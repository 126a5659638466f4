package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// second is one second of the fake containers' time ("sleep 1", grace
// periods): short, so that the tests run fast.
const second = 10 * time.Millisecond

// runLimit bounds every Run of these tests; each should take well under it.
const runLimit = 10 * time.Second

// env is a fake runtime, a client on it and the options of a run.
type env struct {
	srv      *fake.Server
	rt       *cri.Client
	facts    runner.Facts
	opts     runner.Options
	stdout   *syncBuffer
	stderr   *syncBuffer
	progress *syncBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv, ep := fake.Start(t)
	srv.SetSecond(second)
	srv.AddImages("busybox")
	rt, err := cri.Dial(context.Background(), ep, cri.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("nameserver 10.0.0.1\nsearch example.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{srv: srv, rt: rt, stdout: &syncBuffer{}, stderr: &syncBuffer{}, progress: &syncBuffer{}}
	e.facts = runner.Facts{RuntimeName: "containerd"}
	e.opts = runner.Options{
		Config: runner.Config{RootDir: t.TempDir(), ResolvConf: resolv},
		Wiring: runner.Wiring{Stdout: e.stdout, Stderr: e.stderr, Progress: runner.PlainProgress(e.progress)},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("progress:\n%s", e.progress.String())
		}
	})
	return e
}

// run runs the pods with the env's options and fails the test if Run
// itself fails or takes too long.
func (e *env) run(t *testing.T, ctx context.Context, pods ...*v1.Pod) *runner.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, runLimit)
	defer cancel()
	res, err := runner.Run(ctx, e.rt, e.facts, pods, e.opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Pods) != len(pods) {
		t.Fatalf("Run returned %d results for %d pods", len(res.Pods), len(pods))
	}
	return res
}

// assertTornDown checks that the runtime holds no sandbox and no container
// of podrun's and that no pod data dir is left.
func (e *env) assertTornDown(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	sbs, err := e.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctrs, err := e.rt.ListContainers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sbs) != 0 || len(ctrs) != 0 {
		t.Errorf("after the run the runtime holds %d sandboxes and %d containers, want none", len(sbs), len(ctrs))
	}
	entries, err := os.ReadDir(filepath.Join(e.opts.RootDir, "pods"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("RootDir/pods holds %v, want nothing", names(entries))
	}
	logs, _ := os.ReadDir(filepath.Join(e.opts.RootDir, "logs"))
	if len(logs) != 0 {
		t.Errorf("RootDir/logs holds %v, want nothing", names(logs))
	}
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func newPod(name string, policy v1.RestartPolicy, ctrs ...v1.Container) *v1.Pod {
	grace := int64(2)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: v1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     v1.DNSClusterFirst,
			Containers:                    ctrs,
		},
	}
}

func ctr(name string, cmd ...string) v1.Container {
	return v1.Container{
		Name: name, Image: "busybox", Command: cmd,
		ImagePullPolicy:          v1.PullIfNotPresent,
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: v1.TerminationMessageReadFile,
	}
}

func sh(name, script string) v1.Container { return ctr(name, "sh", "-c", script) }

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRunContainerThatExits7UnderNeverFails(t *testing.T) {
	e := newEnv(t)
	res := e.run(t, context.Background(), newPod("seven", v1.RestartPolicyNever, sh("main", "exit 7")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeFailed || r.Reached() {
		t.Errorf("outcome = %s, want failed (err %v)", r.Outcome, r.Err)
	}
	if got := res.ExitCode(0); got != 7 {
		t.Errorf("ExitCode = %d, want 7", got)
	}
	if r.Status.Phase != v1.PodFailed {
		t.Errorf("phase = %s, want Failed", r.Status.Phase)
	}
	if len(r.Status.ContainerStatuses) != 1 {
		t.Fatalf("container statuses = %+v", r.Status.ContainerStatuses)
	}
	cs := r.Status.ContainerStatuses[0]
	if term := cs.State.Terminated; term == nil || term.ExitCode != 7 || term.Reason != "Error" {
		t.Errorf("state = %+v, want terminated with exit code 7, reason Error", cs.State)
	}
	if !strings.HasPrefix(cs.ContainerID, "containerd://") {
		t.Errorf("containerID = %q, want containerd://...", cs.ContainerID)
	}
	if res.Err() != nil {
		t.Errorf("Err = %v, want nil", res.Err())
	}
	e.assertTornDown(t)
}

func TestRunContainerThatExits0Succeeds(t *testing.T) {
	e := newEnv(t)
	res := e.run(t, context.Background(), newPod("ok", v1.RestartPolicyNever, sh("main", "sleep 2; exit 0")))
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded {
		t.Errorf("outcome = %s, phase = %s; want reached, Succeeded", r.Outcome, r.Status.Phase)
	}
	if got := res.ExitCode(0); got != 0 {
		t.Errorf("ExitCode = %d, want 0", got)
	}
	e.assertTornDown(t)
}

// recordCreates scripts containers by their command line, as the fake
// does by default, and records when each container was created, by name.
func recordCreates(srv *fake.Server) func() ([]string, map[string]time.Time) {
	var mu sync.Mutex
	var order []string
	at := map[string]time.Time{}
	srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, cfg.GetMetadata().GetName())
		at[cfg.GetMetadata().GetName()] = time.Now()
		return fake.CommandBehavior(cfg, second)
	})
	return func() ([]string, map[string]time.Time) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order), at
	}
}

func TestRunTwoPodsConcurrently(t *testing.T) {
	e := newEnv(t)
	creates := recordCreates(e.srv)
	// Each container runs 20 fake seconds (200ms): run one after the other,
	// the second would be created after the first ended.
	res := e.run(t, context.Background(),
		newPod("first", v1.RestartPolicyNever, sh("a", "sleep 20; exit 0")),
		newPod("second", v1.RestartPolicyNever, sh("b", "sleep 20; exit 3")),
	)
	if got := []runner.Outcome{res.Pods[0].Outcome, res.Pods[1].Outcome}; !slices.Equal(got, []runner.Outcome{runner.OutcomeReached, runner.OutcomeFailed}) {
		t.Errorf("outcomes = %v, want [reached failed]", got)
	}
	if res.Pods[0].Pod.Name != "first" || res.Pods[1].Pod.Name != "second" {
		t.Errorf("results are not in the order of the pods")
	}
	if got := res.ExitCode(0); got != 3 {
		t.Errorf("ExitCode = %d, want 3", got)
	}
	_, at := creates()
	if d := at["a"].Sub(at["b"]).Abs(); d >= 20*second {
		t.Errorf("containers created %s apart: the pods did not run concurrently", d)
	}
	e.assertTornDown(t)
}

func TestRunInitContainersInOrderBeforeRegularOnes(t *testing.T) {
	e := newEnv(t)
	creates := recordCreates(e.srv)
	pod := newPod("init", v1.RestartPolicyNever, sh("app", "echo three; exit 0"))
	pod.Spec.InitContainers = []v1.Container{
		sh("init1", "echo one; sleep 5; exit 0"),
		sh("init2", "echo two; exit 0"),
	}
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded {
		t.Fatalf("outcome = %s, phase = %s, err = %v; want reached, Succeeded", r.Outcome, r.Status.Phase, r.Err)
	}
	order, at := creates()
	if want := []string{"init1", "init2", "app"}; !slices.Equal(order, want) {
		t.Errorf("containers created in order %v, want %v", order, want)
	}
	if d := at["init2"].Sub(at["init1"]); d < 5*second {
		t.Errorf("init2 was created %s after init1, before init1 could have exited (%s)", d, 5*second)
	}
	// The call log: one sandbox, then create/start pairs.
	var lifecycle []string
	for _, c := range e.srv.Calls() {
		switch c {
		case "RunPodSandbox", "CreateContainer", "StartContainer", "StopPodSandbox", "RemovePodSandbox":
			lifecycle = append(lifecycle, c)
		}
	}
	want := []string{"RunPodSandbox", "CreateContainer", "StartContainer", "CreateContainer", "StartContainer",
		"CreateContainer", "StartContainer", "StopPodSandbox", "RemovePodSandbox"}
	if !slices.Equal(lifecycle, want) {
		t.Errorf("calls = %v, want %v", lifecycle, want)
	}
	for _, s := range r.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			t.Errorf("init container %s: %+v, want terminated 0", s.Name, s.State)
		}
	}
	out := e.stdout.String()
	for _, line := range []string{"[pod/init/init1] one\n", "[pod/init/init2] two\n", "[pod/init/app] three\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("stdout %q lacks %q", out, line)
		}
	}
	e.assertTornDown(t)
}

func TestRunFailedInitContainerUnderNeverFailsThePod(t *testing.T) {
	e := newEnv(t)
	creates := recordCreates(e.srv)
	pod := newPod("badinit", v1.RestartPolicyNever, sh("app", "exit 0"))
	pod.Spec.InitContainers = []v1.Container{sh("init", "exit 4")}
	res := e.run(t, context.Background(), pod)
	if r := res.Pods[0]; r.Outcome != runner.OutcomeFailed || r.Status.Phase != v1.PodFailed {
		t.Errorf("outcome = %s, phase = %s; want failed, Failed", r.Outcome, r.Status.Phase)
	}
	if got := res.ExitCode(0); got != 4 {
		t.Errorf("ExitCode = %d, want 4", got)
	}
	if order, _ := creates(); !slices.Equal(order, []string{"init"}) {
		t.Errorf("containers created: %v, want only init", order)
	}
	e.assertTornDown(t)
}

func TestRunAlwaysWaitsForReadyThenTearsDown(t *testing.T) {
	e := newEnv(t)
	e.opts.Wait = runner.WaitReady
	res := e.run(t, context.Background(), newPod("server", v1.RestartPolicyAlways, ctr("web", "sleep", "infinity")))
	r := res.Pods[0]
	if !r.Reached() {
		t.Fatalf("outcome = %s, err = %v; want reached", r.Outcome, r.Err)
	}
	ready := false
	for _, c := range r.Status.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
			ready = true
		}
	}
	if !ready || r.Status.Phase != v1.PodRunning {
		t.Errorf("phase = %s, conditions = %+v; want Running and Ready", r.Status.Phase, r.Status.Conditions)
	}
	if got := res.ExitCode(0); got != 0 {
		t.Errorf("ExitCode = %d, want 0", got)
	}
	if !slices.Contains(e.srv.Calls(), "StopContainer") {
		t.Errorf("the running container was never stopped: calls %v", e.srv.Calls())
	}
	e.assertTornDown(t)
}

func TestRunStreamsOutputWithoutPrefixForOneContainer(t *testing.T) {
	e := newEnv(t)
	const n = 300
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		var b fake.Behavior
		for i := 0; i < n; i++ {
			b.Output = append(b.Output, fake.LogLine{Text: fmt.Sprintf("out %d", i), After: time.Duration(i) * 100 * time.Microsecond})
			if i%10 == 0 {
				b.Output = append(b.Output, fake.LogLine{Stream: "stderr", Text: fmt.Sprintf("err %d", i), After: time.Duration(i) * 100 * time.Microsecond})
			}
		}
		b.Output = append(b.Output,
			fake.LogLine{Text: "split ", Partial: true, After: 40 * time.Millisecond},
			fake.LogLine{Text: "line", After: 40 * time.Millisecond})
		b.ExitAfter = 50 * time.Millisecond
		return b
	})
	res := e.run(t, context.Background(), newPod("talk", v1.RestartPolicyNever, ctr("only", "talk")))
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome = %s, err = %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	var wantOut, wantErr strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&wantOut, "out %d\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&wantErr, "err %d\n", i)
		}
	}
	wantOut.WriteString("split line\n")
	if got := e.stdout.String(); got != wantOut.String() {
		t.Errorf("stdout (%d bytes) differs from the %d bytes written:\n%s", len(got), wantOut.Len(), firstDiff(got, wantOut.String()))
	}
	if got := e.stderr.String(); got != wantErr.String() {
		t.Errorf("stderr (%d bytes) differs from the %d bytes written:\n%s", len(got), wantErr.Len(), firstDiff(got, wantErr.String()))
	}
	e.assertTornDown(t)
}

// firstDiff shows where two strings part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-40)
	return fmt.Sprintf("at byte %d: got %q, want %q", i, got[lo:min(len(got), i+40)], want[lo:min(len(want), i+40)])
}

func TestRunPrefixesOutputWhenTheRunHasSeveralContainers(t *testing.T) {
	e := newEnv(t)
	res := e.run(t, context.Background(),
		newPod("p1", v1.RestartPolicyNever, sh("a", "echo from a; echo warn a >&2; exit 0")),
		newPod("p2", v1.RestartPolicyNever, sh("b", "echo from b; exit 0")),
	)
	for _, r := range res.Pods {
		if !r.Reached() {
			t.Errorf("pod %s: outcome %s, err %v", r.Pod.Name, r.Outcome, r.Err)
		}
	}
	out := e.stdout.String()
	for _, line := range []string{"[pod/p1/a] from a\n", "[pod/p2/b] from b\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("stdout %q lacks %q", out, line)
		}
	}
	if len(out) != len("[pod/p1/a] from a\n[pod/p2/b] from b\n") {
		t.Errorf("stdout %q has more than the two lines", out)
	}
	if got := e.stderr.String(); got != "[pod/p1/a] warn a\n" {
		t.Errorf("stderr = %q, want the prefixed warning", got)
	}
	e.assertTornDown(t)
}

func TestRunTimeout(t *testing.T) {
	e := newEnv(t)
	e.opts.Timeout = 300 * time.Millisecond
	start := time.Now()
	res := e.run(t, context.Background(), newPod("forever", v1.RestartPolicyNever, ctr("main", "sleep", "infinity")))
	took := time.Since(start)
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeTimeout {
		t.Errorf("outcome = %s, err = %v; want timeout", r.Outcome, r.Err)
	}
	if got := res.ExitCode(0); got != runner.ExitTimeout {
		t.Errorf("ExitCode = %d, want %d", got, runner.ExitTimeout)
	}
	if took < e.opts.Timeout || took > 3*time.Second {
		t.Errorf("the run took %s with a %s timeout", took, e.opts.Timeout)
	}
	if !strings.Contains(e.progress.String(), "Timeout") {
		t.Errorf("progress does not report the timeout:\n%s", e.progress.String())
	}
	e.assertTornDown(t)
}

func TestRunInterruptedByCancel(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel, as the signal handler does, once the container runs.
		deadline := time.Now().Add(runLimit)
		for time.Now().Before(deadline) {
			ctrs, err := e.rt.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
				State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
			if err == nil && len(ctrs) > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	// Under Never the wait is for completion, which never comes.
	res := e.run(t, ctx, newPod("sig", v1.RestartPolicyNever, ctr("main", "sleep", "infinity")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeInterrupted {
		t.Errorf("outcome = %s, err = %v; want interrupted", r.Outcome, r.Err)
	}
	if got := res.ExitCode(runner.ExitSIGINT); got != 130 {
		t.Errorf("ExitCode(130) = %d, want 130", got)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s after the cancel", took)
	}
	e.assertTornDown(t)
}

// A signal while StartContainer is under way (the runtime starts the
// container; podrun does not cut a start midway): the interrupted pod's
// last status shows the container running, as the run started it and its
// output shows, not the ContainerCreating it had before the start. The
// JUnit report read that status and called the container "not started"
// (e2e TestE2EJUnitInterrupted, on a slow machine).
func TestRunInterruptedDuringStartShowsTheContainerRunning(t *testing.T) {
	e := newEnv(t)
	e.srv.Delay("StartContainer", 300*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitFor(t, "StartContainer", runLimit, func() bool { return slices.Contains(e.srv.Calls(), "StartContainer") })
		cancel()
	}()
	res := e.run(t, ctx, newPod("starting", v1.RestartPolicyNever, ctr("main", "sleep", "infinity")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeInterrupted {
		t.Errorf("outcome = %s, err = %v; want interrupted", r.Outcome, r.Err)
	}
	if len(r.Status.ContainerStatuses) != 1 {
		t.Fatalf("container statuses = %+v", r.Status.ContainerStatuses)
	}
	if cs := r.Status.ContainerStatuses[0]; cs.State.Running == nil || cs.ContainerID == "" {
		t.Errorf("main: state %+v, id %q; want running, as started before the interrupt took effect", cs.State, cs.ContainerID)
	}
	if !strings.Contains(e.progress.String(), "Started container main") {
		t.Errorf("no Started event:\n%s", e.progress.String())
	}
	e.assertTornDown(t)
}

// The same when the signal comes while the run reads what the start did
// (its ContainerStatus): that read fails with the run's context, and the
// run reads again under its own before it keeps the status.
func TestRunInterruptedWhileReadingTheStartShowsTheContainerRunning(t *testing.T) {
	e := newEnv(t)
	e.srv.Delay("ContainerStatus", 300*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitFor(t, "ContainerStatus after StartContainer", runLimit, func() bool {
			calls := e.srv.Calls()
			i := slices.Index(calls, "StartContainer")
			return i >= 0 && slices.Contains(calls[i:], "ContainerStatus")
		})
		cancel()
	}()
	res := e.run(t, ctx, newPod("reading", v1.RestartPolicyNever, ctr("main", "sleep", "infinity")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeInterrupted {
		t.Errorf("outcome = %s, err = %v; want interrupted", r.Outcome, r.Err)
	}
	if len(r.Status.ContainerStatuses) != 1 {
		t.Fatalf("container statuses = %+v", r.Status.ContainerStatuses)
	}
	if cs := r.Status.ContainerStatuses[0]; cs.State.Running == nil || cs.ContainerID == "" {
		t.Errorf("main: state %+v, id %q; want running", cs.State, cs.ContainerID)
	}
	e.assertTornDown(t)
}

func TestRunImageNeverPulledWhenAbsent(t *testing.T) {
	e := newEnv(t)
	c := ctr("main", "true")
	c.Image, c.ImagePullPolicy = "registry.test/absent:1", v1.PullNever
	res := e.run(t, context.Background(), newPod("never", v1.RestartPolicyNever, c))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeError {
		t.Errorf("outcome = %s, want error", r.Outcome)
	}
	if got := res.ExitCode(0); got != runner.ExitPodrunError {
		t.Errorf("ExitCode = %d, want %d", got, runner.ExitPodrunError)
	}
	want := `ErrImageNeverPull: Container image "registry.test/absent:1" is not present with pull policy of Never`
	if r.Err == nil || !strings.Contains(r.Err.Error(), want) {
		t.Errorf("err = %v, want it to contain %q", r.Err, want)
	}
	if len(e.srv.Pulls()) != 0 {
		t.Errorf("pulls = %v, want none", e.srv.Pulls())
	}
	if w := r.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImageNeverPull" {
		t.Errorf("state = %+v, want waiting ErrImageNeverPull", r.Status.ContainerStatuses[0].State)
	}
	e.assertTornDown(t)
}

func TestRunImagePullFailure(t *testing.T) {
	e := newEnv(t)
	e.srv.SetMissing("registry.test/missing:1")
	c := ctr("main", "true")
	c.Image = "registry.test/missing:1"
	res := e.run(t, context.Background(), newPod("pullfail", v1.RestartPolicyNever, c))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
		t.Errorf("outcome = %s, ExitCode = %d; want error, 125", r.Outcome, res.ExitCode(0))
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "ErrImagePull") {
		t.Errorf("err = %v, want ErrImagePull", r.Err)
	}
	if p := e.srv.Pulls(); len(p) != 1 || p[0].Image != "registry.test/missing:1" {
		t.Errorf("pulls = %+v, want one of registry.test/missing:1", p)
	}
	if w := r.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
		t.Errorf("state = %+v, want waiting ErrImagePull", r.Status.ContainerStatuses[0].State)
	}
	e.assertTornDown(t)
}

func TestRunPullsAnImageThatIsNotPresent(t *testing.T) {
	e := newEnv(t)
	c := ctr("main", "true")
	c.Image = "alpine" // not in the store; the default tag is added
	res := e.run(t, context.Background(), newPod("pull", v1.RestartPolicyNever, c))
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome = %s, err = %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if p := e.srv.Pulls(); len(p) != 1 || p[0].Image != "alpine:latest" {
		t.Errorf("pulls = %+v, want one of alpine:latest", p)
	}
	e.assertTornDown(t)
}

// deadPID returns a PID that no process has.
func deadPID(t *testing.T) int {
	t.Helper()
	for pid := 4194000; pid > 1000; pid-- {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return pid
		}
	}
	t.Fatal("no free PID found")
	return 0
}

// podSandboxes lists the sandboxes of the pod with the given UID.
func podSandboxes(t *testing.T, rt *cri.Client, uid string) []*runtimeapi.PodSandbox {
	t.Helper()
	sbs, err := rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": uid}})
	if err != nil {
		t.Fatal(err)
	}
	return sbs
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestReclaimListAndDown(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dead := deadPID(t)

	// A pod left running by a podrun that then died (SIGKILL): its owner
	// is a PID that no longer exists. Detach leaves it running.
	leave := func(name string, detached bool) {
		t.Helper()
		e.opts.Detach, e.opts.Wait = true, runner.WaitReady
		e.opts.Owner = runner.Owner{RunID: "run-" + name, PID: dead, PIDStart: 12345, Detached: detached}
		res := e.run(t, ctx, newPod(name, v1.RestartPolicyAlways, ctr("main", "sleep", "infinity")))
		if !res.Pods[0].Reached() {
			t.Fatalf("pod %s: outcome %s, err %v", name, res.Pods[0].Outcome, res.Pods[0].Err)
		}
		if len(podSandboxes(t, e.rt, name+"-uid")) != 1 {
			t.Fatalf("pod %s left no sandbox", name)
		}
	}
	// The detached pod first: the run that leaves the orphan must not be
	// the one that reclaims it.
	leave("kept", true)
	leave("orphan", false)
	orphanDir := filepath.Join(e.opts.RootDir, "pods", "orphan-uid")
	keptDir := filepath.Join(e.opts.RootDir, "pods", "kept-uid")
	orphanLogs := filepath.Join(e.opts.RootDir, "logs", "default_orphan_orphan-uid")
	for _, d := range []string{orphanDir, keptDir, orphanLogs} {
		if !exists(d) {
			t.Fatalf("%s does not exist after the detached runs", d)
		}
	}

	infos, err := runner.List(ctx, e.rt)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Name != "kept" || infos[1].Name != "orphan" {
		t.Fatalf("List = %+v, want kept and orphan, sorted", infos)
	}
	items, err := runner.NewPodLister(e.rt).List(ctx)
	if err != nil || len(items) != 2 {
		t.Fatalf("PodLister.List = %+v, %v; want 2 pods", items, err)
	}
	orphanSandboxes := podSandboxes(t, e.rt, "orphan-uid")
	if k, o := items[0], items[1]; k.Owner != "detached" || o.Owner != fmt.Sprintf("pid %d (gone)", dead) || o.Run != "run-orphan" ||
		len(orphanSandboxes) != 1 || orphanSandboxes[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("owners %q / %q, orphan's run %q, its sandboxes %v: want kept detached, orphan orphaned (pid %d) and READY", k.Owner, o.Owner, o.Run, orphanSandboxes, dead)
	}

	// The next run reclaims the orphan, not the detached pod.
	e.opts.Detach, e.opts.Wait, e.opts.Owner = false, "", runner.Owner{}
	res := e.run(t, ctx, newPod("next", v1.RestartPolicyNever, sh("main", "exit 0")))
	if !res.Pods[0].Reached() {
		t.Errorf("next: outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if n := len(podSandboxes(t, e.rt, "orphan-uid")); n != 0 {
		t.Errorf("the orphan's sandbox was not reclaimed (%d left)", n)
	}
	if exists(orphanDir) || exists(orphanLogs) {
		t.Errorf("the orphan's data dir (%v) or log dir (%v) was not reclaimed", exists(orphanDir), exists(orphanLogs))
	}
	if len(podSandboxes(t, e.rt, "kept-uid")) != 1 || !exists(keptDir) {
		t.Errorf("the detached pod was reclaimed")
	}
	if !strings.Contains(e.progress.String(), "reclaiming pod default/orphan") {
		t.Errorf("progress does not report the reclaim:\n%s", e.progress.String())
	}

	// A pod that a detached podrun runs is not run again.
	if _, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{newPod("kept", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity"))}, e.opts); err == nil ||
		!strings.Contains(err.Error(), "already running (detached)") {
		t.Errorf("Run of a running detached pod: err = %v, want already running", err)
	}

	// Down of an unknown pod is an error; Down of the detached one removes it all.
	if err := runner.Down(ctx, e.rt, []string{"nosuch"}, false, func(string, ...any) {}); err == nil || !strings.Contains(err.Error(), `no podrun pod "nosuch"`) {
		t.Errorf("Down(nosuch) = %v, want no podrun pod", err)
	}
	if err := runner.Down(ctx, e.rt, []string{"default/kept"}, false, func(string, ...any) {}); err != nil {
		t.Fatalf("Down(default/kept): %v", err)
	}
	if len(podSandboxes(t, e.rt, "kept-uid")) != 0 || exists(keptDir) {
		t.Errorf("Down left the sandbox or the data dir %s", keptDir)
	}
	e.assertTornDown(t)
}

func TestDownAll(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.opts.Detach, e.opts.Wait = true, runner.WaitNone
	res := e.run(t, ctx,
		newPod("d1", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity")),
		newPod("d2", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity")),
	)
	for _, r := range res.Pods {
		if !r.Reached() {
			t.Fatalf("pod %s: outcome %s, err %v", r.Pod.Name, r.Outcome, r.Err)
		}
	}
	// With --wait=none the containers may still be starting; Down must
	// still find and remove everything.
	infos, err := runner.List(ctx, e.rt)
	if err != nil || len(infos) != 2 {
		t.Fatalf("List = %+v, %v; want 2 pods", infos, err)
	}
	items, err := runner.NewPodLister(e.rt).List(ctx)
	if err != nil || len(items) != 2 {
		t.Fatalf("PodLister.List = %+v, %v; want 2 pods", items, err)
	}
	if me := fmt.Sprintf("pid %d", os.Getpid()); items[0].Owner != me || items[1].Owner != me {
		t.Errorf("pods of this live process are listed as owned by %q and %q, want %q", items[0].Owner, items[1].Owner, me)
	}
	if err := runner.Down(ctx, e.rt, nil, true, func(string, ...any) {}); err != nil {
		t.Fatalf("Down(all): %v", err)
	}
	e.assertTornDown(t)
}

func TestRunOnFailureRestartsAFailedContainer(t *testing.T) {
	e := newEnv(t)
	// The first instance fails, the second succeeds.
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		if cfg.GetMetadata().GetAttempt() == 0 {
			return fake.Behavior{ExitCode: 6}
		}
		return fake.Behavior{}
	})
	res := e.run(t, context.Background(), newPod("retry", v1.RestartPolicyOnFailure, ctr("main", "x")))
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded {
		t.Fatalf("outcome = %s, phase = %s, err = %v; want reached, Succeeded", r.Outcome, r.Status.Phase, r.Err)
	}
	cs := r.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 {
		t.Errorf("restartCount = %d, want 1", cs.RestartCount)
	}
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 6 {
		t.Errorf("lastState = %+v, want terminated with 6", cs.LastTerminationState)
	}
	if got := res.ExitCode(0); got != 0 {
		t.Errorf("ExitCode = %d, want 0 (the last run succeeded)", got)
	}
	e.assertTornDown(t)
}

func TestRunStartErrorUnderNeverFailsWith128(t *testing.T) {
	e := newEnv(t)
	e.srv.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{StartError: `exec: "nope": executable file not found in $PATH`}
	})
	res := e.run(t, context.Background(), newPod("noexec", v1.RestartPolicyNever, ctr("main", "nope")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeFailed {
		t.Errorf("outcome = %s, err = %v; want failed", r.Outcome, r.Err)
	}
	if got := res.ExitCode(0); got != 128 {
		t.Errorf("ExitCode = %d, want 128", got)
	}
	if term := r.Status.ContainerStatuses[0].State.Terminated; term == nil || term.Reason != "StartError" {
		t.Errorf("state = %+v, want terminated StartError", r.Status.ContainerStatuses[0].State)
	}
	e.assertTornDown(t)
}

func TestRunSandboxFailureIsAPodrunError(t *testing.T) {
	e := newEnv(t)
	e.srv.FailNext("RunPodSandbox", fmt.Errorf("failed to setup network for sandbox: boom"))
	res := e.run(t, context.Background(), newPod("nosb", v1.RestartPolicyNever, sh("main", "exit 0")))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
		t.Errorf("outcome = %s, ExitCode = %d; want error, 125", r.Outcome, res.ExitCode(0))
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "boom") {
		t.Errorf("err = %v, want the runtime's error", r.Err)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "pod default/nosb: ") {
		t.Errorf("Result.Err = %v, want it to name the pod", err)
	}
	e.assertTornDown(t)
}

// TestRunSandboxCutShortByTheRuntimeIsMadeAgain: a RunPodSandbox that the
// runtime cuts short by going away (a restart: Unavailable) is made again,
// as the kubelet's next SyncPod would, and the pod runs; one that goes on
// failing so ends the run (125) after runPodSandboxAttempts.
func TestRunSandboxCutShortByTheRuntimeIsMadeAgain(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "error reading from server: EOF")
	t.Run("once", func(t *testing.T) {
		e := newEnv(t)
		e.srv.FailNext("RunPodSandbox", unavailable)
		res := e.run(t, context.Background(), newPod("again", v1.RestartPolicyNever, sh("main", "exit 0")))
		if r := res.Pods[0]; r.Outcome != runner.OutcomeReached {
			t.Errorf("outcome = %s, err = %v; want reached", r.Outcome, r.Err)
		}
		if !strings.Contains(e.progress.String(), "FailedCreatePodSandBox: Failed to create pod sandbox: ") {
			t.Errorf("no FailedCreatePodSandBox event:\n%s", e.progress.String())
		}
		e.assertTornDown(t)
	})
	t.Run("every time", func(t *testing.T) {
		e := newEnv(t)
		for range 3 {
			e.srv.FailNext("RunPodSandbox", unavailable)
		}
		res := e.run(t, context.Background(), newPod("never", v1.RestartPolicyNever, sh("main", "exit 0")))
		if r := res.Pods[0]; r.Outcome != runner.OutcomeError || !strings.Contains(r.Err.Error(), "Unavailable") {
			t.Errorf("outcome = %s, err = %v; want an error, Unavailable", r.Outcome, r.Err)
		}
		e.assertTornDown(t)
	})
}

// TestRunStopsASandboxAgainThatTheRuntimeCutShort: a StopPodSandbox that
// the runtime gives up on by itself (containerd 2.4 under load: a deadline
// of its own inside the call, seconds in) is asked again, and the run's
// outcome is the pod's; one that keeps failing so is the run's error.
func TestRunStopsASandboxAgainThatTheRuntimeCutShort(t *testing.T) {
	cutShort := status.Error(codes.DeadlineExceeded, `failed to stop sandbox "x": failed to stop sandbox container "x" in "SANDBOX_READY" state: failed to get pod sandbox container: context deadline exceeded`)
	stops := func(e *env) int {
		n := 0
		for _, c := range e.srv.Calls() {
			if strings.HasSuffix(c, "StopPodSandbox") {
				n++
			}
		}
		return n
	}
	t.Run("twice", func(t *testing.T) {
		e := newEnv(t)
		e.srv.FailNext("StopPodSandbox", cutShort)
		e.srv.FailNext("StopPodSandbox", cutShort)
		res := e.run(t, context.Background(), newPod("again", v1.RestartPolicyNever, sh("main", "exit 0")))
		if r := res.Pods[0]; r.Outcome != runner.OutcomeReached || res.ExitCode(0) != 0 {
			t.Errorf("outcome = %s, err = %v, ExitCode = %d; want reached, 0", r.Outcome, r.Err, res.ExitCode(0))
		}
		if n := stops(e); n != 3 {
			t.Errorf("%d StopPodSandbox calls, want 3", n)
		}
		e.assertTornDown(t)
	})
	t.Run("every time", func(t *testing.T) {
		e := newEnv(t)
		for range 6 {
			e.srv.FailNext("StopPodSandbox", cutShort)
		}
		res := e.run(t, context.Background(), newPod("never", v1.RestartPolicyNever, sh("main", "exit 0")))
		if err := res.Err(); err == nil || !strings.Contains(err.Error(), "stopping pod sandbox") || res.ExitCode(0) != runner.ExitPodrunError {
			t.Errorf("Result.Err = %v, ExitCode = %d; want the stop's error, 125", err, res.ExitCode(0))
		}
	})
}

func TestRunRecreatesAStoppedSandbox(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	go func() {
		// Once the first instance runs, the sandbox dies under it.
		deadline := time.Now().Add(runLimit)
		for time.Now().Before(deadline) {
			ctrs, err := e.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
				State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
			if err == nil && len(ctrs) > 0 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		// Stop it while the observer's ListPodSandbox is held up, before it
		// reads: its snapshot then shows the dead sandbox with the killed
		// container. (Stopped between the observer's ListPodSandbox and its
		// ListContainers, podrun would see the container die in a sandbox
		// it believes ready and fail with CreateContainerError: a known race.)
		sbs, _ := e.rt.ListPodSandbox(ctx, nil)
		e.srv.Delay("ListPodSandbox", 50*time.Millisecond)
		e.srv.ResetCalls()
		for time.Now().Before(deadline) {
			if calls := e.srv.Calls(); len(calls) > 0 && calls[len(calls)-1] == "ListPodSandbox" {
				break
			}
			time.Sleep(time.Millisecond)
		}
		for _, sb := range sbs {
			e.rt.StopPodSandbox(ctx, sb.Id)
		}
		e.srv.Delay("ListPodSandbox", 0)
	}()
	res := e.run(t, ctx, newPod("phoenix", v1.RestartPolicyOnFailure, sh("main", "sleep 20; exit 0")))
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded {
		t.Fatalf("outcome = %s, phase = %s, err = %v; want reached, Succeeded", r.Outcome, r.Status.Phase, r.Err)
	}
	cs := r.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("status = %+v, want restartCount 1 and a last state killed with 137", cs)
	}
	if !strings.Contains(e.progress.String(), "SandboxChanged") {
		t.Errorf("progress does not report the sandbox change:\n%s", e.progress.String())
	}
	e.assertTornDown(t)
}

func TestRunForceCutsTheGracePeriod(t *testing.T) {
	e := newEnv(t)
	force := make(chan struct{})
	close(force) // a second signal already came
	e.opts.Force = force
	e.opts.Timeout = 100 * time.Millisecond
	pod := newPod("stubborn", v1.RestartPolicyNever, sh("main", "trap '' TERM; sleep infinity"))
	grace := int64(1000) // 10s of fake time
	pod.Spec.TerminationGracePeriodSeconds = &grace
	start := time.Now()
	res := e.run(t, context.Background(), pod)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s: the grace period was not cut", took)
	}
	if r := res.Pods[0]; r.Outcome != runner.OutcomeTimeout {
		t.Errorf("outcome = %s, err = %v; want timeout", r.Outcome, r.Err)
	}
	e.assertTornDown(t)
}

func TestRunWaitsOutTheGracePeriodOfAContainerIgnoringSIGTERM(t *testing.T) {
	e := newEnv(t)
	e.opts.Timeout = 50 * time.Millisecond
	pod := newPod("slowstop", v1.RestartPolicyNever, sh("main", "trap '' TERM; sleep infinity"))
	grace := int64(30) // 300ms of fake time
	pod.Spec.TerminationGracePeriodSeconds = &grace
	start := time.Now()
	res := e.run(t, context.Background(), pod)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("the run took %s: it did not wait out the grace period", took)
	}
	if r := res.Pods[0]; r.Outcome != runner.OutcomeTimeout {
		t.Errorf("outcome = %s, err = %v; want timeout", r.Outcome, r.Err)
	}
	e.assertTornDown(t)
}

func TestRunKeepsAnOutsidePodLogsDir(t *testing.T) {
	e := newEnv(t)
	e.opts.PodLogsDir = t.TempDir()
	res := e.run(t, context.Background(), newPod("logs", v1.RestartPolicyNever, sh("main", "echo kept; exit 0")))
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome = %s, err = %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	b, err := os.ReadFile(filepath.Join(e.opts.PodLogsDir, "default_logs_logs-uid", "main", "0.log"))
	if err != nil {
		t.Fatalf("the container log under --pod-logs-dir is gone: %v", err)
	}
	if !strings.Contains(string(b), " stdout F kept\n") {
		t.Errorf("log = %q, want the CRI line", b)
	}
	e.assertTornDown(t)
}

func TestRunHostNetworkPod(t *testing.T) {
	e := newEnv(t)
	// Without a CNI network only host-network pods can run.
	e.srv.SetCondition(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "cni config uninitialized")
	pod := newPod("hostnet", v1.RestartPolicyNever, sh("main", "exit 0"))
	pod.Spec.HostNetwork = true
	e.facts.HostIP = "192.0.2.7"
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() {
		t.Fatalf("outcome = %s, err = %v", r.Outcome, r.Err)
	}
	if r.Status.PodIP != "192.0.2.7" || r.Status.HostIP != "192.0.2.7" {
		t.Errorf("podIP = %q, hostIP = %q; want the host IP", r.Status.PodIP, r.Status.HostIP)
	}
	e.assertTornDown(t)
}

func TestRunSidecarDoesNotKeepACompletedPodAlive(t *testing.T) {
	e := newEnv(t)
	creates := recordCreates(e.srv)
	always := v1.ContainerRestartPolicyAlways
	side := ctr("proxy", "sleep", "infinity")
	side.RestartPolicy = &always
	pod := newPod("withsidecar", v1.RestartPolicyNever, sh("main", "sleep 5; exit 0"))
	pod.Spec.InitContainers = []v1.Container{side}
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded {
		t.Fatalf("outcome = %s, phase = %s, err = %v; want reached, Succeeded", r.Outcome, r.Status.Phase, r.Err)
	}
	if order, _ := creates(); !slices.Equal(order, []string{"proxy", "main"}) {
		t.Errorf("containers created in order %v, want [proxy main]", order)
	}
	e.assertTornDown(t)
}

func TestRunAgainAPodLeftByADeadPodrun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady
	e.opts.Owner = runner.Owner{RunID: "killed", PID: deadPID(t), PIDStart: 1}
	pod := newPod("again", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity"))
	if res := e.run(t, ctx, pod); !res.Pods[0].Reached() {
		t.Fatalf("first run: outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	// The same pod (same UID) again: its leftovers are reclaimed, not
	// reported as a pod that is already running.
	e.opts.Detach, e.opts.Wait, e.opts.Owner = false, runner.WaitReady, runner.Owner{}
	res := e.run(t, ctx, pod)
	if !res.Pods[0].Reached() {
		t.Fatalf("second run: outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	e.assertTornDown(t)
}

// TestRunWaitsOutAGracePeriodBeyondADuration: terminationGracePeriodSeconds
// of MaxInt64 (valid, as on the API server) means wait as long as
// possible: after --timeout the container that ignores SIGTERM is still
// running in its grace period until a second signal cuts it. It wrapped
// around into -1 s: the runtime (containerd's arithmetic, and the fake's)
// was handed MaxInt64 and killed the container at once. The runtime is
// handed cri.MaxStopTimeout.
func TestRunWaitsOutAGracePeriodBeyondADuration(t *testing.T) {
	e := newEnv(t)
	e.opts.Timeout = 50 * time.Millisecond
	force := make(chan struct{})
	e.opts.Force = force
	handed := make(chan int64, 10)
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		b := fake.CommandBehavior(cfg, second)
		b.OnStop = func(timeout int64) { handed <- timeout }
		return b
	})
	pod := newPod("forever", v1.RestartPolicyNever, sh("main", "trap '' TERM; sleep infinity"))
	grace := int64(math.MaxInt64)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	type ran struct {
		res *runner.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{pod}, e.opts)
		done <- ran{res, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the run ended before its grace period (err %v): the grace period wrapped around into a kill", r.err)
	case <-time.After(100 * second): // well past the timeout
	}
	select {
	case got := <-handed:
		if got != cri.MaxStopTimeout {
			t.Errorf("the runtime was handed a grace period of %d s, want %d", got, cri.MaxStopTimeout)
		}
	default:
		t.Error("the container was never stopped")
	}
	close(force) // a second signal
	var r ran
	select {
	case r = <-done:
	case <-time.After(runLimit):
		t.Fatal("the run did not end on the second signal")
	}
	if r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	if p := r.res.Pods[0]; p.Outcome != runner.OutcomeTimeout {
		t.Errorf("outcome = %s, err = %v; want timeout", p.Outcome, p.Err)
	}
	e.assertTornDown(t)
}

// An image volume: its image is pulled (with the volume's pull policy)
// before the container that mounts it is created, and the container's CRI
// mounts name the pulled image, read-only, a subPath as the image subpath.
func TestRunMountsAnImageVolume(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var mounts []*runtimeapi.Mount
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		mu.Lock()
		mounts = append(mounts, cfg.GetMounts()...)
		mu.Unlock()
		return fake.CommandBehavior(cfg, second)
	})
	c := ctr("main", "true")
	c.VolumeMounts = []v1.VolumeMount{{Name: "art", MountPath: "/volume"}, {Name: "art", MountPath: "/sub", SubPath: "dir"}}
	pod := newPod("imagevol", v1.RestartPolicyNever, c)
	pod.Spec.Volumes = []v1.Volume{{Name: "art", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{
		Reference: "registry.test/art:1", PullPolicy: v1.PullIfNotPresent}}}}
	res := e.run(t, context.Background(), pod)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome = %s, err = %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if p := e.srv.Pulls(); len(p) != 1 || p[0].Image != "registry.test/art:1" {
		t.Errorf("pulls = %+v, want one of registry.test/art:1", p)
	}
	var images []*runtimeapi.Mount
	for _, m := range mounts {
		if m.GetImage() != nil {
			images = append(images, m)
		}
	}
	if len(images) != 2 {
		t.Fatalf("image mounts %v, want 2", images)
	}
	for i, sub := range []string{"", "dir"} {
		m := images[i]
		if m.GetImage().GetImage() == "" || m.GetImage().GetUserSpecifiedImage() != "registry.test/art:1" ||
			!m.GetReadonly() || m.GetHostPath() != "" || m.GetImageSubPath() != sub {
			t.Errorf("mount %d = %+v, want the pulled registry.test/art:1, read-only, image subpath %q", i, m, sub)
		}
	}
	if out := e.progress.String(); !strings.Contains(out, `Pulling image "registry.test/art:1"`) {
		t.Errorf("no Pulling event of the image volume\n%s", out)
	}
	e.assertTornDown(t)
}
