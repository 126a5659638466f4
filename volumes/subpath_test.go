package volumes

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestExpandSubPathExpr(t *testing.T) {
	env := map[string]string{"POD_NAME": "web-0", "NS": "shop", "EMPTY": ""}
	for _, tc := range []struct {
		expr, want, err string
	}{
		{"$(POD_NAME)", "web-0", ""},
		{"logs/$(NS)/$(POD_NAME)", "logs/shop/web-0", ""},
		{"$$(POD_NAME)", "$(POD_NAME)", ""},
		{"a$b", "a$b", ""},
		{"unclosed$(POD_NAME", "unclosed$(POD_NAME", ""},
		{"$(MISSING)", "", "missing value for MISSING"},
		{"$(EMPTY)/$(B)/$(A)", "", "missing value for A, B, EMPTY"},
	} {
		got, err := expandSubPathExpr(tc.expr, env)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("expand(%q) = %q, %v; want %q, %q", tc.expr, got, err, tc.want, tc.err)
		}
	}
}

func TestValidateSubPath(t *testing.T) {
	for _, tc := range []struct{ sub, err string }{
		{"a/b", ""},
		{"..a/b..", ""},
		{"/etc", "error SubPath `/etc` must not be an absolute path"},
		{"a/../..", "unable to provision SubPath `a/../..`: must not contain '..'"},
		{"..", "must not contain '..'"},
		{"a\x00b", `error SubPath "a\x00b" must not contain a NUL byte`},
	} {
		err := validateSubPath(tc.sub)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("validateSubPath(%q) = %v, want %q", tc.sub, err, tc.err)
		}
	}
}

func TestContainerMounts(t *testing.T) {
	bidi, h2c, none := v1.MountPropagationBidirectional, v1.MountPropagationHostToContainer, v1.MountPropagationNone
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", VolumeMounts: []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}}}},
		Containers: []v1.Container{{Name: "app", VolumeMounts: []v1.VolumeMount{
			{Name: "cache", MountPath: "/cache", MountPropagation: &h2c},
			{Name: "config", MountPath: "/etc/config"},
			{Name: "host", MountPath: "/host", ReadOnly: true, MountPropagation: &bidi},
			{Name: "cache", MountPath: "/logs", SubPathExpr: "logs/$(POD_NAME)", MountPropagation: &none},
			{Name: "config", MountPath: "/etc/app.conf", SubPath: "app.conf", RecursiveReadOnly: ptr(v1.RecursiveReadOnlyEnabled), ReadOnly: true},
		}}},
	}}
	vols := []Volume{
		{Name: "cache", Kind: KindEmptyDir, SELinuxRelabel: true},
		{Name: "config", Kind: KindConfigMap, ReadOnly: true, SELinuxRelabel: true},
		{Name: "host", Kind: KindHostPath},
	}
	paths := map[string]string{"cache": "/pods/u/volumes/kubernetes.io~empty-dir/cache", "config": "/pods/u/volumes/kubernetes.io~configmap/config", "host": "/srv"}
	got, err := containerMounts(pod, &pod.Spec.Containers[0], vols, paths, &Env{Values: map[string]string{"POD_NAME": "web-0"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []MountRequest{
		{Volume: "cache", Index: 0, Mount: &runtimeapi.Mount{ContainerPath: "/cache", HostPath: paths["cache"], Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}},
		{Volume: "config", Index: 1, Mount: &runtimeapi.Mount{ContainerPath: "/etc/config", HostPath: paths["config"], Readonly: true, SelinuxRelabel: true}},
		{Volume: "host", Index: 2, Mount: &runtimeapi.Mount{ContainerPath: "/host", HostPath: "/srv", Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL}},
		{Volume: "cache", Index: 3, SubPath: "logs/web-0", Shown: "logs/web-0", Mount: &runtimeapi.Mount{ContainerPath: "/logs", HostPath: paths["cache"]}},
		{Volume: "config", Index: 4, SubPath: "app.conf", Shown: "app.conf", Mount: &runtimeapi.Mount{ContainerPath: "/etc/app.conf", HostPath: paths["config"], Readonly: true, RecursiveReadOnly: true}},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range got {
			t.Errorf("mount %d: %+v %v", i, got[i], got[i].Mount)
		}
		t.Fatal("mounts differ")
	}
	// The init container mounts "cache" first: it is the one relabelled.
	got, _ = containerMounts(pod, &pod.Spec.InitContainers[0], vols, paths, &Env{})
	if !got[0].Mount.SelinuxRelabel {
		t.Error("the first mount of cache in the pod is not relabelled")
	}

	_, err = containerMounts(pod, &pod.Spec.Containers[0], vols, paths, &Env{Values: map[string]string{}})
	checkErr(t, err, `volumeMount "cache" of container "app": subPathExpr "logs/$(POD_NAME)": missing value for POD_NAME`)
	bad := v1.Container{Name: "x", VolumeMounts: []v1.VolumeMount{{Name: "cache", SubPathExpr: "$(P)", MountPath: "/x"}}}
	_, err = containerMounts(pod, &bad, vols, paths, &Env{Values: map[string]string{"P": "/etc"}})
	checkErr(t, err, "error SubPath `/etc` must not be an absolute path")
}

func TestCheckMounts(t *testing.T) {
	bidi := v1.MountPropagationBidirectional
	for _, tc := range []struct {
		name string
		c    v1.Container
		err  string
	}{
		{"fine", v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "v", SubPath: "a/b"}}}, ""},
		{"bidirectional, not privileged", v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "v", MountPropagation: &bidi}}},
			`container "c": volumeMount "v": Bidirectional mount propagation is available only to privileged containers`},
		{"bidirectional, privileged", v1.Container{Name: "c", SecurityContext: &v1.SecurityContext{Privileged: ptr(true)},
			VolumeMounts: []v1.VolumeMount{{Name: "v", MountPropagation: &bidi}}}, ""},
		{"absolute subPath", v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "v", SubPath: "/etc"}}}, "must not be an absolute path"},
		{"recursiveReadOnly without readOnly", v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "v", RecursiveReadOnly: ptr(v1.RecursiveReadOnlyEnabled)}}},
			"recursiveReadOnly Enabled needs readOnly"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkErr(t, checkMounts(&tc.c), tc.err) })
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("needs root (mounts): run the unit tests as root, as make test does")
	}
}

