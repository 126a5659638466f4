package runner_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// TestTeardownSidecarsShareTheGracePeriod: the run's teardown stops a pod
// as the kubelet does (and as `podrun down` does): the sidecar waits for
// the main container, which ignores SIGTERM and takes the whole 3 s grace
// period, and then gets what is left of it, the kubelet's 2 s minimum, not
// a fresh grace period of its own.
func TestTeardownSidecarsShareTheGracePeriod(t *testing.T) {
	e := newEnv(t)
	// Real seconds: the grace period podrun counts is in whole seconds.
	e.srv.SetSecond(time.Second)
	var mu sync.Mutex
	stops := map[string]int64{}
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		name := cfg.GetMetadata().GetName()
		return fake.Behavior{
			UntilStopped:  true,
			IgnoreSIGTERM: name == "main",
			OnStop: func(timeout int64) {
				mu.Lock()
				defer mu.Unlock()
				stops[name] = timeout
			},
		}
	})
	always := v1.ContainerRestartPolicyAlways
	side := ctr("side", "sleep", "infinity")
	side.RestartPolicy = &always
	pod := newPod("graceful", v1.RestartPolicyAlways, ctr("main", "sleep", "infinity"))
	pod.Spec.InitContainers = []v1.Container{side}
	grace := int64(3)
	pod.Spec.TerminationGracePeriodSeconds = &grace

	e.opts.Wait = runner.WaitReady
	start := time.Now()
	res := e.run(t, context.Background(), pod)
	took := time.Since(start)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if stops["main"] != 3 || stops["side"] != 2 {
		t.Errorf("StopContainer timeouts %v, want main 3 and side 2 (what is left of 3 s after main's turn, at least 2)", fmtStops(stops))
	}
	// main's 3 s, then side stops at once: not 3 s more.
	if took > 5*time.Second {
		t.Errorf("run took %s, want about 3 s: one grace period for the pod", took)
	}
	e.assertTornDown(t)
}

func fmtStops(m map[string]int64) string {
	s := ""
	for k, v := range m {
		s += k + "=" + strconv.FormatInt(v, 10) + " "
	}
	return s
}
