package runner

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// basePlanPod has two init containers, a sidecar between them, and two
// regular containers.
func basePlanPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{Spec: v1.PodSpec{
		RestartPolicy: v1.RestartPolicyAlways,
		InitContainers: []v1.Container{
			{Name: "init1"},
			{Name: "sidecar", RestartPolicy: &always},
			{Name: "init2"},
		},
		Containers: []v1.Container{{Name: "app1"}, {Name: "app2"}},
	}}
}

// baseStatus is "everything running": a ready sandbox with an IP, the init
// containers completed, the sidecar and both regular containers running.
func baseStatus() *runtimeStatus {
	return &runtimeStatus{
		Sandboxes: []*sandboxStatus{{ID: "sb0", Ready: true, IP: "10.0.0.2", IPs: []string{"10.0.0.2"}}},
		Containers: []*containerStatus{
			{ID: "app1-0", Name: "app1", State: stateRunning},
			{ID: "app2-0", Name: "app2", State: stateRunning},
			{ID: "sidecar-0", Name: "sidecar", State: stateRunning},
			{ID: "init2-0", Name: "init2", State: stateExited},
			{ID: "init1-0", Name: "init1", State: stateExited},
		},
	}
}

func withoutContainers(st *runtimeStatus, names ...string) {
	var keep []*containerStatus
	for _, c := range st.Containers {
		drop := false
		for _, n := range names {
			drop = drop || c.Name == n
		}
		if !drop {
			keep = append(keep, c)
		}
	}
	st.Containers = keep
}

func setState(st *runtimeStatus, name string, s containerState, exit int32) {
	c := st.latest(name)
	c.State, c.ExitCode = s, exit
}

