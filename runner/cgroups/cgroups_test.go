package cgroups

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/runner/cgroups/cgroupstest"
)

const cgTestUID = "1234-abcd"

// cgPod is a pod of UID cgTestUID with one container per resource spec
// (cgroupstest.Pod).
func cgPod(specs ...string) *v1.Pod { return cgroupstest.Pod(cgTestUID, specs...) }

func cgResources(spec string) v1.ResourceRequirements { return cgroupstest.Resources(spec) }

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

func TestCgroupConversions(t *testing.T) {
	for _, tc := range []struct {
		milli  int64
		shares uint64
		quota  int64
	}{
		{0, 2, 0},
		{1, 2, 1000},
		{5, 5, 1000},
		{10, 10, 1000},
		{100, 102, 10000},
		{500, 512, 50000},
		{1000, 1024, 100000},
		{700, 716, 70000},
		{300000, 262144, 30000000},
		// Where the kubelet's products overflow, or its quota is more than
		// the kernel takes: the most shares, the most quota.
		{256000, 262144, 25600000},
		{maxQuota * milliCPUToCPU / quotaPeriod, 262144, maxQuota - 15},
		{maxQuota*milliCPUToCPU/quotaPeriod + 1, 262144, maxQuota},
		{1e14, 262144, maxQuota},          // 1e19 µs: wrapped around
		{1e16, 262144, maxQuota},          // shares: wrapped around
		{math.MaxInt64, 262144, maxQuota}, // a sum saturated (podresources.MilliValue)
	} {
		if got := milliCPUToShares(tc.milli); got != tc.shares {
			t.Errorf("milliCPUToShares(%d) = %d, want %d", tc.milli, got, tc.shares)
		}
		if got := milliCPUToQuota(tc.milli, quotaPeriod); got != tc.quota {
			t.Errorf("milliCPUToQuota(%d) = %d, want %d", tc.milli, got, tc.quota)
		}
	}
	for shares, want := range map[uint64]uint64{2: 1, 1024: 39, 512: 20, 262144: 10000, 300000: 10000} {
		if got := cpuWeight(shares); got != want {
			t.Errorf("cpuWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}

func TestCgroupPodCgroupName(t *testing.T) {
	guaranteed, burstable, bestEffort := v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort
	for _, tc := range []struct {
		root, driver string
		qos          v1.PodQOSClass
		want         string
	}{
		{"/podrun", DriverCgroupfs, guaranteed, "/podrun/pod1234-abcd"},
		{"/podrun", DriverCgroupfs, burstable, "/podrun/burstable/pod1234-abcd"},
		{"/podrun", DriverCgroupfs, bestEffort, "/podrun/besteffort/pod1234-abcd"},
		{"/", DriverCgroupfs, guaranteed, "/pod1234-abcd"},
		{"/a/b-c/", DriverCgroupfs, burstable, "/a/b-c/burstable/pod1234-abcd"},
		{"/podrun", DriverSystemd, guaranteed, "/podrun.slice/podrun-pod1234_abcd.slice"},
		{"/podrun", DriverSystemd, burstable, "/podrun.slice/podrun-burstable.slice/podrun-burstable-pod1234_abcd.slice"},
		{"/podrun", DriverSystemd, bestEffort, "/podrun.slice/podrun-besteffort.slice/podrun-besteffort-pod1234_abcd.slice"},
		{"podrun.slice", DriverSystemd, burstable, "/podrun.slice/podrun-burstable.slice/podrun-burstable-pod1234_abcd.slice"},
		{"/", DriverSystemd, guaranteed, "/pod1234_abcd.slice"},
		{"/ci-jobs", DriverSystemd, bestEffort, "/ci_jobs.slice/ci_jobs-besteffort.slice/ci_jobs-besteffort-pod1234_abcd.slice"},
	} {
		root, err := parseCgroupRoot(tc.root, tc.driver)
		if err != nil {
			t.Fatalf("parseCgroupRoot(%q): %v", tc.root, err)
		}
		if got := podCgroupName(cgPod(), tc.qos, root, tc.driver); got != tc.want {
			t.Errorf("podCgroupName(%s, %q, %s) = %q, want %q", tc.qos, tc.root, tc.driver, got, tc.want)
		}
	}
	for _, bad := range []struct{ root, driver string }{{"podrun", DriverCgroupfs}, {"/a_b", DriverSystemd}} {
		if _, err := parseCgroupRoot(bad.root, bad.driver); err == nil {
			t.Errorf("parseCgroupRoot(%q, %s): no error", bad.root, bad.driver)
		}
	}
}

func TestCgroupLibConfig(t *testing.T) {
	cg := libCgroupConfig("/podrun/burstable/podx", DriverCgroupfs, nil)
	if cg.Path != "/podrun/burstable/podx" || cg.Systemd || cg.Name != "" {
		t.Errorf("cgroupfs config = %+v", cg)
	}
	cg = libCgroupConfig("/podrun.slice/podrun-burstable.slice/podrun-burstable-podx.slice", DriverSystemd, nil)
	if cg.Path != "" || !cg.Systemd || cg.Parent != "podrun-burstable.slice" || cg.Name != "podrun-burstable-podx.slice" {
		t.Errorf("systemd config = %+v", cg)
	}
	cg = libCgroupConfig("/podrun.slice", DriverSystemd, nil)
	if cg.Parent != "-.slice" || cg.Name != "podrun.slice" {
		t.Errorf("systemd root config = %+v", cg)
	}
}

func TestCgroupPodResourceConfig(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	withInit := func(p *v1.Pod, sidecar bool, spec string) *v1.Pod {
		c := v1.Container{Name: "init" + string(rune('0'+len(p.Spec.InitContainers))), Resources: cgResources(spec)}
		if sidecar {
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want podResources
	}{
		{"guaranteed gets shares, quota, period and memory",
			cgPod("500m/500m/128Mi/128Mi"),
			podResources{CPUShares: u64(512), CPUQuota: i64(50000), CPUPeriod: u64(100000), Memory: i64(128 << 20)}},
		{"guaranteed sums its containers",
			cgPod("500m/500m/128Mi/128Mi", "250m/250m/64Mi/64Mi"),
			podResources{CPUShares: u64(768), CPUQuota: i64(75000), CPUPeriod: u64(100000), Memory: i64(192 << 20)}},
		{"burstable with every limit gets quota and memory",
			cgPod("100m/200m/64Mi/128Mi"),
			podResources{CPUShares: u64(102), CPUQuota: i64(20000), CPUPeriod: u64(100000), Memory: i64(128 << 20)}},
		{"burstable without a cpu limit somewhere gets no quota",
			cgPod("100m/200m/64Mi/128Mi", "100m/-/-/64Mi"),
			podResources{CPUShares: u64(204), Memory: i64(192 << 20)}},
		{"burstable without a memory limit somewhere gets no memory limit",
			cgPod("100m/200m/64Mi/128Mi", "-/100m/-/-"),
			podResources{CPUShares: u64(102), CPUQuota: i64(30000), CPUPeriod: u64(100000)}},
		{"burstable with memory only gets minimum shares",
			cgPod("-/-/64Mi/-"),
			podResources{CPUShares: u64(2)}},
		{"besteffort gets shares 2 only",
			cgPod("-/-/-/-", "-/-/-/-"),
			podResources{CPUShares: u64(2)}},
		{"an init container bigger than the containers sets the requests",
			withInit(cgPod("100m/-/-/-"), false, "1/-/-/-"),
			podResources{CPUShares: u64(1024)}},
		{"a sidecar adds to the containers and to later init containers",
			withInit(withInit(cgPod("100m/100m/10Mi/10Mi"), true, "200m/200m/20Mi/20Mi"), false, "250m/250m/5Mi/5Mi"),
			// requests: max(100+200, 200+250) = 450m; limits likewise 450m, max(30Mi, 25Mi)
			podResources{CPUShares: u64(460), CPUQuota: i64(45000), CPUPeriod: u64(100000), Memory: i64(30 << 20)}},
		{"an init container without a memory limit takes the pod's memory limit away",
			withInit(cgPod("100m/200m/10Mi/20Mi"), false, "100m/200m/-/-"),
			podResources{CPUShares: u64(102), CPUQuota: i64(20000), CPUPeriod: u64(100000)}},
		{"shares are capped at 262144",
			cgPod("300/-/-/-"),
			podResources{CPUShares: u64(262144)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podResourceConfig(tc.pod)
			if d := diffResources(got, tc.want); d != "" {
				t.Errorf("podResourceConfig: %s", d)
			}
		})
	}

	t.Run("overhead adds to requests and to non-zero limits", func(t *testing.T) {
		p := cgPod("100m/100m/10Mi/10Mi")
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("50m"), v1.ResourceMemory: resource.MustParse("1Mi")}
		got := podResourceConfig(p)
		want := podResources{CPUShares: u64(153), CPUQuota: i64(15000), CPUPeriod: u64(100000), Memory: i64(11 << 20)}
		if d := diffResources(got, want); d != "" {
			t.Error(d)
		}
	})
	t.Run("pod-level limits declare the limit for every container", func(t *testing.T) {
		p := cgPod("100m/-/10Mi/-")
		p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}}
		got := podResourceConfig(p)
		want := podResources{CPUShares: u64(102), CPUQuota: i64(100000), CPUPeriod: u64(100000), Memory: i64(1 << 30)}
		if d := diffResources(got, want); d != "" {
			t.Error(d)
		}
	})
}

func diffResources(got, want podResources) string {
	var d []string
	cmpU := func(name string, g, w *uint64) {
		if (g == nil) != (w == nil) || (g != nil && *g != *w) {
			d = append(d, name+": got "+fmtU(g)+", want "+fmtU(w))
		}
	}
	cmpI := func(name string, g, w *int64) {
		if (g == nil) != (w == nil) || (g != nil && *g != *w) {
			d = append(d, name+": got "+fmtI(g)+", want "+fmtI(w))
		}
	}
	cmpU("shares", got.CPUShares, want.CPUShares)
	cmpI("quota", got.CPUQuota, want.CPUQuota)
	cmpU("period", got.CPUPeriod, want.CPUPeriod)
	cmpI("memory", got.Memory, want.Memory)
	return strings.Join(d, "; ")
}

func fmtU(v *uint64) string {
	if v == nil {
		return "unset"
	}
	return resource.NewQuantity(int64(*v), resource.DecimalSI).String()
}

func fmtI(v *int64) string {
	if v == nil {
		return "unset"
	}
	return resource.NewQuantity(*v, resource.DecimalSI).String()
}

func TestCgroupQOSResources(t *testing.T) {
	if got := qosCgroupResources(v1.PodQOSBurstable, 350); got.CPUShares == nil || *got.CPUShares != 358 {
		t.Errorf("burstable shares = %s, want 358 (350m)", fmtU(got.CPUShares))
	}
	if got := qosCgroupResources(v1.PodQOSBestEffort, 350); got.CPUShares == nil || *got.CPUShares != 2 {
		t.Errorf("besteffort shares = %s, want 2", fmtU(got.CPUShares))
	}
	if got := qosCgroupResources(v1.PodQOSBurstable, 0); *got.CPUShares != 2 {
		t.Errorf("burstable shares without pods = %d, want 2", *got.CPUShares)
	}
}

// TestCgroupSharesReadBack: a pod cgroup's cpu.shares give back the request
// they came from (from 3m up); cpu.weight gives back shares of that weight.
func TestCgroupSharesReadBack(t *testing.T) {
	for milli := int64(0); milli <= 300000; milli++ {
		got := requestFromShares(milliCPUToShares(milli))
		want := milli
		if milli <= 2 {
			want = 0
		}
		if milli >= maxShares*milliCPUToCPU/sharesPerCPU {
			break // shares capped
		}
		if got != want {
			t.Fatalf("requestFromShares(milliCPUToShares(%d)) = %d, want %d", milli, got, want)
		}
	}
	for w := uint64(1); w <= 10000; w++ {
		if got := cpuWeight(sharesFromWeight(w)); got != w {
			t.Fatalf("cpuWeight(sharesFromWeight(%d)) = %d", w, got)
		}
	}
}

// TestCgroupBurstableSharedByRuns: two podruns under one root share the
// burstable QoS cgroup; its shares are the kubelet's for every Burstable
// pod in it, whichever run made or removed the last one, and a pod
// reclaimed (RemoveRecorded) gives its shares back too.
func TestCgroupBurstableSharedByRuns(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v1", true: "v2"}[v2], func(t *testing.T) {
			sys, fsRoot := fakeSystem(t, v2, false)
			locks := 0
			sys.Lock = func() (func(), error) { locks++; return func() {}, nil }
			file, qos := filepath.Join(fsRoot, "cpu", "podrun", "burstable", "cpu.shares"), "podrun/burstable"
			if v2 {
				file = filepath.Join(fsRoot, qos, "cpu.weight")
			}
			// want is the burstable cgroup's value for the pods' total request.
			want := func(milli int64) string {
				s := milliCPUToShares(milli)
				if v2 {
					s = cpuWeight(s)
				}
				return fmt.Sprint(s)
			}
			runA, _ := NewHost(DefaultRoot, DriverCgroupfs, sys)
			runB, _ := NewHost(DefaultRoot, DriverCgroupfs, sys)
			runA.v2, runB.v2 = v2, v2
			mk := func(h *Host, uid, spec string) string {
				t.Helper()
				p := cgPod(spec)
				p.UID = types.UID(uid)
				name, err := h.EnsurePodCgroup(p)
				if err != nil {
					t.Fatal(err)
				}
				return name
			}
			check := func(when string, milli int64) {
				t.Helper()
				got := readCgroupFile(t, file)
				// On v2 each pod's request is read back from its weight,
				// which keeps about one in 26 shares: one off is as close
				// as it gets.
				if got != want(milli) && !(v2 && (got == want(milli-26) || got == want(milli+26))) {
					t.Errorf("%s: burstable %s = %s, want %s (%dm)", when, filepath.Base(file), got, want(milli), milli)
				}
			}
			a := mk(runA, "a", "500m/-/-/-")
			check("run A's pod", 500)
			b := mk(runB, "b", "100m/-/-/-")
			check("run B's pod beside it", 600)
			c := mk(runB, "c", "1/2/-/-")
			check("a second pod of run B", 1600)
			mk(runA, "g", "1/1/1Gi/1Gi") // Guaranteed: not in burstable
			check("a Guaranteed pod", 1600)
			if err := runB.RemovePodCgroup(b, true); err != nil {
				t.Fatal(err)
			}
			check("run B's first pod gone", 1500)
			// Run B killed; the next run reclaims its pod from the record.
			if err := sys.RemoveRecorded(c); err != nil {
				t.Fatal(err)
			}
			check("run B's second pod reclaimed", 500)
			if err := runA.RemovePodCgroup(a, true); err != nil {
				t.Fatal(err)
			}
			if exists(filepath.Dir(file)) {
				t.Errorf("the burstable cgroup is left after its last pod")
			}
			if locks < 5 {
				t.Errorf("%d locks taken, want one per change of the burstable pods (5)", locks)
			}
		})
	}
}

