package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultLimit is the most bytes of file content one copy writes unless
// told otherwise (--copy-out-limit, podrun cp --limit).
const DefaultLimit int64 = 1 << 30

// MaxDepth is the deepest a copied tree may nest: every level holds a
// descriptor open while its entries are copied.
const MaxDepth = 256

// ErrLimit is a copy that would write more than its limit.
var ErrLimit = errors.New("over the size limit")

// Dest is a host dir that a copy writes into. Nothing it writes leaves the
// dir: every path below it is opened one element at a time from the dir's
// own descriptor without following symlinks; a file replaces what is in
// its place (a file or a symlink, never followed: unlinked first), a dir
// reuses a dir and refuses anything else. The dir itself may be a symlink
// (the user's); it is created when missing, once the copy writes its first
// entry (a copy that fails before leaves nothing). The bytes of file content
// written are bounded by the limit (0: none); a file that would cross it
// is removed and the copy fails with ErrLimit.
//
// Files get the permission bits they had (without setuid, setgid and
// sticky) and their modification time; dirs the copy creates too, once
// Close is called. Owners are not kept: everything belongs to the user
// podrun runs as.
type Dest struct {
	Dir     string
	Files   int      // regular files written
	Bytes   int64    // bytes of file content written
	Skipped []string // entries not copied, each "REL (why)"

	root    *os.File
	limit   int64
	created []dirMeta // dirs created, in creation order
	written map[string]bool
}

type dirMeta struct {
	rel   string
	mode  uint32
	mtime time.Time
}

// NewDest is dir as the destination of a copy of at most limit bytes (0:
// no limit). dir is made (with its parents, 0755 before the umask) when
// the copy writes its first entry.
func NewDest(dir string, limit int64) *Dest {
	return &Dest{Dir: dir, limit: limit, written: map[string]bool{}}
}

// open makes and opens the host dir, once.
func (d *Dest) open() error {
	if d.root != nil {
		return nil
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenFile(d.Dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	d.root = root
	return nil
}

// Skip records an entry that is not copied.
func (d *Dest) Skip(rel, why string) {
	d.Skipped = append(d.Skipped, fmt.Sprintf("%s (%s)", rel, why))
}

// where is rel as messages show it: under the host dir.
func (d *Dest) where(rel string) string { return filepath.Join(d.Dir, filepath.FromSlash(rel)) }

// parent opens the dir that holds rel (slash-separated, local), making the
// missing ones (0755 before the umask), and returns its descriptor and
// rel's last element. A non-dir in the way is an error.
func (d *Dest) parent(rel string) (int, string, error) {
	if !filepath.IsLocal(rel) || rel == "" || rel == "." {
		return -1, "", fmt.Errorf("%q is not a path below %s", rel, d.Dir)
	}
	if err := d.open(); err != nil {
		return -1, "", err
	}
	dir, name := path.Split(rel)
	cur, err := unix.Dup(int(d.root.Fd()))
	if err != nil {
		return -1, "", err
	}
	done := ""
	for _, e := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if e == "" {
			continue
		}
		done = path.Join(done, e)
		next, err := openDir(cur, e)
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(cur, e, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openDir(cur, e)
			}
		}
		unix.Close(cur)
		if err != nil {
			return -1, "", d.notDir(done, err)
		}
		cur = next
	}
	return cur, name, nil
}

// openDir opens the dir name in dirFD, never through a symlink.
func openDir(dirFD int, name string) (int, error) {
	return unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// notDir words the error of a path element that could not be opened as
// a dir.
func (d *Dest) notDir(rel string, err error) error {
	if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("%s exists and is not a directory (a symlink is not followed)", d.where(rel))
	}
	return &os.PathError{Op: "open", Path: d.where(rel), Err: err}
}

// Mkdir makes the dir rel ("" is the host dir itself, made when missing
// and else left as it is) with mode and mtime, set at Close; a dir
// already there is reused as it is.
func (d *Dest) Mkdir(rel string, mode os.FileMode, mtime time.Time) error {
	if rel == "" || rel == "." {
		return d.open()
	}
	pfd, name, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	err = unix.Mkdirat(pfd, name, 0o700)
	switch {
	case err == nil:
		d.created = append(d.created, dirMeta{rel: rel, mode: uint32(mode.Perm()), mtime: mtime})
		return nil
	case errors.Is(err, unix.EEXIST):
		fd, err := openDir(pfd, name)
		if err != nil {
			return d.notDir(rel, err)
		}
		unix.Close(fd)
		return nil
	}
	return &os.PathError{Op: "mkdir", Path: d.where(rel), Err: err}
}

// WriteFile writes r to the file rel with mode's permission bits and
// mtime, replacing what is there unless it is a dir.
func (d *Dest) WriteFile(rel string, mode os.FileMode, mtime time.Time, r io.Reader) error {
	pfd, name, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Unlinkat(pfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		if errors.Is(err, unix.EISDIR) {
			return fmt.Errorf("%s is a directory, not replaced by a file", d.where(rel))
		}
		return &os.PathError{Op: "unlink", Path: d.where(rel), Err: err}
	}
	fd, err := unix.Openat(pfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: d.where(rel), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.where(rel))
	src := r
	left := int64(-1)
	if d.limit > 0 {
		left = d.limit - d.Bytes
		src = io.LimitReader(r, left+1)
	}
	n, err := io.Copy(f, src)
	if err == nil && left >= 0 && n > left {
		err = fmt.Errorf("%w: %s would take the copy over %d bytes", ErrLimit, rel, d.limit)
	}
	if err == nil {
		err = f.Chmod(mode.Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(pfd, name, 0) // no truncated file left looking whole
		return err
	}
	d.Bytes += n
	d.Files++
	d.written[rel] = true
	setMtime(pfd, name, mtime)
	return nil
}

// CopyWritten writes the file rel as a copy of from, a file this copy
// wrote (a tar hard link); false when it wrote none such.
func (d *Dest) CopyWritten(rel, from string) (bool, error) {
	if !d.written[from] {
		return false, nil
	}
	pfd, name, err := d.parent(from)
	if err != nil {
		return true, err
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return true, &os.PathError{Op: "open", Path: d.where(from), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.where(from))
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return true, err
	}
	return true, d.WriteFile(rel, st.Mode(), st.ModTime(), f)
}

// Close gives the dirs the copy created their modes and mtimes, deepest
// first, and closes the host dir.
func (d *Dest) Close() error {
	var errs []error
	for i := len(d.created) - 1; i >= 0; i-- {
		m := d.created[i]
		pfd, name, err := d.parent(m.rel)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fd, err := openDir(pfd, name)
		if err == nil {
			err = unix.Fchmod(fd, m.mode)
			unix.Close(fd)
		}
		if err == nil {
			setMtime(pfd, name, m.mtime)
		} else {
			errs = append(errs, &os.PathError{Op: "chmod", Path: d.where(m.rel), Err: err})
		}
		unix.Close(pfd)
	}
	d.created = nil
	if d.root != nil {
		errs = append(errs, d.root.Close())
		d.root = nil
	}
	return errors.Join(errs...)
}

// setMtime sets name's access and modification times to mtime (a zero
// one: left as is), not through a symlink.
func setMtime(dirFD int, name string, mtime time.Time) {
	if mtime.IsZero() {
		return
	}
	ts := unix.NsecToTimespec(mtime.UnixNano())
	unix.UtimesNanoAt(dirFD, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}
