package e2e

// The node's shape, as the end-to-end tests see it: the cgroup filesystem
// (v1, where /sys/fs/cgroup/unified may be the hybrid mode's v2 hierarchy,
// or v2 alone) and the cgroup driver of the testbed's runtime (cgroupfs or
// systemd), which podrun finds on its own (CRI RuntimeConfig). From them:
// where podrun makes a pod's cgroup (runner/cgroups), in which directories,
// and which files hold a cgroup's limits, with what text.
//
// Everything but readNodeShape is a pure function; the file has no build
// tag, so its table test (nodeshape_test.go) runs in `go test ./...`
// without a testbed. The tests tagged e2e read the node once (shape, set
// by TestMain) and ask it.

import (
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// cgroupMount is where the node's cgroup filesystem is mounted.
const cgroupMount = "/sys/fs/cgroup"

// cgroupDriverEnv names the cgroup driver of the testbed's runtime
// (SystemdCgroup in containerd's runc options); `hack/testbed.sh env`
// prints it. Unset means cgroupfs.
const cgroupDriverEnv = "PODRUN_TESTBED_CGROUP_DRIVER"

// The cgroup drivers, named as the kubelet, the CRI and podrun name them.
const (
	driverCgroupfs = "cgroupfs"
	driverSystemd  = "systemd"
)

// nodeShape is the node's cgroup filesystem and its runtime's cgroup driver.
type nodeShape struct {
	// V2: the mount is cgroup v2 alone (CGROUP2_SUPER_MAGIC), one
	// hierarchy whose control files name their controller (cpu.max).
	V2 bool
	// Hierarchies are, on v1, the directories below the mount, one per
	// hierarchy: the controllers' (cpu, memory, freezer, ...), systemd's
	// (name=systemd) and, in hybrid mode, unified (the v2 one). A pod
	// cgroup may be in any of them. None on v2.
	Hierarchies []string
	// Driver is the runtime's cgroup driver: driverCgroupfs or
	// driverSystemd.
	Driver string
	// Mount is where the cgroup filesystem is: cgroupMount (a table test
	// gives a fake one).
	Mount string
}

func (s nodeShape) String() string {
	v := "cgroup v2"
	if !s.V2 {
		v = "cgroup v1"
		for _, h := range s.Hierarchies {
			if h == "unified" {
				v += " (hybrid)"
			}
		}
	}
	return v + ", " + s.Driver + " driver"
}

// parseCgroupDriver is the driver the environment variable env says, v:
// "" is cgroupfs, anything but cgroupfs and systemd an error.
func parseCgroupDriver(env, v string) (string, error) {
	switch v {
	case "":
		return driverCgroupfs, nil
	case driverCgroupfs, driverSystemd:
		return v, nil
	}
	return "", fmt.Errorf("$%s is %q: want cgroupfs or systemd (the cgroup driver of the testbed's runtime; unset means cgroupfs)", env, v)
}

// readNodeShape reads the node: statfs of the cgroup mount (cgroup2fs:
// v2; otherwise v1 with a directory per hierarchy) and the driver from
// cgroupDriverEnv.
func readNodeShape() (nodeShape, error) {
	driver, err := parseCgroupDriver(cgroupDriverEnv, os.Getenv(cgroupDriverEnv))
	if err != nil {
		return nodeShape{}, err
	}
	s := nodeShape{Driver: driver, Mount: cgroupMount}
	var fs unix.Statfs_t
	if err := unix.Statfs(cgroupMount, &fs); err != nil {
		return nodeShape{}, fmt.Errorf("the cgroup filesystem: %w", err)
	}
	if fs.Type == unix.CGROUP2_SUPER_MAGIC {
		s.V2 = true
		return s, nil
	}
	entries, err := os.ReadDir(cgroupMount)
	if err != nil {
		return nodeShape{}, fmt.Errorf("the cgroup hierarchies: %w", err)
	}
	for _, en := range entries {
		// A combined hierarchy (cpu,cpuacct) has a symlink per controller
		// beside it: the same directory, looked at once.
		if en.IsDir() {
			s.Hierarchies = append(s.Hierarchies, en.Name())
		}
	}
	if len(s.Hierarchies) == 0 {
		return nodeShape{}, fmt.Errorf("%s is neither cgroup v2 nor a directory of v1 hierarchies", cgroupMount)
	}
	return s, nil
}

// ---------------------------------------------------------------- layout --

// cgroupRootParts splits a --cgroup-root in cgroupfs form into its parts,
// as podrun does: "/podrun" is [podrun], "/" none.
func cgroupRootParts(root string) []string {
	var parts []string
	for p := range strings.SplitSeq(path.Clean("/"+root), "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// qosPart is the QoS cgroup below the root (the kubelet's names): none for
// Guaranteed, whose pods sit at the root.
func qosPart(qos v1.PodQOSClass) []string {
	switch qos {
	case v1.PodQOSBurstable:
		return []string{"burstable"}
	case v1.PodQOSBestEffort:
		return []string{"besteffort"}
	}
	return nil
}

// cgroupRel is the cgroup of parts, relative to a hierarchy's root, as the
// driver names it (the kubelet's CgroupName ToCgroupfs and ToSystemd):
// cgroupfs joins the parts (podrun/burstable/pod<uid>); systemd makes each
// a slice named after its parent's, with '-' in a part written '_'
// (podrun.slice/podrun-burstable.slice/podrun-burstable-pod<uid>.slice).
// No parts is the hierarchy's root, "".
func (s nodeShape) cgroupRel(parts []string) string {
	if s.Driver != driverSystemd {
		return path.Join(parts...)
	}
	var dirs []string
	prefix := ""
	for _, p := range parts {
		prefix += strings.ReplaceAll(p, "-", "_")
		dirs = append(dirs, prefix+".slice")
		prefix += "-"
	}
	return path.Join(dirs...)
}

// rootCgroup is podrun's --cgroup-root root.
func (s nodeShape) rootCgroup(root string) string {
	return s.cgroupRel(cgroupRootParts(root))
}

// qosCgroup is the QoS cgroup of class qos below root (root itself for
// Guaranteed).
func (s nodeShape) qosCgroup(root string, qos v1.PodQOSClass) string {
	return s.cgroupRel(append(cgroupRootParts(root), qosPart(qos)...))
}

// podCgroup is the cgroup podrun makes for the pod uid of class qos under
// root.
func (s nodeShape) podCgroup(root string, qos v1.PodQOSClass, uid string) string {
	return s.cgroupRel(append(append(cgroupRootParts(root), qosPart(qos)...), "pod"+uid))
}

// kubeletPodsRoot is where a kubelet of cgroupRoot puts its pods, as a
// --cgroup-root for podrun: /kubepods below the root ("/": kubeadm's,
// kubepods.slice with systemd).
func kubeletPodsRoot(cgroupRoot string) string {
	return path.Join("/", cgroupRoot, "kubepods")
}

// cgroupDirs are the directories of the cgroup rel in every hierarchy:
// one on v2, one per hierarchy on v1.
func (s nodeShape) cgroupDirs(rel string) []string {
	if s.V2 {
		return []string{filepath.Join(s.Mount, rel)}
	}
	var out []string
	for _, h := range s.Hierarchies {
		out = append(out, filepath.Join(s.Mount, h, rel))
	}
	return out
}

// controllerDir is the directory of the cgroup rel that holds controller's
// files: the one directory on v2, the controller's hierarchy on v1.
func (s nodeShape) controllerDir(controller, rel string) string {
	if s.V2 {
		return filepath.Join(s.Mount, rel)
	}
	return filepath.Join(s.Mount, controller, rel)
}

// inPodCgroup reports whether a container's /proc/self/cgroup (selfCgroup)
// shows it in the pod cgroup rel: on v1 its memory hierarchy's path lies
// below /rel; on v2 the runtime gives the container a cgroup namespace, so
// the one line is 0::/ (its own cgroup as the root) and the place is seen
// from the host only.
func (s nodeShape) inPodCgroup(selfCgroup, rel string) bool {
	for _, l := range strings.Split(strings.TrimSpace(selfCgroup), "\n") {
		if s.V2 {
			if l == "0::/" {
				return true
			}
			continue
		}
		f := strings.SplitN(l, ":", 3)
		if len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") && strings.HasPrefix(f[2], "/"+rel+"/") {
			return true
		}
	}
	return false
}

// freezer is how to freeze the cgroup rel and thaw it again: on v1 the
// state file of the freezer hierarchy, on v2 the cgroup's own
// cgroup.freeze.
func (s nodeShape) freezer(rel string) (file, frozen, thawed string) {
	if s.V2 {
		return filepath.Join(s.Mount, rel, "cgroup.freeze"), "1", "0"
	}
	return filepath.Join(s.Mount, "freezer", rel, "freezer.state"), "FROZEN", "THAWED"
}

// sandboxOfCgroup is the sandbox ID of its cgroup's directory below the
// pod cgroup: the ID itself with cgroupfs, with systemd the scope
// cri-containerd-<ID>.scope (containerd's prefix).
func (s nodeShape) sandboxOfCgroup(dir string) string {
	if s.Driver == driverSystemd {
		return strings.TrimSuffix(strings.TrimPrefix(dir, "cri-containerd-"), ".scope")
	}
	return dir
}

// ---------------------------------------------------------------- limits --

// cgroupFile is a control file of a cgroup and the text it holds.
type cgroupFile struct {
	// Controller is the controller the file belongs to: its hierarchy on
	// v1; on v2 only the file's name says it.
	Controller string
	Name       string // cpu.shares, cpu.max, ...
	// Texts are what the file may hold: one text, but where runtimes
	// differ (a container's cpu.weight).
	Texts []string
}

// rel is the file's path below a cgroup's mount: memory/memory.limit_in_bytes
// on v1 (the controller's hierarchy), memory.max on v2. A container sees
// its own cgroup's files there under /sys/fs/cgroup.
func (f cgroupFile) rel(v2 bool) string {
	if v2 {
		return f.Name
	}
	return f.Controller + "/" + f.Name
}

// path is the file of the host cgroup rel.
func (s nodeShape) path(rel string, f cgroupFile) string {
	return filepath.Join(s.controllerDir(f.Controller, rel), f.Name)
}

// holds reports whether text is one of the file's texts.
func (f cgroupFile) holds(text string) bool {
	for _, t := range f.Texts {
		if t == text {
			return true
		}
	}
	return false
}

// A cgroupLimit is one expected setting of a cgroup, said once in the
// terms of the pod spec and the kubelet (cpu shares, a CFS quota over a
// period, a memory limit): given the cgroup version (v2), the files that
// hold it and their text.
type cgroupLimit func(v2 bool) []cgroupFile

// files are the files of limits on the node's cgroup version.
func (s nodeShape) files(limits ...cgroupLimit) []cgroupFile {
	var out []cgroupFile
	for _, l := range limits {
		out = append(out, l(s.V2)...)
	}
	return out
}

// The kubelet's cpu shares range (pkg/kubelet/cm/helpers_linux.go).
const (
	minShares = 2
	maxShares = 262144
)

// cpuShares are cpu.shares that podrun (as the kubelet) sets on a pod or
// QoS cgroup; on v2 it sets cpu.weight, by the kubelet's linear
// conversion (runner/cgroups cpuWeight).
func cpuShares(shares uint64) cgroupLimit {
	return func(v2 bool) []cgroupFile {
		if v2 {
			return []cgroupFile{{"cpu", "cpu.weight", []string{u64(kubeletCPUWeight(shares))}}}
		}
		return []cgroupFile{{"cpu", "cpu.shares", []string{u64(shares)}}}
	}
}

// containerCPUShares are a container's own cpu.shares, which podrun hands
// the runtime (CRI CpuShares) and the runtime sets. On v2 the runtime
// converts them to cpu.weight: runc before 1.3.2 (Debian's 1.1) with the
// kubelet's linear formula, runc from 1.3.2 (the testbed's own) with the
// quadratic one of opencontainers/cgroups' ConvertCPUSharesToCgroupV2Value.
// Either is the shares podrun gave.
func containerCPUShares(shares uint64) cgroupLimit {
	return func(v2 bool) []cgroupFile {
		if !v2 {
			return cpuShares(shares)(false)
		}
		texts := []string{u64(kubeletCPUWeight(shares))}
		if q := u64(runcCPUWeight(shares)); q != texts[0] {
			texts = append(texts, q)
		}
		return []cgroupFile{{"cpu", "cpu.weight", texts}}
	}
}

// cpuQuota is a CFS quota over a period, in microseconds; quota -1 is
// none. v1: cpu.cfs_quota_us and cpu.cfs_period_us; v2: cpu.max "quota
// period", "max period" for none.
func cpuQuota(quota int64, period uint64) cgroupLimit {
	return func(v2 bool) []cgroupFile {
		q := strconv.FormatInt(quota, 10)
		if v2 {
			if quota < 0 {
				q = "max"
			}
			return []cgroupFile{{"cpu", "cpu.max", []string{q + " " + u64(period)}}}
		}
		return []cgroupFile{{"cpu", "cpu.cfs_quota_us", []string{q}}, {"cpu", "cpu.cfs_period_us", []string{u64(period)}}}
	}
}

// memoryLimit is a memory limit in bytes; -1 is none. v1:
// memory.limit_in_bytes (none reads as the largest page-aligned int64);
// v2: memory.max ("max" for none).
func memoryLimit(bytes int64) cgroupLimit {
	return func(v2 bool) []cgroupFile {
		if v2 {
			text := "max"
			if bytes >= 0 {
				text = strconv.FormatInt(bytes, 10)
			}
			return []cgroupFile{{"memory", "memory.max", []string{text}}}
		}
		limit := bytes
		if limit < 0 {
			limit = v1MemoryUnlimited
		}
		return []cgroupFile{{"memory", "memory.limit_in_bytes", []string{strconv.FormatInt(limit, 10)}}}
	}
}

// v1MemoryUnlimited is what memory.limit_in_bytes reads without a limit:
// the kernel's PAGE_COUNTER_MAX in bytes.
var v1MemoryUnlimited = int64(math.MaxInt64) &^ int64(os.Getpagesize()-1)

// burstableShares are the burstable QoS cgroup's cpu shares with Burstable
// pods of these cpu requests (millicores) in it: on v1 the kubelet's, the
// shares of their sum. On v2 podrun reads each pod's request back from its
// pod cgroup's cpu.weight (runner/cgroups updateBurstable), which tells it
// only to within the requests of the same weight: the QoS cgroup's weight
// is that of a sum from the lowest to the highest of those.
func burstableShares(requests ...int64) cgroupLimit {
	return func(v2 bool) []cgroupFile {
		var sum, lo, hi int64
		for _, m := range requests {
			sum += m
			l, h := sameWeightRequests(m)
			lo, hi = lo+l, hi+h
		}
		if !v2 {
			return cpuShares(milliCPUToShares(sum))(false)
		}
		var texts []string
		for w := kubeletCPUWeight(milliCPUToShares(lo)); w <= kubeletCPUWeight(milliCPUToShares(hi)); w++ {
			texts = append(texts, u64(w))
		}
		return []cgroupFile{{"cpu", "cpu.weight", texts}}
	}
}

// sameWeightRequests is the range of cpu requests (millicores) whose pod
// cgroups get the cpu.weight of a request of milli.
func sameWeightRequests(milli int64) (lo, hi int64) {
	const maxMilli = maxShares * 1000 / 1024
	w := kubeletCPUWeight(milliCPUToShares(milli))
	lo, hi = milli, milli
	for lo > 0 && kubeletCPUWeight(milliCPUToShares(lo-1)) == w {
		lo--
	}
	for hi < maxMilli && kubeletCPUWeight(milliCPUToShares(hi+1)) == w {
		hi++
	}
	return lo, hi
}

// milliCPUToShares is the kubelet's MilliCPUToShares.
func milliCPUToShares(milli int64) uint64 {
	if milli == 0 {
		return minShares
	}
	return uint64(min(max(milli*1024/1000, minShares), maxShares))
}

// kubeletCPUWeight is the kubelet's cpu.weight for cpu.shares (its
// getCPUWeight; the linear map of [2, 262144] onto [1, 10000]).
func kubeletCPUWeight(shares uint64) uint64 {
	if shares >= maxShares {
		return 10000
	}
	shares = max(shares, minShares)
	return 1 + ((shares-minShares)*9999)/(maxShares-minShares)
}

// runcCPUWeight is runc's cpu.weight for cpu.shares from 1.3.2 on: a
// quadratic in log2(shares) that keeps 2, 1024 and 262144 at 1, 100 and
// 10000.
func runcCPUWeight(shares uint64) uint64 {
	switch {
	case shares <= minShares:
		return 1
	case shares >= maxShares:
		return 10000
	}
	l := math.Log2(float64(shares))
	return uint64(math.Ceil(math.Pow(10, (l*l+125*l)/612.0-7.0/34.0)))
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }
