package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hostPathPod is a pod with one hostPath volume "v" of type typ at path,
// mounted by container c at /v with subPath sub ("" for none).
func hostPathPod(path string, typ v1.HostPathType, sub string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: v1.PodSpec{
		Volumes: []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: ptr(typ)}}}},
		Containers: []v1.Container{{Name: "c", VolumeMounts: []v1.VolumeMount{
			{Name: "other", MountPath: "/o"},
			{Name: "v", MountPath: "/v", SubPath: sub},
		}}},
	}}
}

// TestCheckHostPathSymlinks: a hostPath that is a symlink is followed, as
// the kubelet and the runtime follow it; one that leads nowhere is refused
// whatever its type, and nothing is created through it.
func TestCheckHostPathSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	toDir := link("to-dir", outside)
	toFile := link("to-file", file)
	dangling := link("dangling", filepath.Join(outside, "nothing", "here"))
	danglingFile := link("dangling-file", filepath.Join(outside, "created"))
	loop := link("loop", filepath.Join(dir, "loop"))

	for _, tc := range []struct {
		path string
		typ  v1.HostPathType
		want string // "" for accepted
	}{
		{toDir, v1.HostPathUnset, ""},
		{toDir, v1.HostPathDirectory, ""},
		{toDir, v1.HostPathDirectoryOrCreate, ""},
		{toFile, v1.HostPathFile, ""},
		{toFile, v1.HostPathFileOrCreate, ""},
		{toDir, v1.HostPathFile, "hostPath type check failed: " + toDir + " is not a file (a symlink to " + outside + ")"},
		{toFile, v1.HostPathDirectory, "hostPath type check failed: " + toFile + " is not a directory (a symlink to " + file + ")"},
		{toFile, v1.HostPathSocket, "is not a socket file (a symlink to " + file + ")"},
		{toFile, v1.HostPathCharDev, "is not a character device (a symlink to "},
		{toFile, v1.HostPathBlockDev, "is not a block device (a symlink to "},
		{dangling, v1.HostPathUnset, "hostPath " + dangling + " is a symlink to " + filepath.Join(outside, "nothing", "here") + ", which does not exist"},
		{dangling, v1.HostPathDirectoryOrCreate, "which does not exist: nothing is created through it"},
		{danglingFile, v1.HostPathFileOrCreate, "hostPath " + danglingFile + " is a symlink to " + filepath.Join(outside, "created") + ", which does not exist"},
		{dangling, v1.HostPathDirectory, "which does not exist"},
		{loop, v1.HostPathDirectory, "too many levels of symbolic links"},
	} {
		t.Run(filepath.Base(tc.path)+"/"+string(tc.typ), func(t *testing.T) {
			pod := hostPathPod(tc.path, tc.typ, "")
			pod.Spec.Containers[0].VolumeMounts = pod.Spec.Containers[0].VolumeMounts[1:]
			err := Check(pod, Objects{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), `volume "v": `) {
				t.Fatalf("Check: %v\nwant volume \"v\": ...%s", err, tc.want)
			}
			// The setup refuses it too (a symlink that went away meanwhile).
			if _, err := decideHostPath(&Volume{Kind: KindHostPath, HostPath: tc.path, HostPathType: tc.typ}); err == nil {
				t.Errorf("decideHostPath accepted it")
			}
		})
	}
	for _, v := range []Volume{
		{Kind: KindHostPath, HostPath: dangling, HostPathType: v1.HostPathDirectoryOrCreate},
		{Kind: KindHostPath, HostPath: danglingFile, HostPathType: v1.HostPathFileOrCreate},
	} {
		if err := setUpHostPath(&v); err == nil {
			t.Errorf("setUpHostPath(%s, %s) created through a dangling symlink", v.HostPath, v.HostPathType)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) > 0 {
		t.Errorf("created through a symlink: %s holds %v", outside, entries)
	}
}

