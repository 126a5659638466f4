package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnershipMode(t *testing.T) {
	for _, tc := range []struct {
		in       os.FileMode
		readOnly bool
		want     os.FileMode
		ok       bool
	}{
		{0o644, false, 0o664, true},
		{0o400, true, 0o440, true},
		{0o600, false, 0o660, true},
		{os.ModeDir | 0o777, false, os.ModeDir | os.ModeSetgid | 0o777, true},
		{os.ModeDir | 0o700, false, os.ModeDir | os.ModeSetgid | 0o770, true},
		{os.ModeDir | 0o755, true, os.ModeDir | os.ModeSetgid | 0o755, true},
		{os.ModeDir | 0o700, true, os.ModeDir | os.ModeSetgid | 0o750, true},
		{os.ModeSymlink | 0o777, false, os.ModeSymlink | 0o777, false},
	} {
		got, ok := ownershipMode(tc.in, tc.readOnly)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ownershipMode(%v, ro=%v) = %v, %v; want %v, %v", tc.in, tc.readOnly, got, ok, tc.want, tc.ok)
		}
	}
}

// fsType is the filesystem type of the mount at dir ("" if dir is not a
// mount point).
func fsType(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	typ := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 8 && UnescapeOctal(f[4]) == dir {
			for i, x := range f {
				if x == "-" {
					typ = f[i+1]
				}
			}
		}
	}
	return typ
}

func rawMode(t *testing.T, p string) uint32 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Mode & 0o7777
}

