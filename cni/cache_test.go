package cni

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// countingPlugin writes a plugin that logs each run to calls and speaks
// versions (JSON strings) on VERSION.
func countingPlugin(t *testing.T, dir, name, calls, versions string) {
	t.Helper()
	script := "#!/bin/sh\necho \"$CNI_COMMAND\" >> " + calls + "\n" +
		"echo '{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[" + versions + "]}'\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The pre-flight runs no plugin: a configuration found whole is pending
// until a sandbox confirms it (then remembered: the next pre-flight has
// nothing pending) or explains a failed one (the plugins asked once, the
// problems named). A missing plugin is said at once, with what the others
// answer to VERSION.
func TestPreflightLeavesTheVersionsToTheSandbox(t *testing.T) {
	dir := t.TempDir()
	conf, bin := filepath.Join(dir, "net.d"), filepath.Join(dir, "bin")
	calls := filepath.Join(dir, "calls")
	writeFile(t, conf, "10-net.conflist", bridgePortmap)
	countingPlugin(t, bin, "bridge", calls, `"0.3.1"`)
	countingPlugin(t, bin, "portmap", calls, allVersions)
	runs := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}
	state := filepath.Join(dir, "state", "cni-validated")
	d := Dirs{ConfDir: conf, ConfDirFrom: fromConfFlag, BinDirs: []string{bin}, BinDirsFrom: fromBinFlag}
	ctx := context.Background()

	p, err := preflight(ctx, d, state)
	if err != nil || p == nil {
		t.Fatalf("preflight = %v, %v; want a configuration pending", p, err)
	}
	if n := runs(); n != 0 {
		t.Fatalf("preflight ran plugins %d times, want none", n)
	}
	// A failed sandbox: explained once, however many pods ask.
	want := `plugin "bridge" (` + filepath.Join(bin, "bridge") + `) does not support cniVersion "1.0.0" (it supports 0.3.1)`
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if err := p.Explain(ctx); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Explain = %v, want %q", err, want)
			}
		})
	}
	wg.Wait()
	if n := runs(); n != 2 {
		t.Errorf("three Explains ran the plugins %d times, want 2 (each once)", n)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("a failed validation was remembered")
	}

	// A sandbox made: remembered, and the next pre-flight has nothing pending.
	countingPlugin(t, bin, "bridge", calls, allVersions)
	p, err = preflight(ctx, d, state)
	if err != nil || p == nil {
		t.Fatalf("preflight = %v, %v; want a configuration pending", p, err)
	}
	p.Confirm()
	if p, err := preflight(ctx, d, state); err != nil || p != nil {
		t.Errorf("preflight after Confirm = %v, %v; want nothing pending", p, err)
	}
	if err := (*Pending)(nil).Explain(ctx); err != nil {
		t.Errorf("nil Explain = %v", err)
	}
	(*Pending)(nil).Confirm()
	if n := runs(); n != 2 {
		t.Errorf("plugins ran %d times in all, want 2", n)
	}

	// A plugin missing: said now, with the others' answers.
	countingPlugin(t, bin, "bridge", calls, `"0.3.1"`)
	os.Remove(filepath.Join(bin, "portmap"))
	p, err = preflight(ctx, d, state)
	if p != nil || err == nil || !strings.Contains(err.Error(), `plugin "portmap" not found in `+bin) || !strings.Contains(err.Error(), want) {
		t.Errorf("preflight = %v, %v; want portmap missing and bridge's version", p, err)
	}
}
