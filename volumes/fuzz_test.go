package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// payloadOf turns one fuzzed text into a payload: a path a line, each
// file holding its cleaned path, modes 0644 and 0600 in turn.
func payloadOf(s string) map[string]FileProjection {
	p := map[string]FileProjection{}
	for i, line := range strings.Split(s, "\n") {
		if i >= 16 {
			break
		}
		mode := int32(0o644)
		if i%2 == 1 {
			mode = 0o600
		}
		p[line] = FileProjection{Data: []byte(path.Clean(line)), Mode: mode}
	}
	return p
}

// within tells whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// checkVolume checks a volume dir after a write of payload: every file of
// the payload is under ..data with its data and mode and nothing else is;
// every user-visible name leads into the volume (but the planted "evil");
// nothing was written outside.
func checkVolume(t *testing.T, vol, outside string, payload map[string]FileProjection) {
	t.Helper()
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote outside the volume: %v", entries)
	}
	data := filepath.Join(vol, dataDirName)
	var files []string
	err := filepath.WalkDir(data+"/", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(data, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("symlink %s in the data dir", rel)
		case d.Type().IsRegular():
			files = append(files, rel)
			f, ok := payload[rel]
			if !ok {
				return fmt.Errorf("%s is not in the payload", rel)
			}
			b, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(b, f.Data) {
				return fmt.Errorf("%s holds %q (%v), want %q", rel, b, err, f.Data)
			}
			fi, _ := d.Info()
			if uint32(fi.Mode().Perm()) != uint32(f.Mode) {
				return fmt.Errorf("%s has mode %v, want %#o", rel, fi.Mode().Perm(), f.Mode)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(payload) {
		t.Fatalf("data dir holds %v, want the %d files of the payload", files, len(payload))
	}
	entries, err := os.ReadDir(vol)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		link := filepath.Join(vol, e.Name())
		real, err := filepath.EvalSymlinks(link)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if e.Name() != "evil" && !within(real, vol) {
			t.Fatalf("%s leads out of the volume, to %s", e.Name(), real)
		}
	}
	for p := range payload {
		top, _, _ := strings.Cut(p, "/")
		if top == "evil" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(vol, p)); err != nil || !bytes.Equal(b, payload[p].Data) {
			t.Fatalf("user-visible %s holds %q (%v)", p, b, err)
		}
	}
}

// FuzzAtomicWriter writes two fuzzed payloads (paths a line, separated
// by a NUL) in turn into a volume dir where a name, "evil", is already a
// symlink out of it, and checks:
//   - a payload validatePayload refuses changes nothing;
//   - after each accepted write the volume holds exactly the payload,
//     readable through the user-visible names; no symlink in it leads
//     out (but the planted one) and nothing is written outside, not
//     even through "evil";
//   - an accepted path is relative, clean of "..", and not one of the
//     writer's own names.
func FuzzAtomicWriter(f *testing.F) {
	f.Add("a\nd/b\n.hidden\nd/e/f", "a\nc")
	f.Add("evil/x\nok", "evil\nok/deeper")
	f.Add("../x\n/abs\n..data/x\n.", "a//b\n./c\nd/./e")
	f.Add("a\na/b", "x\n..data_tmp\n...")
	f.Add(strings.Repeat("n/", 30)+"f", "a\n"+strings.Repeat("x", 256))
	f.Fuzz(func(t *testing.T, first, second string) {
		root := t.TempDir()
		vol, outside := filepath.Join(root, "vol"), filepath.Join(root, "outside")
		for _, d := range []string{vol, outside} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, filepath.Join(vol, "evil")); err != nil {
			t.Fatal(err)
		}
		var last map[string]FileProjection
		for _, text := range []string{first, second} {
			payload := payloadOf(text)
			clean, verr := validatePayload(payload)
			for p := range clean {
				if p == "" || path.IsAbs(p) || p != path.Clean(p) || strings.HasPrefix(p, "..") ||
					strings.Contains("/"+p+"/", "/../") {
					t.Fatalf("validatePayload accepted %q", p)
				}
			}
			before := listing(t, vol)
			err := writeAtomic(vol, payload, nil, t0)
			if verr != nil {
				if err == nil {
					t.Fatalf("writeAtomic accepted a payload validatePayload refuses: %v", verr)
				}
				if after := listing(t, vol); after != before {
					t.Fatalf("a refused payload changed the volume:\n%s\n%s", before, after)
				}
				if last != nil {
					checkVolume(t, vol, outside, last)
				}
				continue
			}
			if err != nil {
				t.Fatalf("writeAtomic(%q): %v", text, err)
			}
			checkVolume(t, vol, outside, clean)
			last = clean
		}
	})
}

