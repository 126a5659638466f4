package runner

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webPod has an init container, a sidecar and two regular containers.
func webPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyOnFailure,
			InitContainers: []v1.Container{
				{Name: "setup"},
				{Name: "proxy", RestartPolicy: &always},
			},
			Containers: []v1.Container{{Name: "app"}, {Name: "metrics"}},
		},
	}
}

func webRecord() podContainers {
	return podContainers{RestartPolicy: v1.RestartPolicyOnFailure, Containers: []PodContainer{
		recordedContainer("setup", true, false),
		recordedContainer("proxy", true, true),
		recordedContainer("app", false, false),
		recordedContainer("metrics", false, false),
	}}
}

func TestLogContainers(t *testing.T) {
	one := podContainers{Containers: []PodContainer{recordedContainer("setup", true, false), recordedContainer("app", false, false)}}
	cases := []struct {
		name       string
		rec        podContainers
		annotation string
		container  string
		all        bool
		want       []string
		err        string
		warning    string
	}{
		{name: "the named container", rec: webRecord(), container: "metrics", want: []string{"metrics"}},
		{name: "an init container by name", rec: webRecord(), container: "setup", want: []string{"setup"}},
		{name: "an unknown name", rec: webRecord(), container: "nope", err: "container nope is not valid for pod web"},
		{name: "several containers need a name, all listed, init first", rec: webRecord(),
			err: "a container name must be specified for pod web, choose one of: [setup proxy app metrics]"},
		{name: "the only regular container, whatever the init ones", rec: one, want: []string{"app"}},
		{name: "the default-container annotation", rec: webRecord(), annotation: "metrics", want: []string{"metrics"}},
		{name: "an annotation naming no container warns and falls back", rec: one, annotation: "gone", want: []string{"app"},
			warning: `Default container name "gone" not found in pod web`},
		{name: "-c wins over the annotation", rec: webRecord(), annotation: "metrics", container: "app", want: []string{"app"}},
		{name: "all containers, init first", rec: webRecord(), all: true, want: []string{"setup", "proxy", "app", "metrics"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			got, err := logContainers("web", tc.rec, tc.annotation, tc.container, tc.all, func(s string) { warnings = append(warnings, s) })
			if !expectErr(t, err, tc.err) {
				return
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("containers = %v, want %v", names, tc.want)
			}
			if strings.Join(warnings, "\n") != tc.warning {
				t.Errorf("warnings = %q, want %q", warnings, tc.warning)
			}
		})
	}
}

func TestExecContainer(t *testing.T) {
	single := podContainers{Containers: []PodContainer{recordedContainer("app", false, false)}}
	cases := []struct {
		name       string
		rec        podContainers
		annotation string
		container  string
		want       string
		notice     string
		err        string
	}{
		{name: "a single container, no notice", rec: single, want: "app"},
		{name: "the first of several, with kubectl's notice", rec: webRecord(), want: "app",
			notice: `Defaulted container "app" out of: app, metrics, setup (init), proxy (init)`},
		{name: "a container with init containers beside it gets the notice",
			rec: podContainers{Containers: []PodContainer{recordedContainer("setup", true, false), recordedContainer("app", false, false)}}, want: "app",
			notice: `Defaulted container "app" out of: app, setup (init)`},
		{name: "the named container", rec: webRecord(), container: "metrics", want: "metrics"},
		{name: "a sidecar by name", rec: webRecord(), container: "proxy", want: "proxy"},
		{name: "the annotation's container, no notice", rec: webRecord(), annotation: "metrics", want: "metrics"},
		{name: "an unknown name lists them all", rec: webRecord(), container: "nope",
			err: "container nope is not valid for pod web out of: app, metrics, setup (init), proxy (init)"},
		{name: "an annotation naming no container is an error", rec: webRecord(), annotation: "gone",
			err: "container gone is not valid for pod web out of: app, metrics, setup (init), proxy (init)"},
		{name: "no containers", rec: podContainers{}, err: "pod web does not have any containers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, notice, err := execContainer("web", tc.rec, tc.annotation, tc.container)
			if !expectErr(t, err, tc.err) {
				return
			}
			if c.Name != tc.want || notice != tc.notice {
				t.Errorf("got %q with notice %q, want %q with %q", c.Name, notice, tc.want, tc.notice)
			}
		})
	}
}

