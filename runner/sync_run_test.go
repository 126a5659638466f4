package runner_test

// Run-level tests of the sync loop's back-off against the fake CRI: image
// pulls that fail for now are retried (ErrImagePull, then ImagePullBackOff),
// pulls that fail for good end the run.

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner"
)

func TestRunTransientPullFailureShowsImagePullBackOffUntilTimeout(t *testing.T) {
	e := newEnv(t)
	e.srv.FailPulls("registry.test/flaky:1", -1, nil)
	e.opts.Timeout = time.Second
	c := ctr("main", "true")
	c.Image = "registry.test/flaky:1"
	res := e.run(t, context.Background(), newPod("flaky", v1.RestartPolicyNever, c))
	r := res.Pods[0]
	if got := res.ExitCode(0); got != runner.ExitTimeout {
		t.Errorf("ExitCode = %d (%s, %v), want %d: a transient failure is retried until --timeout", got, r.Outcome, r.Err, runner.ExitTimeout)
	}
	w := r.Status.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ImagePullBackOff" || w.Message != `Back-off pulling image "registry.test/flaky:1"` {
		t.Errorf("state = %+v, want waiting ImagePullBackOff with the kubelet's message", r.Status.ContainerStatuses[0].State)
	}
	// One pull, then the 10 s back-off outlasts the 1 s timeout.
	if p := e.srv.Pulls(); len(p) != 1 {
		t.Errorf("%d pulls, want 1 within the first back-off", len(p))
	}
	prog := e.progress.String()
	for _, want := range []string{
		`Pulling: Pulling image "registry.test/flaky:1"`,
		`Failed: Failed to pull image "registry.test/flaky:1": `,
		`Failed: Error: ErrImagePull`,
		`BackOff: Back-off pulling image "registry.test/flaky:1"`,
	} {
		if !strings.Contains(prog, want) {
			t.Errorf("progress lacks %q:\n%s", want, prog)
		}
	}
	e.assertTornDown(t)
}

func TestRunTransientPullFailureIsRetriedAfterTheBackOff(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a real 10 s back-off")
	}
	e := newEnv(t)
	e.srv.FailPulls("registry.test/flaky:1", 1, nil)
	c := ctr("main", "true")
	c.Image = "registry.test/flaky:1"
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // beyond runLimit
	defer cancel()
	res, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{newPod("flaky", v1.RestartPolicyNever, c)}, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome = %s, err = %v; want the second pull to succeed", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	if p := e.srv.Pulls(); len(p) != 2 {
		t.Errorf("%d pulls, want 2", len(p))
	}
	if took < 10*time.Second || took > 13*time.Second {
		t.Errorf("the run took %s; want the retry right after the 10 s back-off", took)
	}
	e.assertTornDown(t)
}

func TestRunUnauthorizedPullEndsTheRun(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass})
	start := time.Now()
	res := e.run(t, context.Background(), privatePod())
	r := res.Pods[0]
	if res.ExitCode(0) != runner.ExitPodrunError || time.Since(start) > 5*time.Second {
		t.Errorf("ExitCode = %d after %s, want %d at once", res.ExitCode(0), time.Since(start), runner.ExitPodrunError)
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "ErrImagePull") || !strings.Contains(r.Err.Error(), "(unauthorized)") {
		t.Errorf("err = %v, want ErrImagePull ... (unauthorized)", r.Err)
	}
	if p := e.srv.Pulls(); len(p) != 1 {
		t.Errorf("%d pulls, want 1: a refused pull is not retried", len(p))
	}
	e.assertTornDown(t)
}