func TestPrepareSubPath(t *testing.T) {
	needRoot(t)
	podDir := t.TempDir()
	vol := filepath.Join(podDir, "volumes", "kubernetes.io~empty-dir", "data")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o600)
	os.MkdirAll(filepath.Join(vol, "logs", "real"), 0o755)
	os.WriteFile(filepath.Join(vol, "logs", "real", "f"), []byte("in volume"), 0o644)
	os.WriteFile(filepath.Join(vol, "app.conf"), []byte("conf"), 0o644)
	unix.Chmod(vol, 0o1777)
	os.Symlink("real", filepath.Join(vol, "logs", "inside"))          // stays in the volume
	os.Symlink(outside, filepath.Join(vol, "escape"))                 // absolute, leads out
	os.Symlink("../../../../..", filepath.Join(vol, "logs", "climb")) // relative, leads out
	t.Cleanup(func() { TearDown(podDir) })

	// A dir.
	target, err := prepareSubPath(podDir, "data", "app", 0, vol, "logs/real", "logs/real")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(podDir, "volume-subpaths", "data", "app", "0"); target != want {
		t.Errorf("target %s, want %s", target, want)
	}
	if b, err := os.ReadFile(filepath.Join(target, "f")); err != nil || string(b) != "in volume" {
		t.Errorf("through the bind mount: %q, %v", b, err)
	}
	// Reused when already mounted (a restarted container).
	if again, err := prepareSubPath(podDir, "data", "app", 0, vol, "logs/real", "logs/real"); err != nil || again != target {
		t.Errorf("second prepare: %s, %v", again, err)
	}
	// A file.
	target, err = prepareSubPath(podDir, "data", "app", 1, vol, "app.conf", "app.conf")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "conf" {
		t.Errorf("file subpath reads %q", b)
	}
	// A symlink that stays inside the volume.
	target, err = prepareSubPath(podDir, "data", "app", 2, vol, "logs/inside", "logs/inside")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(target, "f")); string(b) != "in volume" {
		t.Errorf("symlinked subpath reads %q", b)
	}
	// A missing subpath is created with the volume root's mode.
	target, err = prepareSubPath(podDir, "data", "app", 3, vol, "new/deeper", "new/deeper")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"new", "new/deeper"} {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(vol, d), &st); err != nil || st.Mode&0o7777 != 0o1777 {
			t.Errorf("%s: mode %#o, %v; want 01777 like the volume root", d, st.Mode&0o7777, err)
		}
	}
	// Symlinks leading out of the volume are refused; nothing is mounted.
	for i, sub := range []string{"escape", "escape/secret", "logs/climb", "logs/climb/etc", "escape/newdir"} {
		_, err := prepareSubPath(podDir, "data", "app", 10+i, vol, sub, sub)
		if err == nil || !strings.Contains(err.Error(), "leads outside the volume") {
			t.Errorf("subPath %q: %v, want it refused as leading outside", sub, err)
		}
		if ms, _ := MountsUnder(subPathTarget(podDir, "data", "app", 10+i)); len(ms) > 0 {
			t.Errorf("subPath %q: mounted %v", sub, ms)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "newdir")); !os.IsNotExist(err) {
		t.Error("created a dir outside the volume through a symlink")
	}

	if err := TearDown(podDir); err != nil {
		t.Fatal(err)
	}
	if ms, _ := MountsUnder(podDir); len(ms) > 0 {
		t.Errorf("still mounted after TearDown: %v", ms)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Errorf("TearDown removed something outside the pod dir: %v", err)
	}
}

