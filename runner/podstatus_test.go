package runner

import (
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// Helpers that build API container states for the podPhase table.

func running() v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{}}
}

func exited(code int32) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
}

func waiting(reason string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
}

// restarting is a container waiting to start again after it exited with code.
func restarting(name string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: waiting(reasonCrashLoopBackOff),
		LastTerminationState: exited(code)}
}

func cstatus(name string, s v1.ContainerState) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: s}
}

// basePhasePod has one regular init container and two regular containers.
func basePhasePod() *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{
		RestartPolicy:  v1.RestartPolicyNever,
		InitContainers: []v1.Container{{Name: "init"}},
		Containers:     []v1.Container{{Name: "a"}, {Name: "b"}},
	}}
}

func TestPodPhase(t *testing.T) {
	cases := []struct {
		name     string
		policy   v1.RestartPolicy // "" keeps Never
		init     []v1.ContainerStatus
		regular  []v1.ContainerStatus
		terminal bool
		mutate   func(*v1.Pod)
		want     v1.PodPhase
	}{
		{
			name:    "a regular init container that failed under Never fails the pod",
			init:    []v1.ContainerStatus{cstatus("init", exited(1))},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodFailed,
		},
		{
			name:    "an init container whose last run failed counts as failed under Never",
			init:    []v1.ContainerStatus{restarting("init", 2)},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodFailed,
		},
		{
			name:    "a failed init container under OnFailure leaves the pod Pending while it restarts",
			policy:  v1.RestartPolicyOnFailure,
			init:    []v1.ContainerStatus{restarting("init", 1)},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			name:    "a running init container keeps the pod Pending",
			init:    []v1.ContainerStatus{cstatus("init", running())},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			name:    "an init container without a status keeps the pod Pending",
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			name:    "an init container that has not run yet keeps the pod Pending",
			init:    []v1.ContainerStatus{cstatus("init", waiting(reasonPodInitializing))},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			name:    "a regular init container running again after the pod was initialised keeps it Pending (kubelet: pendingRegularInitContainers > 0)",
			policy:  v1.RestartPolicyAlways,
			init:    []v1.ContainerStatus{cstatus("init", running())},
			regular: []v1.ContainerStatus{restarting("a", 137), restarting("b", 137)},
			want:    v1.PodPending,
		},
		{
			name:    "a regular container waiting for its first start keeps the pod Pending",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", running()), cstatus("b", waiting(reasonContainerCreating))},
			want:    v1.PodPending,
		},
		{
			name:    "a regular container without a status leaves the pod Pending",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", running())},
			want:    v1.PodPending,
		},
		{
			name:    "running containers make the pod Running",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", running()), cstatus("b", running())},
			want:    v1.PodRunning,
		},
		{
			name:    "one running and one failed container under Never: still Running",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", running()), cstatus("b", exited(3))},
			want:    v1.PodRunning,
		},
		{
			name:    "all stopped under Always: Running, the kubelet restarts them",
			policy:  v1.RestartPolicyAlways,
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			want:    v1.PodRunning,
		},
		{
			name:    "a container waiting to restart counts as stopped: Running under Always",
			policy:  v1.RestartPolicyAlways,
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{restarting("a", 1), cstatus("b", exited(0))},
			want:    v1.PodRunning,
		},
		{
			name:    "all exited 0 under OnFailure: Succeeded",
			policy:  v1.RestartPolicyOnFailure,
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			want:    v1.PodSucceeded,
		},
		{
			name:    "one failed under OnFailure: Running, it will restart",
			policy:  v1.RestartPolicyOnFailure,
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(1))},
			want:    v1.PodRunning,
		},
		{
			name:    "all exited 0 under Never: Succeeded",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			want:    v1.PodSucceeded,
		},
		{
			name:    "one failed under Never: Failed",
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(9))},
			want:    v1.PodFailed,
		},
		{
			name:     "a terminal pod under Always with every container exited 0 is Succeeded",
			policy:   v1.RestartPolicyAlways,
			init:     []v1.ContainerStatus{cstatus("init", exited(0))},
			regular:  []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			terminal: true,
			want:     v1.PodSucceeded,
		},
		{
			name:     "a terminal pod under OnFailure with a failed container is Failed",
			policy:   v1.RestartPolicyOnFailure,
			init:     []v1.ContainerStatus{cstatus("init", exited(0))},
			regular:  []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(143))},
			terminal: true,
			want:     v1.PodFailed,
		},
		{
			name:     "a terminal pod with a running container is still Running",
			policy:   v1.RestartPolicyAlways,
			init:     []v1.ContainerStatus{cstatus("init", exited(0))},
			regular:  []v1.ContainerStatus{cstatus("a", running()), cstatus("b", exited(0))},
			terminal: true,
			want:     v1.PodRunning,
		},
		{
			name: "a sidecar that has not started keeps an uninitialised pod Pending",
			mutate: func(p *v1.Pod) {
				always := v1.ContainerRestartPolicyAlways
				p.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always}}
			},
			init:    []v1.ContainerStatus{{Name: "side", State: running(), Started: new(bool)}},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			// getPhase counts an init container that waits after an exit
			// 0 (its image in back-off after the sandbox was recreated) as
			// neither pending nor failed.
			name:    "an init container waiting after an exit 0 does not keep a pod with running containers Pending",
			policy:  v1.RestartPolicyAlways,
			init:    []v1.ContainerStatus{{Name: "init", State: waiting(reasonImagePullBackOff), LastTerminationState: exited(0)}},
			regular: []v1.ContainerStatus{cstatus("a", running()), cstatus("b", running())},
			want:    v1.PodRunning,
		},
		{
			name:    "an init container with its own OnFailure under Never stays Pending while it restarts",
			mutate:  func(p *v1.Pod) { p.Spec.InitContainers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure) },
			init:    []v1.ContainerStatus{restarting("init", 1)},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodPending,
		},
		{
			name:    "an init container with its own Never under Always fails the pod",
			policy:  v1.RestartPolicyAlways,
			mutate:  func(p *v1.Pod) { p.Spec.InitContainers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever) },
			init:    []v1.ContainerStatus{cstatus("init", exited(2))},
			regular: []v1.ContainerStatus{cstatus("a", waiting(reasonPodInitializing)), cstatus("b", waiting(reasonPodInitializing))},
			want:    v1.PodFailed,
		},
		{
			name:   "every container done by its own Never under Always: Failed when one failed",
			policy: v1.RestartPolicyAlways,
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.Containers[1].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
			},
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(1))},
			want:    v1.PodFailed,
		},
		{
			name:   "every container done by its own OnFailure under Always, all exit 0: Succeeded",
			policy: v1.RestartPolicyAlways,
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
				p.Spec.Containers[1].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
			},
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			want:    v1.PodSucceeded,
		},
		{
			name: "a container that a Restart rule restarts keeps a Never pod Running",
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[1].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.Containers[1].RestartPolicyRules = []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
			},
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), restarting("b", 42)},
			want:    v1.PodRunning,
		},
		{
			name: "the same container after an exit code no rule matches: the Never pod Failed",
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[1].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.Containers[1].RestartPolicyRules = []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
			},
			init:    []v1.ContainerStatus{cstatus("init", exited(0))},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(7))},
			want:    v1.PodFailed,
		},
		{
			name: "a running sidecar does not keep a pod whose containers finished from completing",
			mutate: func(p *v1.Pod) {
				always := v1.ContainerRestartPolicyAlways
				p.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always}}
			},
			init:    []v1.ContainerStatus{{Name: "side", State: running(), Started: ptrTo(true)}},
			regular: []v1.ContainerStatus{cstatus("a", exited(0)), cstatus("b", exited(0))},
			want:    v1.PodSucceeded,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := basePhasePod()
			if tc.policy != "" {
				pod.Spec.RestartPolicy = tc.policy
			}
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			if got := podPhase(pod, tc.init, tc.regular, tc.terminal); got != tc.want {
				t.Errorf("podPhase = %s, want %s", got, tc.want)
			}
		})
	}
}

