package main

import (
	"os"
	"path/filepath"
	"testing"
)

// removeNewEmpty removes only what appeared since the snapshot, and only
// when empty; a dir with something in it stays, as a cgroup with
// processes or children does.
func TestRemoveNewEmpty(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("old")
	before := cgroupDirs(dir)
	mk("new-empty")
	mk("new-busy")
	if err := os.WriteFile(filepath.Join(dir, "new-busy", "cgroup.procs"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := removeNewEmpty(dir, before); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	got := cgroupDirs(dir)
	if !got["old"] || got["new-empty"] || !got["new-busy"] {
		t.Errorf("left %v, want old and new-busy", got)
	}
	if n := removeNewEmpty(filepath.Join(dir, "absent"), before); n != 0 {
		t.Errorf("an absent dir: removed %d", n)
	}
}