// listing is every name under dir with its type, for comparing states.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %v\n", p, d.Type())
		}
		return nil
	})
	return b.String()
}

// subPathVolume makes a volume with symlinks that stay inside it and
// symlinks that lead out, and a dir outside it.
func subPathVolume(t *testing.T) (vol, outside string) {
	t.Helper()
	root := t.TempDir()
	vol, outside = filepath.Join(root, "vol"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(vol, "dir", "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"dir/inside": "sub",    // stays inside
		"dir/up":     "..",     // the volume root: inside
		"dir/climb":  "../..",  // the parent of the volume: out
		"abs":        outside,  // absolute: out
		"loop":       "loop",   // never resolves
		"dir/deeper": "../dir", // inside
	} {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(vol, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return vol, outside
}

// fdPath is where an open fd really is.
func fdPath(t *testing.T, fd int) string {
	t.Helper()
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzSubPath checks subPath handling:
//   - subPathExpr expansion: escaped text ("$" doubled) comes out as it
//     went in, a defined variable is replaced, and a missing one is an
//     error naming it;
//   - validateSubPath accepts only relative paths without a ".." element;
//   - openBeneath, and openNoSymlinks where openat2 is missing, open an
//     accepted subpath only where it really is inside the volume, through
//     whatever symlinks the volume holds;
//   - safeMakeDir creates a missing subpath inside the volume only, and
//     what it created then opens inside the volume.
func FuzzSubPath(f *testing.F) {
	for _, sub := range []string{"dir/sub", "dir/inside/x", "dir/up/dir", "dir/climb/outside", "abs/new", "loop/x",
		"dir/climb/new", "file/x", "./dir//sub/", "new/a/b", "dir/deeper/deeper/sub", "../x", "/abs", "$(POD)/logs", "a$$b"} {
		f.Add(sub, "POD", "web-1")
	}
	f.Fuzz(func(t *testing.T, sub, name, value string) {
		env := map[string]string{name: value}
		esc := strings.ReplaceAll(sub, "$", "$$")
		if got, err := expandSubPathExpr(esc, env); err != nil || got != sub {
			t.Fatalf("expandSubPathExpr(%q) = %q, %v; want %q", esc, got, err, sub)
		}
		if name != "" && !strings.Contains(name, ")") {
			ref := esc + "$(" + name + ")" + esc
			got, err := expandSubPathExpr(ref, env)
			switch {
			case value == "" && (err == nil || !strings.Contains(err.Error(), name)):
				t.Fatalf("expandSubPathExpr(%q) with %s empty = %q, %v; want an error naming it", ref, name, got, err)
			case value != "" && (err != nil || got != sub+value+sub):
				t.Fatalf("expandSubPathExpr(%q) = %q, %v; want %q", ref, got, err, sub+value+sub)
			}
		}

		if err := validateSubPath(sub); err != nil {
			return
		}
		if filepath.IsAbs(sub) || strings.Contains("/"+sub+"/", "/../") {
			t.Fatalf("validateSubPath accepted %q", sub)
		}
		vol, outside := subPathVolume(t)
		base, err := unix.Open(vol, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(base)
		open := func(how string, fn func(int, string) (int, error)) error {
			fd, err := fn(base, sub)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			if p := fdPath(t, fd); !within(p, vol) {
				t.Fatalf("%s(%q) opened %s, outside the volume %s", how, sub, p, vol)
			}
			return nil
		}
		err = open("openBeneath", openBeneath)
		open("openNoSymlinks", openNoSymlinks)
		if !errors.Is(err, unix.ENOENT) {
			return
		}
		if err := safeMakeDir(base, sub, 0o755); err == nil {
			if err := open("openBeneath after safeMakeDir", openBeneath); err != nil {
				t.Fatalf("safeMakeDir(%q) succeeded, then: %v", sub, err)
			}
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Fatalf("safeMakeDir(%q) created %v outside the volume", sub, entries)
		}
		if entries, _ := os.ReadDir(filepath.Dir(vol)); len(entries) != 2 {
			t.Fatalf("safeMakeDir(%q) created %v beside the volume", sub, entries)
		}
	})
}
