package artifacts

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree lists dir's entries: "rel mode" for dirs and files ("rel -> target"
// for symlinks), and the files' contents.
func tree(t *testing.T, dir string) (entries []string, contents map[string]string) {
	t.Helper()
	contents = map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			entries = append(entries, rel+" -> "+target)
		case fi.IsDir():
			entries = append(entries, rel+"/ "+fi.Mode().Perm().String())
		default:
			entries = append(entries, rel+" "+fi.Mode().String())
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			contents[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(entries)
	return entries, contents
}

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// A volume as a container leaves it: a report, a nested dir, an
// executable, a setuid file, symlinks out of the volume and within it, a
// fifo and a socket.
func hostileVolume(t *testing.T) string {
	vol := t.TempDir()
	write(t, filepath.Join(vol, "out/report.xml"), "<testsuites/>", 0o644)
	write(t, filepath.Join(vol, "out/logs/a.log"), "a\n", 0o600)
	write(t, filepath.Join(vol, "out/run.sh"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(vol, "out/suid"), "x", 0o4755)
	for link, target := range map[string]string{
		"out/shadow": "/etc/shadow", "out/up": "../../..", "out/logs/self": "a.log", "escape": "/etc",
	} {
		if err := os.Symlink(target, filepath.Join(vol, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(vol, "out/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(vol, "out/logs"), 0o750); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(vol, "out/report.xml"), old, old); err != nil {
		t.Fatal(err)
	}
	return vol
}

func TestCopyTree(t *testing.T) {
	vol := hostileVolume(t)
	host := filepath.Join(t.TempDir(), "artifacts", "new")
	d := NewDest(host, DefaultLimit)
	err := CopyTree(vol, "out", "out", d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	entries, contents := tree(t, host)
	want := []string{
		"logs/ -rwxr-x---",
		"logs/a.log -rw-------",
		"report.xml -rw-r--r--",
		"run.sh -rwxr-xr-x",
		"suid -rwxr-xr-x", // no setuid bit on the host
	}
	if strings.Join(entries, "\n") != strings.Join(want, "\n") {
		t.Errorf("copied:\n%s\nwant:\n%s", strings.Join(entries, "\n"), strings.Join(want, "\n"))
	}
	if contents["report.xml"] != "<testsuites/>" || contents["logs/a.log"] != "a\n" {
		t.Errorf("contents %q", contents)
	}
	if fi, err := os.Stat(filepath.Join(host, "report.xml")); err != nil || !fi.ModTime().Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("report.xml's mtime: %v, %v", fi, err)
	}
	if d.Files != 4 || d.Bytes != int64(len("<testsuites/>a\n#!/bin/sh\nx")) {
		t.Errorf("files %d, bytes %d", d.Files, d.Bytes)
	}
	wantSkipped := []string{
		"out/fifo (a fifo)",
		"out/logs/self (a symlink to a.log, not followed)",
		"out/shadow (a symlink to /etc/shadow, not followed)",
		"out/up (a symlink to ../../.., not followed)",
	}
	for i := range wantSkipped {
		wantSkipped[i] = strings.TrimPrefix(wantSkipped[i], "out/")
	}
	if strings.Join(d.Skipped, "\n") != strings.Join(wantSkipped, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(d.Skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
}

func TestCopyTreeFileAndRoot(t *testing.T) {
	vol := hostileVolume(t)
	host := t.TempDir()
	d := NewDest(host, 0)
	if err := CopyTree(vol, "out/report.xml", "report.xml", d); err != nil {
		t.Fatal(err)
	}
	// A symlink within the volume is followed to the file it names, as a
	// subPath is resolved.
	if err := CopyTree(vol, "out/logs/self", "self", d); err != nil {
		t.Fatal(err)
	}
	d.Close()
	entries, contents := tree(t, host)
	if strings.Join(entries, ",") != "report.xml -rw-r--r--,self -rw-------" || contents["self"] != "a\n" {
		t.Errorf("copied %q %q", entries, contents)
	}

	// The volume's root.
	host = t.TempDir()
	d = NewDest(host, 0)
	if err := CopyTree(filepath.Join(vol, "out"), "", "out", d); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if entries, _ := tree(t, host); len(entries) != 5 {
		t.Errorf("root copied: %q", entries)
	}
}

func TestCopyTreeRefusesEscapes(t *testing.T) {
	vol := hostileVolume(t)
	for _, tc := range []struct{ rel, err string }{
		{"out/shadow", "the path leads out of the volume through a symlink, which is not followed"},
		{"escape/passwd", "the path leads out of the volume through a symlink, which is not followed"},
		{"out/up/etc", "leads out of the volume"},
		{"out/missing", "no such file or directory on the volume"},
		{"out/fifo", "it is a fifo, not a file or a directory"},
	} {
		host := filepath.Join(t.TempDir(), "host")
		d := NewDest(host, 0)
		err := CopyTree(vol, tc.rel, "x", d)
		d.Close()
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CopyTree(%s) = %v, want %q", tc.rel, err, tc.err)
		}
		if _, err := os.Lstat(host); !os.IsNotExist(err) {
			t.Errorf("CopyTree(%s) made the host dir: %v", tc.rel, err)
		}
	}
}

func TestCopyTreeLimit(t *testing.T) {
	vol := t.TempDir()
	write(t, filepath.Join(vol, "a"), strings.Repeat("a", 600), 0o644)
	write(t, filepath.Join(vol, "b"), strings.Repeat("b", 600), 0o644)
	host := t.TempDir()
	d := NewDest(host, 1000)
	err := CopyTree(vol, "", "v", d)
	d.Close()
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "b would take the copy over 1000 bytes") {
		t.Fatalf("err %v", err)
	}
	// The file that crossed the limit is not left truncated.
	if entries, _ := tree(t, host); strings.Join(entries, ",") != "a -rw-r--r--" {
		t.Errorf("left %q", entries)
	}
	// Exactly the limit fits.
	d = NewDest(t.TempDir(), 1200)
	if err := CopyTree(vol, "", "v", d); err != nil || d.Bytes != 1200 {
		t.Errorf("at the limit: %v, %d bytes", err, d.Bytes)
	}
	d.Close()
}

// What is in the host dir already is never written through: a symlink
// where a file goes is replaced, one where a dir goes is an error.
func TestDestDoesNotFollowSymlinks(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "victim"), "precious", 0o644)
	host := t.TempDir()
	os.Symlink(filepath.Join(outside, "victim"), filepath.Join(host, "report.xml"))
	os.Symlink(outside, filepath.Join(host, "logs"))

	d := NewDest(host, 0)
	if err := d.WriteFile("report.xml", 0o644, time.Time{}, strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	err := d.WriteFile("logs/victim", 0o644, time.Time{}, strings.NewReader("pwned"))
	if err == nil || !strings.Contains(err.Error(), "logs exists and is not a directory (a symlink is not followed)") {
		t.Errorf("through a symlinked dir: %v", err)
	}
	if err := d.Mkdir("logs", 0o755, time.Time{}); err == nil {
		t.Error("Mkdir over a symlink succeeded")
	}
	if err := d.WriteFile("../escape", 0o644, time.Time{}, strings.NewReader("x")); err == nil {
		t.Error("WriteFile(../escape) succeeded")
	}
	os.Mkdir(filepath.Join(host, "dir"), 0o755)
	if err := d.WriteFile("dir", 0o644, time.Time{}, strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a file over a dir: %v", err)
	}
	d.Close()
	if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "precious" {
		t.Errorf("written through a symlink: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(host, "report.xml")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("report.xml is %v, %v: want the new file", fi, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(host), "escape")); err == nil {
		t.Error("../escape was written")
	}
}
