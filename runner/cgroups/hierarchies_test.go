package cgroups

import (
	"maps"
	"reflect"
	"testing"

	"github.com/moby/sys/mountinfo"
	libcgroups "github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/manager"
)

func TestV1Paths(t *testing.T) {
	roots := map[string]string{
		"cpu":          "/sys/fs/cgroup/cpu,cpuacct",
		"cpuacct":      "/sys/fs/cgroup/cpu,cpuacct",
		"name=systemd": "/sys/fs/cgroup/systemd",
		"memory":       "/sys/fs/cgroup/memory",
	}
	for _, tc := range []struct {
		inner string
		want  map[string]string
	}{
		{"/podrun", map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct/podrun", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/podrun",
			"name=systemd": "/sys/fs/cgroup/systemd/podrun", "memory": "/sys/fs/cgroup/memory/podrun"}},
		{"/podrun/besteffort/pod1/", map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct/podrun/besteffort/pod1", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/podrun/besteffort/pod1",
			"name=systemd": "/sys/fs/cgroup/systemd/podrun/besteffort/pod1", "memory": "/sys/fs/cgroup/memory/podrun/besteffort/pod1"}},
		// Cleaned as the library cleans a path: never above the hierarchy.
		{"/../../x/./y", map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct/x/y", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/x/y",
			"name=systemd": "/sys/fs/cgroup/systemd/x/y", "memory": "/sys/fs/cgroup/memory/x/y"}},
		{"/", map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct",
			"name=systemd": "/sys/fs/cgroup/systemd", "memory": "/sys/fs/cgroup/memory"}},
	} {
		got := v1Paths(roots, tc.inner)
		if !maps.Equal(got, tc.want) {
			t.Errorf("v1Paths(%q) = %v; want %v", tc.inner, got, tc.want)
		}
		got["cpu"] = "changed"
		if again := v1Paths(roots, tc.inner); again["cpu"] == "changed" {
			t.Errorf("v1Paths(%q) shares its map between calls", tc.inner)
		}
	}
}

// TestHostManagerAsLibrary holds newHostManager to manager.New on this
// host: the same kind of manager with the same paths, for every config
// podrun makes and a few it does not. On a cgroup v1 host the hierarchies
// must have been found once (the fast path taken); on v2 every config goes
// to the library.
func TestHostManagerAsLibrary(t *testing.T) {
	res := func(skipDevices bool) *libcgroups.Resources {
		return &libcgroups.Resources{SkipDevices: skipDevices}
	}
	configs := []*libcgroups.Cgroup{
		libCgroupConfig("/podrun", DriverCgroupfs, libResources(podResources{}, false)),
		libCgroupConfig("/podrun/besteffort", DriverCgroupfs, libResources(qosCgroupResources("BestEffort", 0), false)),
		libCgroupConfig("/podrun/burstable/pod0c4f", DriverCgroupfs, res(true)),
		{Path: "/kubepods/../podrun/x/", Resources: res(true)},
		{Path: "/podrun", Resources: res(false)},
		{Path: "relative/path", Resources: res(true)},
		{Parent: "podrun", Name: "pod1", Resources: res(true)},
	}
	for _, cg := range configs {
		want, wantErr := manager.New(cg)
		got, gotErr := newHostManager(cg)
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%+v: newHostManager error %v; manager.New %v", cg, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			continue
		}
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("%+v: newHostManager made a %T; manager.New a %T", cg, got, want)
		}
		if g, w := got.GetPaths(), want.GetPaths(); !maps.Equal(g, w) {
			t.Errorf("%+v: newHostManager's paths %v; manager.New's %v", cg, g, w)
		}
	}
	if !libcgroups.IsCgroup2UnifiedMode() {
		// The hierarchies read from mountinfo are the library's own.
		mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup"))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := hierarchiesFromMounts(mounts, libcgroups.IsCgroup2HybridMode())
		lib, err := fs.NewManager(&libcgroups.Cgroup{Path: "/", Resources: &libcgroups.Resources{SkipDevices: true}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || !maps.Equal(got, lib.GetPaths()) {
			t.Errorf("hierarchies from mountinfo %v (used: %v); the library's %v", got, ok, lib.GetPaths())
		}
	}
	roots, err := v1Hierarchies()
	switch {
	case libcgroups.IsCgroup2UnifiedMode():
		t.Logf("cgroup v2 host: every config went to manager.New")
	case err != nil || len(roots) == 0:
		t.Errorf("cgroup v1 host, and its hierarchies were not found (%v): every manager paid for the search", err)
	default:
		t.Logf("cgroup v1 host: %d hierarchies found once", len(roots))
	}
}

func TestHierarchiesFromMounts(t *testing.T) {
	mount := func(point, opts string) *mountinfo.Info {
		return &mountinfo.Info{Mountpoint: point, FSType: "cgroup", VFSOptions: opts}
	}
	for _, tc := range []struct {
		name   string
		mounts []*mountinfo.Info
		hybrid bool
		want   map[string]string // nil: left to the library
	}{
		{"one controller each, and systemd's", []*mountinfo.Info{
			mount("/sys/fs/cgroup/memory", "rw,memory"),
			mount("/sys/fs/cgroup/devices", "rw,devices"),
			mount("/sys/fs/cgroup/systemd", "rw,xattr,name=systemd"),
		}, false, map[string]string{
			"memory": "/sys/fs/cgroup/memory", "devices": "/sys/fs/cgroup/devices", "name=systemd": "/sys/fs/cgroup/systemd",
		}},
		{"co-mounted controllers share a hierarchy", []*mountinfo.Info{
			mount("/sys/fs/cgroup/cpu,cpuacct", "rw,cpu,cpuacct"),
			mount("/sys/fs/cgroup/net_cls,net_prio", "rw,net_cls,net_prio"),
		}, false, map[string]string{
			"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct",
			"net_cls": "/sys/fs/cgroup/net_cls,net_prio", "net_prio": "/sys/fs/cgroup/net_cls,net_prio",
		}},
		{"hybrid: the library's empty name for the v2 hierarchy", []*mountinfo.Info{
			mount("/sys/fs/cgroup/pids", "rw,pids"),
		}, true, map[string]string{"pids": "/sys/fs/cgroup/pids", "": "/sys/fs/cgroup/unified"}},
		{"a controller mounted twice: the first in mountinfo's order", []*mountinfo.Info{
			mount("/sys/fs/cgroup/freezer", "rw,freezer"),
			mount("/sys/fs/cgroup/freezer2", "rw,freezer"),
		}, false, map[string]string{"freezer": "/sys/fs/cgroup/freezer"}},
		{"a named hierarchy the library does not know", []*mountinfo.Info{
			mount("/sys/fs/cgroup/blkio", "rw,blkio"),
			mount("/sys/fs/cgroup/mine", "rw,name=mine"),
		}, false, map[string]string{"blkio": "/sys/fs/cgroup/blkio"}},
		{"a hierarchy elsewhere", []*mountinfo.Info{
			mount("/sys/fs/cgroup/memory", "rw,memory"),
			mount("/cgroup/cpu", "rw,cpu"),
		}, false, nil},
		{"nested below the root", []*mountinfo.Info{mount("/sys/fs/cgroup/x/memory", "rw,memory")}, false, nil},
		{"no v1 mount", nil, false, nil},
	} {
		got, ok := hierarchiesFromMounts(tc.mounts, tc.hybrid)
		if ok != (tc.want != nil) || !maps.Equal(got, tc.want) {
			t.Errorf("%s: hierarchiesFromMounts = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}
