package podref

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestScope(t *testing.T) {
	mk := func(name, root string) Listed {
		return Listed{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}, Root: root}
	}
	items := []Listed{mk("a", "/var/lib/podrun"), mk("b", "/ci/job1"), mk("c", "/var/lib/podrun"), mk("d", "")}
	names := func(its []Listed) []string {
		var out []string
		for _, it := range its {
			out = append(out, it.Pod.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		scope   Scope
		in, out []string
	}{
		{"a root dir: its pods", Scope{Root: "/var/lib/podrun"}, []string{"a", "c"}, []string{"b", "d"}},
		{"another root dir", Scope{Root: "/ci/job1"}, []string{"b"}, []string{"a", "c", "d"}},
		{"a root dir without pods", Scope{Root: "/ci/job2"}, nil, []string{"a", "b", "c", "d"}},
		{"--all-roots: every pod, one without a root dir too", Scope{}, []string{"a", "b", "c", "d"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, out := tc.scope.Split(items)
			if !slices.Equal(names(in), tc.in) || !slices.Equal(names(out), tc.out) {
				t.Errorf("Split = %q, %q; want %q, %q", names(in), names(out), tc.in, tc.out)
			}
		})
	}
}

func TestScopeNoneFound(t *testing.T) {
	s := Scope{Root: "/var/lib/podrun"}
	for _, tc := range []struct {
		scope  Scope
		others int
		want   string
	}{
		{s, 0, "No resources found in --root-dir /var/lib/podrun"},
		{s, 1, "No resources found in --root-dir /var/lib/podrun (1 podrun pod of another root dir: --all-roots lists it)"},
		{s, 3, "No resources found in --root-dir /var/lib/podrun (3 podrun pods of other root dirs: --all-roots lists them)"},
		{Scope{}, 0, "No resources found"},
	} {
		if got := tc.scope.NoneFound(tc.others); got != tc.want {
			t.Errorf("NoneFound(%d) = %q, want %q", tc.others, got, tc.want)
		}
	}
}
