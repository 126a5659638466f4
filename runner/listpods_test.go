package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/runner/report/podlist"
)

// listCase's fixture: a pod with one container "app", running in a ready
// sandbox, its podrun alive, the record made when it started.
var (
	lt0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	lt1 = lt0.Add(3 * time.Second)
)

func baseListInput() listInput {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web", Annotations: map[string]string{"a": "b"}},
		Spec: v1.PodSpec{
			NodeName: "node1", RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{Name: "app", Image: "busybox"}},
		},
	}
	return listInput{
		Namespace: "default", Name: "web", UID: "uid-web", RootDir: "/var/lib/podrun",
		Manifest: pod,
		Record:   statusRecord{StartTime: lt0, HostIP: "192.0.2.1", Written: lt1},
		Status: &runtimeStatus{
			Sandboxes:  []*sandboxStatus{{ID: "sb1", Ready: true, IP: "10.88.0.5", IPs: []string{"10.88.0.5"}, CreatedAt: lt0}},
			Containers: []*containerStatus{{ID: "c1", Name: "app", State: stateRunning, CreatedAt: lt0, StartedAt: lt0}},
		},
		RuntimeName: "containerd",
		Owner:       Owner{RunID: "run1", PID: 4242, Detached: false},
		Alive:       true, FirstSandbox: lt0,
	}
}

func withReadinessProbe(in *listInput) {
	in.Manifest.Spec.Containers[0].ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
}

func detached(in *listInput) { in.Alive, in.Owner.Detached = false, true }

func readyRecorded(in *listInput, result string) {
	in.Record.Readiness = map[string]recordedProbe{"c1": {Container: "app", Result: result, Since: lt1}}
}

func exitedIn(in *listInput, code int32, reason string) {
	c := in.Status.Containers[0]
	c.State, c.ExitCode, c.Reason, c.FinishedAt = stateExited, code, reason, lt1
}

func podCondition(p *v1.Pod, t v1.PodConditionType) v1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.PodCondition{}
}