func TestComputePodActions(t *testing.T) {
	noKill := map[string]containerToKill{}
	cases := []struct {
		name   string
		mutate func(*v1.Pod, *runtimeStatus, *probeResults)
		want   podActions
	}{
		{
			name:   "everything running: nothing to do",
			mutate: func(*v1.Pod, *runtimeStatus, *probeResults) {},
			want:   podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "no sandbox: create one and start the first init container",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				s.Sandboxes, s.Containers = nil, nil
			},
			want: podActions{KillPod: true, CreateSandbox: true, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "no sandbox and no init containers: create one and start every container",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.InitContainers = nil
				s.Sandboxes, s.Containers = nil, nil
			},
			want: podActions{KillPod: true, CreateSandbox: true, ContainersToStart: []int{0, 1}, ContainersToKill: noKill},
		},
		{
			name: "sandbox not ready: recreate with the next attempt, from the first init container",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				s.Sandboxes[0].Ready = false
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "sandbox without an IP: recreate",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				s.Sandboxes[0].IP = ""
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "host network sandbox without an IP is fine",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.HostNetwork = true
				s.Sandboxes[0].IP = ""
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "sandbox died under restartPolicy Never after containers ran: kill the pod, no new sandbox",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				s.Sandboxes[0].Ready = false
			},
			want: podActions{KillPod: true, SandboxID: "sb0", Attempt: 1, ContainersToKill: noKill},
		},
		{
			name: "sandbox died under OnFailure after every container succeeded: kill the pod, no new sandbox",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				s.Sandboxes[0].Ready = false
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 0)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", Attempt: 1, ContainersToKill: noKill},
		},
		{
			name: "sandbox died under OnFailure: recreate and skip containers that succeeded",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				p.Spec.InitContainers = nil
				s.Sandboxes[0].Ready = false
				withoutContainers(s, "init1", "init2", "sidecar")
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 1)
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, ContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "first init container running: wait for it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateRunning, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "first init container exited 0: start the sidecar next",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar running without a startup probe: start the next init container",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{2}, ContainersToKill: noKill},
		},
		{
			name: "sidecar running with a startup probe not yet passed: wait",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "sidecar startup probe succeeded: start the next init container",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				pr.Startup = map[string]probeResult{"sidecar-0": probeSuccess}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{2}, ContainersToKill: noKill},
		},
		{
			name: "sidecar startup probe failed: kill and restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				pr.Startup = map[string]probeResult{"sidecar-0": probeFailure}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"sidecar-0": {Name: "sidecar", Reason: killStartupProbe, Message: "Init container sidecar failed startup probe"}}},
		},
		{
			name: "last init container exited 0: start the regular containers",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2")
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0, 1}, ContainersToKill: noKill},
		},
		{
			name: "init container failed under Always: restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "init container failed under Never: the pod is killed",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "init container OOM-killed with exit 0 still counts as failed",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				s.latest("init1").Reason = "OOMKilled"
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "init container stuck in created: start it again",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateCreated, 0)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "sidecar exited after initialisation: restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				setState(s, "sidecar", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar instance gone after initialisation: restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "sidecar")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar liveness failed: kill and restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				pr.Liveness = map[string]probeResult{"sidecar-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"sidecar-0": {Name: "sidecar", Reason: killLivenessProbe, Message: "Init container sidecar failed liveness probe"}}},
		},
		{
			name: "regular init containers are not rerun once initialised",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				withoutContainers(s, "init1", "init2")
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container exited under Always: restart it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				setState(s, "app1", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "regular container exited 0 under OnFailure: not restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				setState(s, "app1", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container exited 1 under OnFailure: restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "regular container exited under Never: not restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "every regular container done under Never: kill the pod, sidecars not restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 0)
				setState(s, "sidecar", stateExited, 0)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container in unknown state: kill it first, then start it",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				setState(s, "app2", stateUnknown, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"app2-0": {Name: "app2", Reason: killUnknownState, Message: "Container app2 is in unknown state, will be restarted"}}},
		},
		{
			name: "liveness failure: kill and restart under Always",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				pr.Liveness = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0},
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killLivenessProbe, Message: "Container app1 failed liveness probe, will be restarted"}}},
		},
		{
			name: "startup failure under Never: kill without restart",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				pr.Startup = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0",
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killStartupProbe, Message: "Container app1 failed startup probe"}}},
		},
		// A container's own restartPolicy and restartPolicyRules
		// (ContainerRestartRules) decide before the pod's.
		{
			name: "a container's own Never under a pod's Always: not restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "a container's own Always under a pod's Never: restarted",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways)
				setState(s, "app1", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "a container's own OnFailure under a pod's Never: restarted after exit 3",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
				setState(s, "app1", stateExited, 3)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "a Restart rule matching the exit code wins over the container's Never",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
				setState(s, "app1", stateExited, 42)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "a Restart rule that does not match leaves the container's Never",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "every regular container done by its own Never under a pod's Always: kill the pod",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				for i := range p.Spec.Containers {
					p.Spec.Containers[i].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				}
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 1)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "an init container's own OnFailure under a pod's Never: restarted after a failure",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				p.Spec.InitContainers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "an init container's own Never under a pod's Always: a failure kills the pod",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.InitContainers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "an init container in unknown state with its own Never: the pod is killed (no exit code for rules)",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.InitContainers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				p.Spec.InitContainers[0].RestartPolicyRules = []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpNotIn, 0)}
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateUnknown, 0)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "liveness failure of a container with its own Never under a pod's Always: kill without restart",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyNever)
				pr.Liveness = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0",
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killLivenessProbe, Message: "Container app1 failed liveness probe"}}},
		},
		{
			name: "liveness failure of a container with its own OnFailure under a pod's Never: kill and restart",
			mutate: func(p *v1.Pod, s *runtimeStatus, pr *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
				pr.Liveness = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0},
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killLivenessProbe, Message: "Container app1 failed liveness probe, will be restarted"}}},
		},
		{
			name: "sandbox died: a container with its own OnFailure that succeeded is not started again",
			mutate: func(p *v1.Pod, s *runtimeStatus, _ *probeResults) {
				p.Spec.InitContainers = nil
				p.Spec.Containers[0].RestartPolicy = ptrTo(v1.ContainerRestartPolicyOnFailure)
				s.Sandboxes[0].Ready = false
				withoutContainers(s, "init1", "init2", "sidecar")
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 0)
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, ContainersToStart: []int{1}, ContainersToKill: noKill},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod, st := basePlanPod(), baseStatus()
			var pr probeResults
			tc.mutate(pod, st, &pr)
			got := computePodActions(planInput{Pod: pod, Status: st, Probes: pr})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("computePodActions:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestBackOff checks the restart back-off against the kubelet's doBackOff
// over flowcontrol.Backoff, one rule per case. Each case replays a history
// of restarts (doBackOff: until, then next when not in back-off) and looks
// at one more exit.
func TestBackOff(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type restart struct{ finished, now int } // a restart after the exit at finished, done at now
	cases := []struct {
		name      string
		history   []restart
		finished  int // the exit looked at
		now       int
		wantIn    bool
		wantUntil int // when wantIn
		wantDelay time.Duration
	}{
		{name: "the first restart is not delayed (no entry yet)",
			finished: 0, now: 0, wantIn: false},
		{name: "the second restart waits 10 s from the exit's FinishedAt",
			history: []restart{{0, 0}}, finished: 3, now: 5, wantIn: true, wantUntil: 13, wantDelay: 10 * time.Second},
		{name: "the back-off ends exactly 10 s after FinishedAt",
			history: []restart{{0, 0}}, finished: 3, now: 13, wantIn: false, wantDelay: 10 * time.Second},
		{name: "the delay doubles with each restart",
			history: []restart{{0, 0}, {3, 13}, {14, 34}}, finished: 35, now: 36, wantIn: true, wantUntil: 75, wantDelay: 40 * time.Second},
		{name: "the delay is capped at 300 s",
			history:  []restart{{0, 0}, {1, 11}, {12, 32}, {33, 73}, {74, 154}, {155, 315}, {316, 616}, {617, 917}},
			finished: 918, now: 919, wantIn: true, wantUntil: 1218, wantDelay: 300 * time.Second},
		{name: "a container that ran over 10 min since the last restart is restarted at once",
			history: []restart{{0, 0}, {1, 11}}, finished: 11 + 601, now: 11 + 601, wantIn: false, wantDelay: 20 * time.Second},
		{name: "a run of exactly 10 min does not reset the back-off",
			history: []restart{{0, 0}, {1, 11}}, finished: 11 + 600, now: 11 + 601, wantIn: true, wantUntil: 11 + 620, wantDelay: 20 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b backOff
			for i, r := range tc.history {
				if _, in := b.until("c", at(r.finished), at(r.now)); in {
					t.Fatalf("history step %d is in back-off", i)
				}
				b.next("c", at(r.finished), at(r.now))
			}
			until, in := b.until("c", at(tc.finished), at(tc.now))
			if in != tc.wantIn || in && !until.Equal(at(tc.wantUntil)) {
				t.Errorf("until = %v, in = %v; want %v, %v", until.Sub(t0), in, at(tc.wantUntil).Sub(t0), tc.wantIn)
			}
			if d := b.delay("c"); d != tc.wantDelay {
				t.Errorf("delay %v, want %v", d, tc.wantDelay)
			}
		})
	}
}

