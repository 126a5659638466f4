// Package cgroupstest gives tests a fake cgroup filesystem for package
// runner/cgroups: the functions of a cgroups.System over a temp dir (the
// kubelet tests pkg/kubelet/cm against fakes of the same kind).
package cgroupstest

import (
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/systemd"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// FakeFS points the cgroup library at a temp dir laid out like
// /sys/fs/cgroup: for v1 one directory per controller (cpu, memory), for v2
// one unified hierarchy. The library's own managers write the resource
// files there (cgroups.TestMode creates them). Two things a directory tree
// cannot do as cgroupfs does are emulated: v2's Apply (the library only
// creates cgroups under /sys/fs/cgroup) makes the directory and its
// cgroup.controllers, and removing a cgroup removes its control files with
// it. With systemd, the manager is asked for the slice's unit names and the
// cgroupfs manager of the same hierarchy stands in for systemd.
func FakeFS(t testing.TB, v2, useSystemd bool) (fakeFS FS, root string) {
	t.Helper()
	root = t.TempDir()
	cgroups.TestMode = true
	t.Cleanup(func() { cgroups.TestMode = false })

	newManager := func(cg *cgroups.Cgroup) (cgroups.Manager, error) {
		if cg.Systemd != useSystemd {
			t.Fatalf("cgroup config %+v: Systemd = %v, want %v", cg, cg.Systemd, useSystemd)
		}
		name := cg.Path
		if useSystemd {
			if cg.Path != "" {
				t.Fatalf("systemd config with a Path: %+v", cg)
			}
			expanded, err := systemd.ExpandSlice(cg.Name)
			if err != nil {
				return nil, err
			}
			parent := filepath.Base(filepath.Dir(expanded))
			if parent == "/" {
				parent = "-.slice"
			}
			if cg.Parent != parent {
				t.Fatalf("systemd config %+v: Parent %q, want %q", cg, cg.Parent, parent)
			}
			name = expanded
		}
		if v2 {
			m, err := fs2.NewManager(cg, filepath.Join(root, name))
			return fakeV2Manager{m}, err
		}
		paths := map[string]string{}
		// devices: a hierarchy Apply skips (SkipDevices).
		for _, ctl := range []string{"cpu", "memory", "devices"} {
			paths[ctl] = filepath.Join(root, ctl, name)
		}
		m, err := fs.NewManager(cg, paths)
		return fakeDestroy{m}, err
	}
	rmdir := func(dir string) error {
		if hasChildCgroup(dir) {
			return unix.EBUSY
		}
		if _, err := os.Stat(dir); err != nil {
			return unix.ENOENT
		}
		return os.RemoveAll(dir)
	}
	return FS{NewManager: newManager, Rmdir: rmdir, Unified: func() bool { return v2 }}, root
}

type fakeDestroy struct{ cgroups.Manager }

func (m fakeDestroy) Destroy() error {
	for _, p := range m.GetPaths() {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

type fakeV2Manager struct{ cgroups.Manager }

func (m fakeV2Manager) Apply(pid int) error {
	dir := m.Path("")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644)
}

func (m fakeV2Manager) Destroy() error { return os.RemoveAll(m.Path("")) }

// hasChildCgroup tells whether dir holds a directory (a child cgroup).
// FS is a fake cgroup filesystem's manager constructor and rmdir, the
// fields of a cgroups.System.
type FS struct {
	NewManager func(*cgroups.Cgroup) (cgroups.Manager, error)
	Rmdir      func(dir string) error
	Unified    func() bool
}

func hasChildCgroup(dir string) bool {
	entries, _ := os.ReadDir(dir) // none when it is gone
	return slices.ContainsFunc(entries, iofs.DirEntry.IsDir)
}

// Pod is a pod with one container per resource spec ("cpu-req/cpu-lim/mem-req/mem-lim",
// "-" for none).
func Pod(uid string, specs ...string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: types.UID(uid)}}
	for i, s := range specs {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: "c" + string(rune('0'+i)), Resources: Resources(s)})
	}
	return pod
}

// Resources is the requirements of a spec "cpu-req/cpu-lim/mem-req/mem-lim"
// ("-" for none).
func Resources(spec string) v1.ResourceRequirements {
	f := strings.Split(spec, "/")
	r := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
	set := func(l v1.ResourceList, name v1.ResourceName, v string) {
		if v != "-" {
			l[name] = resource.MustParse(v)
		}
	}
	set(r.Requests, v1.ResourceCPU, f[0])
	set(r.Limits, v1.ResourceCPU, f[1])
	set(r.Requests, v1.ResourceMemory, f[2])
	set(r.Limits, v1.ResourceMemory, f[3])
	return r
}

// ReadFile is a cgroup file's content, trimmed; it fails the test if it
// cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return strings.TrimSpace(string(b))
}