func TestSetUp(t *testing.T) {
	needRoot(t)
	podDir := t.TempDir()
	os.Mkdir(filepath.Join(podDir, "volumes"), 0o750)
	os.Mkdir(filepath.Join(podDir, "plugins"), 0o750)
	hostDir := filepath.Join(t.TempDir(), "made", "by", "hostpath")
	pod := dapiPod()
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr[int64](2000)}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("8Mi"))}}},
		{Name: "sticky", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: ptr[int32](0o1777)}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mysecret", DefaultMode: ptr[int32](0o400)}}},
		{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"}, DefaultMode: ptr[int32](0o644)}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: ptr(v1.HostPathDirectoryOrCreate)}}},
	}
	if err := Check(pod, objs); err != nil {
		t.Fatal(err)
	}
	vols, err := Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	set, err := SetUp(podDir, pod, vols)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.TearDown() })
	vdir := func(plugin, name string) string { return filepath.Join(podDir, "volumes", plugin, name) }

	// emptyDir on disk: 0777, then fsGroup's setgid; no mount.
	if p := set.Path("disk"); p != vdir(PluginEmptyDir, "disk") || fsType(t, p) != "" || rawMode(t, p) != 0o2777 {
		t.Errorf("disk: %s fs %q mode %#o; want a plain dir 02777", p, fsType(t, p), rawMode(t, p))
	}
	if _, err := os.Stat(filepath.Join(podDir, "plugins", PluginEmptyDir, "disk", "ready")); err != nil {
		t.Errorf("no ready file: %v", err)
	}
	// Memory: a tmpfs of sizeLimit.
	p := set.Path("mem")
	var sfs unix.Statfs_t
	unix.Statfs(p, &sfs)
	if fsType(t, p) != "tmpfs" || int64(sfs.Blocks)*sfs.Bsize != 8<<20 {
		t.Errorf("mem: fs %q size %d; want a tmpfs of 8Mi", fsType(t, p), int64(sfs.Blocks)*sfs.Bsize)
	}
	// mode 01777 (with fsGroup's setgid on top).
	if m := rawMode(t, set.Path("sticky")); m != 0o3777 {
		t.Errorf("sticky: mode %#o, want 03777", m)
	}
	// The secret on a tmpfs, its file 0400 plus fsGroup's read (0440), group 2000.
	p = set.Path("sec")
	if fsType(t, p) != "tmpfs" {
		t.Errorf("secret volume on %q, want tmpfs", fsType(t, p))
	}
	fi, err := os.Stat(filepath.Join(p, "username"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o440 || fi.Sys().(*syscall.Stat_t).Gid != 2000 {
		t.Errorf("secret file mode %v gid %d, want 0440 and 2000", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid)
	}
	if b, _ := os.ReadFile(filepath.Join(p, "password")); string(b) != "39528$vdg7Jb" {
		t.Errorf("password %q", b)
	}
	// The configMap on disk.
	p = set.Path("cm")
	if p != vdir(PluginConfigMap, "cm") || fsType(t, p) != "" {
		t.Errorf("configMap at %s on %q, want a plain dir", p, fsType(t, p))
	}
	if target, _ := os.Readlink(filepath.Join(p, "SPECIAL_LEVEL")); target != "..data/SPECIAL_LEVEL" {
		t.Errorf("SPECIAL_LEVEL -> %q", target)
	}
	// hostPath: the host's dir, created 0755.
	if set.Path("host") != hostDir || rawMode(t, hostDir) != 0o755 {
		t.Errorf("host: %s mode %#o", set.Path("host"), rawMode(t, hostDir))
	}

	if err := set.TearDown(); err != nil {
		t.Fatal(err)
	}
	if ms, _ := MountsUnder(podDir); len(ms) > 0 {
		t.Errorf("mounted after TearDown: %v", ms)
	}
	if _, err := os.Stat(hostDir); err != nil {
		t.Errorf("TearDown removed the hostPath: %v", err)
	}
}

func TestSetUpFailingMidwayLeavesNothing(t *testing.T) {
	needRoot(t)
	podDir := t.TempDir()
	os.Mkdir(filepath.Join(podDir, "volumes"), 0o750)
	missing := filepath.Join(t.TempDir(), "missing")
	pod := dapiPod()
	pod.Spec.Volumes = []v1.Volume{
		{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mysecret"}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: missing, Type: ptr(v1.HostPathDirectory)}}},
	}
	vols, err := Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SetUp(podDir, pod, vols)
	checkErr(t, err, `setting up volume "host": hostPath type check failed: `+missing+` is not a directory`)
	if ms, _ := MountsUnder(podDir); len(ms) > 0 {
		t.Errorf("left mounted: %v", ms)
	}
	for _, d := range []string{PluginEmptyDir + "/mem", PluginSecret + "/sec"} {
		if _, err := os.Lstat(filepath.Join(podDir, "volumes", d)); !os.IsNotExist(err) {
			t.Errorf("left behind: %s", d)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{
		Volumes: []v1.Volume{
			{Name: "ok", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir, Type: ptr(v1.HostPathDirectory)}}},
			{Name: "gone", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir + "/gone", Type: ptr(v1.HostPathDirectory)}}},
			{Name: "new", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir + "/new", Type: ptr(v1.HostPathDirectoryOrCreate)}}},
			{Name: "claim", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
		},
		Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "ok", MountPath: "/x", SubPath: "/abs"}}}},
	}}
	err := Check(pod, Objects{})
	for _, want := range []string{
		`volume "gone": hostPath type check failed: ` + dir + `/gone is not a directory`,
		`volume "claim": persistentVolumeClaim volumes are not supported`,
		"container \"c\": volumeMount \"ok\": error SubPath `/abs` must not be an absolute path",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v\nwant it to contain %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), `"new"`) {
		t.Errorf("DirectoryOrCreate refused: %v", err)
	}
	if _, err := os.Lstat(dir + "/new"); !os.IsNotExist(err) {
		t.Error("Check created the DirectoryOrCreate path")
	}
}

// MountSource: a mount's host side, the subpath's bind mount for a
// mount with a subPath or subPathExpr.
func TestMountSource(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Volumes: []v1.Volume{{Name: "out", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv"}}}},
		InitContainers: []v1.Container{{Name: "init", VolumeMounts: []v1.VolumeMount{{Name: "host", MountPath: "/h"}}}},
		Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{
			{Name: "out", MountPath: "/out"},
			{Name: "out", MountPath: "/sub", SubPath: "a"},
			{Name: "out", MountPath: "/expr", SubPathExpr: "$(X)"},
		}}},
	}}
	vols, err := Plan(pod, Objects{}, Node{})
	if err != nil {
		t.Fatal(err)
	}
	s := Planned("/pods/u", pod, vols)
	for _, tc := range []struct {
		container string
		index     int
		want      string
	}{
		{"c", 0, "/pods/u/volumes/kubernetes.io~empty-dir/out"},
		{"c", 1, "/pods/u/volume-subpaths/out/c/1"},
		{"c", 2, "/pods/u/volume-subpaths/out/c/2"},
		{"init", 0, "/srv"},
		{"c", 3, ""},
		{"nope", 0, ""},
	} {
		if got := s.MountSource(tc.container, tc.index); got != tc.want {
			t.Errorf("MountSource(%s, %d) = %q, want %q", tc.container, tc.index, got, tc.want)
		}
	}
}
