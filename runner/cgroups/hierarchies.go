package cgroups

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/moby/sys/mountinfo"
	libcgroups "github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/manager"
)

// newHostManager is the cgroup library's manager.New, less its search for
// the cgroup v1 hierarchies on every call. For a cgroupfs path on v1 the
// library looks up each controller's mount point (a secure join, two
// lstats and a statfs per controller, and /proc/self/mountinfo for a
// controller not at /sys/fs/cgroup/<name>) every time it makes a manager,
// and a one-pod run makes seven (the root, the QoS cgroup and the pod's,
// set and removed): about 300 of a run's 400 stat calls. The hierarchies
// are looked up once here, by the library itself (the manager of "/"), and
// each manager gets the paths the library would give it: the hierarchy's
// root joined with the cgroup's path. Anything else (systemd, cgroup v2,
// a relative path, a host without the devices controller where the config
// needs it) goes to manager.New as it is.
func newHostManager(cg *libcgroups.Cgroup) (libcgroups.Manager, error) {
	if cg == nil || cg.Resources == nil || cg.Systemd || cg.Name != "" || cg.Parent != "" ||
		!filepath.IsAbs(cg.Path) || libcgroups.IsCgroup2UnifiedMode() {
		return manager.New(cg)
	}
	roots, err := v1Hierarchies()
	if err != nil {
		return manager.New(cg)
	}
	if _, ok := roots["devices"]; !ok && !cg.SkipDevices {
		return manager.New(cg) // the library's error: devices is required
	}
	return fs.NewManager(cg, v1Paths(roots, cg.Path))
}

// v1Hierarchies is each mounted v1 controller's hierarchy root, by the
// library's controller name ("cpu", "name=systemd", ...), as the library
// finds them for the cgroup "/": from the cgroup mounts in
// /proc/self/mountinfo when they all sit in /sys/fs/cgroup
// (hierarchiesFromMounts), else by the library itself. Its search costs
// a secure join, two lstats and a statfs per controller it knows, and a
// read of mountinfo for those not mounted, about 0.2 ms of a one-pod
// run's CPU; mountinfo alone is one read.
var v1Hierarchies = sync.OnceValues(func() (map[string]string, error) {
	if mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup")); err == nil {
		if roots, ok := hierarchiesFromMounts(mounts, libcgroups.IsCgroup2HybridMode()); ok {
			return roots, nil
		}
	}
	m, err := fs.NewManager(&libcgroups.Cgroup{Path: "/", Resources: &libcgroups.Resources{SkipDevices: true}}, nil)
	if err != nil {
		return nil, err
	}
	return m.GetPaths(), nil
})

// librarySubsystems are the v1 controllers the cgroup library's fs
// manager knows (github.com/opencontainers/cgroups/fs, subsystems), by
// the names its paths use. TestHostManagerAsLibrary holds the result to
// the library's own on a v1 host.
var librarySubsystems = []string{
	"cpuset", "devices", "memory", "cpu", "cpuacct", "pids", "blkio", "hugetlb",
	"net_cls", "net_prio", "perf_event", "freezer", "rdma", "name=systemd", "misc",
}

// v1Root is where the library looks for the v1 hierarchies first.
const v1Root = "/sys/fs/cgroup"

// hierarchiesFromMounts is the hierarchy of each controller of
// librarySubsystems that a v1 cgroup mount of mounts carries (its super
// options name it), the first such mount in mountinfo's order, as the
// library's search of mountinfo picks it; on a hybrid host (a cgroup2
// mount at v1Root/unified) also the library's "" for that hierarchy. It
// reports false, leaving the search to the library, when a cgroup mount
// is not directly in v1Root (the library then works out another root)
// or none is mounted.
func hierarchiesFromMounts(mounts []*mountinfo.Info, hybrid bool) (map[string]string, bool) {
	if len(mounts) == 0 {
		return nil, false
	}
	for _, mi := range mounts {
		if mi.FSType != "cgroup" || filepath.Dir(mi.Mountpoint) != v1Root {
			return nil, false
		}
	}
	roots := make(map[string]string, len(librarySubsystems))
	for _, name := range librarySubsystems {
		for _, mi := range mounts {
			if slices.Contains(strings.Split(mi.VFSOptions, ","), name) {
				roots[name] = mi.Mountpoint
				break
			}
		}
	}
	if hybrid {
		roots[""] = filepath.Join(v1Root, "unified")
	}
	return roots, true
}

// v1Paths is the cgroup at the absolute path inner in each hierarchy: the
// library's subsysPath, filepath.Join(root, base of the mount point,
// inner), with the first two joined already. The map is new each time:
// a manager drops the controllers it cannot use from its own.
func v1Paths(roots map[string]string, inner string) map[string]string {
	paths := make(map[string]string, len(roots))
	for name, root := range roots {
		paths[name] = filepath.Join(root, filepath.Clean(inner))
	}
	return paths
}
