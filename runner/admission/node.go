package admission

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Node is what admission knows of the node: the facts a kubelet puts in
// its Node object, and its admission flags.
type Node struct {
	Name   string
	Labels map[string]string

	// Allocatable is what pods may request: cpu, memory, ephemeral-storage,
	// pods and hugepages-<size>. A resource missing here has none.
	Allocatable v1.ResourceList

	// AllowedUnsafeSysctls are sysctls, or prefixes ending in *, allowed
	// besides the safe ones (--allowed-unsafe-sysctls).
	AllowedUnsafeSysctls []string

	AppArmorEnabled bool
	KernelVersion   string // e.g. 6.1.0-18-amd64; gates some safe sysctls; "" unknown

	// MemoryCapacity is the machine's memory in bytes (MemTotal), what the
	// kubelet scales a Burstable container's oom_score_adj by; 0 unknown.
	MemoryCapacity int64
}

// HostOptions are the flags NodeFromHost builds the node from.
type HostOptions struct {
	NodeName             string
	RootDir              string            // its filesystem is the node's ephemeral storage
	SystemReserved       v1.ResourceList   // --system-reserved
	Labels               map[string]string // --node-labels, over the default labels
	AllowedUnsafeSysctls []string          // --allowed-unsafe-sysctls, as parsed by ParseAllowedUnsafeSysctls
}

// defaultMaxPods is the kubelet's default --max-pods.
const defaultMaxPods = 110

// The kubelet's default hard eviction thresholds, which it also holds back
// from allocatable (pkg/kubelet/cm GetNodeAllocatableReservation with the
// defaults of pkg/kubelet/eviction): memory.available<100Mi and
// nodefs.available<10%.
const evictionHardMemoryBytes = 100 << 20 // 100Mi

const evictionHardNodefsPercent = 10

// hostFacts is what NodeFromHost reads from the machine.
type hostFacts struct {
	CPUs        int
	MemoryBytes int64            // MemTotal
	RootFsBytes int64            // size of the root dir's filesystem
	HugePages   map[string]int64 // "2Mi" → bytes of pre-allocated huge pages of that size
	AppArmor    bool
	Kernel      string
}

// NodeFromHost builds the node from this machine, as a kubelet with default
// settings would describe it: capacity from the CPUs podrun may use, the
// memory in /proc/meminfo, the size of the root dir's filesystem and the
// huge pages in /sys/kernel/mm/hugepages; allocatable is capacity less
// --system-reserved and the default hard eviction thresholds.
func NodeFromHost(o HostOptions) (Node, error) {
	f, err := readHostFacts(o.RootDir)
	if err != nil {
		return Node{}, err
	}
	return nodeInfo(f, o), nil
}

// nodeInfo computes the node from the machine's facts and the flags.
func nodeInfo(f hostFacts, o HostOptions) Node {
	labels := map[string]string{
		v1.LabelHostname:          o.NodeName,
		v1.LabelOSStable:          runtime.GOOS,
		v1.LabelArchStable:        runtime.GOARCH,
		"beta.kubernetes.io/os":   runtime.GOOS,
		"beta.kubernetes.io/arch": runtime.GOARCH,
	}
	for k, v := range o.Labels {
		labels[k] = v
	}

	alloc := v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(int64(f.CPUs)*1000, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(f.MemoryBytes, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(f.RootFsBytes, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(defaultMaxPods, resource.DecimalSI),
	}
	sub := func(name v1.ResourceName, q resource.Quantity) {
		a := alloc[name]
		a.Sub(q)
		if a.Sign() < 0 {
			a = *resource.NewQuantity(0, a.Format)
		}
		alloc[name] = a
	}
	for name, q := range o.SystemReserved {
		sub(name, q)
	}
	sub(v1.ResourceMemory, *resource.NewQuantity(evictionHardMemoryBytes, resource.BinarySI))
	sub(v1.ResourceEphemeralStorage, *resource.NewQuantity(f.RootFsBytes*evictionHardNodefsPercent/100, resource.BinarySI))
	// Huge pages are memory the pods cannot have as memory (kubelet
	// nodestatus MachineInfo).
	for size, bytes := range f.HugePages {
		q := *resource.NewQuantity(bytes, resource.BinarySI)
		alloc[v1.ResourceName(v1.ResourceHugePagesPrefix+size)] = q
		sub(v1.ResourceMemory, q)
	}

	return Node{
		Name:                 o.NodeName,
		Labels:               labels,
		Allocatable:          alloc,
		AllowedUnsafeSysctls: o.AllowedUnsafeSysctls,
		AppArmorEnabled:      f.AppArmor,
		KernelVersion:        f.Kernel,
		MemoryCapacity:       f.MemoryBytes,
	}
}

// readHostFacts reads the machine. Only the CPUs, the memory and the root
// dir's filesystem are required; the rest defaults to none or unknown.
func readHostFacts(rootDir string) (hostFacts, error) {
	f := hostFacts{CPUs: runtime.NumCPU()}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return f, fmt.Errorf("reading the node's memory: %w", err)
	}
	if f.MemoryBytes, err = parseMemTotal(b); err != nil {
		return f, fmt.Errorf("reading the node's memory: /proc/meminfo: %w", err)
	}
	if f.RootFsBytes, err = fsSize(rootDir); err != nil {
		return f, fmt.Errorf("reading the node's ephemeral storage: %w", err)
	}
	f.HugePages = readHugePages("/sys/kernel/mm/hugepages")
	f.AppArmor = appArmorEnabled()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		f.Kernel = strings.TrimSpace(string(b))
	}
	return f, nil
}

