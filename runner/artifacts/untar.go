package artifacts

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// TarCommand is the command `podrun cp` runs in the container for the
// absolute path p, and the name its entries start with (Untar's base):
// tar of p's last element from p's dir, "." for /, so that the entries are
// named the same by GNU tar and busybox's, without a leading "/".
func TarCommand(p string) (cmd []string, base string) {
	p = path.Clean(p)
	if p == "/" {
		return []string{"tar", "cf", "-", "-C", "/", "."}, "."
	}
	dir, base := path.Split(p)
	return []string{"tar", "cf", "-", "-C", dir, base}, base
}

// Untar extracts into d the tar stream of TarCommand, whose entries are
// base or lie below it: a dir's content goes into d's dir, a file into it
// under its name, as CopyTree copies. It holds to kubectl cp's rules
// (untarAll) and adds its own:
//
//   - an entry that is not base or below it is a stream that was tampered
//     with: the copy fails (kubectl: "tar contents corrupted");
//   - a name that would land outside d's dir once cleaned is skipped;
//   - symlinks are skipped, never created (kubectl since CVE-2019-11246);
//     so are devices, fifos and other entry types;
//   - a hard link is a copy of the file it links to, when this copy wrote
//     that file, else skipped;
//   - nothing is written through a symlink already in d's dir (Dest), and
//     the bytes written are bounded (Dest's limit).
//
// Files and dirs keep their permission bits and mtimes (Dest). Untar
// stops at the end of the archive; the caller drains what follows.
func Untar(r io.Reader, base string, d *Dest) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the tar stream: %w", err)
		}
		rel, ok := entryPath(h.Name, base)
		if !ok {
			return fmt.Errorf("the tar stream holds %q, which is not %s or below it: corrupted or tampered with", h.Name, base)
		}
		isDir := h.Typeflag == tar.TypeDir
		if rel == "" && !isDir {
			rel = path.Base(base) // a file: into the dir under its name
			if base == "." {
				return fmt.Errorf("the tar stream holds %q, not a directory, as /", h.Name)
			}
		}
		if rel != "" && !filepath.IsLocal(rel) {
			d.Skip(h.Name, "outside the host dir")
			continue
		}
		mode := h.FileInfo().Mode()
		switch h.Typeflag {
		case tar.TypeDir:
			err = d.Mkdir(rel, mode, h.ModTime)
		case tar.TypeReg, tar.TypeGNUSparse: // Next makes old archives' TypeRegA TypeReg, and expands sparse files
			err = d.WriteFile(rel, mode, h.ModTime, tr)
		case tar.TypeLink:
			from, ok := entryPath(h.Linkname, base)
			if ok && from == "" {
				from = path.Base(base)
			}
			var wrote bool
			if ok && filepath.IsLocal(from) {
				wrote, err = d.CopyWritten(rel, from)
			}
			if !wrote && err == nil {
				d.Skip(rel, "a hard link to "+h.Linkname+", which was not copied")
			}
		case tar.TypeSymlink:
			d.Skip(rel, "a symlink to "+h.Linkname+", not followed")
		case tar.TypeChar:
			d.Skip(rel, "a character device")
		case tar.TypeBlock:
			d.Skip(rel, "a block device")
		case tar.TypeFifo:
			d.Skip(rel, "a fifo")
		default:
			d.Skip(rel, fmt.Sprintf("a tar entry of type %q", h.Typeflag))
		}
		if err != nil {
			return err
		}
	}
}

// entryPath is a tar entry's name below base, slash-separated and clean:
// "" for base itself; false when it is neither base nor below it.
func entryPath(name, base string) (string, bool) {
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if path.IsAbs(clean) {
		return "", false
	}
	if base == "." {
		if clean == "." {
			return "", true
		}
		return clean, !strings.HasPrefix(clean, "../") && clean != ".."
	}
	switch {
	case clean == base:
		return "", true
	case strings.HasPrefix(clean, base+"/"):
		return clean[len(base)+1:], true
	}
	return "", false
}
