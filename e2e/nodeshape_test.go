package e2e

// nodeshape.go on the three node shapes the end-to-end tests run on: this
// machine's cgroup v1 (hybrid) with the cgroupfs driver, and cgroup v2
// with either driver (a systemd node, kubeadm's containerd). No build tag:
// `go test ./...` runs it, without a testbed. The layouts and texts are
// written out; TestNodeShapeAgainstPodrun then has podrun's own cgroup
// code (runner/cgroups, on its fake cgroup filesystem) make the cgroups
// and checks the e2e tests would find them where and as they expect.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/cgroups/cgroupstest"
)

var (
	shapeV1 = nodeShape{Driver: driverCgroupfs, Mount: cgroupMount,
		Hierarchies: []string{"blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "memory", "pids", "systemd", "unified"}}
	shapeV2        = nodeShape{V2: true, Driver: driverCgroupfs, Mount: cgroupMount}
	shapeV2Systemd = nodeShape{V2: true, Driver: driverSystemd, Mount: cgroupMount}
)

func TestNodeShapeDriver(t *testing.T) {
	for v, want := range map[string]string{"": "cgroupfs", "cgroupfs": "cgroupfs", "systemd": "systemd", "Systemd": "", "cgroupfs ": "", "none": ""} {
		got, err := parseCgroupDriver(cgroupDriverEnv, v)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("parseCgroupDriver(%q) = %q, %v; want %q", v, got, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), cgroupDriverEnv) {
			t.Errorf("parseCgroupDriver(%q): the error %q does not name $%s", v, err, cgroupDriverEnv)
		}
	}
}

func TestNodeShapeString(t *testing.T) {
	for s, want := range map[*nodeShape]string{
		&shapeV1:        "cgroup v1 (hybrid), cgroupfs driver",
		&shapeV2:        "cgroup v2, cgroupfs driver",
		&shapeV2Systemd: "cgroup v2, systemd driver",
	} {
		if got := s.String(); got != want {
			t.Errorf("%+v: %q, want %q", *s, got, want)
		}
	}
}

// podSpecs are cgroupstest pods of each QoS class.
var podSpecs = map[v1.PodQOSClass]string{
	v1.PodQOSGuaranteed: "500m/500m/128Mi/128Mi",
	v1.PodQOSBurstable:  "100m/-/32Mi/64Mi",
	v1.PodQOSBestEffort: "-/-/-/-",
}

func TestNodeShapePodCgroup(t *testing.T) {
	const kubeUID = "6b1c1a7e-5d2f-4a43-9c1e-0d8f3a2b7c11"
	for _, tc := range []struct {
		name, root string
		qos        v1.PodQOSClass
		uid        string
		// The pod cgroup with cgroupfs (v1 and v2 alike) and with systemd.
		cgroupfs, systemd string
	}{
		{"Guaranteed under podrun's default root", "/podrun", v1.PodQOSGuaranteed, "e2e-cgroup-1a2b3c4d",
			"podrun/pode2e-cgroup-1a2b3c4d",
			"podrun.slice/podrun-pode2e_cgroup_1a2b3c4d.slice"},
		{"Burstable under a root of the test's own", "/podrun/e2e-1a2b3c4d", v1.PodQOSBurstable, "e2e-burstable-1a2b3c4d",
			"podrun/e2e-1a2b3c4d/burstable/pode2e-burstable-1a2b3c4d",
			"podrun.slice/podrun-e2e_1a2b3c4d.slice/podrun-e2e_1a2b3c4d-burstable.slice/podrun-e2e_1a2b3c4d-burstable-pode2e_burstable_1a2b3c4d.slice"},
		{"BestEffort", "/podrun", v1.PodQOSBestEffort, "e2e-fault-cgroup-1a2b",
			"podrun/besteffort/pode2e-fault-cgroup-1a2b",
			"podrun.slice/podrun-besteffort.slice/podrun-besteffort-pode2e_fault_cgroup_1a2b.slice"},
		{"kubeadm's kubelet: cgroupRoot /", kubeletPodsRoot("/"), v1.PodQOSBurstable, kubeUID,
			"kubepods/burstable/pod" + kubeUID,
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6b1c1a7e_5d2f_4a43_9c1e_0d8f3a2b7c11.slice"},
		{"the host's oracle kubelet: cgroupRoot /podrun-kubelet", kubeletPodsRoot("/podrun-kubelet"), v1.PodQOSBurstable, kubeUID,
			"podrun-kubelet/kubepods/burstable/pod" + kubeUID,
			"podrun_kubelet.slice/podrun_kubelet-kubepods.slice/podrun_kubelet-kubepods-burstable.slice/podrun_kubelet-kubepods-burstable-pod6b1c1a7e_5d2f_4a43_9c1e_0d8f3a2b7c11.slice"},
		{"Guaranteed at the top", "/", v1.PodQOSGuaranteed, "a-b", "poda-b", "poda_b.slice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []nodeShape{shapeV1, shapeV2, shapeV2Systemd} {
				want := tc.cgroupfs
				if s.Driver == driverSystemd {
					want = tc.systemd
				}
				if got := s.podCgroup(tc.root, tc.qos, tc.uid); got != want {
					t.Errorf("%s: podCgroup(%q, %s, %q) = %q, want %q", s, tc.root, tc.qos, tc.uid, got, want)
				}
				// podrun names it so too (the sandbox's CgroupParent).
				h, err := cgroups.NewHost(tc.root, s.Driver, cgroups.System{Unified: func() bool { return s.V2 }})
				if err != nil {
					t.Fatal(err)
				}
				if got := h.PodCgroupName(cgroupstest.Pod(tc.uid, podSpecs[tc.qos])); got != "/"+want {
					t.Errorf("%s: podrun's pod cgroup %q, the e2e tests look at %q", s, got, "/"+want)
				}
			}
		})
	}
	for _, tc := range []struct{ root, cgroupfs, systemd string }{
		{"/podrun", "podrun", "podrun.slice"},
		{"/podrun/e2e-conc-1a2b", "podrun/e2e-conc-1a2b", "podrun.slice/podrun-e2e_conc_1a2b.slice"},
		{"/", "", ""},
	} {
		if got := shapeV2.rootCgroup(tc.root); got != tc.cgroupfs {
			t.Errorf("cgroupfs: rootCgroup(%q) = %q, want %q", tc.root, got, tc.cgroupfs)
		}
		if got := shapeV2Systemd.rootCgroup(tc.root); got != tc.systemd {
			t.Errorf("systemd: rootCgroup(%q) = %q, want %q", tc.root, got, tc.systemd)
		}
	}
	if got, want := shapeV2Systemd.qosCgroup("/podrun/e2e-1a2b", v1.PodQOSBestEffort), "podrun.slice/podrun-e2e_1a2b.slice/podrun-e2e_1a2b-besteffort.slice"; got != want {
		t.Errorf("systemd: qosCgroup = %q, want %q", got, want)
	}
}

