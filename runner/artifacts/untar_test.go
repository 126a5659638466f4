package artifacts

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTarCommand(t *testing.T) {
	for _, tc := range []struct{ path, cmd, base string }{
		{"/out", "tar cf - -C / out", "out"},
		{"/out/", "tar cf - -C / out", "out"},
		{"/a/b/report.xml", "tar cf - -C /a/b/ report.xml", "report.xml"},
		{"/", "tar cf - -C / .", "."},
	} {
		cmd, base := TarCommand(tc.path)
		if strings.Join(cmd, " ") != tc.cmd || base != tc.base {
			t.Errorf("TarCommand(%s) = %q, %q", tc.path, cmd, base)
		}
	}
}

type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
	mode     int64
}

func tarOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: mode, Size: int64(len(e.body)), Linkname: e.linkname,
			ModTime: time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC)}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func untarInto(t *testing.T, host, base string, limit int64, archive []byte) (*Dest, error) {
	t.Helper()
	d := NewDest(host, limit)
	err := Untar(bytes.NewReader(archive), base, d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return d, err
}

func TestUntar(t *testing.T) {
	host := t.TempDir()
	d, err := untarInto(t, host, "out", 0, tarOf(t,
		entry{name: "out/", typ: tar.TypeDir, mode: 0o700},
		entry{name: "out/report.xml", typ: tar.TypeReg, body: "<testsuites/>"},
		entry{name: "out/sub/", typ: tar.TypeDir, mode: 0o555},
		entry{name: "out/sub/x", typ: tar.TypeReg, body: "x", mode: 0o6755},
		entry{name: "out/sub/same", typ: tar.TypeLink, linkname: "out/report.xml"},
		entry{name: "out/sub/gone", typ: tar.TypeLink, linkname: "etc/passwd"},
		entry{name: "out/shadow", typ: tar.TypeSymlink, linkname: "/etc/shadow"},
		entry{name: "out/rel", typ: tar.TypeSymlink, linkname: "report.xml"},
		entry{name: "out/null", typ: tar.TypeChar},
		entry{name: "out/fifo", typ: tar.TypeFifo},
	))
	if err != nil {
		t.Fatal(err)
	}
	entries, contents := tree(t, host)
	want := []string{
		"report.xml -rw-r--r--",
		"sub/ -r-xr-xr-x",
		"sub/same -rw-r--r--",
		"sub/x -rwxr-xr-x",
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("extracted:\n%s\nwant:\n%s", strings.Join(entries, "\n"), strings.Join(want, "\n"))
	}
	if contents["sub/same"] != "<testsuites/>" {
		t.Errorf("the hard link's content: %q", contents["sub/same"])
	}
	if fi, err := os.Stat(filepath.Join(host, "sub")); err != nil || !fi.ModTime().Equal(time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC)) {
		t.Errorf("sub's mtime: %v, %v", fi.ModTime(), err)
	}
	wantSkipped := []string{
		"sub/gone (a hard link to etc/passwd, which was not copied)",
		"shadow (a symlink to /etc/shadow, not followed)",
		"rel (a symlink to report.xml, not followed)",
		"null (a character device)",
		"fifo (a fifo)",
	}
	if !reflect.DeepEqual(d.Skipped, wantSkipped) {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(d.Skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
	os.Chmod(filepath.Join(host, "sub"), 0o755) // for TempDir's cleanup

	// A file: into the host dir under its name.
	host = t.TempDir()
	if _, err := untarInto(t, host, "report.xml", 0, tarOf(t, entry{name: "report.xml", typ: tar.TypeReg, body: "r"})); err != nil {
		t.Fatal(err)
	}
	if entries, _ := tree(t, host); !reflect.DeepEqual(entries, []string{"report.xml -rw-r--r--"}) {
		t.Errorf("a file: %q", entries)
	}
	// The root: entries below ".".
	host = t.TempDir()
	if _, err := untarInto(t, host, ".", 0, tarOf(t, entry{name: "./", typ: tar.TypeDir}, entry{name: "./etc/hostname", typ: tar.TypeReg, body: "h"})); err != nil {
		t.Fatal(err)
	}
	if entries, _ := tree(t, host); !reflect.DeepEqual(entries, []string{"etc/ -rwxr-xr-x", "etc/hostname -rw-r--r--"}) {
		t.Errorf("the root: %q", entries)
	}
}

// A stream that names anything outside the copied path is refused, and
// nothing lands outside the host dir.
func TestUntarRefusesTampering(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		entries    []entry
		err        string
	}{
		{"absolute", "out", []entry{{name: "/etc/cron.d/x", typ: tar.TypeReg, body: "x"}}, `the tar stream holds "/etc/cron.d/x", which is not out or below it: corrupted or tampered with`},
		{"dot-dot", "out", []entry{{name: "out/../../x", typ: tar.TypeReg, body: "x"}}, `"out/../../x", which is not out or below it`},
		{"another path", "out", []entry{{name: "outside/x", typ: tar.TypeReg, body: "x"}}, `"outside/x", which is not out or below it`},
		{"prefix only", "out", []entry{{name: "outer", typ: tar.TypeReg, body: "x"}}, `"outer", which is not out or below it`},
		{"dot-dot from the root", ".", []entry{{name: "../x", typ: tar.TypeReg, body: "x"}}, `"../x", which is not . or below it`},
		{"absolute from the root", ".", []entry{{name: "/x", typ: tar.TypeReg, body: "x"}}, `"/x", which is not . or below it`},
		{"a file as the root", ".", []entry{{name: ".", typ: tar.TypeReg, body: "x"}}, `not a directory, as /`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			host := filepath.Join(parent, "host")
			_, err := untarInto(t, host, tc.base, 0, tarOf(t, tc.entries...))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
			if entries, _ := tree(t, parent); len(entries) != 0 {
				t.Errorf("wrote %q", entries) // not even the host dir
			}
		})
	}
	// A symlink first, then a file through it: the symlink is never made,
	// so the file lands in a dir of its own.
	outside := t.TempDir()
	host := t.TempDir()
	if _, err := untarInto(t, host, "out", 0, tarOf(t,
		entry{name: "out/evil", typ: tar.TypeSymlink, linkname: outside},
		entry{name: "out/evil/x", typ: tar.TypeReg, body: "x"},
	)); err != nil {
		t.Fatal(err)
	}
	if entries, _ := tree(t, outside); len(entries) != 0 {
		t.Errorf("written outside: %q", entries)
	}
	if entries, _ := tree(t, host); !reflect.DeepEqual(entries, []string{"evil/ -rwxr-xr-x", "evil/x -rw-r--r--"}) {
		t.Errorf("host: %q", entries)
	}
}

