package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/admission"
)

// TestAdmitRunRejectsBeforeCreating runs two pods, one asking for more cpu
// than the node has: Run returns the rejection, creates nothing, and
// reports the kubelet's status for the rejected pod.
func TestAdmitRunRejectsBeforeCreating(t *testing.T) {
	e := newEnv(t)
	e.facts.Node = admission.Node{
		Name: "node1",
		Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi"),
			v1.ResourcePods: resource.MustParse("110"),
		},
	}
	ok := newPod("ok", v1.RestartPolicyNever, ctr("main", "true"))
	big := newPod("big", v1.RestartPolicyNever, ctr("main", "true"))
	big.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}

	e.srv.ResetCalls()
	res, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{ok, big}, e.opts)
	var ae *admission.Error
	if !errors.As(err, &ae) {
		t.Fatalf("Run: %v, want an *admission.Error", err)
	}
	want := "pod default/big: Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000 (reason OutOfcpu)"
	if err.Error() != want {
		t.Errorf("error\n  %s\nwant\n  %s", err, want)
	}
	if res == nil || len(res.Pods) != 2 {
		t.Fatalf("result %+v, want both pods", res)
	}
	if st := res.Pods[1].Status; st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" || !strings.HasPrefix(st.Message, "Pod was rejected: ") ||
		st.QOSClass != v1.PodQOSBurstable {
		t.Errorf("rejected pod's status %+v, want Failed, OutOfcpu, Burstable (the kubelet's rejectPod has the QoS class)", st)
	}
	if st := res.Pods[0].Status; st.Phase != v1.PodPending {
		t.Errorf("other pod's status %+v, want Pending", st)
	}
	if calls := e.srv.Calls(); len(calls) != 0 {
		t.Errorf("runtime calls %v, want none", calls)
	}
	e.assertTornDown(t)
}
