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

func TestScopeNotFound(t *testing.T) {
	web1 := Ref{Namespace: "default", Name: "web", UID: "u1", Root: "/ci/job1"}
	web2 := Ref{Namespace: "shop", Name: "web", UID: "u2", Root: "/ci/job2"}
	db := Ref{Namespace: "default", Name: "db", UID: "u3", Root: "/ci/job1"}
	others := []Ref{web1, web2, db, web1} // web1 twice: two sandboxes of it
	s := Scope{Root: "/var/lib/podrun"}
	for _, tc := range []struct {
		name  string
		scope Scope
		arg   string
		want  string
	}{
		{"nowhere", s, "nosuch", `no podrun pod "nosuch"`},
		{"in one other root dir", s, "db",
			`no podrun pod "db" in --root-dir /var/lib/podrun: default/db (uid u3) is of --root-dir /ci/job1; give --root-dir /ci/job1, or --all-roots`},
		{"by UID", s, "u2",
			`no podrun pod "u2" in --root-dir /var/lib/podrun: shop/web (uid u2) is of --root-dir /ci/job2; give --root-dir /ci/job2, or --all-roots`},
		{"in two other root dirs", s, "web",
			`no podrun pod "web" in --root-dir /var/lib/podrun: default/web (uid u1) is of --root-dir /ci/job1, shop/web (uid u2) is of --root-dir /ci/job2; give its --root-dir, or --all-roots`},
		{"--all-roots: nothing is elsewhere", Scope{}, "nosuch", `no podrun pod "nosuch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.scope.NotFound(tc.arg, Elsewhere(tc.arg, others)).Error(); got != tc.want {
				t.Errorf("NotFound =\n%s\nwant\n%s", got, tc.want)
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