func TestNodeShapeDirs(t *testing.T) {
	rel := "podrun/besteffort/podx"
	if got, want := shapeV2.cgroupDirs(rel), []string{"/sys/fs/cgroup/podrun/besteffort/podx"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("v2: cgroupDirs = %q, want %q", got, want)
	}
	got := shapeV1.cgroupDirs(rel)
	if len(got) != len(shapeV1.Hierarchies) || got[1] != "/sys/fs/cgroup/cpu/podrun/besteffort/podx" || got[9] != "/sys/fs/cgroup/unified/podrun/besteffort/podx" {
		t.Errorf("v1: cgroupDirs = %q, want one per hierarchy", got)
	}
	for _, tc := range []struct {
		s                    nodeShape
		file, frozen, thawed string
	}{
		{shapeV1, "/sys/fs/cgroup/freezer/" + rel + "/freezer.state", "FROZEN", "THAWED"},
		{shapeV2, "/sys/fs/cgroup/" + rel + "/cgroup.freeze", "1", "0"},
	} {
		if f, fr, th := tc.s.freezer(rel); f != tc.file || fr != tc.frozen || th != tc.thawed {
			t.Errorf("%s: freezer = %s %s %s, want %s %s %s", tc.s, f, fr, th, tc.file, tc.frozen, tc.thawed)
		}
	}
	const id = "0123456789abcdef"
	if got := shapeV2.sandboxOfCgroup(id); got != id {
		t.Errorf("cgroupfs: sandboxOfCgroup = %q", got)
	}
	if got := shapeV2Systemd.sandboxOfCgroup("cri-containerd-" + id + ".scope"); got != id {
		t.Errorf("systemd: sandboxOfCgroup = %q", got)
	}
}

// render is the files of limits on s, one "path=text" per file (texts
// joined with |).
func render(s nodeShape, rel string, limits ...cgroupLimit) string {
	var out []string
	for _, f := range s.files(limits...) {
		out = append(out, strings.TrimPrefix(s.path(rel, f), "/sys/fs/cgroup/")+"="+strings.Join(f.Texts, "|"))
	}
	return strings.Join(out, "\n")
}

