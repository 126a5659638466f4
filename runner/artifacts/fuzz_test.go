package artifacts

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUntar feeds Untar tar streams a container could send `podrun cp`:
// built from lines "TYPE NAME [LINKNAME]" (TYPE d, r, s, h, c or f: dir,
// regular file, symlink, hard link, character device, fifo) below base,
// or any bytes. The host dir already holds a symlink out of it. Whatever
// the stream, nothing is written outside the host dir (the planted
// symlink's target stays empty), and the host dir holds only dirs and
// regular files, but for the planted symlink if nothing replaced it.
func FuzzUntar(f *testing.F) {
	f.Add("out", "d out/\nr out/a\nr out/../x\nr /etc/x\ns out/l /etc\nr out/l/x\nh out/h out/a\nr out/planted/x\nr out/planted", []byte(nil))
	f.Add("out", "d out/\nd out/sub\nr out/sub/b\nh out/sub/c ../out/sub/b\nc out/null\nf out/fifo", []byte(nil))
	f.Add(".", "d ./\nr ./etc/hostname\nr ../x\nr ./../../y\ns ./planted ..", []byte(nil))
	f.Add("report.xml", "r report.xml\nr report.xml/x", []byte(nil))
	f.Add("out", "", []byte("not a tar stream"))
	f.Fuzz(func(t *testing.T, base, entries string, raw []byte) {
		if base == "" || strings.ContainsAny(base, "/\x00") && base != "." {
			return
		}
		stream := raw
		if entries != "" {
			stream = buildTar(entries)
			if stream == nil {
				return
			}
		}
		parent := t.TempDir()
		host, outside := filepath.Join(parent, "host"), filepath.Join(parent, "outside")
		os.Mkdir(host, 0o755)
		os.Mkdir(outside, 0o755)
		if err := os.Symlink("../outside", filepath.Join(host, "planted")); err != nil {
			t.Fatal(err)
		}
		d := NewDest(host, 1<<20)
		Untar(bytes.NewReader(stream), base, d)
		d.Close()
		if left, _ := os.ReadDir(outside); len(left) > 0 {
			t.Fatalf("written through the planted symlink: %v", left)
		}
		err := filepath.Walk(parent, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(parent, p)
			switch {
			case rel == "." || rel == "host" || rel == "outside":
			case !strings.HasPrefix(rel, "host/"):
				t.Errorf("written outside the host dir: %s", rel)
			case rel == "host/planted" && fi.Mode()&os.ModeSymlink != 0:
			case !fi.IsDir() && !fi.Mode().IsRegular():
				t.Errorf("%s is %v: only dirs and regular files are made", rel, fi.Mode())
			}
			if fi.IsDir() {
				os.Chmod(p, 0o755) // for TempDir's cleanup
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// buildTar builds a tar stream from lines "TYPE NAME [LINKNAME]"; nil when
// a line is not one, or the tar writer refuses a name.
func buildTar(entries string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, line := range strings.Split(entries, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil
		}
		h := &tar.Header{Name: f[1], Mode: 0o644}
		if len(f) == 3 {
			h.Linkname = f[2]
		}
		switch f[0] {
		case "d":
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case "r":
			h.Typeflag, h.Size = tar.TypeReg, int64(len(line))
		case "s":
			h.Typeflag = tar.TypeSymlink
		case "h":
			h.Typeflag = tar.TypeLink
		case "c":
			h.Typeflag = tar.TypeChar
		case "f":
			h.Typeflag = tar.TypeFifo
		default:
			return nil
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(line))
		}
	}
	if tw.Close() != nil {
		return nil
	}
	return buf.Bytes()
}
