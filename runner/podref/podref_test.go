package podref

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestNamed: the pods arguments name, for every command that takes pods.
// Each row takes its pods from one of three sets: one pod (what an
// argument matches), three pods of every root dir (several arguments, the
// pods' order, the arguments that name none), and pods of other root dirs
// only (where an argument's pods are when none is in scope).
func TestNamed(t *testing.T) {
	one := []Ref{{Namespace: "shop", Name: "web", UID: "1234-abcd"}}
	three := []Ref{
		{Namespace: "default", Name: "web", UID: "uid-default-web"},
		{Namespace: "shop", Name: "web", UID: "uid-shop-web"},
		{Namespace: "shop", Name: "db", UID: "uid-shop-db"},
	}
	web1 := Ref{Namespace: "default", Name: "web", UID: "u1", Root: "/ci/job1"}
	web2 := Ref{Namespace: "shop", Name: "web", UID: "u2", Root: "/ci/job2"}
	db := Ref{Namespace: "default", Name: "db", UID: "u3", Root: "/ci/job1"}
	here := Ref{Namespace: "default", Name: "api", UID: "u4", Root: "/var/lib/podrun"}
	others := []Ref{web1, web2, db, web1, here} // web1 twice: two sandboxes of it
	s := Scope{Root: "/var/lib/podrun"}

	for _, tc := range []struct {
		name  string
		pods  []Ref
		scope Scope
		args  []string
		want  []string // namespace/name of the pods named, in the pods' order
		err   string   // the errors, one a line
	}{
		{"NAME", one, Scope{}, []string{"web"}, []string{"shop/web"}, ""},
		{"NAMESPACE/NAME", one, Scope{}, []string{"shop/web"}, []string{"shop/web"}, ""},
		{"UID", one, Scope{}, []string{"1234-abcd"}, []string{"shop/web"}, ""},
		{"NAME in another namespace", one, Scope{}, []string{"default/web"}, nil, `no podrun pod "default/web"`},
		{"a namespace without a name", one, Scope{}, []string{"shop/"}, nil, `no podrun pod "shop/"`},
		{"a name without a namespace", one, Scope{}, []string{"/web"}, nil, `no podrun pod "/web"`},
		{"part of a name", one, Scope{}, []string{"we"}, nil, `no podrun pod "we"`},
		{"a namespace", one, Scope{}, []string{"shop"}, nil, `no podrun pod "shop"`},

		{"no arguments: none", three, Scope{}, nil, nil, ""},
		{"NAME of pods in two namespaces: both", three, Scope{}, []string{"web"}, []string{"default/web", "shop/web"}, ""},
		{"NAMESPACE/NAME: one", three, Scope{}, []string{"shop/web"}, []string{"shop/web"}, ""},
		{"UID: one", three, Scope{}, []string{"uid-shop-db"}, []string{"shop/db"}, ""},
		{"a pod named twice: once", three, Scope{}, []string{"db", "shop/db"}, []string{"shop/db"}, ""},
		{"arguments that name none: an error each", three, Scope{}, []string{"nosuch", "db", "other/web"}, []string{"shop/db"},
			"no podrun pod \"nosuch\"\nno podrun pod \"other/web\""},

		{"nowhere", others, s, []string{"nosuch"}, nil, `no podrun pod "nosuch"`},
		{"in one other root dir", others, s, []string{"db"}, nil,
			`no podrun pod "db" in --root-dir /var/lib/podrun: default/db (uid u3) is of --root-dir /ci/job1; give --root-dir /ci/job1, or --all-roots`},
		{"by UID in another root dir", others, s, []string{"u2"}, nil,
			`no podrun pod "u2" in --root-dir /var/lib/podrun: shop/web (uid u2) is of --root-dir /ci/job2; give --root-dir /ci/job2, or --all-roots`},
		{"in two other root dirs", others, s, []string{"web"}, nil,
			`no podrun pod "web" in --root-dir /var/lib/podrun: default/web (uid u1) is of --root-dir /ci/job1, shop/web (uid u2) is of --root-dir /ci/job2; give its --root-dir, or --all-roots`},
		{"one in scope, one elsewhere", others, s, []string{"api", "db"}, []string{"default/api"},
			`no podrun pod "db" in --root-dir /var/lib/podrun: default/db (uid u3) is of --root-dir /ci/job1; give --root-dir /ci/job1, or --all-roots`},
		{"--all-roots: every root dir's, each sandbox", others, Scope{}, []string{"default/web"}, []string{"default/web", "default/web"}, ""},
		{"--all-roots: nothing is elsewhere", others, Scope{}, []string{"nosuch"}, nil, `no podrun pod "nosuch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			named, err := Named(tc.pods, func(r Ref) Ref { return r }, tc.args, tc.scope)
			var got []string
			for _, r := range named {
				got = append(got, r.Namespace+"/"+r.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Named(%q) = %q, want %q", tc.args, got, tc.want)
			}
			if gotErr := errText(err); gotErr != tc.err {
				t.Errorf("Named(%q): error\n%s\nwant\n%s", tc.args, gotErr, tc.err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A listed pod's reference is its pod's, with the root dir it was listed
// with: ps takes its PODs through it.
func TestListedRef(t *testing.T) {
	it := Listed{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: types.UID("uid-db")}}, Root: "/ci/job1"}
	if got, want := it.Ref(), (Ref{Namespace: "shop", Name: "db", UID: "uid-db", Root: "/ci/job1"}); got != want {
		t.Errorf("Ref = %+v, want %+v", got, want)
	}
}
