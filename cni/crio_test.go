package cni

import (
	"context"
	"slices"
	"testing"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

// TestCRIOStatusNamesNoCNIDirs: CRI-O's verbose Status has one Info key,
// "config", with the pause image and its [crio.runtime] table
// (server/runtime_status.go createRuntimeInfo), and nothing of its
// [crio.network] table: neither containerd's "cniconfig" nor a "cni"
// object. podrun then checks its flags' dirs, else the defaults, which
// are CRI-O's defaults too (network_dir /etc/cni/net.d, plugin_dirs
// /opt/cni/bin), and says where they came from. The loopback plugin is not
// looked for: CRI-O (ocicni) brings lo up itself.
func TestCRIOStatusNamesNoCNIDirs(t *testing.T) {
	srv, ep := fake.Start(t)
	srv.SetStatusInfo(map[string]string{"config": `{"sandboxImage":"registry.k8s.io/pause:3.10.1","crio":{"SELinux":false,"DefaultRuntime":"crun","CgroupManagerName":"systemd","LogToJournald":false}}`})
	rt, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.Status(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GetInfo()) != 1 {
		t.Fatalf("Info %v, want CRI-O's one key", st.GetInfo())
	}
	d := resolveDirs(Flags{}, runtimeInfo(st.GetInfo()))
	if d.ConfDir != DefaultConfDir || d.ConfDirFrom != fromDefault || !slices.Equal(d.BinDirs, []string{DefaultBinDir}) ||
		d.BinDirsFrom != fromDefault || d.Loopback {
		t.Errorf("dirs %+v, want podrun's defaults", d)
	}
	d = resolveDirs(Flags{ConfDir: "/etc/crio/net.d", BinDirs: []string{"/usr/libexec/cni"}}, runtimeInfo(st.GetInfo()))
	if d.ConfDir != "/etc/crio/net.d" || d.ConfDirFrom != fromConfFlag || d.BinDirs[0] != "/usr/libexec/cni" || d.BinDirsFrom != fromBinFlag {
		t.Errorf("dirs %+v, want the flags'", d)
	}
}