// TestCheckSubPathOfAHostPathThroughASymlink: a subPath of a hostPath
// volume that leads out of it through a symlink already there is refused
// before anything is created, naming the field; one that stays inside, or
// does not exist yet, is not.
func TestCheckSubPathOfAHostPathThroughASymlink(t *testing.T) {
	vol := t.TempDir()
	outside := t.TempDir()
	os.Mkdir(filepath.Join(vol, "in"), 0o755)
	os.Symlink(outside, filepath.Join(vol, "abs"))
	os.Symlink("../"+filepath.Base(outside), filepath.Join(vol, "rel"))
	os.Symlink("in", filepath.Join(vol, "inside"))
	os.Symlink("/", filepath.Join(vol, "root"))
	volLink := filepath.Join(t.TempDir(), "vol-link")
	os.Symlink(vol, volLink)

	for _, tc := range []struct {
		volPath, sub, want string
	}{
		{vol, "in", ""},
		{vol, "inside", ""},
		{vol, "inside/new/dir", ""},
		{vol, "missing/dir", ""},
		{volLink, "in", ""}, // the volume's own path may be a symlink
		{vol, "abs", `spec.containers[0].volumeMounts[1].subPath: subPath "abs" of volume "v" leads outside the volume (through a symlink)`},
		{vol, "abs/new", `subPath "abs/new" of volume "v" leads outside the volume`},
		{vol, "rel", `subPath "rel" of volume "v" leads outside the volume`},
		{vol, "root/etc", `subPath "root/etc" of volume "v" leads outside the volume`},
		{volLink, "root", `subPath "root" of volume "v" leads outside the volume`},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			err := Check(hostPathPod(tc.volPath, v1.HostPathDirectory, tc.sub), Objects{})
			// "other" is not a volume of the pod: containerMounts says so
			// at creation, Check has nothing to say about it.
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v\nwant %s", err, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("the check created %v outside the volume", entries)
	}
	if _, err := os.Lstat(filepath.Join(vol, "missing")); !os.IsNotExist(err) {
		t.Errorf("the check created the missing subPath")
	}
}

// TestCheckSubPathExprs: a subPathExpr whose expansion is the same in
// every environment given is judged before anything is created; one that
// depends on what is not known yet is left to the container's creation.
func TestCheckSubPathExprs(t *testing.T) {
	vol := t.TempDir()
	os.Symlink("/etc", filepath.Join(vol, "etc"))
	pod := hostPathPod(vol, v1.HostPathDirectory, "")
	pod.Spec.InitContainers = []v1.Container{{Name: "i"}}
	env := Env{Values: map[string]string{"UP": "..", "ABS": "/etc", "OK": "data", "LINK": "etc", "IP": "192.0.2.1"}}
	other := Env{Values: map[string]string{"UP": "..", "ABS": "/etc", "OK": "data", "LINK": "etc", "IP": "198.51.100.1"}}
	for _, tc := range []struct {
		expr, want string
	}{
		{"$(OK)/x", ""},
		{"$(IP)/..", ""}, // differs between the two: left to creation
		{"$(UP)/x", `spec.initContainers[0].volumeMounts[1].subPathExpr: "$(UP)/x" expands to "../x": unable to provision SubPath ` + "`../x`: must not contain '..'"},
		{"$(ABS)", `spec.initContainers[0].volumeMounts[1].subPathExpr: "$(ABS)" expands to "/etc": error SubPath ` + "`/etc` must not be an absolute path"},
		{"$(NOPE)/x", `spec.initContainers[0].volumeMounts[1].subPathExpr: "$(NOPE)/x": missing value for NOPE`},
		{"$(LINK)/passwd", `spec.initContainers[0].volumeMounts[1].subPathExpr: subPath "etc/passwd" of volume "v" leads outside the volume (through a symlink)`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			c := &pod.Spec.InitContainers[0]
			c.VolumeMounts = []v1.VolumeMount{{Name: "other", MountPath: "/o"}, {Name: "v", MountPath: "/v", SubPathExpr: tc.expr}}
			err := CheckSubPathExprs(pod, c, env, other)
			if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
				t.Fatalf("CheckSubPathExprs: %v\nwant %s", err, tc.want)
			}
		})
	}
	if err := CheckSubPathExprs(pod, &pod.Spec.InitContainers[0]); err != nil {
		t.Errorf("without an environment: %v", err)
	}
}