func TestOpenBeneathTheBaseItself(t *testing.T) {
	// Found by FuzzSubPath: openat2 refused "" where the fallback opened
	// the base.
	dir := t.TempDir()
	base, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(base)
	for name, open := range map[string]func(int, string) (int, error){"openBeneath": openBeneath, "openNoSymlinks": openNoSymlinks} {
		for _, rel := range []string{"", ".", "./"} {
			fd, err := open(base, rel)
			if err != nil {
				t.Errorf("%s(%q): %v", name, rel, err)
				continue
			}
			if p, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); p != dir {
				t.Errorf("%s(%q) opened %s, want %s", name, rel, p, dir)
			}
			unix.Close(fd)
		}
	}
}

// TestSubPathShowsNoSecret: a subPathExpr that takes anything from a
// Secret (its expansion differs in the environment made from the Secrets
// masked) is decided on its value and shown as MaskedValue, wholly, in
// every message; one that takes nothing from a Secret is shown as it is.
func TestSubPathShowsNoSecret(t *testing.T) {
	const mark = "S3CRET-MARK"
	// PW and UP come from a Secret; NS does not.
	env := Env{
		Values: map[string]string{"PW": "/" + mark, "UP": "../" + mark, "OK": mark, "NS": "ns", "DOTS": ".."},
		Shown:  map[string]string{"PW": MaskedValue, "UP": MaskedValue, "OK": MaskedValue, "NS": "ns", "DOTS": ".."},
	}
	for _, tc := range []struct {
		expr, sub, shown, err string
	}{
		{"$(PW)", "/" + mark, MaskedValue, `"$(PW)" expands to "<masked>": error SubPath ` + "`<masked>`" + ` must not be an absolute path`},
		{"$(UP)-suffix", "../" + mark + "-suffix", MaskedValue, `"$(UP)-suffix" expands to "<masked>": unable to provision SubPath ` + "`<masked>`" + `: must not contain '..'`},
		{"$(DOTS)/$(OK)", "../" + mark, MaskedValue, `"$(DOTS)/$(OK)" expands to "<masked>": unable to provision SubPath ` + "`<masked>`" + `: must not contain '..'`},
		{"logs/$(OK)", "logs/" + mark, MaskedValue, ""},
		{"$(NS)/..", "ns/..", "ns/..", `"$(NS)/.." expands to "ns/..": unable to provision SubPath ` + "`ns/..`" + `: must not contain '..'`},
		{"$(NS)/x", "ns/x", "ns/x", ""},
		{"$(PW)/$(NOPE)", "", "", `"$(PW)/$(NOPE)": missing value for NOPE`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			sub, shown, err := subPath(v1.VolumeMount{Name: "v", SubPathExpr: tc.expr}, env)
			if sub != tc.sub || shown != tc.shown || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
				t.Errorf("subPath = %q, %q, %v\nwant %q, %q, %s", sub, shown, err, tc.sub, tc.shown, tc.err)
			}
			// At the container's creation, the same.
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c",
				VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/x", SubPathExpr: tc.expr}}}}}}
			reqs, err := containerMounts(pod, &pod.Spec.Containers[0], []Volume{{Name: "v", Kind: KindEmptyDir}}, map[string]string{"v": "/vol"}, &env)
			if err != nil && strings.Contains(err.Error(), mark) || err == nil && reqs[0].Shown != tc.shown {
				t.Errorf("containerMounts: %v %+v", err, reqs)
			}
		})
	}
	// Without Shown, nothing is masked.
	if _, shown, _ := subPath(v1.VolumeMount{SubPathExpr: "$(OK)"}, Env{Values: env.Values}); shown != mark {
		t.Errorf("without Shown: shown %q", shown)
	}
}

