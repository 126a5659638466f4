package fake

import (
	"os"
	"path/filepath"
	"testing"
)

// FakeCNI gives the server a valid pod network: a conf dir and a plugin
// dir in a temp dir, reported in its verbose Status the way containerd
// does ("cniconfig"), with bridge, portmap and loopback plugins that speak
// config versions up to 1.0.0 and fail every command but VERSION. It
// returns the two dirs.
func (s *Server) FakeCNI(t testing.TB) (confDir, binDir string) {
	t.Helper()
	tmp := t.TempDir()
	confDir, binDir = filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	script := "#!/bin/sh\n" +
		`if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":["0.3.1","0.4.0","1.0.0"]}'; exit 0; fi` + "\n" +
		`echo '{"code":4,"msg":"fake plugin"}'; exit 1` + "\n"
	for _, dir := range []string{confDir, binDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"bridge", "portmap", "loopback"} {
		if err := os.WriteFile(filepath.Join(binDir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
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
