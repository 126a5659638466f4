package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podrun/podrun/cri/fake"
)

// fakeCNI gives the fake runtime a valid pod network: a conf dir and a
// plugin dir in a temp dir, reported in its verbose Status the way
// containerd does ("cniconfig"), with plugins that answer
// CNI_COMMAND=VERSION. It returns the two dirs.
func fakeCNI(t *testing.T, s *fake.Server) (confDir, binDir string) {
	t.Helper()
	tmp := t.TempDir()
	confDir, binDir = filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	writeCNIPlugins(t, binDir, "bridge", "portmap", "loopback")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := `{"cniVersion":"1.0.0","name":"fake","plugins":[{"type":"bridge","bridge":"fake0"},{"type":"portmap","capabilities":{"portMappings":true}}]}`
	if err := os.WriteFile(filepath.Join(confDir, "10-fake.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.SetStatusInfo(map[string]string{
		"cniconfig": `{"PluginDirs":["` + binDir + `"],"PluginConfDir":"` + confDir + `","Networks":[{"Config":{"Name":"fake","CNIVersion":"1.0.0"}}]}`,
	})
	return confDir, binDir
}

// writeCNIPlugins writes fake CNI plugins that speak config versions up to
// 1.0.0 and fail every command but VERSION.
func writeCNIPlugins(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n" +
		`if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; fi` + "\n" +
		`echo '{"code":4,"msg":"fake plugin"}'; exit 1` + "\n"
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// A pod on the pod network is refused before any sandbox when the runtime
// says NetworkReady but its CNI config names a plugin that is not there;
// a host-network pod still runs.
func TestCLIPodNetworkRefusedBeforeAnySandbox(t *testing.T) {
	s, ep := startFake(t)
	confDir, binDir := fakeCNI(t, s)
	if err := os.Remove(filepath.Join(binDir, "portmap")); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	_, errOut, code := podrunAt(t, ep, "--root-dir", root, "-f", writeManifest(t, jobPod))
	if code != 125 {
		t.Fatalf("exit %d, want 125\nstderr:\n%s", code, errOut)
	}
	want := `CNI network "fake" (` + filepath.Join(confDir, "10-fake.conflist") + `): plugin "portmap" not found in ` + binDir + ` (from the runtime's status)`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	for _, c := range s.Calls() {
		if c == "RunPodSandbox" || c == "PullImage" || c == "CreateContainer" {
			t.Errorf("%s called, want nothing created; calls %v", c, s.Calls())
		}
	}

	hostNet := strings.Replace(jobPod, "  restartPolicy: Never\n", "  restartPolicy: Never\n  hostNetwork: true\n", 1)
	_, errOut, code = podrunAt(t, ep, "--root-dir", root, "-f", writeManifest(t, hostNet))
	if code != 7 {
		t.Errorf("host-network pod: exit %d, want its container's 7\nstderr:\n%s", code, errOut)
	}
}

// --cni-conf-dir and --cni-bin-dir override what the runtime reports.
func TestCLIPodNetworkFlagsOverrideRuntime(t *testing.T) {
	_, ep := startFake(t)
	empty := t.TempDir()
	_, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "--cni-conf-dir", empty, "-f", writeManifest(t, jobPod))
	if code != 125 || !strings.Contains(errOut, "no CNI network config (*.conflist, *.conf, *.json) in "+empty+" (from --cni-conf-dir)") {
		t.Errorf("exit %d, want 125 naming %s\nstderr:\n%s", code, empty, errOut)
	}
	_, errOut, code = podrunAt(t, ep, "--root-dir", t.TempDir(), "--cni-bin-dir", empty+":/nonexistent", "-f", writeManifest(t, jobPod))
	if code != 125 || !strings.Contains(errOut, `plugin "bridge" not found in `+empty+":/nonexistent (from --cni-bin-dir)") {
		t.Errorf("exit %d, want 125 naming bridge and the flag's dirs\nstderr:\n%s", code, errOut)
	}
}