// Fixtures for podStatusFor: a pod with two init containers and two
// regular containers, and the runtime view "everything running".

var (
	tStart  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tFinish = tStart.Add(time.Minute)
)

func baseStatusPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyAlways,
			InitContainers: []v1.Container{{Name: "i1", Image: "busybox"}, {Name: "i2", Image: "busybox"}},
			Containers:     []v1.Container{{Name: "a", Image: "nginx:1"}, {Name: "b", Image: "redis:7"}},
		},
	}
}

func baseRuntimeStatus() *runtimeStatus {
	return &runtimeStatus{
		Sandboxes: []*sandboxStatus{{ID: "sb", Ready: true, IP: "10.0.0.5", IPs: []string{"10.0.0.5"}}},
		Containers: []*containerStatus{
			{ID: "a0", Name: "a", State: stateRunning, StartedAt: tStart, ImageRef: "sha256:aaa"},
			{ID: "b0", Name: "b", State: stateRunning, StartedAt: tStart, ImageRef: "sha256:bbb"},
			{ID: "i20", Name: "i2", State: stateExited, ExitCode: 0, Reason: "Completed", StartedAt: tStart, FinishedAt: tFinish},
			{ID: "i10", Name: "i1", State: stateExited, ExitCode: 0, Reason: "Completed", StartedAt: tStart, FinishedAt: tFinish},
		},
	}
}

