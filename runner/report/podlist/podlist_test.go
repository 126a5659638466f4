package podlist

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/runner/podref"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func running(name string, ready bool) v1.ContainerStatus {
	t := true
	return v1.ContainerStatus{Name: name, Ready: ready, Started: &t,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: ago(time.Minute)}}}
}

func waiting(name, reason string) v1.ContainerStatus {
	f := false
	return v1.ContainerStatus{Name: name, Started: &f, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(name, reason string, code int32) v1.ContainerStatus {
	f := false
	return v1.ContainerStatus{Name: name, Started: &f, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: reason, ExitCode: code}}}
}

// restarted gives a status restarts restarts, the last run ended d ago.
func restarted(s v1.ContainerStatus, restarts int32, d time.Duration) v1.ContainerStatus {
	s.RestartCount = restarts
	s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(d)}
	return s
}

func cond(t v1.PodConditionType, ok bool, reason string) v1.PodCondition {
	s := v1.ConditionFalse
	if ok {
		s = v1.ConditionTrue
	}
	return v1.PodCondition{Type: t, Status: s, Reason: reason}
}

// basePod is the fixture every case starts from: one regular container,
// running and ready, in a Running, Ready pod.
func basePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web", CreationTimestamp: ago(5 * time.Minute)},
		Spec:       v1.PodSpec{NodeName: "node1", Containers: []v1.Container{{Name: "app"}}},
		Status: v1.PodStatus{
			Phase:             v1.PodRunning,
			PodIP:             "10.88.0.5",
			PodIPs:            []v1.PodIP{{IP: "10.88.0.5"}},
			Conditions:        []v1.PodCondition{cond(v1.PodInitialized, true, ""), cond(v1.PodReady, true, ""), cond(v1.PodScheduled, true, "")},
			ContainerStatuses: []v1.ContainerStatus{running("app", true)},
		},
	}
}

func sidecarSpec(name string) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	return v1.Container{Name: name, RestartPolicy: &always}
}