func TestNodeShapeLimits(t *testing.T) {
	unlimited := "9223372036854771712"
	if os.Getpagesize() != 4096 {
		unlimited = "-" // not this table's machine; v1MemoryUnlimited says
	}
	for _, tc := range []struct {
		name   string
		limits []cgroupLimit
		v1, v2 string
	}{
		{"a Guaranteed pod of 500m and 128Mi",
			[]cgroupLimit{cpuShares(512), cpuQuota(50000, 100000), memoryLimit(134217728)},
			"cpu/c/cpu.shares=512\ncpu/c/cpu.cfs_quota_us=50000\ncpu/c/cpu.cfs_period_us=100000\nmemory/c/memory.limit_in_bytes=134217728",
			"c/cpu.weight=20\nc/cpu.max=50000 100000\nc/memory.max=134217728"},
		{"a Burstable pod without a cpu limit",
			[]cgroupLimit{cpuShares(102), cpuQuota(-1, 100000), memoryLimit(67108864)},
			"cpu/c/cpu.shares=102\ncpu/c/cpu.cfs_quota_us=-1\ncpu/c/cpu.cfs_period_us=100000\nmemory/c/memory.limit_in_bytes=67108864",
			"c/cpu.weight=4\nc/cpu.max=max 100000\nc/memory.max=67108864"},
		{"a BestEffort pod", []cgroupLimit{cpuShares(2), memoryLimit(-1)},
			"cpu/c/cpu.shares=2\nmemory/c/memory.limit_in_bytes=" + unlimited,
			"c/cpu.weight=1\nc/memory.max=max"},
		{"the corpus's qos-demo (700m)", []cgroupLimit{cpuShares(716)}, "cpu/c/cpu.shares=716", "c/cpu.weight=28"},
		{"a container's own shares: either runc's conversion", []cgroupLimit{containerCPUShares(512)},
			"cpu/c/cpu.shares=512", "c/cpu.weight=20|59"},
		{"a container's default shares", []cgroupLimit{containerCPUShares(1024)},
			"cpu/c/cpu.shares=1024", "c/cpu.weight=39|100"},
		{"the burstable QoS cgroup with one pod of 100m", []cgroupLimit{burstableShares(100)},
			"cpu/c/cpu.shares=102", "c/cpu.weight=4"},
		// The kubelet's weight of 2800m is 110; podrun, reading each pod's
		// request back from its weight, gets 2789m and 109. Each of the
		// five weights stands for requests some 25m apart.
		{"the burstable QoS cgroup with pods of 100, 400, 600, 700 and 1000m", []cgroupLimit{burstableShares(100, 400, 600, 700, 1000)},
			"cpu/c/cpu.shares=2867", "c/cpu.weight=107|108|109|110|111|112"},
		{"the burstable QoS cgroup with pods of 100 to 1000m", []cgroupLimit{burstableShares(100, 200, 300, 400, 500, 600, 700, 800, 900, 1000)},
			"cpu/c/cpu.shares=5632", "c/cpu.weight=211|212|213|214|215|216|217|218|219|220"},
		{"the burstable QoS cgroup with no pod", []cgroupLimit{burstableShares()},
			"cpu/c/cpu.shares=2", "c/cpu.weight=1"},
	} {
		if unlimited == "-" && strings.Contains(tc.v1, unlimited) {
			continue
		}
		if got := render(shapeV1, "c", tc.limits...); got != tc.v1 {
			t.Errorf("%s, v1:\n%s\nwant\n%s", tc.name, got, tc.v1)
		}
		for _, s := range []nodeShape{shapeV2, shapeV2Systemd} {
			if got := render(s, "c", tc.limits...); got != tc.v2 {
				t.Errorf("%s, %s:\n%s\nwant\n%s", tc.name, s, got, tc.v2)
			}
		}
	}
	for shares, want := range map[uint64]uint64{2: 1, 102: 4, 512: 20, 716: 28, 1024: 39, 262144: 10000, 300000: 10000} {
		if got := kubeletCPUWeight(shares); got != want {
			t.Errorf("kubeletCPUWeight(%d) = %d, want %d", shares, got, want)
		}
	}
	for shares, want := range map[uint64]uint64{2: 1, 512: 59, 1024: 100, 262144: 10000} {
		if got := runcCPUWeight(shares); got != want {
			t.Errorf("runcCPUWeight(%d) = %d, want %d", shares, got, want)
		}
	}
	if f := shapeV2.files(memoryLimit(1))[0]; f.rel(true) != "memory.max" || f.rel(false) != "memory/memory.max" {
		t.Errorf("rel: %q, %q", f.rel(true), f.rel(false))
	}
}

