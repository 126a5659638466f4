package runner

import (
	"reflect"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestFindPod(t *testing.T) {
	sb := func(id, ns, name, uid string, attempt uint32) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{Id: id, Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: ns, Uid: uid, Attempt: attempt},
			Labels: map[string]string{labelPodName: name, labelPodNamespace: ns, labelPodUID: uid}}
	}
	sbs := []*runtimeapi.PodSandbox{
		sb("s1", "default", "web", "u1", 0), sb("s2", "default", "web", "u1", 1),
		sb("s3", "shop", "web", "u2", 0), sb("s4", "shop", "db", "u3", 0),
	}
	cases := []struct {
		arg       string
		uid       string
		sandboxes []string
		err       string
	}{
		{arg: "db", uid: "u3", sandboxes: []string{"s4"}},
		{arg: "default/web", uid: "u1", sandboxes: []string{"s2", "s1"}},
		{arg: "u2", uid: "u2", sandboxes: []string{"s3"}},
		{arg: "web", err: `"web" names several podrun pods: default/web (uid u1), shop/web (uid u2); give NAMESPACE/NAME or the UID`},
		{arg: "nope", err: `no podrun pod "nope"`},
		{arg: "shop/nope", err: `no podrun pod "shop/nope"`},
	}
	for _, tc := range cases {
		p, err := choosePod(tc.arg, sbs)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("choosePod(%q): err = %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("choosePod(%q): %v", tc.arg, err)
			continue
		}
		var ids []string
		for _, s := range p.Sandboxes {
			ids = append(ids, s.Id)
		}
		if p.UID != tc.uid || !reflect.DeepEqual(ids, tc.sandboxes) {
			t.Errorf("choosePod(%q) = %s %v, want %s %v", tc.arg, p.UID, ids, tc.uid, tc.sandboxes)
		}
	}
}