func setCond(p *v1.Pod, c v1.PodCondition) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == c.Type {
			p.Status.Conditions[i] = c
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(p *v1.Pod)
		ready    string
		status   string
		restarts string
	}{
		{"a running ready container", func(p *v1.Pod) {}, "1/1", "Running", "0"},
		{"a running container whose readiness probe fails", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0].Ready = false
			setCond(p, cond(v1.PodReady, false, "ContainersNotReady"))
		}, "0/1", "Running", "0"},
		{"pending with no container status yet: the phase", func(p *v1.Pod) {
			p.Status.Phase, p.Status.ContainerStatuses = v1.PodPending, nil
		}, "0/1", "Pending", "0"},
		{"a container being created", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Status.ContainerStatuses[0] = waiting("app", "ContainerCreating")
		}, "0/1", "ContainerCreating", "0"},
		{"an image that does not pull", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Status.ContainerStatuses[0] = waiting("app", "ErrImagePull")
		}, "0/1", "ErrImagePull", "0"},
		{"a waiting container without a reason: the phase", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Status.ContainerStatuses[0] = waiting("app", "")
		}, "0/1", "Pending", "0"},
		{"a crash loop: the waiting reason, restarts with the last one's age", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0] = restarted(waiting("app", "CrashLoopBackOff"), 3, 10*time.Second)
		}, "0/1", "CrashLoopBackOff", "3 (10s ago)"},
		{"a restarted container running again", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0] = restarted(running("app", true), 1, 3*time.Minute)
		}, "1/1", "Running", "1 (3m ago)"},
		{"restarts without a recorded last run: the count alone", func(p *v1.Pod) {
			p.Status.ContainerStatuses[0].RestartCount = 2
		}, "1/1", "Running", "2"},
		{"a container that completed", func(p *v1.Pod) {
			p.Status.Phase = v1.PodSucceeded
			p.Status.ContainerStatuses[0] = terminated("app", "Completed", 0)
		}, "0/1", "Completed", "0"},
		{"a container that failed", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Status.ContainerStatuses[0] = terminated("app", "Error", 1)
		}, "0/1", "Error", "0"},
		{"killed for memory", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Status.ContainerStatuses[0] = terminated("app", "OOMKilled", 137)
		}, "0/1", "OOMKilled", "0"},
		{"terminated without a reason: the exit code", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Status.ContainerStatuses[0] = terminated("app", "", 3)
		}, "0/1", "ExitCode:3", "0"},
		{"terminated without a reason, by a signal", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Status.ContainerStatuses[0] = terminated("app", "", 137)
			p.Status.ContainerStatuses[0].State.Terminated.Signal = 9
		}, "0/1", "Signal:9", "0"},
		{"the first container's reason wins", func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			p.Status.ContainerStatuses = []v1.ContainerStatus{waiting("app", "CrashLoopBackOff"), running("b", true)}
		}, "1/2", "CrashLoopBackOff", "0"},
		{"one completed beside one running, pod ready: Running", func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			p.Status.ContainerStatuses = []v1.ContainerStatus{terminated("app", "Completed", 0), running("b", true)}
		}, "1/2", "Running", "0"},
		{"one completed beside one running, pod not ready: NotReady", func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			p.Status.ContainerStatuses = []v1.ContainerStatus{terminated("app", "Completed", 0), running("b", true)}
			setCond(p, cond(v1.PodReady, false, "ContainersNotReady"))
		}, "1/2", "NotReady", "0"},
		{"one completed beside one failed: the failure", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			p.Status.ContainerStatuses = []v1.ContainerStatus{terminated("app", "Completed", 0), terminated("b", "Error", 2)}
		}, "0/2", "Error", "0"},
		{"one completed beside one not ready and one completed: Completed", func(p *v1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "b"})
			p.Status.ContainerStatuses = []v1.ContainerStatus{terminated("app", "Completed", 0), running("b", false)}
		}, "0/2", "Completed", "0"},
		{"an init container not started yet: Init:0/1", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{waiting("init", "PodInitializing")}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/1", "Init:0/1", "0"},
		{"an init container running: Init:0/1", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{running("init", false)}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/1", "Init:0/1", "0"},
		{"the second of two init containers running: Init:1/2", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{terminated("i1", "Completed", 0), running("i2", false)}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/1", "Init:1/2", "0"},
		{"an init container that failed: Init:Error", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{terminated("init", "Error", 1)}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/1", "Init:Error", "0"},
		{"an init container that failed without a reason: Init:ExitCode", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{terminated("init", "", 2)}
			setCond(p, cond(v1.PodInitialized, false, ""))
		}, "0/1", "Init:ExitCode:2", "0"},
		{"an init container killed by a signal: Init:Signal", func(p *v1.Pod) {
			p.Status.Phase = v1.PodFailed
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{terminated("init", "", 137)}
			p.Status.InitContainerStatuses[0].State.Terminated.Signal = 9
			setCond(p, cond(v1.PodInitialized, false, ""))
		}, "0/1", "Init:Signal:9", "0"},
		{"an init container in a crash loop: Init:CrashLoopBackOff with its restarts", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{restarted(waiting("init", "CrashLoopBackOff"), 2, 20*time.Second)}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/1", "Init:CrashLoopBackOff", "2 (20s ago)"},
		{"init done, the regular container not created yet: PodInitializing", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{terminated("init", "Completed", 0)}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
		}, "0/1", "PodInitializing", "0"},
		{"init done: an init container's restarts no longer count", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{restarted(terminated("init", "Completed", 0), 2, time.Minute)}
		}, "1/1", "Running", "0"},
		{"initialised, an init container waiting again: the containers' reason", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{waiting("init", "PodInitializing")}
			p.Status.ContainerStatuses[0] = waiting("app", "CrashLoopBackOff")
		}, "0/1", "CrashLoopBackOff", "0"},
		{"initialised, an init container waiting again, the container running: kubectl keeps Init:0/1", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{waiting("init", "PodInitializing")}
		}, "1/1", "Init:0/1", "0"},
		{"a started, ready sidecar counts as a container", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{sidecarSpec("proxy")}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{running("proxy", true)}
		}, "2/2", "Running", "0"},
		{"a started sidecar that is not ready", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{sidecarSpec("proxy")}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{running("proxy", false)}
		}, "1/2", "Running", "0"},
		{"a sidecar not started yet: Init:0/1", func(p *v1.Pod) {
			p.Status.Phase = v1.PodPending
			p.Spec.InitContainers = []v1.Container{sidecarSpec("proxy")}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{waiting("proxy", "")}
			p.Status.ContainerStatuses[0] = waiting("app", "PodInitializing")
			setCond(p, cond(v1.PodInitialized, false, "ContainersNotInitialized"))
		}, "0/2", "Init:0/1", "0"},
		{"a sidecar's restarts count after initialisation, with the regular containers'", func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "init"}, sidecarSpec("proxy")}
			p.Status.InitContainerStatuses = []v1.ContainerStatus{
				restarted(terminated("init", "Completed", 0), 4, time.Second),
				restarted(running("proxy", true), 1, 90*time.Second),
			}
			p.Status.ContainerStatuses[0] = restarted(running("app", true), 2, 2*time.Hour)
		}, "2/2", "Running", "3 (90s ago)"},
		{"the pod's status.reason: an admission rejection", func(p *v1.Pod) {
			p.Status = v1.PodStatus{Phase: v1.PodFailed, Reason: "OutOfcpu", Message: "Pod Node didn't have enough resource: cpu"}
		}, "0/1", "OutOfcpu", "0"},
		{"a scheduling gate", func(p *v1.Pod) {
			p.Status = v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{cond(v1.PodScheduled, false, v1.PodReasonSchedulingGated)}}
		}, "0/1", "SchedulingGated", "0"},
		{"being deleted while running: Terminating", func(p *v1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: now}
		}, "1/1", "Terminating", "0"},
		{"being deleted after it succeeded: Completed", func(p *v1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: now}
			p.Status.Phase = v1.PodSucceeded
			p.Status.ContainerStatuses[0] = terminated("app", "Completed", 0)
		}, "0/1", "Completed", "0"},
		{"being deleted on a lost node: Unknown", func(p *v1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: now}
			p.Status.Reason = "NodeLost"
		}, "1/1", "Unknown", "0"},
		{"phase Unknown: the phase", func(p *v1.Pod) {
			p.Status = v1.PodStatus{Phase: v1.PodUnknown}
		}, "0/1", "Unknown", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := basePod()
			tc.mutate(p)
			s := Summarize(p)
			got := []string{s.ReadyText(), s.Status, s.RestartsText(now)}
			if want := []string{tc.ready, tc.status, tc.restarts}; !slices.Equal(got, want) {
				t.Errorf("READY STATUS RESTARTS = %q, want %q", got, want)
			}
		})
	}
}

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-3 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{59 * time.Second, "59s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{2*time.Minute + 5*time.Second, "2m5s"},
		{9*time.Minute + 59*time.Second, "9m59s"},
		{10*time.Minute + 30*time.Second, "10m"},
		{179 * time.Minute, "179m"},
		{3 * time.Hour, "3h"},
		{7*time.Hour + 59*time.Minute, "7h59m"},
		{8*time.Hour + 30*time.Minute, "8h"},
		{47 * time.Hour, "47h"},
		{50 * time.Hour, "2d2h"},
		{8 * 24 * time.Hour, "8d"},
		{3 * 365 * 24 * time.Hour, "3y"},
	} {
		if got := Age(tc.d); got != tc.want {
			t.Errorf("Age(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestColumnsAndRows(t *testing.T) {
	web := basePod()
	db := basePod()
	db.Name, db.Namespace, db.UID = "db", "shop", "uid-db"
	db.Spec.NodeName, db.Status.PodIPs, db.CreationTimestamp = "", nil, metav1.Time{}
	items := []podref.Listed{{Pod: web, Run: "a1b2", Owner: "detached"}, {Pod: db}}

	one := ColumnsFor(items[:1], false)
	if got, want := one.Header(), []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"}; !slices.Equal(got, want) {
		t.Errorf("header = %q, want %q", got, want)
	}
	if got, want := one.Row(items[0], now), []string{"web", "1/1", "Running", "0", "5m", "10.88.0.5"}; !slices.Equal(got, want) {
		t.Errorf("row = %q, want %q", got, want)
	}
	both := ColumnsFor(items, true)
	if got, want := both.Header(), []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "RUN", "OWNER"}; !slices.Equal(got, want) {
		t.Errorf("wide header across namespaces = %q, want %q", got, want)
	}
	if got, want := both.Row(items[0], now), []string{"default", "web", "1/1", "Running", "0", "5m", "10.88.0.5", "node1", "a1b2", "detached"}; !slices.Equal(got, want) {
		t.Errorf("wide row = %q, want %q", got, want)
	}
	if got, want := both.Row(items[1], now), []string{"shop", "db", "1/1", "Running", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"}; !slices.Equal(got, want) {
		t.Errorf("wide row of a pod without IP, node, age, run or owner = %q, want %q", got, want)
	}
}

