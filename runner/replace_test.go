package runner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestDecideReplace: which of podrun's sandboxes --replace stops for the
// run's pods, and which running pods refuse the run.
func TestDecideReplace(t *testing.T) {
	const root = "/var/lib/podrun"
	pod := func(ns, name, uid string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
	}
	sandbox := func(id, ns, name, uid, root string) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{Id: id,
			Labels:      map[string]string{labelPodNamespace: ns, labelPodName: name, labelPodUID: uid},
			Annotations: map[string]string{AnnotationRootDir: root}}
	}
	detached := Owner{RunID: "r1", PID: 100, Detached: true}
	attached := Owner{RunID: "r2", PID: 200}
	pods := []*v1.Pod{pod("default", "web", "u-new"), pod("shop", "db", "u-db")}
	for _, tc := range []struct {
		name  string
		cands []replaceCandidate
		want  []string // the sandboxes chosen, by ID
		err   string
	}{
		{name: "nothing running", want: nil},
		{name: "a detached pod of the same UID",
			cands: []replaceCandidate{{Sandbox: sandbox("a", "default", "web", "u-new", root), Owner: detached}},
			want:  []string{"a"}},
		{name: "a detached pod of the same name and another UID (the manifest changed), each of its sandboxes",
			cands: []replaceCandidate{
				{Sandbox: sandbox("a", "default", "web", "u-old", root), Owner: detached},
				{Sandbox: sandbox("b", "default", "web", "u-old", root), Owner: detached},
			},
			want: []string{"a", "b"}},
		{name: "the same name in another namespace, another name, another root dir: not taken",
			cands: []replaceCandidate{
				{Sandbox: sandbox("a", "other", "web", "u1", root), Owner: detached},
				{Sandbox: sandbox("b", "default", "api", "u2", root), Owner: detached},
				{Sandbox: sandbox("c", "default", "web", "u-new", "/ci/job1"), Owner: detached},
			}},
		{name: "a dead run's leftover is reclaim's",
			cands: []replaceCandidate{{Sandbox: sandbox("a", "default", "web", "u-new", root), Owner: attached}}},
		{name: "a pod a live podrun runs attached refuses the run",
			cands: []replaceCandidate{
				{Sandbox: sandbox("a", "shop", "db", "u-db", root), Owner: detached},
				{Sandbox: sandbox("b", "default", "web", "u-old", root), Owner: attached, Alive: true},
				{Sandbox: sandbox("c", "default", "web", "u-old", root), Owner: attached, Alive: true},
			},
			err: "pod default/web: the running pod default/web (uid u-old) is run by podrun pid 200, which is still running: " +
				"--replace replaces a detached pod (podrun -d); stop that run first (its teardown stops the pod)"},
		{name: "a pod handed over to the kubelet refuses the run",
			cands: []replaceCandidate{{Sandbox: sandbox("a", "shop", "db", "u-db", root), Owner: detached, HandedOver: true}},
			err: "pod shop/db: the running pod shop/db (uid u-db) was handed over to the kubelet (podrun handover): " +
				"--replace does not take it from the kubelet; `podrun down shop/db` stops it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chosen, err := decideReplace(pods, tc.cands, root)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error\n%v\nwant\n%s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, sb := range chosen {
				ids = append(ids, sb.Id)
			}
			if strings.Join(ids, " ") != strings.Join(tc.want, " ") {
				t.Errorf("chosen %q, want %q", ids, tc.want)
			}
		})
	}
}

// TestAlreadyRunningMentionsReplace: a second run of a running pod names
// --replace where --replace would take the pod (a detached pod of the
// run's root dir), and `podrun down` always.
func TestAlreadyRunningMentionsReplace(t *testing.T) {
	for _, tc := range []struct {
		e    alreadyRunningError
		want string
	}{
		{alreadyRunningError{Namespace: "default", Name: "web", UID: "u", How: "detached", Replaceable: true},
			"pod default/web (uid u) is already running (detached); stop it with `podrun down default/web`, or run with --replace to stop it and run the pod anew"},
		{alreadyRunningError{Namespace: "default", Name: "web", UID: "u", How: "by podrun pid 7"},
			"pod default/web (uid u) is already running (by podrun pid 7); stop it with `podrun down default/web`"},
		{alreadyRunningError{Namespace: "default", Name: "web", UID: "u", How: "detached", Root: "/ci/job1"},
			"pod default/web (uid u) is already running (detached); stop it with `podrun down --root-dir /ci/job1 default/web`"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v:\n%s\nwant\n%s", tc.e, got, tc.want)
		}
	}
}
