// Package cgroups makes pod cgroups and sets their resources, as the
// kubelet's pod container manager does (pkg/kubelet/cm:
// cgroup_manager_linux.go, pod_container_manager_linux.go,
// qos_container_manager_linux.go, helpers_linux.go).
//
// Under --cgroup-root (default /podrun) a Guaranteed pod's cgroup is
// pod<uid>, a Burstable one's burstable/pod<uid> and a BestEffort one's
// besteffort/pod<uid>. With the systemd driver the same names become
// slices: /podrun.slice/podrun-burstable.slice/podrun-burstable-pod<uid>.slice
// ('-' in a part becomes '_'). The pod cgroup is made, with the pod's
// resources, before the sandbox, and handed to the runtime as the sandbox's
// CgroupParent; the runtime puts the sandbox and every container below it.
// It is removed at teardown once the sandbox is gone.
//
// The kubelet keeps its QoS cgroups and root for good. podrun leaves the
// host as it found it: a QoS cgroup or root that is empty once a pod is gone
// is removed too when podrun owns it — when the run created it, or when the
// root is podrun's own default /podrun, where nothing but podrun puts
// cgroups. Under a root podrun found already there (--cgroup-root=/kubepods,
// say) only what the run itself created is removed and existing parents'
// resources are left alone.
package cgroups

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	libcgroups "github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fscommon"
	"github.com/opencontainers/cgroups/systemd"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// Cgroup drivers (--cgroup-driver), named as the kubelet and the CRI name them.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// DefaultRoot is podrun's own cgroup root (--cgroup-root).
const DefaultRoot = "/podrun"

// The kubelet's CPU conversions (pkg/kubelet/cm/helpers_linux.go).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	milliCPUToCPU = 1000
	// quotaPeriod is the CFS period, 100ms: the kubelet's default
	// cpuCFSQuotaPeriod.
	quotaPeriod = 100000
	// minQuotaPeriod is the smallest quota the kubelet sets, 1ms.
	minQuotaPeriod = 1000
	// maxQuota is the largest CFS quota the kernel takes, in µs: 2^44-1,
	// about 203 days (MAX_BW; a larger cpu.cfs_quota_us or cpu.max is
	// EINVAL, seen on 6.18), the quota of some 175 million cpus.
	maxQuota = 1<<44 - 1
)

// QoS cgroup names below the root (pkg/kubelet/cm/types.go).
const (
	qosBurstableName  = "burstable"
	qosBestEffortName = "besteffort"
)

// milliCPUToShares is the kubelet's MilliCPUToShares: cpu.shares for a
// number of millicores, within [2, 262144]; 0 gives 2. Where the kubelet's
// product overflows (beyond 9e15 millicores: 2 shares for the largest
// requests), the shares are the most.
func milliCPUToShares(milliCPU int64) uint64 {
	if milliCPU == 0 {
		return minShares
	}
	if milliCPU >= maxShares*milliCPUToCPU/sharesPerCPU {
		return maxShares
	}
	shares := milliCPU * sharesPerCPU / milliCPUToCPU
	return uint64(min(max(shares, minShares), maxShares))
}

// milliCPUToQuota is the kubelet's milliCPUToQuota: the CFS quota for a
// number of millicores over period, at least 1ms; 0 means no quota. A
// quota above what the kernel takes is maxQuota, as much cpu as a quota
// gives: the kubelet's is refused (EINVAL) or, beyond 9e13 millicores,
// wraps around into any quota, a tiny one too.
func milliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	if milliCPU > maxQuota*milliCPUToCPU/period {
		return maxQuota
	}
	return max(milliCPU*period/milliCPUToCPU, minQuotaPeriod)
}

// cpuWeight is the kubelet's getCPUWeight: cgroup v2's cpu.weight [1, 10000]
// for cpu.shares [2, 262144].
func cpuWeight(shares uint64) uint64 {
	if shares >= maxShares {
		return 10000
	}
	return 1 + ((shares-minShares)*9999)/(maxShares-minShares)
}

