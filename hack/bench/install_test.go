package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestInstalledCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "podrun")
	if err := os.WriteFile(src, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	dst, err := installedCopy(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dst) != "podrun" {
		t.Errorf("copy named %s: the binary's name must stay (podrun tells its own processes by it)", dst)
	}
	b, err := os.ReadFile(dst)
	if err != nil || string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("copy holds %q, %v", b, err)
	}
	if err := exec.Command(dst).Run(); err != nil {
		t.Errorf("the copy does not run: %v", err)
	}
	if _, err := installedCopy(filepath.Join(t.TempDir(), "missing"), t.TempDir()); err == nil {
		t.Error("a missing binary was copied")
	}
}