func TestNodeShapeInPodCgroup(t *testing.T) {
	const rel = "podrun/pode2e-cgroup-1a2b"
	v1Self := "9:name=systemd:/podrun/pode2e-cgroup-1a2b/0123\n4:memory:/podrun/pode2e-cgroup-1a2b/0123\n1:cpu:/podrun/pode2e-cgroup-1a2b/0123\n0::/\n"
	for _, tc := range []struct {
		s    nodeShape
		self string
		want bool
	}{
		{shapeV1, v1Self, true},
		{shapeV1, strings.ReplaceAll(v1Self, "pode2e", "burstable/pode2e"), false},
		{shapeV1, "4:memory:/podrun/pode2e-cgroup-1a2b-other/0123\n", false},
		{shapeV1, "4:cpu,memory:/podrun/pode2e-cgroup-1a2b/0123\n", true},
		{shapeV2, "0::/\n", true},
		{shapeV2Systemd, "0::/\n", true},
		{shapeV2, "0::/podrun/pode2e-cgroup-1a2b/0123\n", false}, // no cgroup namespace
	} {
		if got := tc.s.inPodCgroup(tc.self, rel); got != tc.want {
			t.Errorf("%s: inPodCgroup(%q) = %v, want %v", tc.s, tc.self, got, tc.want)
		}
	}
}

// TestNodeShapeAgainstPodrun has podrun's cgroup code make pod cgroups on
// its fake cgroup filesystem for each shape (the systemd manager stands in
// as cgroupfs below the slices' paths) and checks them where the e2e tests
// look: the pod-level limits a Guaranteed and a BestEffort pod get, the
// burstable QoS cgroup's shares with five Burstable pods in it, and
// nothing left of a root of the test's own once the pods are gone. (The
// fake holds only the files podrun writes: a kernel's defaults, such as
// cpu.max "max 100000", are the real node's to show.)
func TestNodeShapeAgainstPodrun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		v2, systemd bool
	}{
		{"v1 cgroupfs", false, false},
		{"v2 cgroupfs", true, false},
		{"v2 systemd", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, mount := cgroupstest.FakeFS(t, tc.v2, tc.systemd)
			s := nodeShape{V2: tc.v2, Driver: driverCgroupfs, Mount: mount}
			if tc.systemd {
				s.Driver = driverSystemd
			}
			if !tc.v2 {
				s.Hierarchies = []string{"cpu", "memory", "devices"} // the fake's
			}
			sys := cgroups.System{NewManager: fake.NewManager, Rmdir: fake.Rmdir, Unified: fake.Unified}
			const root = "/podrun/e2e-1a2b"
			h, err := cgroups.NewHost(root, s.Driver, sys)
			if err != nil {
				t.Fatal(err)
			}
			type pod struct {
				uid, spec string
				qos       v1.PodQOSClass
				limits    []cgroupLimit
			}
			pods := []pod{
				{"g-1", "500m/500m/128Mi/128Mi", v1.PodQOSGuaranteed, []cgroupLimit{cpuShares(512), cpuQuota(50000, 100000), memoryLimit(134217728)}},
				{"e-1", "-/-/-/-", v1.PodQOSBestEffort, []cgroupLimit{cpuShares(2)}},
			}
			var requests []int64
			for i, m := range []int64{100, 400, 600, 700, 1000} {
				pods = append(pods, pod{fmt.Sprintf("b-%d", i), fmt.Sprintf("%dm/-/-/64Mi", m), v1.PodQOSBurstable, []cgroupLimit{memoryLimit(64 << 20)}})
				requests = append(requests, m)
			}
			var names []string
			for _, p := range pods {
				name, err := h.EnsurePodCgroup(cgroupstest.Pod(p.uid, p.spec))
				if err != nil {
					t.Fatalf("pod %s: %v", p.uid, err)
				}
				names = append(names, name)
				rel := s.podCgroup(root, p.qos, p.uid)
				if name != "/"+rel {
					t.Errorf("pod %s: podrun made %s, the e2e tests look at /%s", p.uid, name, rel)
				}
				for _, dir := range s.cgroupDirs(rel) {
					if _, err := os.Stat(dir); err != nil {
						t.Errorf("pod %s: %v", p.uid, err)
					}
				}
				expectFakeFiles(t, s, rel, p.limits...)
			}
			expectFakeFiles(t, s, s.qosCgroup(root, v1.PodQOSBurstable), burstableShares(requests...))
			expectFakeFiles(t, s, s.qosCgroup(root, v1.PodQOSBestEffort), cpuShares(2))

			for _, name := range names {
				if err := h.RemovePodCgroup(name, true); err != nil {
					t.Fatal(err)
				}
			}
			for _, dir := range s.cgroupDirs(s.rootCgroup(root)) {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("the root %s is left at %s", root, dir)
				}
			}
		})
	}
}

// expectFakeFiles fails the test unless the fake cgroup rel's files hold
// the limits.
func expectFakeFiles(t *testing.T, s nodeShape, rel string, limits ...cgroupLimit) {
	t.Helper()
	for _, f := range s.files(limits...) {
		b, err := os.ReadFile(s.path(rel, f))
		if got := strings.TrimSpace(string(b)); err != nil || !f.holds(got) {
			t.Errorf("%s: %q (%v), want %s", filepath.Join(rel, f.Name), got, err, strings.Join(f.Texts, " or "))
		}
	}
}