// podResources is the pod cgroup's resource config, driver-neutral: nil
// fields are left alone.
type podResources struct {
	CPUShares *uint64
	CPUQuota  *int64
	CPUPeriod *uint64
	Memory    *int64 // bytes
}

// podResourceConfig is the kubelet's ResourceConfigForPod (cpuCFSQuota on,
// the default period, no memory QoS): cpu shares from the pod's effective
// cpu request for every QoS class but BestEffort (shares 2); a Guaranteed
// pod also gets its cpu quota and memory limit; a Burstable one gets the
// quota only if every container declares a cpu limit, and the memory limit
// only if every container declares a memory limit.
func podResourceConfig(pod *v1.Pod) podResources {
	reqs := podresources.Requests(pod)
	limits, cpuDeclared, memDeclared := podresources.DeclaredLimits(pod)
	shares := milliCPUToShares(podresources.MilliValue(*reqs.Cpu()))
	period := uint64(quotaPeriod)
	quota := milliCPUToQuota(podresources.MilliValue(*limits.Cpu()), quotaPeriod)
	memory := podresources.Value(*limits.Memory())

	var rc podResources
	switch podresources.QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		rc = podResources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, Memory: &memory}
	case v1.PodQOSBurstable:
		rc.CPUShares = &shares
		if cpuDeclared {
			rc.CPUQuota, rc.CPUPeriod = &quota, &period
		}
		if memDeclared {
			rc.Memory = &memory
		}
	default:
		s := uint64(minShares)
		rc.CPUShares = &s
	}
	return rc
}

// qosCgroupResources are the QoS cgroups' resources (the kubelet's
// qos_container_manager_linux.go setCPUCgroupConfig): besteffort gets
// shares 2, burstable the shares of the sum of the cpu requests of the
// Burstable pods in it, burstableMilliCPU (updateBurstable reads them).
func qosCgroupResources(qos v1.PodQOSClass, burstableMilliCPU int64) podResources {
	var shares uint64
	switch qos {
	case v1.PodQOSBestEffort:
		shares = minShares
	case v1.PodQOSBurstable:
		shares = milliCPUToShares(burstableMilliCPU)
	default:
		return podResources{}
	}
	return podResources{CPUShares: &shares}
}

// requestFromShares is the cpu request, in millicores, that gave a pod
// cgroup its cpu.shares: the inverse of milliCPUToShares, exact from 3m up
// (2 shares are 0 to 2m, counted as 0).
func requestFromShares(shares uint64) int64 {
	if shares <= minShares {
		return 0
	}
	return int64((shares*milliCPUToCPU + sharesPerCPU - 1) / sharesPerCPU)
}

// sharesFromWeight is cgroup v2's cpu.weight back as cpu.shares: the
// middle of the shares cpuWeight turns into weight (it keeps about one in
// 26 of them).
func sharesFromWeight(weight uint64) uint64 {
	// least is the smallest shares of a weight.
	least := func(w uint64) uint64 { return minShares + ((w-1)*(maxShares-minShares)+9998)/9999 }
	switch {
	case weight <= 1:
		return minShares
	case weight >= 10000:
		return maxShares
	}
	return (least(weight) + least(weight+1) - 1) / 2
}

// libResources converts a resource config for the cgroup library, as the
// kubelet's toResources does: cpu.weight instead of shares on cgroup v2;
// devices and the freezer are never touched.
func libResources(rc podResources, v2 bool) *libcgroups.Resources {
	r := &libcgroups.Resources{SkipDevices: true, SkipFreezeOnSet: true}
	if rc.CPUShares != nil {
		if v2 {
			r.CpuWeight = cpuWeight(*rc.CPUShares)
		} else {
			r.CpuShares = *rc.CPUShares
		}
	}
	if rc.CPUQuota != nil {
		r.CpuQuota = *rc.CPUQuota
	}
	if rc.CPUPeriod != nil {
		r.CpuPeriod = *rc.CPUPeriod
	}
	if rc.Memory != nil {
		r.Memory = *rc.Memory
	}
	return r
}

// cgroupName is a cgroup as a list of parts below the hierarchy's root,
// e.g. [podrun burstable pod<uid>] (the kubelet's CgroupName).
type cgroupName []string

