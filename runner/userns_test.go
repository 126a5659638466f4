package runner

import (
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func usernsPod(name string, hostUsers *bool) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{HostUsers: hostUsers, Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func TestUsernsOptions(t *testing.T) {
	f, tr := false, true
	for _, tc := range []struct {
		name      string
		hostUsers *bool
		base      uint32
		want      *runtimeapi.UserNamespace
	}{
		{"unset: the node's", nil, 0, nil},
		{"true: the node's", &tr, 65536, nil},
		{"false: the pod's", &f, 131072, &runtimeapi.UserNamespace{
			Mode: runtimeapi.NamespaceMode_POD,
			Uids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
			Gids: []*runtimeapi.IDMapping{{HostId: 131072, ContainerId: 0, Length: 65536}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := usernsOptions(usernsPod("p", tc.hostUsers), tc.base)
			if got.String() != tc.want.String() {
				t.Errorf("usernsOptions = %v, want %v", got, tc.want)
			}
			// The sandbox and the container get the same options.
			sb := sandboxConfig(sandboxInput{Pod: usernsPod("p", tc.hostUsers), UsernsBase: tc.base})
			if g := sb.Linux.SecurityContext.NamespaceOptions.UsernsOptions; g.String() != tc.want.String() {
				t.Errorf("sandbox UsernsOptions = %v, want %v", g, tc.want)
			}
			_, ann := sb.Annotations[annotationUsernsBase]
			if ann != (tc.want != nil) {
				t.Errorf("sandbox annotations %v: userns base annotation present %v, want %v", sb.Annotations, ann, tc.want != nil)
			}
			pod := usernsPod("p", tc.hostUsers)
			cc, err := containerConfig(containerInput{Pod: pod, Container: &pod.Spec.Containers[0], UsernsBase: tc.base})
			if err != nil {
				t.Fatal(err)
			}
			if g := cc.Linux.SecurityContext.NamespaceOptions.UsernsOptions; g.String() != tc.want.String() {
				t.Errorf("container UsernsOptions = %v, want %v", g, tc.want)
			}
		})
	}
}

func TestAllocateUsernsBase(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  string
		used func(first uint32) []uint32 // given the uid's first choice
		want func(first uint32) uint32
	}{
		{"free: the uid's slot", "a", func(uint32) []uint32 { return nil }, func(f uint32) uint32 { return f }},
		{"taken: the next slot", "a", func(f uint32) []uint32 { return []uint32{f} }, func(f uint32) uint32 { return f + usernsLength }},
		{"two taken: the one after", "b", func(f uint32) []uint32 { return []uint32{f, f + usernsLength} }, func(f uint32) uint32 { return f + 2*usernsLength }},
		{"another uid: in bounds", "x", func(uint32) []uint32 { return nil }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, err := allocateUsernsBase(tc.uid, map[uint32]bool{})
			if err != nil {
				t.Fatal(err)
			}
			if first < usernsLength || first%usernsLength != 0 || uint64(first)+usernsLength > 1<<31 {
				t.Fatalf("base %d: want a multiple of 65536 in [65536, 2^31-65536]", first)
			}
			if tc.want == nil {
				return
			}
			used := map[uint32]bool{}
			for _, b := range tc.used(first) {
				used[b] = true
			}
			got, err := allocateUsernsBase(tc.uid, used)
			if err != nil {
				t.Fatal(err)
			}
			if w := tc.want(first); got != w || !used[got] {
				t.Errorf("base %d (marked %v), want %d marked", got, used[got], w)
			}
		})
	}
	// Every slot used: an error; only slot 1 free: found by wrapping around.
	used := map[uint32]bool{}
	for n := uint32(1); n <= usernsSlots; n++ {
		used[n*usernsLength] = true
	}
	if _, err := allocateUsernsBase("a", used); err == nil || !strings.Contains(err.Error(), "no free") {
		t.Errorf("all used: err %v, want no free range", err)
	}
	delete(used, usernsLength)
	if b, err := allocateUsernsBase("a", used); err != nil || b != usernsLength {
		t.Errorf("only slot 1 free: %d, %v; want 65536", b, err)
	}
}

func TestAllocateUserns(t *testing.T) {
	f, tr := false, true
	a, b, c := usernsPod("a", &f), usernsPod("b", &f), usernsPod("c", &tr)
	// Another live pod holds a's first choice.
	aFirst, _ := allocateUsernsBase(string(a.UID), map[uint32]bool{})
	sbs := []*runtimeapi.PodSandbox{
		{Annotations: map[string]string{annotationUsernsBase: "131072"}},
		{Annotations: map[string]string{annotationUsernsBase: strconvU(aFirst)}},
		{Annotations: map[string]string{annotationUsernsBase: "junk"}},
		{},
	}
	got, err := allocateUserns([]*v1.Pod{a, b, c}, sbs)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[string(c.UID)]; ok || len(got) != 2 {
		t.Fatalf("allocations %v: want one for a and b only", got)
	}
	if got[string(a.UID)] == aFirst || got[string(a.UID)] == 131072 || got[string(b.UID)] == 131072 ||
		got[string(a.UID)] == got[string(b.UID)] {
		t.Errorf("allocations %v collide with each other or with live sandboxes (%d, 131072)", got, aFirst)
	}
}

func strconvU(u uint32) string { return strconv.FormatUint(uint64(u), 10) }

func TestUsernsRefusal(t *testing.T) {
	f := false
	pods := []*v1.Pod{usernsPod("a", &f)}
	for _, tc := range []struct {
		name     string
		handlers []*runtimeapi.RuntimeHandler
		want     string // "" : no refusal
	}{
		{"supported", []*runtimeapi.RuntimeHandler{{Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}}}, ""},
		{"not supported", []*runtimeapi.RuntimeHandler{
			{Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}},
			{Name: "runc", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}},
		}, "pod default/a: spec.hostUsers: false needs a user namespace: the runtime's default handler does not support user namespaces"},
		{"no handlers (old runtime)", nil, "reports no default handler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := usernsRefusal(pods, tc.handlers, "")
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}
