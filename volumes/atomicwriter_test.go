package volumes

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestValidatePath(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		path, err string
	}{
		{"file", ""},
		{"dir/file", ""},
		{"a/b/c/d", ""},
		{".dotfile", ""},
		{"..", "must not contain '..'"},
		{"a/../b", "must not contain '..'"},
		{"..data", "must not start with '..'"},
		{"..data/x", "must not start with '..'"},
		{"...", "must not start with '..'"},
		{"/etc/passwd", "must be relative path"},
		{"", "must not be empty"},
		{".", "must name a file"},
		{long, "filenames must be less than or equal to 255 characters"},
		{"d/" + long, "filenames must be less than or equal to 255 characters"},
		{strings.Repeat("abcdefg/", 513), "must be less than or equal to 4096 characters"},
		{strings.Repeat("a", 255), ""},
		{"\x000", "must not contain a NUL byte"}, // FuzzAtomicWriter's first find
		{"d/a\x00b", "must not contain a NUL byte"},
	} {
		err := validatePath(tc.path)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("validatePath(%.40q) = %v, want %q", tc.path, err, tc.err)
		}
	}
}

func TestValidatePayloadFileAndDir(t *testing.T) {
	_, err := validatePayload(map[string]FileProjection{"a": {}, "a/b": {}})
	if err == nil || !strings.Contains(err.Error(), "a is a file and the dir of a/b") {
		t.Errorf("err = %v", err)
	}
	clean, err := validatePayload(map[string]FileProjection{"./x//y": {Mode: 0o600}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := clean["x/y"]; !ok {
		t.Errorf("cleaned payload %v, want x/y", clean)
	}
}

// tree lists a dir: "name -> target" for symlinks, "name/ MODE" for dirs and
// "name MODE content" for files, sorted; the timestamped dir's name is
// replaced by TS.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	ts := regexp.MustCompile(`\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+`)
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		rel = ts.ReplaceAllString(rel, "TS")
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+ts.ReplaceAllString(target, "TS"))
		case fi.IsDir():
			out = append(out, rel+"/ "+fi.Mode().Perm().String())
		default:
			b, _ := os.ReadFile(p)
			out = append(out, rel+" "+fi.Mode().Perm().String()+" "+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func expectTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	got := tree(t, dir)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree of %s:\n%s\nwant:\n%s", dir, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var t0 = time.Date(2026, 2, 1, 15, 4, 5, 0, time.UTC)

func TestWriteAtomicFirstWrite(t *testing.T) {
	dir := t.TempDir()
	payload := map[string]FileProjection{
		"username":             {Data: []byte("admin"), Mode: 0o644},
		"my-group/my-password": {Data: []byte("s3cret"), Mode: 0o400},
	}
	if err := writeAtomic(dir, payload, nil, t0); err != nil {
		t.Fatal(err)
	}
	expectTree(t, dir,
		"..data -> TS",
		"TS/ -rwxr-xr-x",
		"TS/my-group/ -rwxr-xr-x",
		"TS/my-group/my-password -r-------- s3cret",
		"TS/username -rw-r--r-- admin",
		"my-group -> ..data/my-group",
		"username -> ..data/username",
	)
	ts, _ := os.Readlink(filepath.Join(dir, "..data"))
	if !strings.HasPrefix(ts, "..2026_02_01_15_04_05.") {
		t.Errorf("timestamped dir %q, want ..2026_02_01_15_04_05.<random>", ts)
	}
	if _, err := os.Lstat(filepath.Join(dir, "..data_tmp")); !os.IsNotExist(err) {
		t.Errorf("..data_tmp left behind: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "my-group", "my-password"))
	if err != nil || string(b) != "s3cret" {
		t.Errorf("reading through the user-visible link: %q, %v", b, err)
	}
}

func TestWriteAtomicUpdates(t *testing.T) {
	for _, tc := range []struct {
		name       string
		next       map[string]FileProjection
		newTsDir   bool
		wantLayout []string
	}{{
		name:     "same content and modes: nothing is written",
		next:     map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o644}},
		newTsDir: false,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x", "TS/a -rw-r--r-- 1", "TS/d/ -rwxr-xr-x", "TS/d/b -rw-r--r-- 2",
			"a -> ..data/a", "d -> ..data/d"},
	}, {
		name:     "changed content: a new timestamped dir, the old one removed",
		next:     map[string]FileProjection{"a": {Data: []byte("one"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o644}},
		newTsDir: true,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x", "TS/a -rw-r--r-- one", "TS/d/ -rwxr-xr-x", "TS/d/b -rw-r--r-- 2",
			"a -> ..data/a", "d -> ..data/d"},
	}, {
		name:       "changed mode only",
		next:       map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o600}, "d/b": {Data: []byte("2"), Mode: 0o644}},
		newTsDir:   true,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x", "TS/a -rw------- 1", "TS/d/ -rwxr-xr-x", "TS/d/b -rw-r--r-- 2", "a -> ..data/a", "d -> ..data/d"},
	}, {
		name:       "a removed key: its user-visible link goes too",
		next:       map[string]FileProjection{"d/b": {Data: []byte("2"), Mode: 0o644}},
		newTsDir:   true,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x", "TS/d/ -rwxr-xr-x", "TS/d/b -rw-r--r-- 2", "d -> ..data/d"},
	}, {
		name:     "a new key: a new user-visible link",
		next:     map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o644}, "c": {Data: []byte("3"), Mode: 0o644}},
		newTsDir: true,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x", "TS/a -rw-r--r-- 1", "TS/c -rw-r--r-- 3", "TS/d/ -rwxr-xr-x", "TS/d/b -rw-r--r-- 2",
			"a -> ..data/a", "c -> ..data/c", "d -> ..data/d"},
	}, {
		name:       "everything removed",
		next:       map[string]FileProjection{},
		newTsDir:   true,
		wantLayout: []string{"..data -> TS", "TS/ -rwxr-xr-x"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			first := map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}, "d/b": {Data: []byte("2"), Mode: 0o644}}
			if err := writeAtomic(dir, first, nil, t0); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Readlink(filepath.Join(dir, "..data"))
			if err := writeAtomic(dir, tc.next, nil, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			after, _ := os.Readlink(filepath.Join(dir, "..data"))
			if (before != after) != tc.newTsDir {
				t.Errorf("..data %s → %s; want a new timestamped dir: %v", before, after, tc.newTsDir)
			}
			expectTree(t, dir, tc.wantLayout...)
		})
	}
}

