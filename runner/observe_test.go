package runner_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
)

// countCalls counts the calls of a CRI method in the fake's call log.
func countCalls(calls []string, method string) int {
	n := 0
	for _, c := range calls {
		if strings.HasSuffix(c, method) {
			n++
		}
	}
	return n
}

// On a runtime that streams container events the observer wakes on them
// instead of polling: a pod that runs for a while costs a handful of List
// calls, not one per poll.
func TestRunFollowsContainerEventsInsteadOfPolling(t *testing.T) {
	for _, tc := range []struct {
		events   bool
		maxLists int
	}{
		{events: true, maxLists: 12},
		{events: false, maxLists: 1 << 30}, // polling: many, only checked to be more
	} {
		e := newEnv(t)
		e.srv.EnableEvents(tc.events)
		// 50 fake seconds of 10 ms: the container runs about 500 ms.
		pod := newPod("events", v1.RestartPolicyNever, v1.Container{Name: "c", Image: "busybox", Command: []string{"sleep", "50"}})
		res := e.run(t, context.Background(), pod)
		if code := res.ExitCode(0); code != 0 {
			t.Fatalf("events=%v: exit %d, want 0 (%v)", tc.events, code, res.Err())
		}
		lists := countCalls(e.srv.Calls(), "ListContainers")
		if lists > tc.maxLists {
			t.Errorf("events=%v: %d ListContainers calls, want at most %d", tc.events, lists, tc.maxLists)
		}
		if !tc.events && lists < 4 {
			t.Errorf("without events the observer should poll; only %d ListContainers calls in ~500 ms", lists)
		}
		e.assertTornDown(t)
	}
}

// Without container events the observer polls every 20 ms only while
// things change, and slows down to maxIdlePollInterval while a container
// just runs: a pod that runs two seconds costs a few dozen List calls, not
// a hundred, and its exit is still noticed at once after the run's start
// and within the slowest interval later.
func TestPollingSlowsDownWhileNothingChanges(t *testing.T) {
	e := newEnv(t)
	e.srv.EnableEvents(false)
	// 200 fake seconds of 10 ms: the container runs about 2 s.
	pod := newPod("idle", v1.RestartPolicyNever, v1.Container{Name: "c", Image: "busybox", Command: []string{"sleep", "200"}})
	start := time.Now()
	res := e.run(t, context.Background(), pod)
	took := time.Since(start)
	if code := res.ExitCode(0); code != 0 {
		t.Fatalf("exit %d, want 0 (%v)", code, res.Err())
	}
	// Every 20 ms for 2 s was about 100 calls.
	if lists := countCalls(e.srv.Calls(), "ListContainers"); lists > 50 {
		t.Errorf("%d ListContainers calls for a container that ran 2 s without events, want at most 50", lists)
	}
	// The exit is noticed within the slowest interval (200 ms) and the
	// teardown is quick on the fake.
	if took > 3*time.Second {
		t.Errorf("the run took %v for a container of about 2 s: its exit was noticed late", took)
	}
	e.assertTornDown(t)
}

// A container's exit is learnt from its stop event where the event carries
// the pod's container statuses (containerd ≥ 1.7, CRI-O): no List and no
// ContainerStatus after it, only its sandbox's PodSandboxStatus. An event without them still makes a poll,
// which reads the exit. Either way the run ends on the container's own
// exit code.
func TestStopEventWithStatusesNeedsNoPoll(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		bare                   bool
		lists, containerStatus int
		sandboxStatus          int
	}{
		// ListContainers: the teardown's (killPod's, whose list also
		// settles the pod's last status: observer.settle). ContainerStatus:
		// the one after the start. PodSandboxStatus: the one after the
		// sandbox's creation, the one after the exit.
		{"statuses in the event", false, 1, 1, 2},
		// A poll instead (a List of each kind, the exited container's status).
		{"event without statuses", true, 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.srv.EnableEvents(true)
			e.srv.EventsWithoutStatuses(tc.bare)
			e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
				return fake.Behavior{ExitAfter: 50 * time.Millisecond, ExitCode: 3}
			})
			pod := newPod("exit3", v1.RestartPolicyNever, v1.Container{Name: "c", Image: "busybox", Command: []string{"false"}})
			res := e.run(t, context.Background(), pod)
			if code := res.ExitCode(0); code != 3 {
				t.Fatalf("exit %d, want the container's 3 (%v)", code, res.Err())
			}
			calls := e.srv.Calls()
			if got := countCalls(calls, "ListContainers"); got != tc.lists {
				t.Errorf("%d ListContainers calls, want %d: %v", got, tc.lists, calls)
			}
			if got := countCalls(calls, "ContainerStatus"); got != tc.containerStatus {
				t.Errorf("%d ContainerStatus calls, want %d: %v", got, tc.containerStatus, calls)
			}
			if got := countCalls(calls, "PodSandboxStatus"); got != tc.sandboxStatus {
				t.Errorf("%d PodSandboxStatus calls, want %d: %v", got, tc.sandboxStatus, calls)
			}
			e.assertTornDown(t)
		})
	}
}

// Without container events (containerd 1.6) the observer does not poll
// before the run's first act, when nothing of the run exists, and a short
// pod's exit still wakes it (which List calls its polls make:
// TestPollAfterAct).
func TestNoPollBeforeTheFirstAct(t *testing.T) {
	e := newEnv(t)
	e.srv.EnableEvents(false)
	// 3 fake seconds of 10 ms: the container exits about 30 ms after its
	// start, within the act window (50 ms).
	pod := newPod("short", v1.RestartPolicyNever, v1.Container{Name: "c", Image: "busybox", Command: []string{"sleep", "3"}})
	res := e.run(t, context.Background(), pod)
	if code := res.ExitCode(0); code != 0 {
		t.Fatalf("exit %d, want 0 (%v)", code, res.Err())
	}
	calls := e.srv.Calls()
	first := slices.IndexFunc(calls, func(c string) bool { return strings.HasSuffix(c, "StartContainer") })
	stop := slices.IndexFunc(calls, func(c string) bool { return strings.HasSuffix(c, "StopPodSandbox") })
	if first < 0 || stop < first {
		t.Fatalf("no StartContainer, or no StopPodSandbox after it: %q", calls)
	}
	if n := countCalls(calls[:first], "ListContainers"); n != 0 {
		t.Errorf("%d ListContainers calls before the first StartContainer, want none (nothing of the run to see): %q", n, calls[:first])
	}
	if n := countCalls(calls[first:stop], "ListContainers"); n < 2 {
		t.Errorf("%d ListContainers calls while the container ran, want at least 2 (polls every %v): %q", n, 10*time.Millisecond, calls[first:stop])
	}
	e.assertTornDown(t)
}