func baseStatusInput() statusInput {
	return statusInput{
		Pod: baseStatusPod(), Status: baseRuntimeStatus(), Reasons: map[string]waitingReason{},
		RuntimeName: "containerd", HostIP: "192.168.1.10", StartTime: tStart,
	}
}

func findCondition(st v1.PodStatus, typ v1.PodConditionType) *v1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

func TestPodStatusForBase(t *testing.T) {
	st := podStatusFor(baseStatusInput())
	if st.Phase != v1.PodRunning {
		t.Errorf("phase = %s, want Running", st.Phase)
	}
	if st.PodIP != "10.0.0.5" || !reflect.DeepEqual(st.PodIPs, []v1.PodIP{{IP: "10.0.0.5"}}) {
		t.Errorf("pod IPs = %q %v, want 10.0.0.5", st.PodIP, st.PodIPs)
	}
	if st.HostIP != "192.168.1.10" || !reflect.DeepEqual(st.HostIPs, []v1.HostIP{{IP: "192.168.1.10"}}) {
		t.Errorf("host IPs = %q %v", st.HostIP, st.HostIPs)
	}
	if st.StartTime == nil || !st.StartTime.Time.Equal(tStart) {
		t.Errorf("startTime = %v, want %v", st.StartTime, tStart)
	}
	if st.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("qosClass = %s, want BestEffort", st.QOSClass)
	}
	var types []v1.PodConditionType
	for _, c := range st.Conditions {
		types = append(types, c.Type)
		if c.Status != v1.ConditionTrue {
			t.Errorf("condition %s = %s (%s: %s), want True", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	// The kubelet's order.
	want := []v1.PodConditionType{conditionReadyToStartCtrs, v1.PodInitialized, v1.PodReady, v1.ContainersReady, v1.PodScheduled}
	if !reflect.DeepEqual(types, want) {
		t.Errorf("conditions = %v, want %v", types, want)
	}
	a := st.ContainerStatuses[0]
	wantA := v1.ContainerStatus{
		Name: "a", Image: "nginx:1", ImageID: "sha256:aaa", ContainerID: "containerd://a0",
		State:   v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(tStart)}},
		Ready:   true,
		Started: ptrTo(true),
		// No resources in its spec: the kubelet reports an empty set.
		Resources: &v1.ResourceRequirements{},
	}
	if !reflect.DeepEqual(a, wantA) {
		t.Errorf("status of a =\n%+v\nwant\n%+v", a, wantA)
	}
	i1 := st.InitContainerStatuses[0]
	if i1.State.Terminated == nil || i1.State.Terminated.Reason != "Completed" || !i1.Ready {
		t.Errorf("status of i1 = %+v, want terminated Completed and ready", i1)
	}
	if got := i1.State.Terminated.ContainerID; got != "containerd://i10" {
		t.Errorf("terminated containerID = %q", got)
	}
}

func TestPodStatusForHostNetworkUsesHostIP(t *testing.T) {
	in := baseStatusInput()
	in.Pod.Spec.HostNetwork = true
	in.Status.Sandboxes[0].IPs, in.Status.Sandboxes[0].IP = nil, ""
	st := podStatusFor(in)
	if st.PodIP != "192.168.1.10" || len(st.PodIPs) != 1 || st.PodIPs[0].IP != "192.168.1.10" {
		t.Errorf("podIP = %q %v, want the host IP", st.PodIP, st.PodIPs)
	}
}