func TestWriteAtomicRefusesBadPathsAndWritesNothing(t *testing.T) {
	for _, p := range []string{"../escape", "/abs", "..data", "a/../../b"} {
		dir := t.TempDir()
		err := writeAtomic(dir, map[string]FileProjection{"ok": {Data: []byte("x"), Mode: 0o644}, p: {Data: []byte("x"), Mode: 0o644}}, nil, t0)
		if err == nil {
			t.Errorf("%q: no error", p)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: wrote %v", p, entries)
		}
	}
}

func TestWriteAtomicDoesNotFollowASymlinkInTheTarget(t *testing.T) {
	// A user-visible name that is already something else (a symlink out of
	// the volume, planted by someone) is left alone: the data goes into the
	// timestamped dir only, never through the link.
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(dir, map[string]FileProjection{"evil/file": {Data: []byte("x"), Mode: 0o644}}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote through the symlink into %s: %v", outside, entries)
	}
}

func TestWriteAtomicSetPermsRunsBeforePublishing(t *testing.T) {
	dir := t.TempDir()
	var sawData bool
	err := writeAtomic(dir, map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0o644}}, func(ts string) error {
		_, err := os.Lstat(filepath.Join(dir, "..data"))
		sawData = err == nil
		if _, err := os.Stat(filepath.Join(ts, "a")); err != nil {
			t.Errorf("setPerms: file not written yet: %v", err)
		}
		return nil
	}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if sawData {
		t.Error("..data existed when setPerms ran")
	}
}

func TestWriteAtomicAFileThatBecomesADir(t *testing.T) {
	// Found by FuzzAtomicWriter: the second write failed with "not a
	// directory" when it compared a/b with the old version's file a.
	dir := t.TempDir()
	for _, payload := range []map[string]FileProjection{
		{"a": {Data: []byte("1"), Mode: 0o644}},
		{"a/b": {Data: []byte("2"), Mode: 0o644}},
		{"a": {Data: []byte("3"), Mode: 0o644}},
	} {
		if err := writeAtomic(dir, payload, nil, t0); err != nil {
			t.Fatal(err)
		}
	}
	expectTree(t, dir, "..data -> TS", "TS/ -rwxr-xr-x", "TS/a -rw-r--r-- 3", "a -> ..data/a")
}