func TestUntarLimit(t *testing.T) {
	host := t.TempDir()
	_, err := untarInto(t, host, "out", 10, tarOf(t,
		entry{name: "out/a", typ: tar.TypeReg, body: "12345"},
		entry{name: "out/b", typ: tar.TypeReg, body: "123456"},
	))
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err %v", err)
	}
	if entries, _ := tree(t, host); !reflect.DeepEqual(entries, []string{"a -rw-r--r--"}) {
		t.Errorf("left %q", entries)
	}
	if _, err := untarInto(t, t.TempDir(), "out", 0, []byte("not a tar stream at all, but long enough to be read as a header block")); err == nil {
		t.Error("garbage extracted")
	}
}

// The host's tar writes what Untar reads (GNU tar here, busybox's in
// most test images), and Untar brings back what CopyTree copies.
func TestUntarOfTarMatchesCopyTree(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	vol := hostileVolume(t)
	os.Remove(filepath.Join(vol, "out/fifo")) // GNU tar stores it; skipped either way
	cmd, base := TarCommand(filepath.Join(vol, "out"))
	out, err := exec.Command(cmd[0], cmd[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	fromTar := t.TempDir()
	d, err := untarInto(t, fromTar, base, 0, out)
	if err != nil {
		t.Fatal(err)
	}
	fromTree := t.TempDir()
	d2 := NewDest(fromTree, 0)
	if err := CopyTree(vol, "out", "out", d2); err != nil {
		t.Fatal(err)
	}
	d2.Close()
	e1, c1 := tree(t, fromTar)
	e2, c2 := tree(t, fromTree)
	if !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(c1, c2) {
		t.Errorf("tar:\n%s\ntree:\n%s", strings.Join(e1, "\n"), strings.Join(e2, "\n"))
	}
	if len(d.Skipped) != 3 || len(d2.Skipped) != 3 {
		t.Errorf("skipped: tar %q, tree %q", d.Skipped, d2.Skipped)
	}
}
