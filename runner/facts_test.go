package runner

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner/admission"
)

// factsRuntime is a fake runtime with a valid pod network, and a client on it.
func factsRuntime(t *testing.T) (*fake.Server, *cri.Client, string, string) {
	t.Helper()
	srv, ep := fake.Start(t)
	confDir, binDir := srv.FakeCNI(t)
	rt, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return srv, rt, confDir, binDir
}

func factsPod(hostNetwork bool) *v1.Pod {
	p := &v1.Pod{Spec: v1.PodSpec{HostNetwork: hostNetwork, Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	p.Name, p.Namespace = "job", "default"
	return p
}

func factsConfig(t *testing.T) FactsConfig {
	root := t.TempDir()
	return FactsConfig{Node: admission.HostOptions{NodeName: "node1", RootDir: root},
		CNI: cni.Flags{StateFile: filepath.Join(root, "cni-validated")}}
}

// GatherFacts asks the runtime once: one Status (verbose with a pod off
// the host network, or without --cgroup-driver), and RuntimeConfig unless
// --cgroup-driver is set.
func TestGatherFacts(t *testing.T) {
	srv, rt, _, _ := factsRuntime(t)
	handlers := []*runtimeapi.RuntimeHandler{{Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}}}
	srv.SetRuntimeHandlers(handlers)
	f, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, factsConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Node.Name != "node1" || f.Node.Allocatable.Cpu().IsZero() || f.CgroupDriver != "cgroupfs" ||
		f.RuntimeName == "" || len(f.RuntimeHandlers) != 1 || !f.RuntimeHandlers[0].GetFeatures().GetUserNamespaces() {
		t.Errorf("facts %+v", f)
	}
	statuses := 0
	for _, c := range srv.Calls() {
		if c == "Status" {
			statuses++
		}
	}
	if statuses != 1 {
		t.Errorf("%d Status calls, want 1: %v", statuses, srv.Calls())
	}
}

// A pod on the pod network is refused before any sandbox when the runtime
// says NetworkReady but its CNI config names a plugin that is not there;
// a host-network pod still runs.
func TestFactsPodNetworkRefusedBeforeAnySandbox(t *testing.T) {
	srv, rt, confDir, binDir := factsRuntime(t)
	if err := os.Remove(filepath.Join(binDir, "portmap")); err != nil {
		t.Fatal(err)
	}
	_, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, factsConfig(t))
	want := `CNI network "fake" (` + filepath.Join(confDir, "10-fake.conflist") + `): plugin "portmap" not found in ` + binDir + ` (from the runtime's status)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("GatherFacts = %v, want %q", err, want)
	}
	for _, c := range srv.Calls() {
		if c == "RunPodSandbox" || c == "PullImage" || c == "CreateContainer" {
			t.Errorf("%s called, want nothing created; calls %v", c, srv.Calls())
		}
	}
	if _, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(true)}, factsConfig(t)); err != nil {
		t.Errorf("host-network pod: %v", err)
	}
}

// --cni-conf-dir and --cni-bin-dir override what the runtime reports.
func TestFactsPodNetworkFlagsOverrideRuntime(t *testing.T) {
	_, rt, _, _ := factsRuntime(t)
	empty := t.TempDir()
	c := factsConfig(t)
	c.CNI.ConfDir = empty
	_, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, c)
	if err == nil || !strings.Contains(err.Error(), "no CNI network config (*.conflist, *.conf, *.json) in "+empty+" (from --cni-conf-dir)") {
		t.Errorf("GatherFacts = %v, want the flag's conf dir named", err)
	}
	c = factsConfig(t)
	c.CNI.BinDirs = cni.SplitBinDirs(empty + ":/nonexistent")
	_, err = GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, c)
	if err == nil || !strings.Contains(err.Error(), `plugin "bridge" not found in `+empty+":/nonexistent (from --cni-bin-dir)") {
		t.Errorf("GatherFacts = %v, want bridge and the flag's dirs named", err)
	}
}

func TestCgroupDriverFlagAndRuntimeDefault(t *testing.T) {
	srv, rt, _, _ := factsRuntime(t)
	ctx := context.Background()
	check := func(flag, want string) {
		t.Helper()
		got, _, err := cgroupDriver(ctx, rt, flag, nil)
		if err != nil || got != want {
			t.Errorf("cgroupDriver(%q) = %q, %v; want %q", flag, got, err, want)
		}
	}
	check("", "cgroupfs") // no RuntimeConfig, as on containerd 1.6
	check("systemd", "systemd")
	srv.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD)
	check("", "systemd")
	check("cgroupfs", "cgroupfs")
	if _, _, err := cgroupDriver(ctx, rt, "cgroupv2", nil); err == nil || !strings.Contains(err.Error(), `invalid --cgroup-driver "cgroupv2"`) {
		t.Errorf("cgroupDriver(cgroupv2) = %v, want invalid", err)
	}
	f, err := GatherFacts(ctx, rt, []*v1.Pod{factsPod(true)}, factsConfig(t))
	if err != nil || f.CgroupDriver != "systemd" {
		t.Errorf("GatherFacts: driver %q, %v; want the runtime's systemd", f.CgroupDriver, err)
	}
}

// A dry run asks the runtime a run would dial for the cgroup driver, with
// the run's two calls and decideCgroupDriver, and for nothing else; without
// a runtime, or with --cgroup-driver, it asks nothing, and the source says
// why the driver is unknown.
func TestDryRunFactsCgroupDriver(t *testing.T) {
	ctd16systemd := statusInfoFile(t, "status-containerd-1.6-systemd.json")
	ctd24 := statusInfoFile(t, "status-containerd-2.4.json")
	ctd16Source := `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true`
	asked := []string{"Version", "Status", "RuntimeConfig"} // the dial's Version, then the run's two calls
	for _, tc := range []struct {
		name       string
		setup      func(*fake.Server)
		flag       string
		noRuntime  bool // dial a socket nothing serves
		want       string
		wantSource string // with EP for the fake's endpoint
		wantCalls  []string
	}{
		{name: "containerd 1.6 with SystemdCgroup = true: its status info",
			setup: func(s *fake.Server) { s.SetStatusInfo(ctd16systemd) },
			want:  "systemd", wantSource: ctd16Source, wantCalls: asked},
		{name: "containerd 2.x: RuntimeConfig",
			setup: func(s *fake.Server) { s.SetStatusInfo(ctd24); s.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD) },
			want:  "systemd", wantSource: "from the runtime's CRI RuntimeConfig", wantCalls: asked},
		{name: "a runtime not ready: its readiness is not judged, its status info is read",
			setup: func(s *fake.Server) {
				s.SetStatusInfo(ctd16systemd)
				s.SetCondition(runtimeapi.RuntimeReady, false, "Starting", "not yet")
			},
			want: "systemd", wantSource: ctd16Source, wantCalls: asked},
		{name: "a runtime that says nothing: cgroupfs assumed, as a run assumes it",
			setup: func(s *fake.Server) {},
			want:  "cgroupfs", wantSource: "assumed: the runtime did not say", wantCalls: asked},
		{name: "RuntimeConfig failing: unknown, and why",
			setup: func(s *fake.Server) {
				s.FailNext("RuntimeConfig", status.Error(codes.PermissionDenied, "not for you"))
			},
			want: "", wantSource: "unknown: the runtime at EP did not say (getting runtime config: rpc error: code = PermissionDenied desc = not for you)", wantCalls: asked},
		{name: "--cgroup-driver: the runtime is not dialled",
			setup: func(s *fake.Server) { s.SetStatusInfo(ctd16systemd) }, flag: "cgroupfs",
			want: "cgroupfs", wantSource: "from --cgroup-driver"},
		{name: "no runtime: unknown, naming the endpoint tried",
			setup: func(s *fake.Server) {}, noRuntime: true,
			want: "", wantSource: "unknown: no runtime answered (connecting to unix://NONE: stat NONE: no such file or directory)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, ep := fake.Start(t)
			tc.setup(srv)
			none := filepath.Join(t.TempDir(), "none.sock")
			dialled := ep
			if tc.noRuntime {
				dialled = "unix://" + none
			}
			dials := 0
			dial := func(ctx context.Context) (DriverRuntime, error) {
				dials++
				c, err := cri.Dial(ctx, dialled)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { c.Close() })
				return c, nil
			}
			c := factsConfig(t)
			c.CgroupDriver = tc.flag
			f, err := DryRunFacts(context.Background(), c, dial)
			if err != nil {
				t.Fatal(err)
			}
			wantSource := strings.NewReplacer("EP", ep, "NONE", none).Replace(tc.wantSource)
			if f.CgroupDriver != tc.want || f.CgroupDriverSource.String() != wantSource {
				t.Errorf("driver %q (%s)\nwant %q (%s)", f.CgroupDriver, f.CgroupDriverSource, tc.want, wantSource)
			}
			if !f.NoRuntime || f.RuntimeName != "" || f.RuntimeHandlers != nil {
				t.Errorf("facts %+v: a dry run's, without the runtime's name or handlers", f)
			}
			wantEndpoint := ""
			if tc.wantCalls != nil {
				wantEndpoint = ep
			}
			if f.DryRunEndpoint != wantEndpoint {
				t.Errorf("DryRunEndpoint %q, want %q", f.DryRunEndpoint, wantEndpoint)
			}
			if calls := srv.Calls(); !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", calls, tc.wantCalls)
			}
			if tc.flag != "" && dials != 0 {
				t.Errorf("dialled the runtime %d times with --cgroup-driver", dials)
			}
		})
	}
}

// A runtime that does not answer holds a dry run up DryRunRuntimeTimeout
// at most: the driver is then unknown, and the source says so.
func TestDryRunFactsHungRuntime(t *testing.T) {
	srv, ep := fake.Start(t)
	srv.Delay("Status", time.Minute)
	start := time.Now()
	f, err := DryRunFacts(context.Background(), factsConfig(t), func(ctx context.Context) (DriverRuntime, error) {
		c, err := cri.Dial(ctx, ep)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { c.Close() })
		return c, nil
	})
	if took := time.Since(start); took > DryRunRuntimeTimeout+time.Second {
		t.Errorf("DryRunFacts took %v, want at most %v", took, DryRunRuntimeTimeout)
	}
	if err != nil || f.CgroupDriver != "" || !strings.HasPrefix(f.CgroupDriverSource.String(), "unknown: the runtime at "+ep+" did not say (") ||
		!strings.Contains(f.CgroupDriverSource.String(), "DeadlineExceeded") {
		t.Errorf("driver %q (%s), %v; want unknown, the runtime not saying", f.CgroupDriver, f.CgroupDriverSource, err)
	}
}

// TestInterfaceIPv4AsNetlink holds interfaceIPv4 (one ioctl) to the net
// package's netlink answer, the first IPv4 address of Addrs, for every
// interface of this host that has an address (lo, the default route's, the
// testbed's bridges), and to "" for a name no interface has.
func TestInterfaceIPv4AsNetlink(t *testing.T) {
	ifcs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	withV4 := 0
	for _, ifc := range ifcs {
		want := ""
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				want = ipn.IP.String()
				break
			}
		}
		if want != "" {
			withV4++
		}
		if got := interfaceIPv4(ifc.Name); got != want {
			t.Errorf("interfaceIPv4(%q) = %q; net's Addrs give %q", ifc.Name, got, want)
		}
	}
	if withV4 == 0 {
		t.Error("no interface of this host has an IPv4 address (lo has 127.0.0.1): nothing was compared")
	}
	if got := interfaceIPv4("podrun-none0"); got != "" {
		t.Errorf("interfaceIPv4 of a name no interface has = %q", got)
	}
}