// TestBackOffAfterExpiryStartsOver: Next on an expired entry starts again
// at 10 s, not at double the old delay.
func TestBackOffAfterExpiryStartsOver(t *testing.T) {
	var b backOff
	now := t0
	for range 5 {
		b.next("c", now, now)
		now = now.Add(time.Minute)
	}
	if d := b.delay("c"); d != 160*time.Second {
		t.Fatalf("delay %v after five restarts, want 160s", d)
	}
	later := now.Add(11 * time.Minute)
	b.next("c", later, later)
	if d := b.delay("c"); d != backOffInitial {
		t.Errorf("delay %v after 11 quiet minutes, want %v", d, backOffInitial)
	}
}

// TestImagePullBackOff: IsInBackOffSinceUpdate, the rule of image pulls:
// the back-off runs from the last failed pull.
func TestImagePullBackOff(t *testing.T) {
	var b backOff
	if _, in := b.untilSinceUpdate("uid_img", t0); in {
		t.Fatal("in back-off before any pull failed")
	}
	b.next("uid_img", t0, t0)
	if until, in := b.untilSinceUpdate("uid_img", t0.Add(4*time.Second)); !in || !until.Equal(t0.Add(10*time.Second)) {
		t.Errorf("4 s after the first failure: until %v in %v, want +10s true", until.Sub(t0), in)
	}
	if _, in := b.untilSinceUpdate("uid_img", t0.Add(10*time.Second)); in {
		t.Error("still in back-off 10 s after the first failure")
	}
	b.next("uid_img", t0.Add(10*time.Second), t0.Add(10*time.Second))
	if until, _ := b.untilSinceUpdate("uid_img", t0.Add(11*time.Second)); !until.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("after the second failure the back-off ends at %v, want +30s", until.Sub(t0))
	}
}