func readCgroupFile(t *testing.T, path string) string { return cgroupstest.ReadFile(t, path) }

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func TestCgroupLifecycleV2(t *testing.T) {
	for _, useSystemd := range []bool{false, true} {
		driver := map[bool]string{false: DriverCgroupfs, true: DriverSystemd}[useSystemd]
		t.Run(driver, func(t *testing.T) {
			sys, fsRoot := fakeSystem(t, true, useSystemd)
			h, err := NewHost(DefaultRoot, driver, sys)
			if err != nil {
				t.Fatal(err)
			}
			h.v2 = true
			g := cgPod("500m/500m/128Mi/128Mi")
			g.UID = "g-1"
			b := cgPod("100m/-/64Mi/-")
			b.UID = "b-1"
			be := cgPod("-/-/-/-")
			be.UID = "e-1"
			pods := []*v1.Pod{g, b, be}

			names := map[string]string{}
			for _, p := range pods {
				n, err := h.EnsurePodCgroup(p)
				if err != nil {
					t.Fatalf("ensurePodCgroup(%s): %v", p.UID, err)
				}
				names[string(p.UID)] = n
			}
			want := map[string]string{
				"g-1": "/podrun/podg-1", "b-1": "/podrun/burstable/podb-1", "e-1": "/podrun/besteffort/pode-1",
			}
			if useSystemd {
				want = map[string]string{
					"g-1": "/podrun.slice/podrun-podg_1.slice",
					"b-1": "/podrun.slice/podrun-burstable.slice/podrun-burstable-podb_1.slice",
					"e-1": "/podrun.slice/podrun-besteffort.slice/podrun-besteffort-pode_1.slice",
				}
			}
			for uid, n := range want {
				if names[uid] != n {
					t.Errorf("pod %s cgroup = %q, want %q", uid, names[uid], n)
				}
			}
			gDir := filepath.Join(fsRoot, names["g-1"])
			if got := readCgroupFile(t, filepath.Join(gDir, "cpu.weight")); got != "20" {
				t.Errorf("guaranteed cpu.weight = %s, want 20 (512 shares)", got)
			}
			if got := readCgroupFile(t, filepath.Join(gDir, "cpu.max")); got != "50000 100000" {
				t.Errorf("guaranteed cpu.max = %q, want 50000 100000", got)
			}
			if got := readCgroupFile(t, filepath.Join(gDir, "memory.max")); got != "134217728" {
				t.Errorf("guaranteed memory.max = %s", got)
			}
			bDir := filepath.Join(fsRoot, names["b-1"])
			if got := readCgroupFile(t, filepath.Join(bDir, "cpu.weight")); got != "4" {
				t.Errorf("burstable cpu.weight = %s, want 4 (102 shares)", got)
			}
			if exists(filepath.Join(bDir, "cpu.max")) || exists(filepath.Join(bDir, "memory.max")) {
				t.Errorf("burstable pod without limits got cpu.max or memory.max")
			}
			if got := readCgroupFile(t, filepath.Join(filepath.Dir(bDir), "cpu.weight")); got != "4" {
				t.Errorf("burstable QoS cpu.weight = %s, want 4", got)
			}
			if got := readCgroupFile(t, filepath.Join(filepath.Dir(filepath.Join(fsRoot, names["e-1"])), "cpu.weight")); got != "1" {
				t.Errorf("besteffort QoS cpu.weight = %s, want 1", got)
			}

			// Teardown: each pod cgroup goes, the parents once empty.
			if err := h.RemovePodCgroup(names["b-1"], true); err != nil {
				t.Fatal(err)
			}
			if exists(bDir) || exists(filepath.Dir(bDir)) {
				t.Errorf("burstable pod or QoS cgroup left after removal")
			}
			if err := h.RemovePodCgroup(names["b-1"], true); err != nil {
				t.Errorf("removing again: %v", err)
			}
			if err := h.RemovePodCgroup(names["g-1"], true); err != nil {
				t.Fatal(err)
			}
			rootDir := filepath.Dir(gDir)
			if exists(gDir) || !exists(rootDir) {
				t.Errorf("after the guaranteed pod: pod cgroup exists %v, root exists %v (besteffort still there)", exists(gDir), exists(rootDir))
			}
			if err := h.RemovePodCgroup(names["e-1"], true); err != nil {
				t.Fatal(err)
			}
			if exists(rootDir) {
				t.Errorf("root %s left after the last pod", rootDir)
			}
		})
	}
}