func TestContainerStatuses(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*statusInput)
		check  func(t *testing.T, st v1.PodStatus)
	}{
		{
			name: "a container not created yet waits in ContainerCreating when the pod has no init containers",
			mutate: func(in *statusInput) {
				in.Pod.Spec.InitContainers = nil
				in.Status.Containers = nil
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Waiting == nil || s.State.Waiting.Reason != reasonContainerCreating {
					t.Errorf("state = %+v, want waiting ContainerCreating", s.State)
				}
				if s.Started == nil || *s.Started || s.Ready || s.ContainerID != "" {
					t.Errorf("status = %+v, want not started, not ready, no ID", s)
				}
			},
		},
		{
			name: "with init containers every container not created yet waits in PodInitializing",
			mutate: func(in *statusInput) {
				in.Status.Containers = nil
			},
			check: func(t *testing.T, st v1.PodStatus) {
				for _, s := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
					if s.State.Waiting == nil || s.State.Waiting.Reason != reasonPodInitializing {
						t.Errorf("%s: state = %+v, want waiting PodInitializing", s.Name, s.State)
					}
				}
			},
		},
		{
			name: "a container not created yet shows the cached reason",
			mutate: func(in *statusInput) {
				in.Status.Containers = in.Status.Containers[1:] // drop a
				in.Reasons["a"] = waitingReason{Reason: reasonErrImagePull, Message: "no such image"}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				w := st.ContainerStatuses[0].State.Waiting
				if w == nil || w.Reason != reasonErrImagePull || w.Message != "no such image" {
					t.Errorf("waiting = %+v, want ErrImagePull: no such image", w)
				}
			},
		},
		{
			name: "an exited container in back-off waits in CrashLoopBackOff with its run as the last state",
			mutate: func(in *statusInput) {
				a := in.Status.latest("a")
				a.State, a.ExitCode, a.Reason, a.FinishedAt, a.RestartCount = stateExited, 2, "Error", tFinish, 3
				in.Reasons["a"] = waitingReason{Reason: reasonCrashLoopBackOff, Message: "back-off 40s"}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Waiting == nil || s.State.Waiting.Reason != reasonCrashLoopBackOff || s.State.Waiting.Message != "back-off 40s" {
					t.Errorf("state = %+v, want waiting CrashLoopBackOff", s.State)
				}
				lt := s.LastTerminationState.Terminated
				if lt == nil || lt.ExitCode != 2 || lt.Reason != "Error" || lt.ContainerID != "containerd://a0" || !lt.FinishedAt.Time.Equal(tFinish) {
					t.Errorf("lastState = %+v, want terminated exit 2 Error of a0", lt)
				}
				if s.RestartCount != 3 {
					t.Errorf("restartCount = %d, want 3", s.RestartCount)
				}
				if s.Ready || *s.Started {
					t.Errorf("ready=%v started=%v, want false", s.Ready, *s.Started)
				}
			},
		},
		{
			name: "a terminal pod shows the exit, not the cached reason",
			mutate: func(in *statusInput) {
				a := in.Status.latest("a")
				a.State, a.ExitCode = stateExited, 2
				in.Reasons["a"] = waitingReason{Reason: reasonCrashLoopBackOff}
				in.Terminal = true
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Terminated == nil || s.State.Terminated.ExitCode != 2 {
					t.Errorf("state = %+v, want terminated exit 2", s.State)
				}
			},
		},
		{
			name: "under Never an exited container shows its exit, not the cached reason: it will not start again",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
				a := in.Status.latest("a")
				a.State, a.ExitCode, a.Reason = stateExited, 128, "StartError"
				in.Reasons["a"] = waitingReason{Reason: reasonRunContainerError, Message: "exec failed"}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Terminated == nil || s.State.Terminated.ExitCode != 128 || s.State.Terminated.Reason != "StartError" {
					t.Errorf("state = %+v, want terminated 128 StartError", s.State)
				}
				if s.LastTerminationState.Terminated != nil {
					t.Errorf("lastState = %+v, want none", s.LastTerminationState)
				}
			},
		},
		{
			name: "under OnFailure a container that exited 0 shows its exit, not the cached reason",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				a := in.Status.latest("a")
				a.State, a.ExitCode = stateExited, 0
				in.Reasons["a"] = waitingReason{Reason: reasonCrashLoopBackOff}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				if s := st.ContainerStatuses[0]; s.State.Terminated == nil {
					t.Errorf("state = %+v, want terminated", s.State)
				}
			},
		},
		{
			name: "under OnFailure a failed container shows the cached reason: it will start again",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				a := in.Status.latest("a")
				a.State, a.ExitCode = stateExited, 1
				in.Reasons["a"] = waitingReason{Reason: reasonCrashLoopBackOff}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Waiting == nil || s.State.Waiting.Reason != reasonCrashLoopBackOff || s.LastTerminationState.Terminated == nil {
					t.Errorf("status = %+v, want waiting CrashLoopBackOff with a last state", s)
				}
			},
		},
		{
			name: "the last state comes from the previous instance",
			mutate: func(in *statusInput) {
				in.Status.latest("a").RestartCount = 1
				in.Status.Containers = append(in.Status.Containers,
					&containerStatus{ID: "a-old", Name: "a", State: stateExited, ExitCode: 137, Reason: "OOMKilled", StartedAt: tStart, FinishedAt: tFinish})
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if s.State.Running == nil || s.ContainerID != "containerd://a0" || s.RestartCount != 1 {
					t.Errorf("status = %+v, want running a0 with restartCount 1", s)
				}
				lt := s.LastTerminationState.Terminated
				if lt == nil || lt.ExitCode != 137 || lt.Reason != "OOMKilled" || lt.ContainerID != "containerd://a-old" {
					t.Errorf("lastState = %+v, want the OOMKilled a-old", lt)
				}
			},
		},
		{
			name: "a created container waits with no reason",
			mutate: func(in *statusInput) {
				in.Status.latest("a").State = stateCreated
			},
			check: func(t *testing.T, st v1.PodStatus) {
				w := st.ContainerStatuses[0].State.Waiting
				if w == nil || w.Reason != "" {
					t.Errorf("waiting = %+v, want waiting with no reason", w)
				}
			},
		},
		{
			name: "a running container with a readiness probe is not ready until the probe succeeds",
			mutate: func(in *statusInput) {
				in.Pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{}
				in.Pod.Spec.Containers[1].ReadinessProbe = &v1.Probe{}
				in.Probes.Readiness = map[string]probeResult{"b0": probeSuccess}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				if st.ContainerStatuses[0].Ready || !st.ContainerStatuses[1].Ready {
					t.Errorf("ready a=%v b=%v, want false true", st.ContainerStatuses[0].Ready, st.ContainerStatuses[1].Ready)
				}
			},
		},
		{
			name: "a running container with a startup probe is not started (nor ready) until the probe succeeds",
			mutate: func(in *statusInput) {
				in.Pod.Spec.Containers[0].StartupProbe = &v1.Probe{}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.ContainerStatuses[0]
				if *s.Started || s.Ready {
					t.Errorf("started=%v ready=%v, want false false", *s.Started, s.Ready)
				}
			},
		},
		{
			name: "a running regular init container is started but not ready",
			mutate: func(in *statusInput) {
				in.Status.Containers = []*containerStatus{{ID: "i10", Name: "i1", State: stateRunning}}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				s := st.InitContainerStatuses[0]
				if !*s.Started || s.Ready {
					t.Errorf("started=%v ready=%v, want true false", *s.Started, s.Ready)
				}
			},
		},
		{
			name: "a regular init container that failed is not ready",
			mutate: func(in *statusInput) {
				in.Status.Containers = []*containerStatus{{ID: "i10", Name: "i1", State: stateExited, ExitCode: 1}}
			},
			check: func(t *testing.T, st v1.PodStatus) {
				if st.InitContainerStatuses[0].Ready {
					t.Errorf("ready, want not ready")
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := baseStatusInput()
			tc.mutate(&in)
			tc.check(t, podStatusFor(in))
		})
	}
}

