package podref

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSelect(t *testing.T) {
	mk := func(ns, name string) Listed {
		return Listed{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}}}
	}
	items := []Listed{mk("default", "web"), mk("shop", "web"), mk("shop", "db")}
	names := func(its []Listed) []string {
		var out []string
		for _, it := range its {
			out = append(out, it.Pod.Namespace+"/"+it.Pod.Name)
		}
		return out
	}
	for _, tc := range []struct {
		args    []string
		want    []string
		missing []string
	}{
		{nil, []string{"default/web", "shop/web", "shop/db"}, nil},
		{[]string{"web"}, []string{"default/web", "shop/web"}, nil},
		{[]string{"shop/web"}, []string{"shop/web"}, nil},
		{[]string{"uid-shop-db"}, []string{"shop/db"}, nil},
		{[]string{"db", "shop/db"}, []string{"shop/db"}, nil},
		{[]string{"nosuch", "db", "other/web"}, []string{"shop/db"}, []string{"nosuch", "other/web"}},
	} {
		sel, missing := Select(items, tc.args)
		if !slices.Equal(names(sel), tc.want) || !slices.Equal(missing, tc.missing) {
			t.Errorf("Select(%q) = %q, missing %q; want %q, missing %q", tc.args, names(sel), missing, tc.want, tc.missing)
		}
	}
}