// CheckRoot checks --cgroup-root before anything runs: with driver "" (the
// runtime's, not yet known) a root either driver takes passes.
func CheckRoot(root, driver string) error {
	if root == "" {
		return nil
	}
	if driver != "" {
		_, err := parseCgroupRoot(root, driver)
		return err
	}
	_, err := parseCgroupRoot(root, DriverCgroupfs)
	if err != nil {
		if _, serr := parseCgroupRoot(root, DriverSystemd); serr == nil {
			return nil
		}
	}
	return err
}

// parseCgroupRoot splits --cgroup-root into parts: a cgroupfs path
// ("/podrun", "/" for the hierarchy's root) or, with the systemd driver, a
// slice ("podrun.slice", "podrun-ci.slice").
func parseCgroupRoot(root, driver string) (cgroupName, error) {
	if driver == DriverSystemd && strings.HasSuffix(root, ".slice") {
		var parts cgroupName
		for p := range strings.SplitSeq(strings.TrimSuffix(path.Base(root), ".slice"), "-") {
			if p != "" {
				parts = append(parts, strings.ReplaceAll(p, "_", "-"))
			}
		}
		return parts, nil
	}
	if !path.IsAbs(root) {
		return nil, fmt.Errorf("invalid --cgroup-root %q: want an absolute cgroup path such as %s", root, DefaultRoot)
	}
	var parts cgroupName
	for p := range strings.SplitSeq(path.Clean(root), "/") {
		if p == "" {
			continue
		}
		if driver == DriverSystemd && strings.Contains(p, "_") {
			// The kubelet forbids '_' so that '-' → '_' can be reversed.
			return nil, fmt.Errorf("invalid --cgroup-root %q: '_' cannot be used with the systemd cgroup driver", root)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// path is the cgroup's name in cgroupfs form, the form the CRI's
// CgroupParent takes: /podrun/burstable/pod<uid>, or with systemd the
// expanded slice path /podrun.slice/podrun-burstable.slice/podrun-burstable-pod<uid>.slice
// (the kubelet's CgroupName.ToCgroupfs and ToSystemd).
func (n cgroupName) path(driver string) string {
	if driver != DriverSystemd {
		return "/" + path.Join(n...)
	}
	if len(n) == 0 {
		return "/"
	}
	parts := make([]string, len(n))
	for i, p := range n {
		parts[i] = strings.ReplaceAll(p, "-", "_")
	}
	expanded, err := systemd.ExpandSlice(strings.Join(parts, "-") + ".slice")
	if err != nil {
		// Only a part with '/' or a name ending in '-' fails, which the parts never are.
		panic(fmt.Sprintf("expanding the systemd slice of %v: %v", n, err))
	}
	return expanded
}

// qosCgroupName is the QoS cgroup of a class below root: root itself for
// Guaranteed.
func qosCgroupName(qos v1.PodQOSClass, root cgroupName) cgroupName {
	n := append(cgroupName{}, root...)
	switch qos {
	case v1.PodQOSBurstable:
		n = append(n, qosBurstableName)
	case v1.PodQOSBestEffort:
		n = append(n, qosBestEffortName)
	}
	return n
}

// podCgroupName is the pod's cgroup (the kubelet's GetPodContainerName):
// pod<uid> below its QoS cgroup, in the driver's cgroupfs form.
func podCgroupName(pod *v1.Pod, qos v1.PodQOSClass, root cgroupName, driver string) string {
	return append(qosCgroupName(qos, root), "pod"+string(pod.UID)).path(driver)
}

// libCgroupConfig is the cgroup library's config for a cgroup (the kubelet's
// libctCgroupConfig): the cgroupfs path, or with systemd the slice and its
// parent slice, as systemd needs them.
func libCgroupConfig(name, driver string, res *libcgroups.Resources) *libcgroups.Cgroup {
	cg := &libcgroups.Cgroup{Resources: res}
	if driver != DriverSystemd {
		cg.Path = name
		return cg
	}
	cg.Systemd = true
	dir, base := path.Split(name)
	if dir == "/" {
		dir = "-.slice"
	} else {
		dir = path.Base(dir)
	}
	cg.Parent, cg.Name = dir, base
	return cg
}

// System reaches the host's cgroups. HostSystem is the real one; tests
// give one on a fake cgroup filesystem.
type System struct {
	// NewManager makes the cgroup library's manager for a cgroup: cgroupfs
	// v1 or v2 or systemd, as the host and the config say.
	NewManager func(*libcgroups.Cgroup) (libcgroups.Manager, error)
	// Rmdir removes a cgroup directory if it is empty: on cgroupfs rmdir
	// fails while the cgroup has children or processes, atomically.
	Rmdir func(dir string) error
	// Unified tells whether the host has cgroup v2 alone.
	Unified func() bool
	// Lock serialises the podruns of the node while one of them sets the
	// burstable QoS cgroup from the pods in it (updateBurstable); nil for
	// none.
	Lock func() (unlock func(), err error)
	// SystemdRunning tells whether systemd runs the host, which the
	// systemd driver makes its slices through (D-Bus); nil: not asked
	// (tests on a fake cgroup filesystem).
	SystemdRunning func() bool
}

// HostSystem is the machine's cgroups, through the cgroup library.
func HostSystem() System {
	return System{NewManager: newHostManager, Rmdir: unix.Rmdir, Unified: libcgroups.IsCgroup2UnifiedMode, Lock: lockCgroupfs,
		SystemdRunning: systemd.IsRunningSystemd}
}

// ErrNoSystemd: the systemd driver on a host that systemd does not run.
var ErrNoSystemd = errors.New("systemd is not running on this host (no /run/systemd/system), and the systemd cgroup driver makes the pod cgroups as slices through it")

// CheckDriver returns ErrNoSystemd when the host's pod cgroups are to be
// systemd slices and systemd does not run the host: the cgroup library
// would refuse every pod's cgroup, one by one, once the run has begun.
func (h *Host) CheckDriver() error {
	if h == nil || h.driver != DriverSystemd || h.sys.SystemdRunning == nil || h.sys.SystemdRunning() {
		return nil
	}
	return ErrNoSystemd
}

// lockCgroupfs takes an exclusive flock on the cgroup mount point, which
// every podrun of the node sees (a lock ends with its process: a podrun
// killed holding it holds nothing).
func lockCgroupfs() (func(), error) {
	fd, err := unix.Open("/sys/fs/cgroup", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("locking the cgroups: %w", err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("locking the cgroups: %w", err)
	}
	return func() { unix.Close(fd) }, nil
}

// Host is a run's view of the node's libcgroups.
type Host struct {
	sys    System
	driver string
	root   cgroupName
	v2     bool

	mu      sync.Mutex
	created map[string]bool // cgroups this run created, by name

	// parents serialises the root and QoS cgroups: ensured once per run
	// (ready), and removed only while no pod of the run is between
	// ensuring them and creating its own cgroup below them.
	parents sync.Mutex
	ready   map[string]bool
}

// NewHost returns the cgroups of a run, reached through sys; nil when root
// is "" (no pod cgroups: the runtime places the sandboxes itself).
func NewHost(root, driver string, sys System) (*Host, error) {
	if root == "" {
		return nil, nil
	}
	if driver == "" {
		driver = DriverCgroupfs
	}
	if driver != DriverCgroupfs && driver != DriverSystemd {
		return nil, fmt.Errorf("invalid cgroup driver %q: want cgroupfs or systemd", driver)
	}
	parts, err := parseCgroupRoot(root, driver)
	if err != nil {
		return nil, err
	}
	return &Host{sys: sys, driver: driver, root: parts, v2: sys.Unified(), created: map[string]bool{}, ready: map[string]bool{}}, nil
}

// ownedByPodrun reports whether a cgroup lies in podrun's own hierarchy,
// DefaultRoot (/podrun, or /podrun.slice with systemd), where nothing
// but podrun puts libcgroups.
func ownedByPodrun(name, driver string) bool {
	own, _ := parseCgroupRoot(DefaultRoot, driver)
	r := own.path(driver)
	return name == r || strings.HasPrefix(name, r+"/")
}

// owns reports whether podrun may set the resources of the parent cgroup
// name and remove it once empty: it is in podrun's own hierarchy, or this
// run created it.
func (h *Host) owns(name string) bool {
	if ownedByPodrun(name, h.driver) {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.created[name]
}

// ensure creates the cgroup if it does not exist and sets its resources
// (the kubelet's Create: the library's Apply(-1), then Set). An existing
// cgroup gets its resources set only when set is true.
func (h *Host) ensure(name string, rc podResources, set bool) error {
	res := libResources(rc, h.v2)
	m, err := h.sys.NewManager(libCgroupConfig(name, h.driver, res))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if !m.Exists() {
		if err := m.Apply(-1); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", name, err)
		}
		if h.driver == DriverCgroupfs {
			// Apply skips the hierarchies it has nothing to set in
			// (devices, with SkipDevices as the kubelet sets it); the
			// runtime makes the sandbox's cgroup there later. Make the
			// cgroup in every hierarchy now, so that it holds its
			// parents in each of them (see ensurePodCgroup).
			for _, p := range m.GetPaths() {
				if err := os.MkdirAll(p, 0o755); err != nil {
					return fmt.Errorf("creating cgroup %s: %w", name, err)
				}
			}
		}
		h.mu.Lock()
		h.created[name] = true
		h.mu.Unlock()
		set = true
	}
	if !set {
		return nil
	}
	if err := m.Set(res); err != nil {
		return fmt.Errorf("setting the resources of cgroup %s: %w", name, err)
	}
	return nil
}

// EnsurePodCgroup creates the root and the pod's QoS cgroup when missing,
// and the pod's cgroup, with their resources, and returns the pod cgroup's
// name for the sandbox's CgroupParent — also with an error, for the
// teardown to remove what was made. The burstable QoS cgroup's shares
// follow every pod in it (updateBurstable).
//
// Other podruns share the root and QoS cgroups and remove them once empty
// (removePodCgroup), with no lock between processes: a parent can vanish
// between being made and the pod cgroup being made below it. Nothing can
// remove a parent once the pod's cgroup is in it (the kernel refuses to
// remove a cgroup with children), so a step that finds a cgroup gone
// (parentGone) starts again from the root, and the parents' resources are
// set once more after the pod cgroup holds them in place, in case another
// podrun's removal and this pod's creation (which makes missing parents
// along the way) made a parent anew without them.
func (h *Host) EnsurePodCgroup(pod *v1.Pod) (string, error) {
	const attempts = 10
	qos := podresources.QOSClass(pod)
	name := h.PodCgroupName(pod)
	h.parents.Lock()
	defer h.parents.Unlock()
	unlock, err := h.sys.lockSlices(h.driver)
	if err != nil {
		return name, err
	}
	defer unlock()
	for range attempts {
		if err = h.ensurePodCgroupOnce(pod, qos, name); err == nil || !parentGone(err) {
			return name, err
		}
		clear(h.ready)
	}
	return name, err
}

// parentGone tells an error of a step on a cgroup that another podrun
// removed meanwhile: its path gone (ENOENT), or, while the kernel removes
// it, its files answering ENODEV (cgroup v1's cpuset: a pod cgroup made
// below it copies its cpuset.mems, "read .../podrun/besteffort/cpuset.mems:
// no such device").
func parentGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV)
}

// PodCgroupName is the name of the pod's cgroup on this host.
func (h *Host) PodCgroupName(pod *v1.Pod) string {
	return podCgroupName(pod, podresources.QOSClass(pod), h.root, h.driver)
}

// ensurePodCgroupOnce is one attempt of EnsurePodCgroup (h.parents held).
// The root's and besteffort's resources are fixed, so once such a parent
// is ready — set while a pod cgroup of this run holds it in place — later
// pods of the run skip it; the burstable one is set from its pods each
// time one is added.
func (h *Host) ensurePodCgroupOnce(pod *v1.Pod, qos v1.PodQOSClass, name string) error {
	type parent struct {
		name string
		rc   podResources
	}
	var parents []parent
	for i := 1; i <= len(h.root); i++ {
		parents = append(parents, parent{name: h.root[:i].path(h.driver)})
	}
	qosName := qosCgroupName(qos, h.root).path(h.driver)
	switch qos {
	case v1.PodQOSBestEffort:
		parents = append(parents, parent{qosName, qosCgroupResources(qos, 0)})
	case v1.PodQOSBurstable:
		// Its shares follow the pods in it: set below, every time.
		parents = append(parents, parent{name: qosName})
	}
	var pending []parent
	for _, p := range parents {
		if h.ready[p.name] {
			continue
		}
		// Made bare here; its resources are set below, once pinned.
		if err := h.ensure(p.name, podResources{}, false); err != nil {
			return err
		}
		pending = append(pending, p)
	}
	if err := h.ensure(name, podResourceConfig(pod), true); err != nil {
		return err
	}
	for _, p := range pending {
		if p.rc != (podResources{}) && h.owns(p.name) {
			if err := h.set(p.name, p.rc); err != nil {
				return err
			}
		}
		h.ready[p.name] = true
	}
	if qos == v1.PodQOSBurstable && h.owns(qosName) {
		return h.sys.updateBurstable(qosName, h.driver, h.v2, h.driver == DriverSystemd)
	}
	return nil
}

// set sets the resources of an existing cgroup.
func (h *Host) set(name string, rc podResources) error {
	res := libResources(rc, h.v2)
	m, err := h.sys.NewManager(libCgroupConfig(name, h.driver, res))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if err := m.Set(res); err != nil {
		return fmt.Errorf("setting the resources of cgroup %s: %w", name, err)
	}
	return nil
}

// RemovePodCgroup removes the pod's cgroup and then its QoS cgroup and the
// root, innermost first, while podrun owns them and they are empty. A
// cgroup already gone counts as removed. sandboxesGone says the runtime
// removed every sandbox of the pod: then a process still in the pod's
// cgroup is one the runtime lost, and is killed first (killStrays);
// otherwise the cgroup is only removed if empty.
func (h *Host) RemovePodCgroup(name string, sandboxesGone bool) error {
	h.parents.Lock()
	defer h.parents.Unlock()
	// A parent removed now is ensured again by the next pod that needs it.
	clear(h.ready)
	return h.sys.removePodCgroup(name, h.driver, h.owns, sandboxesGone)
}

// RemoveRecorded removes the pod cgroup a sandbox's annotation or a data
// dir's owner record names (reclaiming, `podrun down`), once the pod has
// no sandbox left on the runtime: a process still in it is killed first
// (killStrays). The parents removed once empty are those in podrun's own
// hierarchy. The driver is told by the name: slices end in ".slice".
func (s System) RemoveRecorded(name string) error {
	driver := DriverCgroupfs
	if strings.HasSuffix(name, ".slice") {
		driver = DriverSystemd
	}
	return s.removePodCgroup(name, driver, func(parent string) bool { return ownedByPodrun(parent, driver) }, true)
}

func (s System) removePodCgroup(name, driver string, owns func(string) bool, killFirst bool) error {
	if !isPodCgroup(name, driver) {
		// A record or annotation naming another cgroup is not podrun's:
		// neither its processes nor its children are for podrun to end.
		return fmt.Errorf("cgroup %s is not a pod's cgroup (pod<UID>): left alone", name)
	}
	m, err := s.NewManager(libCgroupConfig(name, driver, &libcgroups.Resources{}))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if killFirst {
		if err := killStrays(m); err != nil {
			return fmt.Errorf("cgroup %s: %w", name, err)
		}
	}
	if err := m.Destroy(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing cgroup %s: %w", name, err)
	}
	unlock, err := s.lockSlices(driver)
	if err != nil {
		return err
	}
	defer unlock()
	// Every ancestor but the hierarchy's root is the QoS cgroup or a level
	// of --cgroup-root.
	qos := path.Dir(name)
	for parent := qos; parent != "/" && parent != "." && owns(parent); parent = path.Dir(parent) {
		removed, err := s.removeIfEmpty(parent, driver)
		if err != nil {
			return err
		}
		if !removed {
			if parent == qos && isBurstable(qos) {
				// Other pods are left in it: its shares are theirs now.
				return s.updateBurstable(qos, driver, s.Unified(), driver == DriverSystemd)
			}
			return nil
		}
	}
	return nil
}

// isPodCgroup tells whether name is a pod's cgroup as podCgroupName names
// one: its last element pod<UID>, or with systemd <parent>-pod<UID>.slice.
// A pod cgroup's name reaches a removal from a sandbox's annotation or a
// data dir's owner record, which any CRI client or a corrupt file could
// set to a cgroup of the node's.
func isPodCgroup(name, driver string) bool {
	base := path.Base(path.Clean("/" + name))
	if driver == DriverSystemd {
		slice, ok := strings.CutSuffix(base, ".slice")
		if !ok {
			return false
		}
		base = slice[strings.LastIndex(slice, "-")+1:]
	}
	return len(base) > len("pod") && strings.HasPrefix(base, "pod")
}

// killStrays sends SIGKILL to every process left in the cgroup of m and
// its children, as the kubelet's pod container manager does before it
// removes the cgroup of a pod the runtime no longer runs
// (tryKillingCgroupProcesses, up to five rounds for the kills that fail).
// Such a process is one the runtime lost: containerd 2.4 leaves a
// sandbox's shim and its `runc init` behind when its client dies during
// RunPodSandbox, with the sandbox gone from CRI, and the `runc init` keeps
// the pod's cgroup busy. A cgroup gone or unreadable has nothing to kill
// (its removal then says what is wrong).
func killStrays(m libcgroups.Manager) error {
	pids, err := m.GetAllPids()
	if err != nil || len(pids) == 0 {
		return nil
	}
	var failed []error
	for range 5 {
		failed = failed[:0]
		var again []int
		for _, pid := range pids {
			if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
				failed = append(failed, fmt.Errorf("killing process %d left in it: %w", pid, err))
				again = append(again, pid)
			}
		}
		if len(again) == 0 {
			return nil
		}
		pids = again
	}
	return errors.Join(failed...)
}

// isBurstable tells whether a pod's parent cgroup is a burstable QoS
// cgroup: burstable, or with systemd <root>-burstable.slice.
func isBurstable(name string) bool {
	base := strings.TrimSuffix(path.Base(name), ".slice")
	return base == qosBurstableName || strings.HasSuffix(base, "-"+qosBurstableName)
}

// updateBurstable sets the burstable QoS cgroup name's cpu shares (cpu.weight
// on cgroup v2) from the cpu requests of the pods in it now, as the
// kubelet's QoS manager does from its active pods — here the pods of every
// podrun under this root, so each podrun's pod coming or going leaves the
// shares right for the others. Each pod's request is read back from its
// own cgroup's shares (exact on v1; on v2 the weight keeps about one in 26
// of them). The node's podruns take turns (Lock), so the last to change
// the pods in it also sets it last; locked says the caller holds the lock
// already (lockSlices).
func (s System) updateBurstable(name, driver string, v2, locked bool) error {
	if s.Lock != nil && !locked {
		unlock, err := s.Lock()
		if err != nil {
			return err
		}
		defer unlock()
	}
	m, err := s.NewManager(libCgroupConfig(name, driver, &libcgroups.Resources{}))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	dir, file := m.Path("cpu"), "cpu.shares"
	if v2 {
		dir, file = m.Path(""), "cpu.weight"
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil // removed meanwhile: nothing left to share
	}
	if err != nil {
		return fmt.Errorf("reading cgroup %s: %w", name, err)
	}
	var milli int64
	for _, e := range entries {
		if !e.IsDir() {
			continue // a control file; every child cgroup is a pod's
		}
		v, err := fscommon.GetCgroupParamUint(filepath.Join(dir, e.Name()), file)
		if err != nil {
			continue // removed meanwhile
		}
		if v2 {
			v = sharesFromWeight(v)
		}
		milli += requestFromShares(v)
	}
	rc := qosCgroupResources(v1.PodQOSBurstable, milli)
	res := libResources(rc, v2)
	if m, err = s.NewManager(libCgroupConfig(name, driver, res)); err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if err := m.Set(res); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("setting the resources of cgroup %s: %w", name, err)
	}
	return nil
}