func TestCgroupLifecycleV1(t *testing.T) {
	sys, fsRoot := fakeSystem(t, false, false)
	h, err := NewHost(DefaultRoot, DriverCgroupfs, sys)
	if err != nil {
		t.Fatal(err)
	}
	h.v2 = false
	g := cgPod("500m/500m/128Mi/128Mi")
	name, err := h.EnsurePodCgroup(g)
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := filepath.Join(fsRoot, "cpu", name), filepath.Join(fsRoot, "memory", name)
	// The pod cgroup is in every hierarchy, devices too, holding its
	// parents there against another podrun's removal.
	if !exists(filepath.Join(fsRoot, "devices", name)) {
		t.Errorf("no pod cgroup in the devices hierarchy")
	}
	for file, want := range map[string]string{
		filepath.Join(cpu, "cpu.shares"):            "512",
		filepath.Join(cpu, "cpu.cfs_quota_us"):      "50000",
		filepath.Join(cpu, "cpu.cfs_period_us"):     "100000",
		filepath.Join(mem, "memory.limit_in_bytes"): "134217728",
	} {
		if got := readCgroupFile(t, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if err := h.RemovePodCgroup(name, true); err != nil {
		t.Fatal(err)
	}
	for _, ctl := range []string{"cpu", "memory", "devices"} {
		if exists(filepath.Join(fsRoot, ctl, "podrun")) {
			t.Errorf("%s/podrun left", ctl)
		}
	}
}

func TestCgroupForeignRootIsLeftAlone(t *testing.T) {
	sys, fsRoot := fakeSystem(t, true, false)
	// A kubelet's QoS cgroup, there before podrun.
	burstable := filepath.Join(fsRoot, "kubepods", "burstable")
	if err := os.MkdirAll(burstable, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(burstable, "cgroup.controllers"), []byte("cpu memory\n"), 0o644)
	os.WriteFile(filepath.Join(burstable, "cpu.weight"), []byte("77\n"), 0o644)

	h, err := NewHost("/kubepods", DriverCgroupfs, sys)
	if err != nil {
		t.Fatal(err)
	}
	h.v2 = true
	b, e := cgPod("100m/-/-/-"), cgPod("-/-/-/-")
	e.UID = "e-1"
	bName, err := h.EnsurePodCgroup(b)
	if err != nil {
		t.Fatal(err)
	}
	eName, err := h.EnsurePodCgroup(e)
	if err != nil {
		t.Fatal(err)
	}
	if got := readCgroupFile(t, filepath.Join(burstable, "cpu.weight")); got != "77" {
		t.Errorf("existing burstable cpu.weight = %s, want it untouched (77)", got)
	}
	if err := h.RemovePodCgroup(bName, true); err != nil {
		t.Fatal(err)
	}
	if err := h.RemovePodCgroup(eName, true); err != nil {
		t.Fatal(err)
	}
	if !exists(burstable) {
		t.Error("the kubelet's burstable cgroup was removed")
	}
	if exists(filepath.Join(fsRoot, "kubepods", "besteffort")) {
		t.Error("the besteffort cgroup podrun created was left")
	}
	if !exists(filepath.Join(fsRoot, "kubepods")) {
		t.Error("the existing root was removed")
	}
}

// hookedManager calls before(op, cgroup) ahead of the library's Apply and
// Set: a test's way to act as another podrun at the worst moment. An error
// of before is the step's.
type hookedManager struct {
	cgroups.Manager
	name   string
	before func(op, name string) error
}

func (m hookedManager) Apply(pid int) error {
	if err := m.before("apply", m.name); err != nil {
		return err
	}
	return m.Manager.Apply(pid)
}

func (m hookedManager) Set(r *cgroups.Resources) error {
	if err := m.before("set", m.name); err != nil {
		return err
	}
	return m.Manager.Set(r)
}

// TestCgroupParentRemovedByAnotherPodrun: another podrun's teardown removes
// the shared QoS cgroup (empty to it) while this one is making a pod below
// it; the pod cgroup is still made, and the QoS cgroup ends with its
// resources.
func TestCgroupParentRemovedByAnotherPodrun(t *testing.T) {
	const qosName = "/podrun/besteffort"
	for _, c := range []struct {
		name  string
		op    string // the step before which the QoS cgroup vanishes
		who   string // whose step: the QoS cgroup's or the pod's
		ctls  []string
		times int // how often; -1 always
		// dying: the step fails as on a cgroup the kernel is removing at
		// that moment: its files answer ENODEV (v1's cpuset, copying the
		// parent's cpuset.mems into the pod cgroup: "read
		// .../podrun/besteffort/cpuset.mems: no such device", seen with
		// concurrent runs on CRI-O).
		dying bool
		fails bool
	}{
		{name: "before the QoS cgroup's resources are set", op: "set", who: qosName, ctls: []string{"cpu", "memory"}, times: 1},
		{name: "before the pod cgroup is made, in one hierarchy", op: "apply", who: "pod", ctls: []string{"cpu"}, times: 1},
		{name: "before the pod cgroup is made, twice", op: "apply", who: "pod", ctls: []string{"cpu", "memory"}, times: 2},
		{name: "while the pod cgroup is made", op: "apply", who: "pod", ctls: []string{"cpu", "memory"}, times: 1, dying: true},
		{name: "every time", op: "set", who: qosName, ctls: []string{"cpu", "memory"}, times: -1, fails: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys, fsRoot := fakeSystem(t, false, false)
			inner := sys.NewManager
			left := c.times
			sys.NewManager = func(cg *cgroups.Cgroup) (cgroups.Manager, error) {
				m, err := inner(cg)
				return hookedManager{m, cg.Path, func(op, name string) error {
					who := name
					if strings.HasPrefix(name, qosName+"/") {
						who = "pod"
					}
					if op != c.op || who != c.who || left == 0 {
						return nil
					}
					left--
					for _, ctl := range c.ctls {
						os.RemoveAll(filepath.Join(fsRoot, ctl, qosName))
					}
					if c.dying {
						return &os.PathError{Op: "read", Path: filepath.Join(fsRoot, "cpuset", qosName, "cpuset.mems"), Err: unix.ENODEV}
					}
					return nil
				}}, err
			}
			h, err := NewHost(DefaultRoot, DriverCgroupfs, sys)
			if err != nil {
				t.Fatal(err)
			}
			h.v2 = false
			p := cgPod("-/-/-/-")
			name, err := h.EnsurePodCgroup(p)
			if c.fails {
				if err == nil || !strings.Contains(err.Error(), qosName) {
					t.Fatalf("ensurePodCgroup = %v, want an error naming %s", err, qosName)
				}
				return
			}
			if err != nil {
				t.Fatalf("ensurePodCgroup: %v", err)
			}
			for _, ctl := range []string{"cpu", "memory"} {
				if !exists(filepath.Join(fsRoot, ctl, name)) {
					t.Errorf("pod cgroup missing in the %s hierarchy", ctl)
				}
			}
			if got := readCgroupFile(t, filepath.Join(fsRoot, "cpu", qosName, "cpu.shares")); got != "2" {
				t.Errorf("besteffort cpu.shares = %s, want 2", got)
			}
			// The next pod of the run trusts the parents it has set.
			q := cgPod("-/-/-/-")
			q.UID = "q-2"
			if _, err := h.EnsurePodCgroup(q); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCgroupRemoveOfSandbox(t *testing.T) {
	sys, fsRoot := fakeSystem(t, true, false)
	h, _ := NewHost(DefaultRoot, DriverCgroupfs, sys)
	h.v2 = true
	p := cgPod("100m/-/-/-")
	name, err := h.EnsurePodCgroup(p)
	if err != nil {
		t.Fatal(err)
	}
	// Another podrun reclaims it: a fresh process, nothing recorded.
	if err := sys.RemoveRecorded(name); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(fsRoot, "podrun")) {
		t.Error("orphaned pod cgroup or its parents left after reclaiming")
	}
	if err := sys.RemoveRecorded(name); err != nil {
		t.Errorf("already gone: %v", err)
	}
}

func TestCgroupHostOff(t *testing.T) {
	h, err := NewHost("", "", HostSystem())
	if h != nil || err != nil {
		t.Errorf("NewHost(\"\") = %v, %v; want no pod cgroups", h, err)
	}
	if _, err := NewHost("/podrun", "cgroupv3", HostSystem()); err == nil {
		t.Error("an unknown driver was accepted")
	}
}

func TestCgroupContainerResources(t *testing.T) {
	for _, tc := range []struct {
		spec                  string
		shares, quota, memory int64
	}{
		{"500m/500m/128Mi/128Mi", 512, 50000, 128 << 20},
		{"100m/-/64Mi/-", 102, 0, 0},
		{"-/250m/-/1Gi", 256, 25000, 1 << 30}, // no request: shares from the limit
		{"-/-/-/-", 2, 0, 0},
		{"0/-/-/-", 2, 0, 0},
		{"1m/1m/-/-", 2, 1000, 0},
	} {
		c := &v1.Container{Resources: cgResources(tc.spec)}
		got := ContainerResources(c)
		if got.CpuShares != tc.shares || got.CpuQuota != tc.quota || got.CpuPeriod != 100000 || got.MemoryLimitInBytes != tc.memory {
			t.Errorf("ContainerResources(%s) = shares %d quota %d period %d memory %d; want %d %d 100000 %d",
				tc.spec, got.CpuShares, got.CpuQuota, got.CpuPeriod, got.MemoryLimitInBytes, tc.shares, tc.quota, tc.memory)
		}
	}
}

// fakeSystem is a System on a fake cgroup filesystem and that filesystem's root.
func fakeSystem(t *testing.T, v2, useSystemd bool) (System, string) {
	fake, root := cgroupstest.FakeFS(t, v2, useSystemd)
	return System{NewManager: fake.NewManager, Rmdir: fake.Rmdir, Unified: fake.Unified}, root
}

// The systemd driver needs systemd running the host to make its slices;
// cgroupfs does not, and without pod cgroups nothing is made.
func TestCheckDriver(t *testing.T) {
	running := func(v bool) func() bool { return func() bool { return v } }
	for _, tc := range []struct {
		name, root, driver string
		systemd            func() bool
		want               error
	}{
		{"systemd without systemd", DefaultRoot, DriverSystemd, running(false), ErrNoSystemd},
		{"systemd with systemd", DefaultRoot, DriverSystemd, running(true), nil},
		{"cgroupfs without systemd", DefaultRoot, DriverCgroupfs, running(false), nil},
		{"no pod cgroups", "", DriverSystemd, running(false), nil},
		{"not asked", DefaultRoot, DriverSystemd, nil, nil},
	} {
		h, err := NewHost(tc.root, tc.driver, System{Unified: func() bool { return true }, SystemdRunning: tc.systemd})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.CheckDriver(); got != tc.want {
			t.Errorf("%s: CheckDriver = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCgroupSystemdSlicesUnderTheNodeLock: with systemd, stopping a slice
// stops every unit in it, so a parent slice that one podrun finds empty
// and stops while another makes its pod's slice below it takes that pod
// along. Every slice a podrun makes, and every parent it looks at and
// stops, is done under the node's cgroup lock; with cgroupfs the kernel
// refuses to remove a parent with children and nothing is locked for it.
func TestCgroupSystemdSlicesUnderTheNodeLock(t *testing.T) {
	for _, useSystemd := range []bool{false, true} {
		driver := map[bool]string{false: DriverCgroupfs, true: DriverSystemd}[useSystemd]
		t.Run(driver, func(t *testing.T) {
			sys, _ := fakeSystem(t, true, useSystemd)
			held, locks := false, 0
			sys.Lock = func() (func(), error) {
				if held {
					t.Fatal("the node's cgroup lock taken twice by one podrun: it would wait for itself")
				}
				held, locks = true, locks+1
				return func() { held = false }, nil
			}
			var unlocked []string // slices made or stopped without the lock
			newManager := sys.NewManager
			sys.NewManager = func(cg *cgroups.Cgroup) (cgroups.Manager, error) {
				m, err := newManager(cg)
				return lockChecked{Manager: m, name: cg.Name + cg.Path, held: &held, unlocked: &unlocked}, err
			}
			h, err := NewHost(DefaultRoot, driver, sys)
			if err != nil {
				t.Fatal(err)
			}
			h.v2 = true
			name, err := h.EnsurePodCgroup(cgPod("100m/-/-/-"))
			if err != nil {
				t.Fatal(err)
			}
			if err := h.RemovePodCgroup(name, true); err != nil {
				t.Fatal(err)
			}
			if useSystemd && len(unlocked) > 0 {
				t.Errorf("systemd slices made or stopped without the node's lock: %v", unlocked)
			}
			if !useSystemd && locks > 2 {
				// updateBurstable's own turns only.
				t.Errorf("%d locks with cgroupfs, want at most the burstable updates' 2", locks)
			}
			if held {
				t.Error("the lock is still held after the removal")
			}
		})
	}
}

// lockChecked records the cgroups made (Apply) or removed (Destroy)
// while the node's lock is not held, except a pod's own cgroup removed
// after its pod (nothing else makes anything below it).
type lockChecked struct {
	cgroups.Manager
	name     string
	held     *bool
	unlocked *[]string
}

func (m lockChecked) Apply(pid int) error {
	if !*m.held {
		*m.unlocked = append(*m.unlocked, "made "+m.name)
	}
	return m.Manager.Apply(pid)
}

func (m lockChecked) Destroy() error {
	if !*m.held && !strings.Contains(m.name, "-pod") {
		*m.unlocked = append(*m.unlocked, "stopped "+m.name)
	}
	return m.Manager.Destroy()
}
