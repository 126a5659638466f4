package runner_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// A container a failed startup or liveness probe kills under restartPolicy
// Never ends the pod, and the run ends as on the kubelet: the kill is made
// (SyncPod's step 2: every container and the sandbox, with the pod's grace
// period), then the status is read again, so that the final status is the
// kill's outcome: the container terminated with 137 (it ignores SIGTERM),
// reason Error, the pod Failed, and podrun exits with the container's 137.
// Before, the run ended on the plan (KillPod) with the status it had read
// before the kill: phase Running, the container running, and exit 1.
func TestRunProbeKillUnderNeverEndsWithTheKilledContainersStatus(t *testing.T) {
	failing := &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"false"}}},
		PeriodSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 1,
	}
	for _, tc := range []struct {
		name  string
		probe func(c *v1.Container)
	}{
		{"startup", func(c *v1.Container) { c.StartupProbe = failing }},
		{"liveness", func(c *v1.Container) { c.LivenessProbe = failing }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
				b := fake.CommandBehavior(cfg, second)
				b.IgnoreSIGTERM = true
				b.Exec = func([]string) fake.ExecResult { return fake.ExecResult{ExitCode: 1} }
				return b
			})
			c := ctr("main", "sleep", "infinity")
			tc.probe(&c)
			res := e.run(t, context.Background(), newPod("probekill-"+tc.name, v1.RestartPolicyNever, c))
			r := res.Pods[0]
			if r.Outcome != runner.OutcomeFailed || r.Err != nil {
				t.Fatalf("outcome %s, err %v; want failed", r.Outcome, r.Err)
			}
			if r.Status.Phase != v1.PodFailed {
				t.Errorf("phase %s, want Failed", r.Status.Phase)
			}
			term := r.Status.ContainerStatuses[0].State.Terminated
			if term == nil || term.ExitCode != 137 || term.Reason != "Error" {
				t.Errorf("state %+v, want terminated with 137 (Error)", r.Status.ContainerStatuses[0].State)
			}
			if got := res.ExitCode(0); got != 137 {
				t.Errorf("exit status %d, want the killed container's 137", got)
			}
			for _, want := range []string{"Unhealthy", "Killing: Stopping container main"} {
				if !strings.Contains(e.progress.String(), want) {
					t.Errorf("progress lacks %q", want)
				}
			}
			e.assertTornDown(t)
		})
	}
}
