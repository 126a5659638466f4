package runner_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
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
// instead of polling every pollInterval: a pod that runs for a while costs
// a handful of List calls, not one per 20 ms.
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
		if !tc.events && lists < 15 {
			t.Errorf("without events the observer should poll every 20 ms; only %d ListContainers calls in ~500 ms", lists)
		}
		e.assertTornDown(t)
	}
}