// lockSlices takes the node's cgroup lock (Lock) with the systemd driver
// and returns its release; with cgroupfs it takes nothing. With cgroupfs
// the kernel itself refuses to remove a parent that another podrun has
// just made a pod cgroup in (rmdir of a cgroup with children fails), so
// creation and removal need no lock between podruns. systemd has no such
// check: stopping a slice stops every unit in it, so a parent slice found
// empty and stopped by one podrun while another makes its pod's slice
// below it took the new pod's slice and its sandbox's scope along (the
// systemd guest: a StopPodSandbox that never returned, and concurrent
// runs that hung). With systemd a podrun holds the lock while it makes
// a pod's slices and while it looks at a parent and stops it.
func (s System) lockSlices(driver string) (func(), error) {
	if driver != DriverSystemd || s.Lock == nil {
		return func() {}, nil
	}
	return s.Lock()
}

// removeIfEmpty removes a parent cgroup that has no child cgroups and no
// processes. With cgroupfs that is an rmdir of the cgroup in every
// hierarchy, which the kernel refuses while the cgroup is in use — never the
// library's recursive removal, which would take along a pod cgroup another
// podrun has just made. With systemd the slice is stopped once no child
// cgroup is left in it, under the node's cgroup lock (lockSlices).
func (s System) removeIfEmpty(name, driver string) (bool, error) {
	m, err := s.NewManager(libCgroupConfig(name, driver, &libcgroups.Resources{}))
	if err != nil {
		return false, fmt.Errorf("cgroup %s: %w", name, err)
	}
	paths := m.GetPaths()
	if driver == DriverSystemd {
		for _, p := range paths {
			if hasChildCgroup(p) {
				return false, nil
			}
		}
		if err := m.Destroy(); err != nil {
			return false, fmt.Errorf("removing cgroup %s: %w", name, err)
		}
		return true, nil
	}
	for _, p := range paths {
		switch err := s.Rmdir(p); {
		case err == nil, errors.Is(err, unix.ENOENT):
		case errors.Is(err, unix.EBUSY), errors.Is(err, unix.ENOTEMPTY):
			return false, nil // in use
		default:
			return false, fmt.Errorf("removing cgroup %s: %w", p, err)
		}
	}
	return true, nil
}