func TestListedPod(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(in *listInput)
		row    string // READY STATUS RESTARTS as ps prints them
		check  func(t *testing.T, p *v1.Pod)
	}{
		{"a running pod its podrun looks after", func(in *listInput) {}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if p.Status.Phase != v1.PodRunning || p.Status.PodIP != "10.88.0.5" || p.Status.HostIP != "192.0.2.1" || p.Status.Message != "" {
				t.Errorf("status %+v", p.Status)
			}
			if !p.CreationTimestamp.Time.Equal(lt0) || p.Status.StartTime == nil || !p.Status.StartTime.Time.Equal(lt0) {
				t.Errorf("creationTimestamp %v, startTime %v; want the record's start", p.CreationTimestamp, p.Status.StartTime)
			}
			if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != "containerd://c1" || !cs.Ready || cs.State.Running == nil {
				t.Errorf("container status %+v", cs)
			}
			want := map[string]string{"a": "b", "io.podrun.run": "run1", "io.podrun.root-dir": "/var/lib/podrun", "io.podrun.owner": "pid 4242"}
			for k, v := range want {
				if p.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, p.Annotations[k], v)
				}
			}
		}},
		{"a readiness probe podrun probes: its recorded result", func(in *listInput) {
			withReadinessProbe(in)
			readyRecorded(in, "Success")
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); c.Status != v1.ConditionTrue || c.Reason != "" {
				t.Errorf("Ready %+v, want True without a reason", c)
			}
		}},
		{"a readiness probe podrun has not published yet: not ready", func(in *listInput) {
			withReadinessProbe(in)
		}, "0/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); c.Status != v1.ConditionFalse || c.Reason != reasonContainersNotReady {
				t.Errorf("Ready %+v, want False, ContainersNotReady", c)
			}
		}},
		{"detached, readiness last Success: ready as recorded, and the conditions say it is not probed", func(in *listInput) {
			detached(in)
			withReadinessProbe(in)
			readyRecorded(in, "Success")
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				c := podCondition(p, ct)
				if c.Status != v1.ConditionTrue || c.Reason != reasonReadinessNotProbed || !c.LastProbeTime.Time.Equal(lt1) ||
					!strings.Contains(c.Message, "[app: Success at 2025-06-01T12:00:03Z]") || !strings.Contains(c.Message, "left the pod running") {
					t.Errorf("%s %+v, want True, ReadinessNotProbed, lastProbeTime %v, the result and its time", ct, c, lt1)
				}
			}
			if !strings.Contains(p.Status.Message, "podrun (pid 4242) left the pod running at 2025-06-01T12:00:03Z (--detach): nothing probes its containers or restarts them since") {
				t.Errorf("message %q", p.Status.Message)
			}
			if p.Annotations["io.podrun.owner"] != "detached" {
				t.Errorf("owner annotation %q", p.Annotations["io.podrun.owner"])
			}
		}},
		{"detached, readiness last Failure: not ready, not probed", func(in *listInput) {
			detached(in)
			withReadinessProbe(in)
			readyRecorded(in, "Failure")
		}, "0/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); c.Status != v1.ConditionFalse || c.Reason != reasonReadinessNotProbed || !strings.Contains(c.Message, "app: Failure at") {
				t.Errorf("Ready %+v, want False, ReadinessNotProbed, the Failure", c)
			}
		}},
		{"detached before its readiness probe published anything: not ready, never probed", func(in *listInput) {
			detached(in)
			withReadinessProbe(in)
		}, "0/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); c.Status != v1.ConditionFalse || c.Reason != reasonReadinessNotProbed ||
				!strings.Contains(c.Message, "app: not probed yet") || !c.LastProbeTime.IsZero() {
				t.Errorf("Ready %+v, want False, ReadinessNotProbed, not probed yet, no lastProbeTime", c)
			}
		}},
		{"detached without a readiness probe: ready while running, as the kubelet's rule", func(in *listInput) {
			detached(in)
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); c.Status != v1.ConditionTrue || c.Reason != "" || !c.LastProbeTime.IsZero() {
				t.Errorf("Ready %+v, want True without a reason", c)
			}
			if !strings.Contains(p.Status.Message, "nothing probes its containers or restarts them") {
				t.Errorf("message %q", p.Status.Message)
			}
		}},
		{"detached, the container crashed: it stays exited (Error), the pod is over", func(in *listInput) {
			detached(in)
			exitedIn(in, 1, "Error")
			in.Record.Reasons = map[string]waitingReason{"app": {Reason: reasonCrashLoopBackOff}} // stale: nobody restarts it
		}, "0/1 Error 0", func(t *testing.T, p *v1.Pod) {
			cs := p.Status.ContainerStatuses[0]
			if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 1 || cs.State.Waiting != nil || p.Status.Phase != v1.PodFailed {
				t.Errorf("container %+v, phase %s; want terminated with 1, Failed", cs.State, p.Status.Phase)
			}
		}},
		{"detached, completed: Completed, Succeeded", func(in *listInput) {
			detached(in)
			in.Manifest.Spec.RestartPolicy = v1.RestartPolicyNever
			exitedIn(in, 0, "Completed")
		}, "0/1 Completed 0", func(t *testing.T, p *v1.Pod) {
			if p.Status.Phase != v1.PodSucceeded {
				t.Errorf("phase %s, want Succeeded", p.Status.Phase)
			}
		}},
		{"detached, an image that never pulled keeps its reason", func(in *listInput) {
			detached(in)
			in.Status.Containers = nil
			in.Record.Reasons = map[string]waitingReason{"app": {Reason: reasonImagePullBackOff, Message: "Back-off pulling image"}}
		}, "0/1 ImagePullBackOff 0", nil},
		{"its podrun alive, in a crash loop: CrashLoopBackOff with the restarts", func(in *listInput) {
			prev := &containerStatus{ID: "c0", Name: "app", State: stateExited, ExitCode: 1, Reason: "Error", RestartCount: 1, FinishedAt: lt0}
			exitedIn(in, 1, "Error")
			in.Status.Containers[0].RestartCount = 2
			in.Status.Containers = append(in.Status.Containers, prev)
			in.Record.Reasons = map[string]waitingReason{"app": {Reason: reasonCrashLoopBackOff, Message: "back-off 20s restarting failed container"}}
		}, "0/1 CrashLoopBackOff 2 (0s ago)", func(t *testing.T, p *v1.Pod) {
			cs := p.Status.ContainerStatuses[0]
			if cs.State.Waiting == nil || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 || p.Status.Phase != v1.PodRunning {
				t.Errorf("container %+v, phase %s; want waiting, last state terminated with 1, Running", cs, p.Status.Phase)
			}
		}},
		{"its podrun gone without detaching", func(in *listInput) {
			in.Alive = false
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if !strings.Contains(p.Status.Message, "the podrun that ran the pod (pid 4242) is gone") || p.Annotations["io.podrun.owner"] != "pid 4242 (gone)" {
				t.Errorf("message %q, owner %q", p.Status.Message, p.Annotations["io.podrun.owner"])
			}
		}},
		{"detached, a probed container ready beside one that exited: ContainersNotReady, with the note", func(in *listInput) {
			detached(in)
			withReadinessProbe(in)
			readyRecorded(in, "Success")
			in.Manifest.Spec.Containers = append(in.Manifest.Spec.Containers, v1.Container{Name: "side", Image: "busybox"})
			in.Status.Containers = append(in.Status.Containers, &containerStatus{ID: "c2", Name: "side", State: stateExited, ExitCode: 2, Reason: "Error"})
		}, "1/2 Error 0", func(t *testing.T, p *v1.Pod) {
			c := podCondition(p, v1.PodReady)
			if c.Status != v1.ConditionFalse || c.Reason != reasonContainersNotReady || !strings.Contains(c.Message, "[side]") || !strings.Contains(c.Message, "app: Success at") {
				t.Errorf("Ready %+v, want False, ContainersNotReady for side, with app's recorded result", c)
			}
		}},
		{"being torn down: Terminating", func(in *listInput) {
			g := int64(30)
			in.Record.Deleting, in.Record.GracePeriod = &lt1, &g
		}, "1/1 Terminating 0", func(t *testing.T, p *v1.Pod) {
			if p.DeletionTimestamp == nil || !p.DeletionTimestamp.Time.Equal(lt1) || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
				t.Errorf("deletion %v, grace %v", p.DeletionTimestamp, p.DeletionGracePeriodSeconds)
			}
		}},
		{"the conditions keep the transition times recorded while unchanged", func(in *listInput) {
			in.Record.Conditions = []v1.PodCondition{
				{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(lt1)},
				{Type: v1.PodInitialized, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(lt0)},
			}
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if c := podCondition(p, v1.PodReady); !c.LastTransitionTime.Time.Equal(lt1) {
				t.Errorf("Ready transition %v, want %v", c.LastTransitionTime, lt1)
			}
			if c := podCondition(p, v1.PodInitialized); !c.LastTransitionTime.IsZero() {
				t.Errorf("Initialized changed since it was recorded: transition %v, want none", c.LastTransitionTime)
			}
		}},
		{"no record yet: started when the first sandbox was", func(in *listInput) {
			in.Record = statusRecord{}
			in.FirstSandbox = lt1
		}, "1/1 Running 0", func(t *testing.T, p *v1.Pod) {
			if !p.CreationTimestamp.Time.Equal(lt1) {
				t.Errorf("creationTimestamp %v, want the first sandbox's %v", p.CreationTimestamp, lt1)
			}
		}},
		{"no manifest: Unknown, with why, and the sandbox's IP", func(in *listInput) {
			in.Manifest, in.ManifestErr = nil, errors.New("open /x/podrun-pod.json: permission denied")
		}, "0/0 Unknown 0", func(t *testing.T, p *v1.Pod) {
			if p.Name != "web" || p.Namespace != "default" || p.UID != "uid-web" || p.Status.PodIP != "10.88.0.5" ||
				!strings.Contains(p.Status.Message, "permission denied") {
				t.Errorf("pod %+v", p)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseListInput()
			tc.mutate(&in)
			manifest := in.Manifest
			var before *v1.Pod
			if manifest != nil {
				before = manifest.DeepCopy()
			}
			p := listedPod(in)
			s := podlist.Summarize(p)
			if got := s.ReadyText() + " " + s.Status + " " + s.RestartsText(lt1); got != tc.row {
				t.Errorf("READY STATUS RESTARTS = %q, want %q", got, tc.row)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
			if manifest != nil && len(manifest.Annotations) != len(before.Annotations) {
				t.Errorf("listedPod changed the lister's manifest")
			}
		})
	}
}

func TestOwnerText(t *testing.T) {
	for _, tc := range []struct {
		alive, detached bool
		want            string
	}{
		{true, false, "pid 42"},
		{true, true, "pid 42"}, // a podrun -d still waiting runs it
		{false, true, "detached"},
		{false, false, "pid 42 (gone)"},
	} {
		if got := ownerText(42, tc.alive, tc.detached); got != tc.want {
			t.Errorf("ownerText(alive %v, detached %v) = %q, want %q", tc.alive, tc.detached, got, tc.want)
		}
	}
}

func TestListedPodDir(t *testing.T) {
	for _, tc := range []struct {
		root, uid string
		ok        bool
	}{
		{"/var/lib/podrun", "1234-abcd", true},
		{"", "1234", false},
		{"relative", "1234", false},
		{"/r", "", false},
		{"/r", "..", false},
		{"/r", "../etc", false},
		{"/r", "a/b", false},
	} {
		if _, ok := listedPodDir(tc.root, tc.uid); ok != tc.ok {
			t.Errorf("listedPodDir(%q, %q) ok = %v, want %v", tc.root, tc.uid, ok, tc.ok)
		}
	}
}
