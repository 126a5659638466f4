package volumes

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestHostPathDecision(t *testing.T) {
	const p = "/srv/data"
	for _, tc := range []struct {
		typ    v1.HostPathType
		ft     fileType
		create hostPathCreate
		err    string
	}{
		{v1.HostPathUnset, ftMissing, createNothing, ""},
		{v1.HostPathUnset, ftSocket, createNothing, ""},
		{v1.HostPathDirectoryOrCreate, ftMissing, createDir, ""},
		{v1.HostPathDirectoryOrCreate, ftDirectory, createNothing, ""},
		{v1.HostPathDirectoryOrCreate, ftFile, createNothing, "hostPath type check failed: /srv/data is not a directory"},
		{v1.HostPathDirectory, ftDirectory, createNothing, ""},
		{v1.HostPathDirectory, ftMissing, createNothing, "hostPath type check failed: /srv/data is not a directory"},
		{v1.HostPathFileOrCreate, ftMissing, createFile, ""},
		{v1.HostPathFileOrCreate, ftFile, createNothing, ""},
		{v1.HostPathFileOrCreate, ftDirectory, createNothing, "hostPath type check failed: /srv/data is not a file"},
		{v1.HostPathFile, ftFile, createNothing, ""},
		{v1.HostPathFile, ftMissing, createNothing, "hostPath type check failed: /srv/data is not a file"},
		{v1.HostPathFile, ftCharDevice, createNothing, "hostPath type check failed: /srv/data is not a file"},
		{v1.HostPathSocket, ftSocket, createNothing, ""},
		{v1.HostPathSocket, ftFile, createNothing, "hostPath type check failed: /srv/data is not a socket file"},
		{v1.HostPathCharDev, ftCharDevice, createNothing, ""},
		{v1.HostPathCharDev, ftBlockDevice, createNothing, "hostPath type check failed: /srv/data is not a character device"},
		{v1.HostPathBlockDev, ftBlockDevice, createNothing, ""},
		{v1.HostPathBlockDev, ftMissing, createNothing, "hostPath type check failed: /srv/data is not a block device"},
		{"Weird", ftFile, createNothing, "Weird is an invalid volume type"},
	} {
		c, err := hostPathDecision(p, tc.typ, tc.ft)
		if c != tc.create || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("hostPathDecision(%q, %v) = %v, %v; want %v, %q", tc.typ, tc.ft, c, err, tc.create, tc.err)
		}
	}
}

func TestHostPathOnTheFilesystem(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		path string
		typ  v1.HostPathType
		err  string
	}{
		{dir, v1.HostPathDirectory, ""},
		{file, v1.HostPathFile, ""},
		{sock, v1.HostPathSocket, ""},
		{"/dev/null", v1.HostPathCharDev, ""},
		{"/dev/null", v1.HostPathFile, "is not a file"},
		{filepath.Join(dir, "missing"), v1.HostPathDirectory, "is not a directory"},
		{filepath.Join(dir, "missing"), v1.HostPathDirectoryOrCreate, ""},
		{filepath.Join(dir, "new-file"), v1.HostPathFileOrCreate, ""},
		{filepath.Join(dir, "no-parent", "file"), v1.HostPathFileOrCreate, "its parent dir " + filepath.Join(dir, "no-parent") + " does not exist"},
	} {
		v := &Volume{Kind: KindHostPath, HostPath: tc.path, HostPathType: tc.typ}
		err := checkHostPath(v)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("checkHostPath(%s, %s) = %v, want %q", tc.path, tc.typ, err, tc.err)
		}
	}
	// The pre-flight created nothing.
	for _, p := range []string{"missing", "new-file"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("checkHostPath created %s", p)
		}
	}

	// Setup creates: a dir 0755 with its parents, a file 0644 (not its parent).
	d := filepath.Join(dir, "a", "b")
	if err := setUpHostPath(&Volume{HostPath: d, HostPathType: v1.HostPathDirectoryOrCreate}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
		t.Errorf("DirectoryOrCreate made %v, %v; want a dir 0755", fi, err)
	}
	f := filepath.Join(dir, "f.log")
	if err := setUpHostPath(&Volume{HostPath: f, HostPathType: v1.HostPathFileOrCreate}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("FileOrCreate made %v, %v; want a file 0644", fi, err)
	}
	err = setUpHostPath(&Volume{HostPath: filepath.Join(dir, "nope", "f"), HostPathType: v1.HostPathFileOrCreate})
	if err == nil {
		t.Error("FileOrCreate created a missing parent")
	}
}
