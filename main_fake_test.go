package main

import (
	"os"
	"path/filepath"
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
