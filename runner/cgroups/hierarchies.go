package cgroups

import (
	"path/filepath"
	"sync"

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
// finds them for the cgroup "/".
var v1Hierarchies = sync.OnceValues(func() (map[string]string, error) {
	m, err := fs.NewManager(&libcgroups.Cgroup{Path: "/", Resources: &libcgroups.Resources{SkipDevices: true}}, nil)
	if err != nil {
		return nil, err
	}
	return m.GetPaths(), nil
})

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