func TestRootColumn(t *testing.T) {
	web := basePod()
	items := []podref.Listed{{Pod: web, Run: "a1b2", Owner: "detached", Root: "/ci/job1"}, {Pod: basePod()}}
	cols := ColumnsFor(items[:1], true)
	cols.Root = true
	if got, want := cols.Header(), []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "RUN", "OWNER", "ROOT"}; !slices.Equal(got, want) {
		t.Errorf("header = %q, want %q", got, want)
	}
	if got := cols.Row(items[0], now); got[len(got)-1] != "/ci/job1" {
		t.Errorf("row %q, want the root dir last", got)
	}
	if got := cols.Row(items[1], now); got[len(got)-1] != "<none>" {
		t.Errorf("row of a pod without a root dir %q, want <none> last", got)
	}
}

func TestWatchChanged(t *testing.T) {
	web, db := basePod(), basePod()
	db.Name, db.UID = "db", "uid-db"
	names := func(its []podref.Listed) []string {
		var out []string
		for _, it := range its {
			out = append(out, it.Pod.Name+" "+Summarize(it.Pod).Status)
		}
		return out
	}
	w := NewWatch()
	check := func(step string, items []podref.Listed, want ...string) {
		t.Helper()
		if got := names(w.Changed(items)); !slices.Equal(got, want) {
			t.Errorf("%s: rows %q, want %q", step, got, want)
		}
	}
	check("first listing: every pod", []podref.Listed{{Pod: web}, {Pod: db}}, "web Running", "db Running")
	check("nothing changed", []podref.Listed{{Pod: web}, {Pod: db}})

	older := web.DeepCopy()
	older.CreationTimestamp = ago(time.Hour)
	check("only the age changed", []podref.Listed{{Pod: older}, {Pod: db}})

	crashed := web.DeepCopy()
	crashed.Status.ContainerStatuses[0] = restarted(waiting("app", "CrashLoopBackOff"), 1, time.Second)
	check("a container restarts", []podref.Listed{{Pod: crashed}, {Pod: db}}, "web CrashLoopBackOff")
	check("the owner changes", []podref.Listed{{Pod: crashed}, {Pod: db, Owner: "detached"}}, "db Running")

	deleting := crashed.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	check("torn down", []podref.Listed{{Pod: deleting}, {Pod: db, Owner: "detached"}}, "web Terminating")
	check("gone: its last state once more", []podref.Listed{{Pod: db, Owner: "detached"}}, "web Terminating")
	check("gone stays gone", []podref.Listed{{Pod: db, Owner: "detached"}})
}

