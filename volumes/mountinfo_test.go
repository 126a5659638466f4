package volumes

import (
	"slices"
	"strings"
	"testing"
)

// A node's mountinfo: the pods' dirs beside one another, a sibling whose
// name extends the pod's, an escaped space, a mount stacked on another,
// and a line too short to have a mount point.
const nodeMountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
97 22 0:52 / /run/containerd/io.containerd.grpc.v1.cri/sandboxes/abc/shm rw,nosuid shared:50 - tmpfs shm rw,size=65536k
101 22 0:53 / /var/lib/podrun/pods/u1 rw,relatime shared:51 - tmpfs tmpfs rw
102 101 0:54 / /var/lib/podrun/pods/u1/volumes/kubernetes.io~empty-dir/cache rw shared:52 - tmpfs tmpfs rw
103 101 0:55 / /var/lib/podrun/pods/u1/volumes/kubernetes.io~secret/my\040token rw shared:53 - tmpfs tmpfs rw
104 102 0:56 / /var/lib/podrun/pods/u1/volumes/kubernetes.io~empty-dir/cache rw shared:54 - tmpfs tmpfs rw
105 22 0:57 / /var/lib/podrun/pods/u10/volumes/x rw shared:55 - tmpfs tmpfs rw
106 22 0:58 / /var/lib/podrun/pods/u1\134x rw shared:56 - tmpfs tmpfs rw
107 22
`

func TestMountsUnderIn(t *testing.T) {
	for _, tc := range []struct {
		abs  string
		want []string
	}{
		{"/var/lib/podrun/pods/u1", []string{ // deepest (longest) first, equal lengths in the table's order
			"/var/lib/podrun/pods/u1/volumes/kubernetes.io~empty-dir/cache",
			"/var/lib/podrun/pods/u1/volumes/kubernetes.io~secret/my token",
			"/var/lib/podrun/pods/u1/volumes/kubernetes.io~empty-dir/cache",
			"/var/lib/podrun/pods/u1",
		}},
		{"/var/lib/podrun/pods/u1/volumes/kubernetes.io~secret", []string{
			"/var/lib/podrun/pods/u1/volumes/kubernetes.io~secret/my token",
		}},
		{"/var/lib/podrun/pods/u10", []string{"/var/lib/podrun/pods/u10/volumes/x"}},
		{`/var/lib/podrun/pods/u1\x`, []string{`/var/lib/podrun/pods/u1\x`}}, // \134 is a backslash
		{"/var/lib/podrun/pods/u2", nil},
		{"/var/lib/podrun/pods/u", nil}, // a prefix of names is no parent
		{"/run/containerd", []string{"/run/containerd/io.containerd.grpc.v1.cri/sandboxes/abc/shm"}},
	} {
		got, err := mountsUnderIn(strings.NewReader(nodeMountinfo), tc.abs)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("mountsUnderIn(%s) = %q, %v; want %q", tc.abs, got, err, tc.want)
		}
	}
	if got, _ := mountsUnderIn(strings.NewReader(nodeMountinfo), "/"); len(got) != 8 {
		t.Errorf("under / = %q, want every mount point", got)
	}
}

// TestMountsUnderInAllocations: a line that is not below the dir costs no
// allocation, as every pod's teardown reads a table that grows with the
// running pods.
func TestMountsUnderInAllocations(t *testing.T) {
	table := strings.Repeat("97 22 0:52 / /run/containerd/io.containerd.grpc.v1.cri/sandboxes/0123456789abcdef/shm rw,nosuid,nodev,noexec,relatime shared:50 - tmpfs shm rw,size=65536k\n", 500)
	r := strings.NewReader(table)
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(table)
		if ms, err := mountsUnderIn(r, "/var/lib/podrun/pods/u1"); err != nil || len(ms) != 0 {
			t.Fatalf("got %q, %v", ms, err)
		}
	})
	if allocs > 3 { // the scanner and its buffer
		t.Errorf("%v allocations for 500 lines not below the dir, want a scanner's few", allocs)
	}
}
