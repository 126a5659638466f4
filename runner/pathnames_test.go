package runner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestCheckPathNames: a pod whose log dir name, <namespace>_<name>_<uid>,
// is longer than a file name may be is refused before anything is made:
// the API server takes a 63-byte namespace with a 253-byte name, the
// runtime could not create the dir, and the run failed at its sandbox.
func TestCheckPathNames(t *testing.T) {
	const uid = "6c1f2e9a-0b3d-5e4f-8a7b-9c0d1e2f3a4b" // podrun's UIDs: 36 bytes
	pod := func(ns, name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
	}
	ns63, name253 := strings.Repeat("n", 63), strings.Repeat("x", 253)
	for _, tc := range []struct {
		name string
		pods []*v1.Pod
		want []string // one line per pod refused
	}{
		{"short names", []*v1.Pod{pod("default", "web")}, nil},
		// 255 bytes: 217 bytes of names, two underscores and the UID.
		{"at the limit", []*v1.Pod{pod("default", strings.Repeat("x", 210))}, nil},
		{"one byte over", []*v1.Pod{pod("default", strings.Repeat("x", 211))}, []string{
			"pod default/" + strings.Repeat("x", 211) + ": metadata.name: the pod's log dir <namespace>_<name>_<uid> would be a file name of 256 bytes, " +
				"longer than the 255 bytes a file name may have (NAME_MAX), and could not be created: " +
				"metadata.namespace and metadata.name may have at most 217 bytes together (they have 218)"}},
		{"the longest namespace and name the API server takes", []*v1.Pod{pod("default", "web"), pod(ns63, name253)}, []string{
			"pod " + ns63 + "/" + name253 + ": metadata.name: the pod's log dir <namespace>_<name>_<uid> would be a file name of 354 bytes, " +
				"longer than the 255 bytes a file name may have (NAME_MAX), and could not be created: " +
				"metadata.namespace and metadata.name may have at most 217 bytes together (they have 316)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPathNames(tc.pods)
			switch {
			case len(tc.want) == 0 && err != nil:
				t.Errorf("checkPathNames = %v, want nil", err)
			case len(tc.want) > 0 && (err == nil || err.Error() != strings.Join(tc.want, "\n")):
				t.Errorf("checkPathNames = %v\nwant %s", err, strings.Join(tc.want, "\n"))
			}
			for _, p := range tc.pods {
				if n := len(podLogDirName(p.Namespace, p.Name, string(p.UID))); (n > nameMax) != (len(tc.want) > 0 && p.Name != "web") {
					t.Errorf("the log dir name of %s is %d bytes: the check disagrees", p.Name, n)
				}
			}
		})
	}
}