func TestList(t *testing.T) {
	l := List([]*v1.Pod{basePod()})
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		APIVersion, Kind string
		Items            []v1.Pod
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.APIVersion != "v1" || back.Kind != "List" || len(back.Items) != 1 ||
		back.Items[0].Kind != "Pod" || back.Items[0].APIVersion != "v1" || back.Items[0].Status.PodIP != "10.88.0.5" {
		t.Errorf("List = %s", b)
	}
	if b, _ := json.Marshal(List(nil)); string(b) != `{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}` {
		t.Errorf("empty List = %s, want an empty items array", b)
	}
}

func TestTable(t *testing.T) {
	var tb Table
	got := tb.Lines([][]string{
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"},
		{"web", "1/1", "Running", "0", "5m", "10.88.0.5"},
		{"a-long-pod-name", "0/1", "CrashLoopBackOff", "3 (10s ago)", "119s", "<none>"},
	})
	want := []string{
		"NAME              READY   STATUS             RESTARTS      AGE    IP",
		"web               1/1     Running            0             5m     10.88.0.5",
		"a-long-pod-name   0/1     CrashLoopBackOff   3 (10s ago)   119s   <none>",
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A later row keeps the widths; a wider cell widens its column.
	got = tb.Lines([][]string{{"db", "1/1", "Running", "0", "1s", "10.88.0.6"}, {"x", "1/1", "ContainerCreatingLonger", "0", "1s", "<none>"}})
	want = []string{
		"db                1/1     Running                   0             1s     10.88.0.6",
		"x                 1/1     ContainerCreatingLonger   0             1s     <none>",
	}
	if !slices.Equal(got, want) {
		t.Errorf("later lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
