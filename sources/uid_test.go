package sources

import (
	"regexp"
	"testing"
)

var uuidRegexp = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUID(t *testing.T) {
	uid := func(source, data, node string, doc int) string {
		t.Helper()
		set, err := Decode(source, []byte(data), Options{NodeName: node})
		if err != nil {
			t.Fatal(err)
		}
		return string(set.Pods[doc-1].UID)
	}
	twoPods := podYAML + "---\n" + namedPod("web2")
	base := uid("/etc/pods/pod.yaml", podYAML, "node1", 1)
	if !uuidRegexp.MatchString(base) {
		t.Fatalf("UID %q is not a version-5-style UUID", base)
	}
	// A golden value: the scheme is documented; changing it changes
	// every pod's UID, so it must be deliberate.
	if want := objectUID("/etc/pods/pod.yaml", Origin{Doc: 1}, "node1", []byte(podYAML), nil); string(want) != base {
		t.Errorf("UID %s, objectUID %s", base, want)
	}
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"same input", uid("/etc/pods/pod.yaml", podYAML, "node1", 1), true},
		{"leading document separator", uid("/etc/pods/pod.yaml", "---\n"+podYAML, "node1", 1), true},
		{"other path", uid("/etc/pods/other.yaml", podYAML, "node1", 1), false},
		{"relative path resolves to the same file", uid("pod.yaml", podYAML, "node1", 1), false},
		{"other node", uid("/etc/pods/pod.yaml", podYAML, "node2", 1), false},
		{"other content", uid("/etc/pods/pod.yaml", podYAML+"# changed\n", "node1", 1), false},
		{"stdin", uid("-", podYAML, "node1", 1), false},
		{"URL", uid("http://example.com/pod.yaml", podYAML, "node1", 1), false},
		{"first of two documents", uid("/etc/pods/pod.yaml", twoPods, "node1", 1), true},
		{"second of two documents", uid("/etc/pods/pod.yaml", twoPods, "node1", 2), false},
	}
	for _, tt := range tests {
		if (tt.got == base) != tt.same {
			t.Errorf("%s: UID %s, base %s, want same=%t", tt.name, tt.got, base, tt.same)
		}
	}
	if got := uid("-", podYAML, "node1", 1); got != uid("-", podYAML, "node1", 1) {
		t.Error("stdin UID is not deterministic")
	}
	set, err := Decode("-", []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","uid":"keep-me"}}`), Options{})
	if err != nil || set.Secrets[0].UID != "keep-me" {
		t.Errorf("metadata.uid not kept: %v %v", set, err)
	}
}

// TestGivenUID: a pod says whether podrun gave its UID, which the
// hand-over needs (a kubelet can adopt only a pod whose UID the manifest
// has).
func TestGivenUID(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      bool
	}{
		{"no metadata.uid", podYAML, true},
		{"metadata.uid", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"6b1c1a7e-5d2f-4a43-9c1e-0d8f3a2b7c11"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, false},
	} {
		set, err := Decode("/etc/pods/pod.yaml", []byte(tt.doc), Options{NodeName: "node1"})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := set.Pods[0].GivenUID; got != tt.want {
			t.Errorf("%s: GivenUID %t, want %t (UID %s)", tt.name, got, tt.want, set.Pods[0].UID)
		}
	}
}

func TestUIDGolden(t *testing.T) {
	got := objectUID("stdin", Origin{Doc: 1}, "node1", []byte("x"), nil)
	const want = "459c53c3-31db-5cff-ae66-66e118a7ca14"
	if string(got) != want {
		t.Errorf("objectUID = %s, want %s", got, want)
	}
}
