package cni

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestPickConfFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"/d/10-a.conf"}, "/d/10-a.conf"},
		{"lexically first, whatever the extension", []string{"/d/99-loopback.conf", "/d/10-net.conflist", "/d/50-x.json"}, "/d/10-net.conflist"},
		{"byte order, not numeric: 100 before 20", []string{"/d/20-a.conflist", "/d/100-b.conflist"}, "/d/100-b.conflist"},
		{"upper case sorts first", []string{"/d/a.conf", "/d/B.conf"}, "/d/B.conf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pickConfFile(tc.files); got != tc.want {
				t.Errorf("pickConfFile = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNotReadyErrorMessage(t *testing.T) {
	runtimeDirs := Dirs{ConfDir: "/etc/cni/net.d", ConfDirFrom: fromRuntime, BinDirs: []string{"/opt/cni/bin", "/usr/lib/cni"}, BinDirsFrom: fromRuntime}
	flagDirs := Dirs{ConfDir: "/tmp/net.d", ConfDirFrom: fromConfFlag, BinDirs: []string{"/tmp/bin"}, BinDirsFrom: fromBinFlag}
	const prefix = "pod network not ready (pods not on the host network need it): "
	for _, tc := range []struct {
		name string
		err  *NotReadyError
		want string
	}{
		{"no config, naming the dir and where it came from",
			&NotReadyError{Dirs: runtimeDirs},
			"no CNI network config (*.conflist, *.conf, *.json) in /etc/cni/net.d (from the runtime's status); 'podrun cni init' writes one"},
		{"conf dir unreadable",
			&NotReadyError{Dirs: flagDirs, Err: errors.New("permission denied")},
			"reading the CNI config dir /tmp/net.d (from --cni-conf-dir): permission denied"},
		{"file does not load",
			&NotReadyError{Dirs: flagDirs, File: "/tmp/net.d/10-x.conflist", Err: errors.New("error parsing configuration list: no name")},
			"CNI config /tmp/net.d/10-x.conflist: error parsing configuration list: no name"},
		{"missing plugin: its type and every dir searched",
			&NotReadyError{Dirs: runtimeDirs, File: "/etc/cni/net.d/10-a.conflist", Network: "a", CNIVersion: "1.0.0",
				Plugins: []PluginProblem{{Type: "flannel"}}},
			`CNI network "a" (/etc/cni/net.d/10-a.conflist): plugin "flannel" not found in /opt/cni/bin:/usr/lib/cni (from the runtime's status)`},
		{"version not spoken, and a plugin that does not answer",
			&NotReadyError{Dirs: flagDirs, File: "/tmp/net.d/10-a.conflist", Network: "a", CNIVersion: "1.1.0",
				Plugins: []PluginProblem{
					{Type: "bridge", Path: "/tmp/bin/bridge", Supported: []string{"0.4.0", "1.0.0"}},
					{Type: "portmap", Path: "/tmp/bin/portmap", Err: errors.New("exit status 2")},
				}},
			`CNI network "a" (/tmp/net.d/10-a.conflist): plugin "bridge" (/tmp/bin/bridge) does not support cniVersion "1.1.0" (it supports 0.4.0, 1.0.0); ` +
				`plugin "portmap" (/tmp/bin/portmap) does not answer CNI_COMMAND=VERSION: exit status 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != prefix+tc.want {
				t.Errorf("message\n got: %s\nwant: %s", got, prefix+tc.want)
			}
		})
	}
}

// fakePlugin writes an executable plugin to dir that answers
// CNI_COMMAND=VERSION with versions (or fails, when versions is "fail"
// with a CNI error, "stderr" with only a line on stderr) and fails every
// other command.
func fakePlugin(t *testing.T, dir, name, versions string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	answer := `echo '{"cniVersion":"1.0.0","supportedVersions":[` + versions + `]}'; exit 0`
	switch versions {
	case "fail":
		answer = `echo '{"code":999,"msg":"broken plugin"}'; exit 1`
	case "stderr":
		answer = `echo oops >&2; exit 3`
	}
	script := "#!/bin/sh\nif [ \"$CNI_COMMAND\" = VERSION ]; then " + answer + "; fi\n" +
		"echo '{\"code\":4,\"msg\":\"fake plugin\"}'; exit 1\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

const allVersions = `"0.3.1","0.4.0","1.0.0"`

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const bridgePortmap = `{"cniVersion":"1.0.0","name":"net","plugins":[
  {"type":"bridge","bridge":"cni0","ipam":{"type":"host-local","subnet":"10.1.0.0/16"}},
  {"type":"portmap","capabilities":{"portMappings":true}}]}`

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string // in the conf dir
		plugins  map[string]string // in the bin dir: name → versions
		loopback bool
		want     string // in the message; "" for no error
	}{
		{name: "valid conflist",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": allVersions, "portmap": allVersions}},
		{name: "no conf dir at all",
			want: "no CNI network config (*.conflist, *.conf, *.json) in CONF (from --cni-conf-dir)"},
		{name: "only files the runtime does not load",
			files: map[string]string{"10-net.conflist.bak": bridgePortmap, "README": "x"},
			want:  "no CNI network config"},
		{name: "missing plugin named, with the dirs",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": allVersions},
			want:    `CNI network "net" (CONF/10-net.conflist): plugin "portmap" not found in BIN (from --cni-bin-dir)`},
		{name: "the lexically first file counts, even if a later one is fine",
			files: map[string]string{
				"05-bad.conflist": strings.ReplaceAll(bridgePortmap, `"portmap"`, `"nosuchplugin"`),
				"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": allVersions, "portmap": allVersions},
			want:    `plugin "nosuchplugin" not found`},
		{name: "version the plugin does not speak",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": `"0.3.1","0.4.0"`, "portmap": allVersions},
			want:    `plugin "bridge" (BIN/bridge) does not support cniVersion "1.0.0" (it supports 0.3.1, 0.4.0)`},
		{name: "plugin that does not answer VERSION",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": "fail", "portmap": allVersions},
			want:    `plugin "bridge" (BIN/bridge) does not answer CNI_COMMAND=VERSION: broken plugin`},
		{name: "plugin that fails with only a word on stderr",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": allVersions, "portmap": "stderr"},
			want:    `plugin "portmap" (BIN/portmap) does not answer CNI_COMMAND=VERSION: netplugin failed: "oops\n": exit status 3`},
		{name: "every plugin's problem, in the list's order",
			files:   map[string]string{"10-net.conflist": bridgePortmap},
			plugins: map[string]string{"bridge": "fail", "portmap": `"0.3.1"`},
			want: `plugin "bridge" (BIN/bridge) does not answer CNI_COMMAND=VERSION: broken plugin; ` +
				`plugin "portmap" (BIN/portmap) does not support cniVersion "1.0.0" (it supports 0.3.1)`},
		{name: "single .conf wrapped into a list",
			files:   map[string]string{"10-net.conf": `{"cniVersion":"0.4.0","name":"one","type":"bridge"}`},
			plugins: map[string]string{"bridge": allVersions}},
		{name: "single .conf with a missing plugin",
			files: map[string]string{"10-net.conf": `{"cniVersion":"0.4.0","name":"one","type":"ptp"}`},
			want:  `CNI network "one" (CONF/10-net.conf): plugin "ptp" not found`},
		{name: ".conf without a type",
			files: map[string]string{"10-net.conf": `{"cniVersion":"0.4.0","name":"one"}`},
			want:  "CNI config CONF/10-net.conf: error parsing configuration: missing 'type'"},
		{name: "conflist that is not JSON",
			files: map[string]string{"10-net.conflist": `{"cniVersion":`},
			want:  "CNI config CONF/10-net.conflist: error parsing configuration list"},
		{name: "the runtime's loopback plugin missing",
			files:    map[string]string{"10-net.conflist": bridgePortmap},
			plugins:  map[string]string{"bridge": allVersions, "portmap": allVersions},
			loopback: true,
			want:     `plugin "loopback" not found in BIN`},
		{name: "the runtime's loopback plugin present, whatever its versions",
			files:    map[string]string{"10-net.conflist": bridgePortmap},
			plugins:  map[string]string{"bridge": allVersions, "portmap": allVersions, "loopback": `"0.3.1"`},
			loopback: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			conf, bin := filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
			for name, content := range tc.files {
				writeFile(t, conf, name, content)
			}
			for name, versions := range tc.plugins {
				fakePlugin(t, bin, name, versions)
			}
			d := Dirs{ConfDir: conf, ConfDirFrom: fromConfFlag, BinDirs: []string{bin}, BinDirsFrom: fromBinFlag, Loopback: tc.loopback}
			err := check(context.Background(), d, "")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			var nre *NotReadyError
			if !errors.As(err, &nre) {
				t.Fatalf("check = %v, want a *NotReadyError", err)
			}
			want := strings.NewReplacer("CONF", conf, "BIN", bin).Replace(tc.want)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message\n%s\nlacks\n%s", err, want)
			}
		})
	}
}

// TestCheckRunsPluginsAtOnce: the plugins answer VERSION at the same
// time. Each fake plugin marks that it started and waits for the other's
// mark before it answers; run one after the other, the first gives up
// after 5 s and fails the check.
func TestCheckRunsPluginsAtOnce(t *testing.T) {
	tmp := t.TempDir()
	conf, bin := filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	writeFile(t, conf, "10-net.conflist", bridgePortmap)
	for name, other := range map[string]string{"bridge": "portmap", "portmap": "bridge"} {
		script := "#!/bin/sh\n" +
			"[ \"$CNI_COMMAND\" = VERSION ] || { echo '{\"code\":4,\"msg\":\"fake plugin\"}'; exit 1; }\n" +
			"touch " + filepath.Join(tmp, name+".started") + "\n" +
			"i=0\n" +
			"while [ ! -e " + filepath.Join(tmp, other+".started") + " ]; do\n" +
			"  i=$((i+1)); if [ $i -gt 100 ]; then echo '{\"code\":999,\"msg\":\"ran alone\"}'; exit 1; fi\n" +
			"  sleep 0.05\n" +
			"done\n" +
			"echo '{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"1.0.0\"]}'\n"
		writeFile(t, bin, name, script)
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := Dirs{ConfDir: conf, ConfDirFrom: fromConfFlag, BinDirs: []string{bin}, BinDirsFrom: fromBinFlag}
	if err := check(context.Background(), d, ""); err != nil {
		t.Fatalf("check: %v", err)
	}
}

// CheckPodNetworkStatus takes the dirs from the runtime's Status, and
// flags override them.
func TestCheckPodNetworkStatus(t *testing.T) {
	tmp := t.TempDir()
	rtConf, rtBin := filepath.Join(tmp, "rt-net.d"), filepath.Join(tmp, "rt-bin")
	writeFile(t, rtConf, "10-net.conflist", bridgePortmap)
	fakePlugin(t, rtBin, "bridge", allVersions)
	fakePlugin(t, rtBin, "portmap", allVersions)
	emptyConf := filepath.Join(tmp, "empty")

	st := &runtimeapi.StatusResponse{Info: map[string]string{
		"cniconfig": `{"PluginDirs":["` + rtBin + `"],"PluginConfDir":"` + rtConf + `"}`,
	}}
	if p, err := CheckPodNetworkStatus(context.Background(), st, Flags{}); err != nil || p == nil {
		t.Errorf("with the runtime's dirs: %v, %v; want a configuration pending its plugins' versions", p, err)
	}
	_, err := CheckPodNetworkStatus(context.Background(), st, Flags{ConfDir: emptyConf})
	if err == nil || !strings.Contains(err.Error(), "no CNI network config (*.conflist, *.conf, *.json) in "+emptyConf+" (from --cni-conf-dir)") {
		t.Errorf("--cni-conf-dir does not override the runtime's dir: %v", err)
	}
	_, err = CheckPodNetworkStatus(context.Background(), st, Flags{BinDirs: []string{emptyConf}})
	if err == nil || !strings.Contains(err.Error(), `plugin "bridge" not found in `+emptyConf+" (from --cni-bin-dir)") {
		t.Errorf("--cni-bin-dir does not override the runtime's dirs: %v", err)
	}
}