func TestRestarts(t *testing.T) {
	regular, initc, sidecar := recordedContainer("app", false, false), recordedContainer("i", true, false), recordedContainer("s", true, true)
	cases := []struct {
		policy v1.RestartPolicy
		c      PodContainer
		code   int32
		want   bool
	}{
		{v1.RestartPolicyAlways, regular, 0, true},
		{v1.RestartPolicyAlways, regular, 1, true},
		{v1.RestartPolicyOnFailure, regular, 0, false},
		{v1.RestartPolicyOnFailure, regular, 2, true},
		{v1.RestartPolicyNever, regular, 2, false},
		{"", regular, 0, true}, // unknown: the default, Always
		{v1.RestartPolicyAlways, initc, 0, false},
		{v1.RestartPolicyAlways, initc, 1, true},
		{v1.RestartPolicyOnFailure, initc, 1, true},
		{v1.RestartPolicyNever, initc, 1, false},
		{v1.RestartPolicyNever, sidecar, 0, true},
	}
	for _, tc := range cases {
		if got := restarts(tc.policy, tc.c, tc.code); got != tc.want {
			t.Errorf("restarts(%q, %+v, exit %d) = %v, want %v", tc.policy, tc.c, tc.code, got, tc.want)
		}
	}
}

func TestLogInstance(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	running := func(id string, n int) *containerStatus {
		return &containerStatus{ID: id, Name: "app", State: stateRunning, RestartCount: n, CreatedAt: at(n)}
	}
	exited := func(id string, n int, code int32) *containerStatus {
		return &containerStatus{ID: id, Name: "app", State: stateExited, RestartCount: n, ExitCode: code, CreatedAt: at(n)}
	}
	created := func(id string, n int) *containerStatus {
		return &containerStatus{ID: id, Name: "app", State: stateCreated, RestartCount: n, CreatedAt: at(n)}
	}
	app := recordedContainer("app", false, false)
	cases := []struct {
		name      string
		policy    v1.RestartPolicy
		instances []*containerStatus
		previous  bool
		want      string
		err       string

		unsupervised bool // no podrun looks after the pod (detached)
	}{
		{name: "the running instance", policy: v1.RestartPolicyAlways, instances: []*containerStatus{running("c1", 1), exited("c0", 0, 1)}, want: "c1"},
		{name: "previous: the one before the running one", policy: v1.RestartPolicyAlways,
			instances: []*containerStatus{running("c1", 1), exited("c0", 0, 1)}, previous: true, want: "c0"},
		{name: "previous of a first instance", policy: v1.RestartPolicyAlways, instances: []*containerStatus{running("c0", 0)}, previous: true,
			err: `previous terminated container "app" in pod "web" not found`},
		{name: "an instance that will restart waits: its exit is the last state", policy: v1.RestartPolicyAlways,
			instances: []*containerStatus{exited("c1", 1, 1), exited("c0", 0, 1)}, want: "c1"},
		{name: "previous of one waiting to restart is the one that just exited", policy: v1.RestartPolicyAlways,
			instances: []*containerStatus{exited("c1", 1, 1), exited("c0", 0, 1)}, previous: true, want: "c1"},
		{name: "a terminated instance that stays so", policy: v1.RestartPolicyOnFailure,
			instances: []*containerStatus{exited("c1", 1, 0), exited("c0", 0, 3)}, want: "c1"},
		{name: "previous of a terminated one", policy: v1.RestartPolicyOnFailure,
			instances: []*containerStatus{exited("c1", 1, 0), exited("c0", 0, 3)}, previous: true, want: "c0"},
		{name: "a new instance not started yet: the last one that ran", policy: v1.RestartPolicyAlways,
			instances: []*containerStatus{created("c1", 1), exited("c0", 0, 1)}, want: "c0"},
		{name: "nothing created yet", policy: v1.RestartPolicyAlways,
			err: `container "app" in pod "web" is waiting to start - no logs yet`},
		{name: "created, never started", policy: v1.RestartPolicyNever, instances: []*containerStatus{created("c0", 0)},
			err: `container "app" in pod "web" is waiting to start - no logs yet`},
		// Nobody restarts a detached pod's containers: ps shows one that
		// exited as terminated, and logs reads it the same way.
		{name: "unsupervised: an exited instance stays terminated", policy: v1.RestartPolicyAlways, unsupervised: true,
			instances: []*containerStatus{exited("c0", 0, 3)}, want: "c0"},
		{name: "unsupervised: previous of a first instance that exited", policy: v1.RestartPolicyAlways, unsupervised: true,
			instances: []*containerStatus{exited("c0", 0, 3)}, previous: true,
			err: `previous terminated container "app" in pod "web" not found`},
		{name: "unsupervised: previous is the instance before the exited one", policy: v1.RestartPolicyAlways, unsupervised: true,
			instances: []*containerStatus{exited("c1", 1, 3), exited("c0", 0, 3)}, previous: true, want: "c0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logInstance("web", tc.policy, app, tc.instances, tc.previous, !tc.unsupervised)
			if !expectErr(t, err, tc.err) {
				return
			}
			if got.ID != tc.want {
				t.Errorf("instance %s, want %s", got.ID, tc.want)
			}
		})
	}
}