func TestPermanentPullFailure(t *testing.T) {
	cases := []struct {
		name, msg string
		want      string // "" = transient
	}{
		{"containerd 2 missing tag on the mirror is not found",
			`pulling image "127.0.0.1:35443/library/busybox:nosuchtag": rpc error: code = NotFound desc = failed to pull and unpack image "127.0.0.1:35443/library/busybox:nosuchtag": failed to resolve image: 127.0.0.1:35443/library/busybox:nosuchtag: not found`, "not found"},
		{"containerd 1.6 missing reference is not found",
			`rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nosuch:1": failed to resolve reference "docker.io/library/nosuch:1": docker.io/library/nosuch:1: not found`, "not found"},
		{"containerd 2 private registry without credentials is unauthorized",
			`rpc error: code = Unknown desc = failed to pull and unpack image "127.0.0.1:35444/private/busybox:1.0": failed to resolve image: pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials`, "unauthorized"},
		{"containerd 1.6 anonymous token refused is unauthorized",
			`rpc error: code = Unknown desc = failed to pull and unpack image "r.example/x:1": failed to resolve reference "r.example/x:1": failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized`, "unauthorized"},
		{"a forbidden repository is unauthorized",
			`failed to resolve reference "r.example/x:1": unexpected status from HEAD request to https://r.example/v2/x/manifests/1: 403 Forbidden`, "unauthorized"},
		{"failure with every credential keeps the reason",
			`[with credentials from secret default/a: rpc error: code = Unknown desc = ... pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed, with credentials from secret default/b: ...]`, "unauthorized"},
		{"an unparsable reference is an invalid name",
			`rpc error: code = InvalidArgument desc = failed to pull and unpack image "UPPER:1": invalid reference format`, "invalid image name"},
		{"connection refused is transient",
			`rpc error: code = Unknown desc = failed to pull and unpack image "r.example/x:1": failed to resolve reference "r.example/x:1": failed to do request: Head "https://r.example/v2/x/manifests/1": dial tcp 10.0.0.1:443: connect: connection refused`, ""},
		{"a registry 5xx is transient",
			`failed to resolve reference "r.example/x:1": unexpected status from HEAD request to https://r.example/v2/x/manifests/1: 503 Service Unavailable`, ""},
		{"a DNS failure is transient",
			`failed to do request: Head "https://nohost.example/v2/x/manifests/1": dial tcp: lookup nohost.example: no such host`, ""},
		{"a deadline is transient",
			`rpc error: code = DeadlineExceeded desc = context deadline exceeded`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why, ok := permanentPullFailure(tc.msg)
			if ok != (tc.want != "") || why != tc.want {
				t.Errorf("permanentPullFailure = %q, %v; want %q", why, ok, tc.want)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	for _, tc := range []struct {
		remaining time.Duration
		rnd       float64
		want      time.Duration
	}{
		{10 * time.Second, 0, 10 * time.Second},
		{10 * time.Second, 0.5, 12500 * time.Millisecond},
		{10 * time.Second, 0.999, 14995 * time.Millisecond},
		{40 * time.Second, 1, 60 * time.Second},
		{-time.Second, 0.9, 0},
		// A 5-minute back-off is looked at after at most a minute (and
		// its jitter), again and again.
		{300 * time.Second, 0, time.Minute},
		{300 * time.Second, 1, 90 * time.Second},
	} {
		if got := requeueAfter(tc.remaining, tc.rnd); got != tc.want {
			t.Errorf("requeueAfter(%s, %v) = %s, want %s", tc.remaining, tc.rnd, got, tc.want)
		}
	}
}

// restartOn is a Restart rule on the exit codes.
func restartOn(op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}
