package cni

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// recordedInfo reads the Info map of a verbose CRI Status recorded from a
// real runtime (testdata/status-*.json; "golang" dropped). The containerd
// 2.4 one is the testbed's; the 1.6 ones are Debian's containerd 1.6.20 with
// its conf dir in /tmp/ctd16/net.d, once empty and once holding the
// testbed's conflist with "bridge" renamed to a plugin that does not exist
// (NetworkReady stays true: containerd does not validate plugins).
func recordedInfo(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Info map[string]string `json:"info"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rec.Info
}

func TestRuntimeInfoRecorded(t *testing.T) {
	for _, tc := range []struct {
		file string
		want RuntimeInfo
	}{
		{"status-containerd-2.4.json", RuntimeInfo{ConfDir: "/var/lib/podrun-testbed/cni/net.d", BinDirs: []string{"/usr/lib/cni"}}},
		{"status-containerd-1.6-noconf.json", RuntimeInfo{ConfDir: "/tmp/ctd16/net.d", BinDirs: []string{"/usr/lib/cni"}, Loopback: true}},
		{"status-containerd-1.6-missing-plugin.json", RuntimeInfo{ConfDir: "/tmp/ctd16/net.d", BinDirs: []string{"/usr/lib/cni"}, Loopback: true}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if got := runtimeInfo(recordedInfo(t, tc.file)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("runtimeInfo = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRuntimeInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		info map[string]string
		want RuntimeInfo
	}{
		{"no info (CRI-O, cri-dockerd, a non-verbose answer)", nil, RuntimeInfo{}},
		{"cniconfig that does not parse counts as not reported",
			map[string]string{"cniconfig": "{not json"}, RuntimeInfo{}},
		{"cniconfig alone",
			map[string]string{"cniconfig": `{"PluginDirs":["/a","","/b"],"PluginConfDir":"/c"}`},
			RuntimeInfo{ConfDir: "/c", BinDirs: []string{"/a", "/b"}}},
		{"cniconfig with go-cni's loopback network",
			map[string]string{"cniconfig": `{"PluginDirs":["/a"],"PluginConfDir":"/c","Networks":[{"Config":{"Name":"cni-loopback","Plugins":[{"Network":{"type":"loopback"}}]},"IFName":"lo"}]}`},
			RuntimeInfo{ConfDir: "/c", BinDirs: []string{"/a"}, Loopback: true}},
		{"1.x config alone: binDir, loopback plugin always",
			map[string]string{"config": `{"cni":{"binDir":"/opt/cni/bin","confDir":"/etc/cni/net.d","maxConfNum":1}}`},
			RuntimeInfo{ConfDir: "/etc/cni/net.d", BinDirs: []string{"/opt/cni/bin"}, Loopback: true}},
		{"2.x config alone: binDirs, internal loopback",
			map[string]string{"config": `{"cni":{"binDir":"","binDirs":["/x","/y"],"confDir":"/n","useInternalLoopback":true}}`},
			RuntimeInfo{ConfDir: "/n", BinDirs: []string{"/x", "/y"}}},
		{"2.x config without internal loopback",
			map[string]string{"config": `{"cni":{"binDirs":["/x"],"confDir":"/n","useInternalLoopback":false}}`},
			RuntimeInfo{ConfDir: "/n", BinDirs: []string{"/x"}, Loopback: true}},
		{"config without a cni object says nothing of loopback",
			map[string]string{"config": `{"containerd":{}}`}, RuntimeInfo{}},
		{"cniconfig wins over config",
			map[string]string{
				"cniconfig": `{"PluginDirs":["/from-cniconfig"],"PluginConfDir":"/conf-cniconfig"}`,
				"config":    `{"cni":{"binDirs":["/from-config"],"confDir":"/conf-config","useInternalLoopback":true}}`},
			RuntimeInfo{ConfDir: "/conf-cniconfig", BinDirs: []string{"/from-cniconfig"}}},
		{"config fills what cniconfig lacks",
			map[string]string{
				"cniconfig": `{"PluginDirs":[],"PluginConfDir":""}`,
				"config":    `{"cni":{"binDirs":["/from-config"],"confDir":"/conf-config","useInternalLoopback":true}}`},
			RuntimeInfo{ConfDir: "/conf-config", BinDirs: []string{"/from-config"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runtimeInfo(tc.info); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("runtimeInfo = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestResolveDirs: whether podrun checks the network's files, and where.
// With nothing named by a flag or the runtime (CRI-O, cri-dockerd) it
// does not: it used to check /etc/cni/net.d and /opt/cni/bin then, and
// refused pods that CRI-O, whose network_dir was elsewhere, networked.
func TestResolveDirs(t *testing.T) {
	rt := RuntimeInfo{ConfDir: "/rt/net.d", BinDirs: []string{"/rt/bin1", "/rt/bin2"}, Loopback: true}
	for _, tc := range []struct {
		name  string
		flags Flags
		rt    RuntimeInfo
		want  Dirs
		check bool
	}{
		{"nothing reported, no flags: no file check, NetworkReady alone", Flags{}, RuntimeInfo{}, Dirs{}, false},
		{"a state file alone names no dir", Flags{StateFile: "/r/cni-validated"}, RuntimeInfo{}, Dirs{}, false},
		{"the runtime's dirs, and its loopback", Flags{}, rt,
			Dirs{ConfDir: "/rt/net.d", ConfDirFrom: fromRuntime, BinDirs: []string{"/rt/bin1", "/rt/bin2"}, BinDirsFrom: fromRuntime, Loopback: true}, true},
		{"flags override the runtime; no loopback check in flag dirs", Flags{ConfDir: "/f/net.d", BinDirs: []string{"/f/bin"}}, rt,
			Dirs{ConfDir: "/f/net.d", ConfDirFrom: fromConfFlag, BinDirs: []string{"/f/bin"}, BinDirsFrom: fromBinFlag}, true},
		{"each dir on its own: conf dir flag, runtime's bin dirs", Flags{ConfDir: "/f/net.d"}, rt,
			Dirs{ConfDir: "/f/net.d", ConfDirFrom: fromConfFlag, BinDirs: []string{"/rt/bin1", "/rt/bin2"}, BinDirsFrom: fromRuntime, Loopback: true}, true},
		{"nothing reported, bin dir flag: checked, default conf dir", Flags{BinDirs: []string{"/f/bin"}}, RuntimeInfo{},
			Dirs{ConfDir: DefaultConfDir, ConfDirFrom: fromDefault, BinDirs: []string{"/f/bin"}, BinDirsFrom: fromBinFlag}, true},
		{"nothing reported, conf dir flag: checked, default bin dir", Flags{ConfDir: "/f/net.d"}, RuntimeInfo{},
			Dirs{ConfDir: "/f/net.d", ConfDirFrom: fromConfFlag, BinDirs: []string{DefaultBinDir}, BinDirsFrom: fromDefault}, true},
		{"the runtime reports a conf dir only: checked, default bin dir", Flags{}, RuntimeInfo{ConfDir: "/rt/net.d"},
			Dirs{ConfDir: "/rt/net.d", ConfDirFrom: fromRuntime, BinDirs: []string{DefaultBinDir}, BinDirsFrom: fromDefault}, true},
		{"the runtime reports bin dirs only: checked, default conf dir", Flags{}, RuntimeInfo{BinDirs: []string{"/rt/bin1"}, Loopback: true},
			Dirs{ConfDir: DefaultConfDir, ConfDirFrom: fromDefault, BinDirs: []string{"/rt/bin1"}, BinDirsFrom: fromRuntime, Loopback: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, check := resolveDirs(tc.flags, tc.rt)
			if check != tc.check || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("resolveDirs = %+v, %v; want %+v, %v", got, check, tc.want, tc.check)
			}
		})
	}
}

func TestSplitBinDirs(t *testing.T) {
	for in, want := range map[string][]string{
		"":                          nil,
		"/opt/cni/bin":              {"/opt/cni/bin"},
		"/opt/cni/bin:/usr/lib/cni": {"/opt/cni/bin", "/usr/lib/cni"},
		":/a::/b:":                  {"/a", "/b"},
	} {
		if got := SplitBinDirs(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitBinDirs(%q) = %q, want %q", in, got, want)
		}
	}
}
