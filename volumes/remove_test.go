package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveSafelyWhatCannotExist: a dir that is gone, or whose name is too
// long for any file (a pod log dir of a 63-byte namespace and a 253-byte
// name, which the runtime could not create), counts as removed: teardown
// said "removing ...: unlinkat ...: file name too long" of a dir that never
// existed.
func TestRemoveSafelyWhatCannotExist(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{
		filepath.Join(root, "gone"),
		filepath.Join(root, strings.Repeat("n", 63)+"_"+strings.Repeat("x", 253)+"_0123456789abcdef0123456789abcdef"),
		filepath.Join(root, strings.Repeat("x", 256), "below"),
	} {
		if err := RemoveSafely(dir); err != nil {
			t.Errorf("RemoveSafely(%.40s...) = %v, want nil", dir, err)
		}
	}
	// A dir that is there goes.
	dir := filepath.Join(root, "here", "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSafely(filepath.Join(root, "here")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "here")); !os.IsNotExist(err) {
		t.Errorf("the dir is still there: %v", err)
	}
}
