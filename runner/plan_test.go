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
func baseStatus() *podStatus {
	return &podStatus{
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

func withoutContainers(st *podStatus, names ...string) {
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

func setState(st *podStatus, name string, s containerState, exit int32) {
	c := st.latest(name)
	c.State, c.ExitCode = s, exit
}

func TestComputePodActions(t *testing.T) {
	noKill := map[string]containerToKill{}
	cases := []struct {
		name   string
		mutate func(*v1.Pod, *podStatus, *probeResults)
		want   podActions
	}{
		{
			name:   "everything running: nothing to do",
			mutate: func(*v1.Pod, *podStatus, *probeResults) {},
			want:   podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "no sandbox: create one and start the first init container",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				s.Sandboxes, s.Containers = nil, nil
			},
			want: podActions{KillPod: true, CreateSandbox: true, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "no sandbox and no init containers: create one and start every container",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.InitContainers = nil
				s.Sandboxes, s.Containers = nil, nil
			},
			want: podActions{KillPod: true, CreateSandbox: true, ContainersToStart: []int{0, 1}, ContainersToKill: noKill},
		},
		{
			name: "sandbox not ready: recreate with the next attempt, from the first init container",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				s.Sandboxes[0].Ready = false
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "sandbox without an IP: recreate",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				s.Sandboxes[0].IP = ""
			},
			want: podActions{KillPod: true, CreateSandbox: true, SandboxID: "sb0", Attempt: 1, InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "host network sandbox without an IP is fine",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.HostNetwork = true
				s.Sandboxes[0].IP = ""
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "sandbox died under restartPolicy Never after containers ran: kill the pod, no new sandbox",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				s.Sandboxes[0].Ready = false
			},
			want: podActions{KillPod: true, SandboxID: "sb0", Attempt: 1, ContainersToKill: noKill},
		},
		{
			name: "sandbox died under OnFailure after every container succeeded: kill the pod, no new sandbox",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				s.Sandboxes[0].Ready = false
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 0)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", Attempt: 1, ContainersToKill: noKill},
		},
		{
			name: "sandbox died under OnFailure: recreate and skip containers that succeeded",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
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
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateRunning, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "first init container exited 0: start the sidecar next",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar running without a startup probe: start the next init container",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{2}, ContainersToKill: noKill},
		},
		{
			name: "sidecar running with a startup probe not yet passed: wait",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "sidecar startup probe succeeded: start the next init container",
			mutate: func(p *v1.Pod, s *podStatus, pr *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				pr.Startup = map[string]probeResult{"sidecar-0": probeSuccess}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{2}, ContainersToKill: noKill},
		},
		{
			name: "sidecar startup probe failed: kill and restart it",
			mutate: func(p *v1.Pod, s *podStatus, pr *probeResults) {
				p.Spec.InitContainers[1].StartupProbe = &v1.Probe{}
				pr.Startup = map[string]probeResult{"sidecar-0": probeFailure}
				withoutContainers(s, "app1", "app2", "init2")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"sidecar-0": {Name: "sidecar", Reason: killStartupProbe, Message: "Init container sidecar failed startup probe"}}},
		},
		{
			name: "last init container exited 0: start the regular containers",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2")
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0, 1}, ContainersToKill: noKill},
		},
		{
			name: "init container failed under Always: restart it",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "init container failed under Never: the pod is killed",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateExited, 1)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "init container OOM-killed with exit 0 still counts as failed",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				s.latest("init1").Reason = "OOMKilled"
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "init container stuck in created: start it again",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "app1", "app2", "sidecar", "init2")
				setState(s, "init1", stateCreated, 0)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "sidecar exited after initialisation: restart it",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				setState(s, "sidecar", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar instance gone after initialisation: restart it",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "sidecar")
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1}, ContainersToKill: noKill},
		},
		{
			name: "sidecar liveness failed: kill and restart it",
			mutate: func(p *v1.Pod, s *podStatus, pr *probeResults) {
				pr.Liveness = map[string]probeResult{"sidecar-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0", InitContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"sidecar-0": {Name: "sidecar", Reason: killLivenessProbe, Message: "Init container sidecar failed liveness probe"}}},
		},
		{
			name: "regular init containers are not rerun once initialised",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				withoutContainers(s, "init1", "init2")
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container exited under Always: restart it",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				setState(s, "app1", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "regular container exited 0 under OnFailure: not restarted",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				setState(s, "app1", stateExited, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container exited 1 under OnFailure: restarted",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0}, ContainersToKill: noKill},
		},
		{
			name: "regular container exited under Never: not restarted",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				setState(s, "app1", stateExited, 1)
			},
			want: podActions{SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "every regular container done under Never: kill the pod, sidecars not restarted",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				setState(s, "app1", stateExited, 0)
				setState(s, "app2", stateExited, 0)
				setState(s, "sidecar", stateExited, 0)
			},
			want: podActions{KillPod: true, SandboxID: "sb0", ContainersToKill: noKill},
		},
		{
			name: "regular container in unknown state: kill it first, then start it",
			mutate: func(p *v1.Pod, s *podStatus, _ *probeResults) {
				setState(s, "app2", stateUnknown, 0)
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{1},
				ContainersToKill: map[string]containerToKill{"app2-0": {Name: "app2", Reason: killUnknownState, Message: "Container app2 is in unknown state, will be restarted"}}},
		},
		{
			name: "liveness failure: kill and restart under Always",
			mutate: func(p *v1.Pod, s *podStatus, pr *probeResults) {
				pr.Liveness = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0", ContainersToStart: []int{0},
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killLivenessProbe, Message: "Container app1 failed liveness probe, will be restarted"}}},
		},
		{
			name: "startup failure under Never: kill without restart",
			mutate: func(p *v1.Pod, s *podStatus, pr *probeResults) {
				p.Spec.RestartPolicy = v1.RestartPolicyNever
				pr.Startup = map[string]probeResult{"app1-0": probeFailure}
			},
			want: podActions{SandboxID: "sb0",
				ContainersToKill: map[string]containerToKill{"app1-0": {Name: "app1", Reason: killStartupProbe, Message: "Container app1 failed startup probe"}}},
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

func TestBackOff(t *testing.T) {
	var b backOff
	finished := t0
	if _, in := b.until("c", finished, t0.Add(time.Second)); in {
		t.Fatal("no back-off before the first restart")
	}
	b.next("c", t0.Add(time.Second)) // first restart: 10 s from now on
	steps := []struct {
		finishedAt, now time.Time
		wantIn          bool
		wantUntil       time.Time
	}{
		{t0.Add(2 * time.Second), t0.Add(5 * time.Second), true, t0.Add(12 * time.Second)},
		{t0.Add(2 * time.Second), t0.Add(12 * time.Second), false, t0.Add(12 * time.Second)},
	}
	for i, s := range steps {
		until, in := b.until("c", s.finishedAt, s.now)
		if in != s.wantIn || !until.Equal(s.wantUntil) {
			t.Errorf("step %d: until=%v in=%v, want %v %v", i, until, in, s.wantUntil, s.wantIn)
		}
	}
	delays := []time.Duration{}
	now := t0
	for range 7 {
		now = now.Add(time.Minute)
		b.next("d", now)
		delays = append(delays, b.entries["d"].Delay)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	if !reflect.DeepEqual(delays, want) {
		t.Errorf("delays %v, want %v", delays, want)
	}
	b.next("d", now.Add(11*time.Minute))
	if d := b.entries["d"].Delay; d != backOffInitial {
		t.Errorf("after 11 idle minutes the delay is %v, want it reset to %v", d, backOffInitial)
	}
}