// parseMemTotal returns MemTotal of /proc/meminfo in bytes.
func parseMemTotal(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "MemTotal:" {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad MemTotal %q", f[1])
		}
		if len(f) > 2 && f[2] == "kB" {
			n *= 1024
		}
		return n, nil
	}
	return 0, errors.New("no MemTotal")
}

// fsSize is the size in bytes of the filesystem holding dir, or its nearest
// parent that exists (podrun creates the root dir later) and that this
// process may reach (a dry run as a user who cannot search the root dir's
// parents reads the filesystem of the nearest one it can).
func fsSize(dir string) (int64, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(st.Blocks) * int64(st.Bsize), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) || parent == dir {
			return 0, fmt.Errorf("statfs %s: %w", dir, err)
		}
		dir = parent
	}
}

// readHugePages reads the pre-allocated huge pages per size from
// <dir>/hugepages-<n>kB/nr_hugepages, keyed by size as the resource name
// spells it (2Mi, 1Gi). Unreadable entries are left out.
func readHugePages(dir string) map[string]int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for _, e := range entries {
		kb, ok := strings.CutPrefix(e.Name(), "hugepages-")
		if !ok {
			continue
		}
		kb, ok = strings.CutSuffix(kb, "kB")
		if !ok {
			continue
		}
		size, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "nr_hugepages"))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			continue
		}
		name := resource.NewQuantity(size*1024, resource.BinarySI).String()
		out[name] = n * size * 1024
	}
	return out
}

// appArmorEnabled tells whether the kernel enforces AppArmor, as runc's
// apparmor.IsEnabled (which the kubelet uses) does.
func appArmorEnabled() bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return err == nil && len(b) > 1 && b[0] == 'Y'
}

// --------------------------------------------------------------- flags --

// splitItems splits repeated flag values that may each hold a comma list.
func splitItems(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ParseSystemReserved parses --system-reserved values such as
// cpu=500m,memory=1Gi,ephemeral-storage=1Gi.
func ParseSystemReserved(vals []string) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	for _, item := range splitItems(vals) {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want RESOURCE=QUANTITY", item)
		}
		name := v1.ResourceName(strings.TrimSpace(k))
		switch name {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage:
		default:
			return nil, fmt.Errorf("%q: podrun reserves only cpu, memory and ephemeral-storage", item)
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", item, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%q: negative quantity", item)
		}
		out[name] = q
	}
	return out, nil
}

// ParseNodeLabels parses --node-labels values such as
// topology.kubernetes.io/zone=z1,disktype=ssd, checking each key and value
// as the API server checks labels.
func ParseNodeLabels(vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range splitItems(vals) {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KEY=VALUE", item)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("%q: invalid label key: %s", item, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("%q: invalid label value: %s", item, strings.Join(errs, "; "))
		}
		out[k] = v
	}
	return out, nil
}

// sysctlPattern is a sysctl name or a prefix ending in * (policy validation
// IsValidSysctlPattern).
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// ParseAllowedUnsafeSysctls parses --allowed-unsafe-sysctls values (names
// or prefixes ending in *, e.g. kernel.msg*,net.core.somaxconn). Like the
// kubelet, it refuses a sysctl not known to be namespaced (ipc: kernel.sem,
// kernel.shm*, kernel.msg*, fs.mqueue.*; net: net.*), since the pod would
// change it for the whole node.
func ParseAllowedUnsafeSysctls(vals []string) ([]string, error) {
	var out []string
	for _, s := range splitItems(vals) {
		if len(s) > 253 || !sysctlPattern.MatchString(s) {
			return nil, fmt.Errorf("%q is not a sysctl name or a pattern ending in *", s)
		}
		s = normalizeSysctl(s)
		if sysctlNamespace(strings.TrimSuffix(s, "*")) == "" {
			return nil, fmt.Errorf("%q is not known to be namespaced", s)
		}
		out = append(out, s)
	}
	return out, nil
}
