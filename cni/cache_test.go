package cni

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A successful validation is remembered and reused; changing the
// configuration or a plugin binary validates again, and a failed one is
// never remembered.
func TestValidationIsRememberedUntilSomethingChanges(t *testing.T) {
	dir := t.TempDir()
	conf, bin := filepath.Join(dir, "net.d"), filepath.Join(dir, "bin")
	os.MkdirAll(conf, 0o755)
	os.MkdirAll(bin, 0o755)
	calls := filepath.Join(dir, "calls")
	plugin := "#!/bin/sh\necho x >> " + calls + "\necho '{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"0.4.0\",\"1.0.0\"]}'\n"
	if err := os.WriteFile(filepath.Join(bin, "bridge"), []byte(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(conf, "10-net.conflist")
	write := func(name string) {
		body := `{"cniVersion":"1.0.0","name":"` + name + `","plugins":[{"type":"bridge"}]}`
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs := func() int {
		b, _ := os.ReadFile(calls)
		n := 0
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
		return n
	}
	state := filepath.Join(dir, "state", "cni-validated")
	d := Dirs{ConfDir: conf, BinDirs: []string{bin}}
	write("a")
	for i := range 2 {
		if err := check(context.Background(), d, state); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if n := runs(); n != 1 {
		t.Fatalf("plugin ran %d times for two checks of the same configuration, want 1", n)
	}
	write("b")
	if err := check(context.Background(), d, state); err != nil {
		t.Fatal(err)
	}
	if n := runs(); n != 2 {
		t.Fatalf("after the configuration changed the plugin ran %d times in all, want 2", n)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(bin, "bridge"), later, later)
	if err := check(context.Background(), d, state); err != nil {
		t.Fatal(err)
	}
	if n := runs(); n != 3 {
		t.Fatalf("after the plugin changed it ran %d times in all, want 3", n)
	}
	os.Remove(filepath.Join(bin, "bridge"))
	if err := check(context.Background(), d, state); err == nil {
		t.Fatal("a missing plugin passed the check: the remembered validation was reused")
	}
}