func TestPodConditions(t *testing.T) {
	type want struct {
		status  v1.ConditionStatus
		reason  string
		message string
	}
	cases := []struct {
		name   string
		mutate func(*statusInput)
		typ    v1.PodConditionType
		want   want
	}{
		{
			name:   "PodReadyToStartContainers is True with a ready sandbox that has an IP",
			mutate: func(*statusInput) {},
			typ:    conditionReadyToStartCtrs,
			want:   want{status: v1.ConditionTrue},
		},
		{
			name:   "PodReadyToStartContainers is False without a sandbox",
			mutate: func(in *statusInput) { in.Status = &runtimeStatus{} },
			typ:    conditionReadyToStartCtrs,
			want:   want{v1.ConditionFalse, reasonPodSandboxNotReady, "no pod sandbox exists"},
		},
		{
			name:   "PodReadyToStartContainers is False with PodSandboxNotReady once the sandbox is stopped",
			mutate: func(in *statusInput) { in.Status.Sandboxes[0].Ready = false },
			typ:    conditionReadyToStartCtrs,
			want:   want{v1.ConditionFalse, reasonPodSandboxNotReady, "pod sandbox is not ready"},
		},
		{
			name:   "PodReadyToStartContainers is False when a pod-network sandbox has no address",
			mutate: func(in *statusInput) { in.Status.Sandboxes[0].IP = "" },
			typ:    conditionReadyToStartCtrs,
			want:   want{v1.ConditionFalse, reasonPodSandboxNotReady, "pod sandbox has no IP address"},
		},
		{
			name:   "Initialized lists every incomplete init container",
			mutate: func(in *statusInput) { in.Status.Containers = nil },
			typ:    v1.PodInitialized,
			want:   want{v1.ConditionFalse, reasonContainersNotInit, "containers with incomplete status: [i1 i2]"},
		},
		{
			name: "Initialized lists a failed init container as incomplete",
			mutate: func(in *statusInput) {
				in.Status.Containers = []*containerStatus{{ID: "i10", Name: "i1", State: stateExited, ExitCode: 0},
					{ID: "i20", Name: "i2", State: stateExited, ExitCode: 1}}
				in.Status.sortNewestFirst()
			},
			typ:  v1.PodInitialized,
			want: want{v1.ConditionFalse, reasonContainersNotInit, "containers with incomplete status: [i2]"},
		},
		{
			name:   "Initialized is True once every init container exited 0",
			mutate: func(*statusInput) {},
			typ:    v1.PodInitialized,
			want:   want{status: v1.ConditionTrue},
		},
		{
			name: "Initialized is True once a regular container has started, whatever the init containers say",
			mutate: func(in *statusInput) {
				in.Status.Containers = in.Status.Containers[:2]
			},
			typ:  v1.PodInitialized,
			want: want{status: v1.ConditionTrue},
		},
		{
			name: "Initialized is True with reason PodCompleted when the pod Succeeded",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
				for _, n := range []string{"a", "b"} {
					in.Status.latest(n).State = stateExited
				}
			},
			typ:  v1.PodInitialized,
			want: want{v1.ConditionTrue, reasonPodCompleted, ""},
		},
		{
			name: "Initialized is PodCompleted when the pod Succeeded without init containers",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
				in.Pod.Spec.InitContainers = nil
				for _, n := range []string{"a", "b"} {
					in.Status.latest(n).State = stateExited
				}
			},
			typ:  v1.PodInitialized,
			want: want{v1.ConditionTrue, reasonPodCompleted, ""},
		},
		{
			name:   "ContainersReady is True when every container is ready",
			mutate: func(*statusInput) {},
			typ:    v1.ContainersReady,
			want:   want{status: v1.ConditionTrue},
		},
		{
			name:   "ContainersReady lists every unready container",
			mutate: func(in *statusInput) { in.Status.Containers = in.Status.Containers[2:] },
			typ:    v1.ContainersReady,
			want:   want{v1.ConditionFalse, reasonContainersNotReady, "containers with unready status: [a b]"},
		},
		{
			name:   "Ready follows ContainersReady",
			mutate: func(in *statusInput) { in.Status.latest("b").State = stateCreated },
			typ:    v1.PodReady,
			want:   want{v1.ConditionFalse, reasonContainersNotReady, "containers with unready status: [b]"},
		},
		{
			name: "ContainersReady lists an unready sidecar before the regular containers",
			mutate: func(in *statusInput) {
				always := v1.ContainerRestartPolicyAlways
				in.Pod.Spec.InitContainers[1].RestartPolicy = &always
				in.Status.latest("i2").State = stateExited
				in.Status.latest("b").State = stateCreated
			},
			typ:  v1.ContainersReady,
			want: want{v1.ConditionFalse, reasonContainersNotReady, "containers with unready status: [i2 b]"},
		},
		{
			name: "ContainersReady is False with PodCompleted when the pod Succeeded",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
				in.Status.latest("a").State = stateExited
				in.Status.latest("b").State = stateExited
			},
			typ:  v1.ContainersReady,
			want: want{v1.ConditionFalse, reasonPodCompleted, ""},
		},
		{
			name: "Ready is False with PodFailed when the pod Failed",
			mutate: func(in *statusInput) {
				in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
				in.Status.latest("a").State = stateExited
				b := in.Status.latest("b")
				b.State, b.ExitCode = stateExited, 1
			},
			typ:  v1.PodReady,
			want: want{v1.ConditionFalse, reasonPodFailed, ""},
		},
		{
			name:   "PodScheduled is always True",
			mutate: func(in *statusInput) { in.Status = &runtimeStatus{} },
			typ:    v1.PodScheduled,
			want:   want{status: v1.ConditionTrue},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := baseStatusInput()
			tc.mutate(&in)
			st := podStatusFor(in)
			c := findCondition(st, tc.typ)
			if c == nil {
				t.Fatalf("no %s condition in %+v", tc.typ, st.Conditions)
			}
			got := want{c.Status, c.Reason, c.Message}
			if got != tc.want {
				t.Errorf("%s = %+v, want %+v", tc.typ, got, tc.want)
			}
		})
	}
}

