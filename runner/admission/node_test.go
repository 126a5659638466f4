package admission

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestAdmitNodeInfoAllocatable(t *testing.T) {
	reserved, err := ParseSystemReserved([]string{"cpu=500m,memory=1Gi", "ephemeral-storage=1Gi"})
	if err != nil {
		t.Fatal(err)
	}
	f := hostFacts{
		CPUs:        2,
		MemoryBytes: 4<<30 + 100<<20,
		RootFsBytes: 100 << 30,
		HugePages:   map[string]int64{"2Mi": 64 << 20, "1Gi": 0},
		AppArmor:    true,
		Kernel:      "6.1.0",
	}
	n := nodeInfo(f, HostOptions{
		NodeName: "node1", SystemReserved: reserved,
		Labels:               map[string]string{"disktype": "ssd", v1.LabelHostname: "override"},
		AllowedUnsafeSysctls: []string{"kernel.msg*"},
	})
	want := map[v1.ResourceName]string{
		v1.ResourceCPU:              "1500m",
		v1.ResourceMemory:           "3008Mi", // 4Gi+100Mi - 1Gi reserved - 100Mi eviction - 64Mi huge pages
		v1.ResourceEphemeralStorage: "89Gi",   // 100Gi - 1Gi reserved - 10% eviction
		v1.ResourcePods:             "110",
		"hugepages-2Mi":             "64Mi",
		"hugepages-1Gi":             "0",
	}
	for name, w := range want {
		got := n.Allocatable[name]
		if got.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("allocatable %s = %s, want %s", name, got.String(), w)
		}
	}
	if len(n.Allocatable) != len(want) {
		t.Errorf("allocatable %v, want only %v", n.Allocatable, want)
	}
	wantLabels := map[string]string{
		v1.LabelHostname: "override", v1.LabelOSStable: runtime.GOOS, v1.LabelArchStable: runtime.GOARCH,
		"beta.kubernetes.io/os": runtime.GOOS, "beta.kubernetes.io/arch": runtime.GOARCH, "disktype": "ssd",
	}
	for k, v := range wantLabels {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if n.Name != "node1" || !n.AppArmorEnabled || n.KernelVersion != "6.1.0" || !slices.Equal(n.AllowedUnsafeSysctls, []string{"kernel.msg*"}) {
		t.Errorf("node %+v", n)
	}
}

func TestAdmitNodeInfoReservedBeyondCapacity(t *testing.T) {
	n := nodeInfo(hostFacts{CPUs: 1, MemoryBytes: 1 << 30, RootFsBytes: 1 << 30},
		HostOptions{NodeName: "n", SystemReserved: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}})
	if cpu := n.Allocatable[v1.ResourceCPU]; cpu.Sign() != 0 {
		t.Errorf("cpu %s, want 0", cpu.String())
	}
	if n.Labels[v1.LabelHostname] != "n" {
		t.Errorf("hostname label %q, want the node name", n.Labels[v1.LabelHostname])
	}
}

func TestAdmitParseMemTotal(t *testing.T) {
	got, err := parseMemTotal([]byte("MemFree:  100 kB\nMemTotal:       24682416 kB\n"))
	if err != nil || got != 24682416*1024 {
		t.Errorf("parseMemTotal = %d, %v", got, err)
	}
	if _, err := parseMemTotal([]byte("MemFree: 1 kB\n")); err == nil {
		t.Error("no MemTotal: want an error")
	}
}

func TestAdmitReadHugePages(t *testing.T) {
	dir := t.TempDir()
	for name, n := range map[string]string{"hugepages-2048kB": "3\n", "hugepages-1048576kB": "0\n"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "nr_hugepages"), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := readHugePages(dir)
	if len(got) != 2 || got["2Mi"] != 6<<20 || got["1Gi"] != 0 {
		t.Errorf("readHugePages = %v", got)
	}
}

func TestAdmitFsSizeOfMissingDir(t *testing.T) {
	n, err := fsSize(filepath.Join(t.TempDir(), "not", "yet"))
	if err != nil || n <= 0 {
		t.Errorf("fsSize = %d, %v; want the size of the temp dir's filesystem", n, err)
	}
}

func TestAdmitNodeFromHost(t *testing.T) {
	n, err := NodeFromHost(HostOptions{NodeName: "n", RootDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods} {
		if q := n.Allocatable[name]; q.Sign() <= 0 {
			t.Errorf("allocatable %s = %s, want more than 0", name, q.String())
		}
	}
}

func TestAdmitParseFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		parse   func() error
		wantErr bool
	}{
		{"system-reserved", func() error { _, err := ParseSystemReserved([]string{"cpu=500m, memory=1Gi"}); return err }, false},
		{"system-reserved without =", func() error { _, err := ParseSystemReserved([]string{"cpu"}); return err }, true},
		{"system-reserved unknown resource", func() error { _, err := ParseSystemReserved([]string{"pods=3"}); return err }, true},
		{"system-reserved bad quantity", func() error { _, err := ParseSystemReserved([]string{"memory=lots"}); return err }, true},
		{"system-reserved negative", func() error { _, err := ParseSystemReserved([]string{"cpu=-1"}); return err }, true},
		{"node-labels", func() error {
			l, err := ParseNodeLabels([]string{"topology.kubernetes.io/zone=antarctica-east1,empty=", "disktype=ssd"})
			if err == nil && (len(l) != 3 || l["topology.kubernetes.io/zone"] != "antarctica-east1" || l["empty"] != "") {
				t.Errorf("labels %v", l)
			}
			return err
		}, false},
		{"node-labels without =", func() error { _, err := ParseNodeLabels([]string{"disktype"}); return err }, true},
		{"node-labels bad key", func() error { _, err := ParseNodeLabels([]string{"-bad=x"}); return err }, true},
		{"node-labels bad value", func() error { _, err := ParseNodeLabels([]string{"k=a b"}); return err }, true},
		{"unsafe sysctls", func() error {
			s, err := ParseAllowedUnsafeSysctls([]string{"kernel.msg*,net.core.somaxconn", "net/ipv4/conf/all/forwarding", "kernel.sem"})
			if err == nil && !slices.Equal(s, []string{"kernel.msg*", "net.core.somaxconn", "net.ipv4.conf.all.forwarding", "kernel.sem"}) {
				t.Errorf("sysctls %v", s)
			}
			return err
		}, false},
		{"unsafe sysctl not namespaced", func() error { _, err := ParseAllowedUnsafeSysctls([]string{"kernel.*"}); return err }, true},
		{"unsafe sysctl not namespaced by name", func() error { _, err := ParseAllowedUnsafeSysctls([]string{"vm.swappiness"}); return err }, true},
		{"unsafe sysctl bad pattern", func() error { _, err := ParseAllowedUnsafeSysctls([]string{"net.*.x"}); return err }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse()
			if (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
