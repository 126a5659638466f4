package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// TestListCallsPerRun counts the List calls of a run of N pods whose
// containers exit on their own, on a runtime that streams events with
// the pod's statuses (containerd ≥ 1.7): one ListPodSandbox at the start
// (reclaim) and one ListContainers per pod at its teardown (killPod: the
// pod's containers, whose list also settles its last status). Before
// issue 18's cut each pod's teardown also listed the pod's sandboxes and
// polled the whole run: 1+2N and 2N. The observer's once-a-second safety
// poll is put off past the run, and the containers exit well after their
// start, once the observer holds their sandboxes (an exit seen before
// would poll: TestStopEventWithStatusesNeedsNoPoll).
func TestListCallsPerRun(t *testing.T) {
	defer runner.SetSafetyPollInterval(time.Hour)()
	for _, n := range []int{1, 5, 10} {
		t.Run(fmt.Sprintf("%d pods", n), func(t *testing.T) {
			e := newEnv(t)
			e.srv.EnableEvents(true)
			e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
				return fake.Behavior{ExitAfter: 300 * time.Millisecond}
			})
			var pods []*v1.Pod
			for i := range n {
				pods = append(pods, newPod(fmt.Sprintf("p%d", i), v1.RestartPolicyNever, v1.Container{Name: "c", Image: "busybox", Command: []string{"true"}}))
			}
			res := e.run(t, context.Background(), pods...)
			if code := res.ExitCode(0); code != 0 {
				t.Fatalf("exit %d (%v)", code, res.Err())
			}
			calls := e.srv.Calls()
			if sb, ctrs := countCalls(calls, "ListPodSandbox"), countCalls(calls, "ListContainers"); sb != 1 || ctrs != n {
				t.Errorf("%d pods: %d ListPodSandbox and %d ListContainers calls, want 1 and %d: %v", n, sb, ctrs, n, calls)
			}
			e.assertTornDown(t)
		})
	}
}

// TestImageStatusPerRun: an image already present (IfNotPresent) is asked
// for once a run, by its ahead pull; the containers' turns take that
// answer (Pulled "already present on machine") instead of asking again.
func TestImageStatusPerRun(t *testing.T) {
	defer runner.SetSafetyPollInterval(time.Hour)()
	for _, n := range []int{1, 5} {
		t.Run(fmt.Sprintf("%d pods", n), func(t *testing.T) {
			e := newEnv(t)
			e.srv.EnableEvents(true)
			var pods []*v1.Pod
			for i := range n {
				pods = append(pods, newPod(fmt.Sprintf("p%d", i), v1.RestartPolicyNever,
					v1.Container{Name: "c", Image: "busybox", ImagePullPolicy: v1.PullIfNotPresent, Command: []string{"true"}}))
			}
			res := e.run(t, context.Background(), pods...)
			if code := res.ExitCode(0); code != 0 {
				t.Fatalf("exit %d (%v)", code, res.Err())
			}
			calls := e.srv.Calls()
			if got := countCalls(calls, "ImageStatus"); got != 1 {
				t.Errorf("%d pods: %d ImageStatus calls, want 1: %v", n, got, calls)
			}
			if got := strings.Count(e.progress.String(), `Container image "busybox" already present on machine`); got != n {
				t.Errorf("%d pods: %d already-present events, want %d:\n%s", n, got, n, e.progress.String())
			}
			e.assertTornDown(t)
		})
	}
}