// TestSubPathErrorsShowNoSecret: the pre-flight's and the creation's
// errors about a subpath from a Secret that leads out of its volume show
// it masked.
func TestSubPathErrorsShowNoSecret(t *testing.T) {
	const mark = "S3CRET-MARK"
	vol := t.TempDir()
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(vol, "escape"))

	pod := hostPathPod(vol, v1.HostPathDirectory, "")
	pod.Spec.InitContainers = []v1.Container{{Name: "i", VolumeMounts: []v1.VolumeMount{{Name: "v", MountPath: "/v", SubPathExpr: "escape/$(PW)"}}}}
	env := Env{Values: map[string]string{"PW": mark}, Shown: map[string]string{"PW": MaskedValue}}
	err := CheckSubPathExprs(pod, &pod.Spec.InitContainers[0], env)
	if want := `spec.initContainers[0].volumeMounts[0].subPathExpr: subPath "<masked>" of volume "v" leads outside the volume (through a symlink)`; err == nil || err.Error() != want {
		t.Errorf("CheckSubPathExprs: %v\nwant %s", err, want)
	}

	podDir := t.TempDir()
	t.Cleanup(func() { TearDown(podDir) })
	_, err = prepareSubPath(podDir, "v", "c", 0, vol, "escape/"+mark, MaskedValue)
	if want := `subPath "<masked>" of volume "v" leads outside the volume (through a symlink)`; err == nil || err.Error() != want {
		t.Errorf("prepareSubPath: %v\nwant %s", err, want)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("created %v outside the volume", entries)
	}
}

// TestMaskSecrets: every value of every Secret, data and stringData,
// is MaskedValue in the copy; the keys stay, and the originals are
// untouched.
func TestMaskSecrets(t *testing.T) {
	s := &v1.Secret{Data: map[string][]byte{"a": []byte("one")}, StringData: map[string]string{"b": "two"}}
	m := MaskSecrets([]*v1.Secret{s})
	if len(m) != 1 || string(m[0].Data["a"]) != MaskedValue || m[0].StringData["b"] != MaskedValue {
		t.Errorf("masked %+v", m)
	}
	if string(s.Data["a"]) != "one" || s.StringData["b"] != "two" {
		t.Errorf("the original changed: %+v", s)
	}
	o := Objects{Secrets: []*v1.Secret{s}}.Masked()
	if string(o.Secrets[0].Data["a"]) != MaskedValue {
		t.Errorf("Objects.Masked: %+v", o.Secrets[0])
	}
}
