package cni

import (
	"context"
	"strings"
	"testing"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

// TestCRIOStatusNamesNoCNIDirs: CRI-O's verbose Status has one Info key,
// "config", with the pause image and its [crio.runtime] table
// (server/runtime_status.go createRuntimeInfo), and nothing of its
// [crio.network] table: neither containerd's "cniconfig" nor a "cni"
// object. Without --cni-conf-dir and --cni-bin-dir podrun then checks no
// files (CRI-O's network_dir may be anywhere) and goes by NetworkReady, as
// the kubelet: a node without any CNI config passes. A flag names a dir to
// check, and the message says where it came from. The loopback plugin is
// not looked for: CRI-O (ocicni) brings lo up itself.
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
	if d, check := resolveDirs(Flags{}, runtimeInfo(st.GetInfo())); check {
		t.Errorf("dirs %+v checked, want no file check", d)
	}
	if p, err := CheckPodNetworkStatus(context.Background(), st, Flags{}); err != nil || p != nil {
		t.Errorf("CheckPodNetworkStatus without flags = %v, %v; want nil, nil (NetworkReady alone)", p, err)
	}
	d, check := resolveDirs(Flags{ConfDir: "/etc/crio/net.d", BinDirs: []string{"/usr/libexec/cni"}}, runtimeInfo(st.GetInfo()))
	if !check || d.ConfDir != "/etc/crio/net.d" || d.ConfDirFrom != fromConfFlag || d.BinDirs[0] != "/usr/libexec/cni" || d.BinDirsFrom != fromBinFlag || d.Loopback {
		t.Errorf("dirs %+v, %v; want the flags' checked", d, check)
	}
	empty := t.TempDir()
	_, err = CheckPodNetworkStatus(context.Background(), st, Flags{ConfDir: empty})
	if want := "no CNI network config (*.conflist, *.conf, *.json) in " + empty + " (from --cni-conf-dir)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckPodNetworkStatus with --cni-conf-dir = %v, want %q", err, want)
	}
}
