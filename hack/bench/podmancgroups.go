package main

import (
	"os"
	"path/filepath"
)

// podmanUnified is where podman 4.3 (cgroup_manager cgroupfs) puts its
// containers' cgroups in the unified hierarchy of a hybrid host such as
// these machines' (cgroup v1 with a v2 mount at /sys/fs/cgroup/unified).
// It removes a container's v1 cgroups when the container goes, but not
// this one: one empty dir per container stays (3,088 here after a day of
// benches). Each podman sample removes the ones it left.
const podmanUnified = "/sys/fs/cgroup/unified/libpod_parent"

// cgroupDirs is the names of the dirs in dir now (none when it is absent).
func cgroupDirs(dir string) map[string]bool {
	entries, _ := os.ReadDir(dir)
	names := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			names[e.Name()] = true
		}
	}
	return names
}

// removeNewEmpty removes the dirs of dir that were not there before (the
// cgroups a podman sample left); rmdir fails on a cgroup that still has
// processes or children, which stays. It returns how many it removed.
func removeNewEmpty(dir string, before map[string]bool) int {
	n := 0
	for name := range cgroupDirs(dir) {
		if !before[name] && os.Remove(filepath.Join(dir, name)) == nil {
			n++
		}
	}
	return n
}
