package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