func TestQOSClass(t *testing.T) {
	rl := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	guaranteed := v1.ResourceRequirements{Requests: rl("500m", "64Mi"), Limits: rl("500m", "64Mi")}
	cases := []struct {
		name   string
		mutate func(*v1.Pod)
		want   v1.PodQOSClass
	}{
		{
			name:   "no requests or limits anywhere: BestEffort",
			mutate: func(*v1.Pod) {},
			want:   v1.PodQOSBestEffort,
		},
		{
			name: "only resources other than cpu and memory: BestEffort",
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
			},
			want: v1.PodQOSBestEffort,
		},
		{
			name: "requests equal limits for cpu and memory in every container, init included: Guaranteed",
			mutate: func(p *v1.Pod) {
				for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
					for i := range cs {
						cs[i].Resources = guaranteed
					}
				}
			},
			want: v1.PodQOSGuaranteed,
		},
		{
			name: "limits without requests count as equal requests: Guaranteed",
			mutate: func(p *v1.Pod) {
				for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
					for i := range cs {
						cs[i].Resources = v1.ResourceRequirements{Limits: rl("1", "1Gi")}
					}
				}
			},
			want: v1.PodQOSGuaranteed,
		},
		{
			name: "a BestEffort init container next to Guaranteed containers: Burstable",
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources = guaranteed
				p.Spec.Containers[1].Resources = guaranteed
			},
			want: v1.PodQOSBurstable,
		},
		{
			name: "a Guaranteed and a BestEffort container: Burstable",
			mutate: func(p *v1.Pod) {
				p.Spec.InitContainers = nil
				p.Spec.Containers[0].Resources = guaranteed
			},
			want: v1.PodQOSBurstable,
		},
		{
			name: "requests below limits: Burstable",
			mutate: func(p *v1.Pod) {
				p.Spec.InitContainers = nil
				p.Spec.Containers = p.Spec.Containers[:1]
				p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl("100m", "64Mi"), Limits: rl("500m", "64Mi")}
			},
			want: v1.PodQOSBurstable,
		},
		{
			name: "a cpu limit without a memory limit: Burstable",
			mutate: func(p *v1.Pod) {
				p.Spec.InitContainers = nil
				p.Spec.Containers = p.Spec.Containers[:1]
				p.Spec.Containers[0].Resources = v1.ResourceRequirements{Limits: rl("1", "")}
			},
			want: v1.PodQOSBurstable,
		},
		{
			name: "only a memory request: Burstable",
			mutate: func(p *v1.Pod) {
				p.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: rl("", "10Mi")}
			},
			want: v1.PodQOSBurstable,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := baseStatusPod()
			tc.mutate(pod)
			if got := podresources.QOSClass(pod); got != tc.want {
				t.Errorf("qosClass = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestContainerStatusFields: what the kubelet adds to a container's status
// besides its state (convertToAPIContainerStatuses, v1.37): the resources
// it was given and its requests once it exists, the identity the runtime
// reports, and its volume mounts always.
func TestContainerStatusFields(t *testing.T) {
	enabled, ifPossible := v1.RecursiveReadOnlyEnabled, v1.RecursiveReadOnlyIfPossible
	res := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	mounts := []v1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "conf", MountPath: "/etc/conf", ReadOnly: true},
		{Name: "rro", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: &enabled},
		{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: &ifPossible},
	}
	disabledMode, enabledMode := v1.RecursiveReadOnlyDisabled, v1.RecursiveReadOnlyEnabled
	wantMounts := []v1.VolumeMountStatus{
		{Name: "data", MountPath: "/data"},
		{Name: "conf", MountPath: "/etc/conf", ReadOnly: true, RecursiveReadOnly: &disabledMode},
		{Name: "rro", MountPath: "/rro", ReadOnly: true, RecursiveReadOnly: &enabledMode},
		{Name: "maybe", MountPath: "/maybe", ReadOnly: true, RecursiveReadOnly: &disabledMode},
	}
	user := &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 1000, GID: 3000, SupplementalGroups: []int64{3000, 4000}}}

	in := baseStatusInput()
	in.Pod.Spec.Containers[0].Resources = res
	in.Pod.Spec.Containers[0].VolumeMounts = mounts
	in.Pod.Spec.Containers[1].VolumeMounts = mounts[:1]
	in.Status.latest("a").User = user
	// b has not been created yet.
	in.Status.Containers = slices.DeleteFunc(in.Status.Containers, func(c *containerStatus) bool { return c.Name == "b" })
	st := podStatusFor(in)

	a := st.ContainerStatuses[0]
	if !reflect.DeepEqual(a.Resources, &res) {
		t.Errorf("a: resources %+v, want %+v", a.Resources, res)
	}
	if !reflect.DeepEqual(a.AllocatedResources, res.Requests) {
		t.Errorf("a: allocatedResources %v, want the requests %v", a.AllocatedResources, res.Requests)
	}
	if !reflect.DeepEqual(a.User, user) {
		t.Errorf("a: user %+v, want %+v", a.User, user)
	}
	if !reflect.DeepEqual(a.VolumeMounts, wantMounts) {
		t.Errorf("a: volumeMounts %+v, want %+v", a.VolumeMounts, wantMounts)
	}
	b := st.ContainerStatuses[1]
	if b.Resources != nil || b.AllocatedResources != nil || b.User != nil {
		t.Errorf("b, not created: resources %v, allocated %v, user %v; want none", b.Resources, b.AllocatedResources, b.User)
	}
	if !reflect.DeepEqual(b.VolumeMounts, wantMounts[:1]) {
		t.Errorf("b, not created: volumeMounts %+v, want %+v", b.VolumeMounts, wantMounts[:1])
	}
}