func TestNewerStarted(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	cur := &containerStatus{ID: "c1", RestartCount: 1, State: stateExited, CreatedAt: at(1)}
	cases := []struct {
		name  string
		insts []*containerStatus
		want  string
	}{
		{"none newer", []*containerStatus{cur, {ID: "c0", RestartCount: 0, State: stateExited, CreatedAt: at(0)}}, ""},
		{"a newer one not started yet", []*containerStatus{{ID: "c2", RestartCount: 2, State: stateCreated, CreatedAt: at(2)}, cur}, ""},
		{"a newer one running", []*containerStatus{{ID: "c2", RestartCount: 2, State: stateRunning, CreatedAt: at(2)}, cur}, "c2"},
		{"the oldest of two newer ones that ran", []*containerStatus{
			{ID: "c3", RestartCount: 3, State: stateRunning, CreatedAt: at(3)},
			{ID: "c2", RestartCount: 2, State: stateExited, CreatedAt: at(2)}, cur}, "c2"},
	}
	for _, tc := range cases {
		got := newerStarted(tc.insts, cur)
		if id := ""; got != nil {
			id = got.ID
			if id != tc.want {
				t.Errorf("%s: got %s, want %q", tc.name, id, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: got none, want %s", tc.name, tc.want)
		}
	}
}

func TestExecState(t *testing.T) {
	tg := ExecTarget{Pod: "shop/web", Container: "app"}
	cases := []struct {
		insts []*containerStatus
		err   string
	}{
		{[]*containerStatus{{ID: "c1", State: stateRunning}, {ID: "c0", State: stateExited}}, ""},
		{[]*containerStatus{{ID: "c1", State: stateExited, ExitCode: 3}}, "cannot exec into container app of pod shop/web: it is not running (exited with code 3)"},
		{[]*containerStatus{{ID: "c1", State: stateCreated}}, "cannot exec into container app of pod shop/web: it is not running (created)"},
		{nil, "cannot exec into container app of pod shop/web: it has not been created"},
	}
	for _, tc := range cases {
		err := execState(tg, tc.insts, "exec into")
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.err {
				t.Errorf("execState = %q, want %q", got, tc.err)
			}
		} else if tc.err != "" {
			t.Errorf("execState = nil, want %q", tc.err)
		}
	}
}

// expectErr fails the test unless err is the error want names ("": none),
// and says whether to go on checking the result (no error was wanted).
func expectErr(t *testing.T, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatal(err)
	case want != "" && (err == nil || err.Error() != want):
		t.Fatalf("err = %v, want %q", err, want)
	}
	return want == ""
}
