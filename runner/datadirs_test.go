package runner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/podrun/podrun/volumes"
	"golang.org/x/sys/unix"
)

func TestMakePodDataDirs(t *testing.T) {
	root := t.TempDir()
	rec := ownerRecord{
		Owner:     Owner{RunID: "run1", PID: 42, PIDStart: 4242, Detached: true},
		Namespace: "shop", Name: "web", LogDir: filepath.Join(root, "logs", "shop_web_uid-1"),
	}
	dir, err := makePodDataDirs(root, "uid-1", rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "pods", "uid-1"); dir != want {
		t.Errorf("dir = %q, want %q", dir, want)
	}
	for _, d := range []string{dir, filepath.Join(dir, "volumes"), filepath.Join(dir, "plugins"), filepath.Join(dir, "containers")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: mode %v, want a dir with 0750", d, fi.Mode())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, ownerFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("owner record mode %v, want 0640", fi.Mode().Perm())
	}
	got, err := readOwnerRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("owner record = %+v, want %+v", got, rec)
	}
	// No half-made dir is left behind.
	entries, _ := os.ReadDir(filepath.Join(root, "pods"))
	if len(entries) != 1 || entries[0].Name() != "uid-1" {
		t.Errorf("pods dir holds %v, want only uid-1", entries)
	}
}

func TestMakePodDataDirsRefusesAnExistingDir(t *testing.T) {
	root := t.TempDir()
	if _, err := makePodDataDirs(root, "uid-1", ownerRecord{}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(podDir(root, "uid-1"), "volumes", "data")
	if err := os.WriteFile(marker, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := makePodDataDirs(root, "uid-1", ownerRecord{}); err == nil {
		t.Errorf("makePodDataDirs over an existing pod dir succeeded")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the existing pod dir was touched: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "pods"))
	if len(entries) != 1 {
		t.Errorf("pods dir holds %d entries after the failure, want 1 (no temp dir left)", len(entries))
	}
}

func TestRemoveDirSafelyOfAMissingDir(t *testing.T) {
	if err := volumes.RemoveSafely(filepath.Join(t.TempDir(), "gone")); err != nil {
		t.Errorf("volumes.RemoveSafely(missing) = %v, want nil", err)
	}
}

func TestRemoveDirSafelyRemovesAPlainTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pod")
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := volumes.RemoveSafely(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir still there: %v", err)
	}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("needs root to mount: run the unit tests as root, as make test does")
	}
}

// bindMount mounts src on dst and makes sure it is gone when the test ends.
func bindMount(t *testing.T, src, dst string) {
	t.Helper()
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("cannot bind mount here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}

func TestRemoveDirSafelyUnmountsInsteadOfDeletingThroughAMount(t *testing.T) {
	requireRoot(t)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "host data")
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(src, "sub", "precious.txt")
	if err := os.WriteFile(precious, []byte("do not delete"), 0o644); err != nil {
		t.Fatal(err)
	}
	podDir := filepath.Join(tmp, "pods", "uid-1")
	// A name with a space shows up escaped (\040) in mountinfo.
	dst := filepath.Join(podDir, "volumes", "kubernetes.io~host-path", "my vol")
	if err := os.MkdirAll(dst, 0o750); err != nil {
		t.Fatal(err)
	}
	bindMount(t, src, dst)
	// A second mount nested in the first, to check the deepest-first order.
	inner := filepath.Join(dst, "sub")
	innerSrc := filepath.Join(tmp, "inner")
	if err := os.MkdirAll(innerSrc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(innerSrc, "also.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	bindMount(t, innerSrc, inner)

	mounts, err := volumes.MountsUnder(podDir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{inner, dst}; !reflect.DeepEqual(mounts, want) {
		t.Fatalf("mountsUnder = %q, want %q (deepest first)", mounts, want)
	}

	if err := volumes.RemoveSafely(podDir); err != nil {
		t.Fatalf("RemoveSafely: %v", err)
	}
	if left, _ := volumes.MountsUnder(podDir); len(left) != 0 {
		t.Errorf("still mounted: %q", left)
	}
	if _, err := os.Lstat(podDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pod dir still there: %v", err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "do not delete" {
		t.Errorf("the bind source's file is gone or changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(innerSrc, "also.txt")); err != nil {
		t.Errorf("the nested bind source's file is gone: %v", err)
	}
}

func TestMountsUnderIgnoresSiblingsWithACommonPrefix(t *testing.T) {
	requireRoot(t)
	tmp := t.TempDir()
	pod := filepath.Join(tmp, "pod")
	sibling := filepath.Join(tmp, "pod-other")
	for _, d := range []string{pod, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bindMount(t, t.TempDir(), sibling)
	mounts, err := volumes.MountsUnder(pod)
	if err != nil {
		t.Fatal(err)
	}
	if len(mounts) != 0 {
		t.Errorf("volumes.MountsUnder(%s) = %q, want none", pod, mounts)
	}
	if got, _ := volumes.MountsUnder(sibling); len(got) != 1 || got[0] != sibling {
		t.Errorf("volumes.MountsUnder(%s) = %q, want itself", sibling, got)
	}
}

func TestUnescapeMountPath(t *testing.T) {
	cases := map[string]string{
		`/plain/path`:         "/plain/path",
		`/with\040space`:      "/with space",
		`/tab\011and\134back`: "/tab\tand\\back",
		`/trailing\04`:        `/trailing\04`,
		`/not\xyzoctal`:       `/not\xyzoctal`,
	}
	for in, want := range cases {
		if got := volumes.UnescapeOctal(in); got != want {
			t.Errorf("volumes.UnescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMakePodDataDirsTakenByAnotherRun: the dir another run made first
// is refused as a pod already running, naming that run's podrun.
func TestMakePodDataDirsTakenByAnotherRun(t *testing.T) {
	root := t.TempDir()
	first := ownerRecord{Owner: Owner{RunID: "a", PID: 4321}, Namespace: "shop", Name: "web"}
	if _, err := makePodDataDirs(root, "uid-1", first); err != nil {
		t.Fatal(err)
	}
	second := ownerRecord{Owner: Owner{RunID: "b", PID: 5678}, Namespace: "shop", Name: "web"}
	_, err := makePodDataDirs(root, "uid-1", second)
	var running *alreadyRunningError
	if !errors.As(err, &running) {
		t.Fatalf("makePodDataDirs over another run's dir = %v, want an alreadyRunningError", err)
	}
	if want := "pod shop/web (uid uid-1) is already running (by podrun pid 4321); stop it with `podrun down shop/web`"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