// TestQOSClassPodLevel: pod-level resources decide the class when they set
// cpu, memory or hugepages (kubelet v1.37, PodLevelResourcesFixKubeletQOSClass),
// whatever the containers say.
func TestQOSClassPodLevel(t *testing.T) {
	rl := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	for _, tc := range []struct {
		name string
		pod  *v1.ResourceRequirements
		ctr  v1.ResourceRequirements
		want v1.PodQOSClass
	}{
		{"pod-level memory only, BestEffort containers: Burstable", &v1.ResourceRequirements{Requests: rl("", "100Mi"), Limits: rl("", "200Mi")}, v1.ResourceRequirements{}, v1.PodQOSBurstable},
		{"pod-level requests equal limits, Burstable containers: Guaranteed", &v1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")}, v1.ResourceRequirements{Requests: rl("100m", "")}, v1.PodQOSGuaranteed},
		{"pod-level limits only: Guaranteed", &v1.ResourceRequirements{Limits: rl("1", "1Gi")}, v1.ResourceRequirements{}, v1.PodQOSGuaranteed},
		{"pod-level of other resources only: the containers decide", &v1.ResourceRequirements{Limits: v1.ResourceList{"pids": resource.MustParse("10")}}, v1.ResourceRequirements{Requests: rl("100m", "")}, v1.PodQOSBurstable},
	} {
		pod := &v1.Pod{Spec: v1.PodSpec{Resources: tc.pod, Containers: []v1.Container{{Name: "c", Resources: tc.ctr}}}}
		if got := podresources.QOSClass(pod); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
