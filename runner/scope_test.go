package runner

import (
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/podref"
)

// TestHandoverChoiceScope: `podrun handover --all` takes the pods of its
// root dir, as `podrun down --all` does; a pod of another root dir named
// is refused, saying which root dir it is of; --all-roots takes them all.
func TestHandoverChoiceScope(t *testing.T) {
	sb := func(id, name, root string) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{Id: id, State: runtimeapi.PodSandboxState_SANDBOX_READY,
			Labels:      map[string]string{LabelManaged: "true", labelPodName: name, labelPodNamespace: "kube-system", labelPodUID: "uid-" + name},
			Annotations: map[string]string{AnnotationRootDir: root}}
	}
	sbs := []*runtimeapi.PodSandbox{sb("1", "etcd", "/var/lib/podrun"), sb("2", "api", "/var/lib/podrun"), sb("3", "ci-db", "/ci/job1")}
	uids := func(m map[string]*runtimeapi.PodSandbox) []string {
		var out []string
		for uid := range m {
			out = append(out, uid)
		}
		slices.Sort(out)
		return out
	}
	here := podref.Scope{Root: "/var/lib/podrun"}
	for _, tc := range []struct {
		name  string
		args  []string
		all   bool
		scope podref.Scope
		want  []string
		err   string
	}{
		{"--all: the root dir's pods", nil, true, here, []string{"uid-api", "uid-etcd"}, ""},
		{"--all --all-roots: every pod", nil, true, podref.Scope{}, []string{"uid-api", "uid-ci-db", "uid-etcd"}, ""},
		{"a pod of the root dir", []string{"etcd"}, false, here, []string{"uid-etcd"}, ""},
		{"a pod of another root dir", []string{"ci-db"}, false, here, []string{},
			`no podrun pod "ci-db" in --root-dir /var/lib/podrun: kube-system/ci-db (uid uid-ci-db) is of --root-dir /ci/job1; give --root-dir /ci/job1, or --all-roots`},
		{"a pod of another root dir, --all-roots", []string{"ci-db"}, false, podref.Scope{}, []string{"uid-ci-db"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := handoverChoice(sbs, tc.args, tc.all, tc.scope)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.err == "" && !slices.Equal(uids(got), tc.want):
				t.Errorf("chosen %q, want %q", uids(got), tc.want)
			}
		})
	}
}
