package kubeletoracle

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func ptr[T any](v T) *T { return &v }

// basePods are one manifest's outcome on both sides, equal but for what
// differs between any two runs: a one-container pod whose app exited 3
// after printing its host name, address, UID and a time.
func basePods() (podrun, kubelet Side) {
	pod := func(name, uid, ip string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
			Spec:       v1.PodSpec{NodeName: "node1", RestartPolicy: v1.RestartPolicyNever},
			Status: v1.PodStatus{
				Phase: v1.PodFailed,
				PodIP: ip,
				Conditions: []v1.PodCondition{
					{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue},
					{Type: v1.PodInitialized, Status: v1.ConditionTrue},
					{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodFailed"},
				},
				InitContainerStatuses: []v1.ContainerStatus{{
					Name:  "init",
					State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
				}},
				ContainerStatuses: []v1.ContainerStatus{{
					Name:    "app",
					Started: ptr(false),
					State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
						ExitCode: 3, Reason: "Error", Message: "failed in pod " + name + " (" + uid + ")"}},
				}},
			},
		}
	}
	podrun = Side{
		Pod: pod("web", "6f1c2a8e-4b7d-4c3e-9a1f-0123456789ab", "10.88.0.7"),
		Logs: map[string]string{
			"init": "",
			"app":  "host web\nip 10.88.0.7\nuid 6f1c2a8e-4b7d-4c3e-9a1f-0123456789ab\nat Mon Nov 23 20:15:04 UTC 2026\n(stderr) bye\n",
		},
	}
	kubelet = Side{
		Pod: pod("web-node1", "0cc175b9c0f1b6a831c399e269772661", "10.89.0.4"),
		Logs: map[string]string{
			"init": "",
			"app":  "host web-node1\nip 10.89.0.4\nuid 0cc175b9c0f1b6a831c399e269772661\nat Mon Nov 23 20:17:59 UTC 2026\n(stderr) bye\n",
		},
	}
	// The kubelet reports the node it runs on.
	kubelet.Pod.Spec.NodeName = "node1"
	return podrun, kubelet
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(p, k *Side)
		opts   Options
		want   []Diff
	}{
		{name: "the same outcome but for names, UIDs, addresses and times matches"},
		{
			name: "another exit code",
			mutate: func(p, k *Side) {
				k.Pod.Status.ContainerStatuses[0].State.Terminated.ExitCode = 1
			},
			want: []Diff{{Path: "status.containerStatuses[app].state.exitCode", Podrun: "3", Kubelet: "1"}},
		},
		{
			name: "another phase and pod reason",
			mutate: func(p, k *Side) {
				p.Pod.Status.Phase, p.Pod.Status.Reason = v1.PodFailed, "OutOfmemory"
				k.Pod.Status.Reason = "UnexpectedAdmissionError"
				k.Pod.Status.Phase = v1.PodPending
			},
			want: []Diff{
				{Path: "status.phase", Podrun: "Failed", Kubelet: "Pending"},
				{Path: "status.reason", Podrun: "OutOfmemory", Kubelet: "UnexpectedAdmissionError"},
			},
		},
		{
			name: "a condition's reason, and a condition only one side has",
			mutate: func(p, k *Side) {
				k.Pod.Status.Conditions[1].Reason = "PodCompleted"
				k.Pod.Status.Conditions = append(k.Pod.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
			},
			want: []Diff{
				{Path: "status.conditions[Initialized].reason", Podrun: "", Kubelet: "PodCompleted"},
				{Path: "status.conditions[PodScheduled]", Podrun: "<absent>", Kubelet: "True"},
			},
		},
		{
			name: "restartCount within the tolerance",
			mutate: func(p, k *Side) {
				p.Pod.Status.ContainerStatuses[0].RestartCount = 3
				k.Pod.Status.ContainerStatuses[0].RestartCount = 4
			},
			opts: Options{RestartTolerance: 1},
		},
		{
			name: "restartCount beyond the tolerance",
			mutate: func(p, k *Side) {
				p.Pod.Status.ContainerStatuses[0].RestartCount = 2
				k.Pod.Status.ContainerStatuses[0].RestartCount = 4
			},
			opts: Options{RestartTolerance: 1},
			want: []Diff{{Path: "status.containerStatuses[app].restartCount", Podrun: "2", Kubelet: "4"}},
		},
		{
			name: "started unset is started false",
			mutate: func(p, k *Side) {
				k.Pod.Status.ContainerStatuses[0].Started = nil
			},
		},
		{
			name: "ready and started",
			mutate: func(p, k *Side) {
				k.Pod.Status.ContainerStatuses[0].Started = ptr(true)
				k.Pod.Status.ContainerStatuses[0].Ready = true
			},
			want: []Diff{
				{Path: "status.containerStatuses[app].ready", Podrun: "false", Kubelet: "true"},
				{Path: "status.containerStatuses[app].started", Podrun: "false", Kubelet: "true"},
			},
		},
		{
			name: "another state, with its reason and no exit code on the running side",
			mutate: func(p, k *Side) {
				k.Pod.Status.ContainerStatuses[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			},
			want: []Diff{
				{Path: "status.containerStatuses[app].state", Podrun: "terminated", Kubelet: "waiting"},
				{Path: "status.containerStatuses[app].state.reason", Podrun: "Error", Kubelet: "CrashLoopBackOff"},
				{Path: "status.containerStatuses[app].state.exitCode", Podrun: "3", Kubelet: ""},
				{Path: "status.containerStatuses[app].state.message", Podrun: "failed in pod <pod> (<uid>)", Kubelet: ""},
			},
		},
		{
			name: "a termination message that differs beyond names",
			mutate: func(p, k *Side) {
				k.Pod.Status.ContainerStatuses[0].State.Terminated.Message = "failed in pod web-node1 (0cc175b9c0f1b6a831c399e269772661) again"
			},
			want: []Diff{{Path: "status.containerStatuses[app].state.message", Podrun: "failed in pod <pod> (<uid>)", Kubelet: "failed in pod <pod> (<uid>) again"}},
		},
		{
			name: "a container status only one side has",
			mutate: func(p, k *Side) {
				k.Pod.Status.InitContainerStatuses = nil
			},
			want: []Diff{{Path: "status.initContainerStatuses[init]", Podrun: "terminated (Completed)", Kubelet: "<absent>"}},
		},
		{
			name: "output differs on a line",
			mutate: func(p, k *Side) {
				k.Logs["app"] = strings.Replace(k.Logs["app"], "(stderr) bye", "bye", 1)
			},
			want: []Diff{{Path: "output[app] line 5", Podrun: "(stderr) bye", Kubelet: "bye"}},
		},
		{
			name: "output with a line more",
			mutate: func(p, k *Side) {
				k.Logs["app"] += "more\n"
			},
			want: []Diff{{Path: "output[app] line 6", Podrun: "<end>", Kubelet: "more"}},
		},
		{
			name: "output with a line more, as a prefix",
			mutate: func(p, k *Side) {
				k.Logs["app"] += "more\n"
			},
			opts: Options{OutputPrefix: true},
		},
		{
			name: "as a prefix, each stream on its own",
			mutate: func(p, k *Side) {
				p.Logs["app"] = "1\n2\n(stderr) e1\n"
				k.Logs["app"] = "1\n2\n3\n(stderr) e1\n(stderr) e2\n"
			},
			opts: Options{OutputPrefix: true},
		},
		{
			name: "as a prefix, a stderr line that differs",
			mutate: func(p, k *Side) {
				p.Logs["app"] = "1\n(stderr) e1\n"
				k.Logs["app"] = "1\n2\n(stderr) x1\n"
			},
			opts: Options{OutputPrefix: true},
			want: []Diff{{Path: "output[app] stderr line 1", Podrun: "(stderr) e1", Kubelet: "(stderr) x1"}},
		},
		{
			name: "a prefix still differs on a common line",
			mutate: func(p, k *Side) {
				k.Logs["app"] = "host elsewhere\n"
			},
			opts: Options{OutputPrefix: true},
			want: []Diff{{Path: "output[app] line 1", Podrun: "host <pod>", Kubelet: "host elsewhere"}},
		},
		{
			name: "only a final newline differs",
			mutate: func(p, k *Side) {
				k.Logs["app"] = strings.TrimSuffix(k.Logs["app"], "\n")
			},
			want: []Diff{{Path: "output[app] end", Podrun: `"\n"`, Kubelet: `"e"`}},
		},
		{
			name: "output only one side has",
			mutate: func(p, k *Side) {
				delete(p.Logs, "init")
			},
			want: []Diff{{Path: "output[init]", Podrun: "<absent>", Kubelet: "<present>"}},
		},
		{
			name: "the QoS class, a container's volume mounts and user",
			mutate: func(p, k *Side) {
				k.Pod.Status.QOSClass = v1.PodQOSBestEffort
				k.Pod.Status.ContainerStatuses[0].VolumeMounts = []v1.VolumeMountStatus{{Name: "d", MountPath: "/d"}}
				k.Pod.Status.ContainerStatuses[0].User = &v1.ContainerUser{Linux: &v1.LinuxContainerUser{UID: 0, GID: 0}}
			},
			want: []Diff{
				{Path: "status.qosClass", Podrun: "", Kubelet: "BestEffort"},
				{Path: "status.containerStatuses[app].volumeMounts", Podrun: "null", Kubelet: `[{"name":"d","mountPath":"/d"}]`},
				{Path: "status.containerStatuses[app].user", Podrun: "null", Kubelet: `{"linux":{"uid":0,"gid":0}}`},
			},
		},
		{
			name: "both refused the manifest",
			mutate: func(p, k *Side) {
				*p = Side{Refused: "decoding: bad"}
				*k = Side{Refused: "the kubelet did not run the pod"}
			},
		},
		{
			name: "podrun refused what the kubelet ran",
			mutate: func(p, k *Side) {
				*p = Side{Refused: "decoding: unknown field"}
			},
			want: []Diff{{Path: "outcome", Podrun: "refused: decoding: unknown field", Kubelet: "ran (Failed)"}},
		},
		{
			name: "output ignored",
			mutate: func(p, k *Side) {
				k.Logs["app"] = "other\n"
			},
			opts: Options{IgnoreOutput: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, k := basePods()
			if tc.mutate != nil {
				tc.mutate(&p, &k)
			}
			got := Compare(p, k, tc.opts)
			if !reflect.DeepEqual(got.Diffs, tc.want) {
				t.Errorf("Compare:\n got %#v\nwant %#v", got.Diffs, tc.want)
			}
			if got.Match() != (len(tc.want) == 0) {
				t.Errorf("Match() = %v with %d diffs", got.Match(), len(got.Diffs))
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	podrun := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "6f1c2a8e-4b7d-4c3e-9a1f-0123456789ab"}, Spec: v1.PodSpec{NodeName: "vm"}}
	kubelet := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-vm", UID: "0cc175b9c0f1b6a831c399e269772661"}, Spec: v1.PodSpec{NodeName: "vm"}}
	n := newNormalizer(podrun, kubelet)
	for _, tc := range []struct{ in, want string }{
		{"HOSTNAME=web-vm", "HOSTNAME=<pod>"},
		{"HOSTNAME=web", "HOSTNAME=<pod>"},
		{"node vm, not vmlinuz or webserver", "node <node>, not vmlinuz or webserver"},
		{"default_web-vm_0cc175b9c0f1b6a831c399e269772661", "default_<pod>_<uid>"},
		{"uid 6f1c2a8e-4b7d-4c3e-9a1f-0123456789ab", "uid <uid>"},
		{"any uuid 123e4567-e89b-12d3-a456-426614174000", "any uuid <uid>"},
		{"inet 10.88.0.7/16 and 127.0.0.1", "inet <ip>/16 and <ip>"},
		{"version 1.28 is no address", "version 1.28 is no address"},
		{"container " + strings.Repeat("ab", 32), "container <id>"},
		{"0: Mon Nov  2 20:15:04 UTC 2026", "0: <time>"},
		{"Tue Nov 23 20:15:04 2026", "<time>"},
		{"at 2026-11-23T20:15:04.123456789Z and 2026-11-23 20:15:04+00:00", "at <time> and <time>"},
		{"[20:15:04] started", "[<time>] started"},
		{"exit 3", "exit 3"},
	} {
		if got := n.apply(tc.in); got != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := newNormalizer(nil).apply("web 10.0.0.1"); got != "web <ip>" {
		t.Errorf("normalize without pods = %q", got)
	}
}

func TestReportAndTable(t *testing.T) {
	diff := Report{Diffs: []Diff{{Path: "status.phase", Podrun: "Failed", Kubelet: "Pending"}, {Path: "output[app] line 2", Podrun: "a \"b\"", Kubelet: "<end>"}}}
	if got, want := (Report{}).String(), "MATCH"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	wantDiff := "DIFF\n  status.phase: podrun=\"Failed\" kubelet=\"Pending\"\n  output[app] line 2: podrun=\"a \\\"b\\\"\" kubelet=\"<end>\""
	if got := diff.String(); got != wantDiff {
		t.Errorf("String() =\n%s\nwant\n%s", got, wantDiff)
	}
	known := Report{Diffs: []Diff{{Path: "outcome", Podrun: "refused", Kubelet: "ran (Running)", Known: "strict"}}}
	got := Table([]Row{{Name: "pods/a.yaml"}, {Name: "pods/b.yaml", Report: diff}, {Name: "pods/c.yaml", Report: known}, {Name: "pods/d.yaml", Err: "on the kubelet: boom"}})
	want := `MATCH  pods/a.yaml
DIFF   pods/b.yaml
         status.phase: podrun="Failed" kubelet="Pending" [UNDOCUMENTED]
         output[app] line 2: podrun="a \"b\"" kubelet="<end>" [UNDOCUMENTED]
DIFF   pods/c.yaml
         outcome: podrun="refused" kubelet="ran (Running)" [deliberate: strict]
ERROR  pods/d.yaml
         on the kubelet: boom
1 of 4 match; 1 differ only deliberately, 1 undocumented; 1 not compared (ERROR)
`
	if got != want {
		t.Errorf("Table =\n%s\nwant\n%s", got, want)
	}
}