func hasChildCgroup(dir string) bool {
	entries, _ := os.ReadDir(dir) // none when it is gone
	return slices.ContainsFunc(entries, fs.DirEntry.IsDir)
}

// ContainerResources is the container's own cgroup limits, as the kubelet's
// calculateLinuxResources sets them with cpuCFSQuota on (the default): cpu
// shares from the request (from the limit when there is no request), the
// CFS period always and a quota from the cpu limit (0, none, without one),
// and the memory limit in bytes when set. (Only the cpu and memory fields;
// containerConfig adds oom_score_adj (oomscore.go); hugepages and cgroup
// v2's unified settings are not set.)
func ContainerResources(c *v1.Container) *runtimeapi.LinuxContainerResources {
	cpuRequest, hasRequest := c.Resources.Requests[v1.ResourceCPU]
	cpuLimit := c.Resources.Limits[v1.ResourceCPU]
	shares := milliCPUToShares(cpuRequest.MilliValue())
	if !hasRequest && !cpuLimit.IsZero() {
		shares = milliCPUToShares(cpuLimit.MilliValue())
	}
	memLimit := c.Resources.Limits[v1.ResourceMemory]
	return &runtimeapi.LinuxContainerResources{
		CpuShares:          int64(shares),
		CpuPeriod:          quotaPeriod,
		CpuQuota:           milliCPUToQuota(cpuLimit.MilliValue(), quotaPeriod),
		MemoryLimitInBytes: memLimit.Value(),
	}
}
