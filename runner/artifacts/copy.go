package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podrun/podrun/volumes"
)

// CopyTree copies rel below the host dir root (a volume's dir, or a
// subpath's bind mount: Source's host side) into d: a dir's content into
// d's dir, a file into it under name (PATH's last element). rel is
// resolved as a subPath is (volumes.OpenBeneath): a symlink that leads
// out of root is an error, and below rel nothing is followed: each entry
// is opened in its dir's descriptor without following symlinks, and
// symlinks, devices, fifos and sockets are skipped (d.Skipped), as kubectl
// cp skips symlinks. Hard links are copied as files of their own.
func CopyTree(root, rel, name string, d *Dest) error {
	src, err := volumes.OpenBeneath(root, filepath.FromSlash(rel))
	switch {
	case errors.Is(err, volumes.ErrNotBeneath):
		return errors.New("the path leads out of the volume through a symlink, which is not followed")
	case errors.Is(err, unix.ENOENT):
		return errors.New("no such file or directory on the volume")
	case err != nil:
		return err
	}
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := unix.Openat(int(src.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := d.Mkdir("", 0, time.Time{}); err != nil {
			unix.Close(fd)
			return err
		}
		return copyDir(fd, "", d, 1)
	case unix.S_IFREG:
		// An O_PATH descriptor cannot be read: reopen the very file it names.
		fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", src.Fd()), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		return copyFile(fd, name, d)
	}
	return fmt.Errorf("it is %s, not a file or a directory", kindOf(st.Mode))
}

func show(rel string) string {
	if rel == "" {
		return "the copied dir"
	}
	return rel
}

// copyDir copies the entries of the dir dirFD (which it closes) to the
// dir rel of d, depth levels down.
func copyDir(dirFD int, rel string, d *Dest, depth int) error {
	dir := os.NewFile(uintptr(dirFD), rel)
	defer dir.Close()
	if depth > MaxDepth {
		return fmt.Errorf("%s: nested deeper than %d directories", rel, MaxDepth)
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("reading %s: %w", show(rel), err)
	}
	sort.Strings(names)
	for _, name := range names {
		child := path.Join(rel, name)
		var st unix.Stat_t
		if err := unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed meanwhile
			}
			return &os.PathError{Op: "stat", Path: child, Err: err}
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return &os.PathError{Op: "open", Path: child, Err: err}
			}
			if err := d.Mkdir(child, os.FileMode(st.Mode&0o777), mtimeOf(&st)); err != nil {
				unix.Close(fd)
				return err
			}
			if err := copyDir(fd, child, d, depth+1); err != nil {
				return err
			}
		case unix.S_IFREG:
			// O_NONBLOCK: should a fifo take the file's place meanwhile,
			// the open does not wait for a writer (copyFile refuses it).
			fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				return &os.PathError{Op: "open", Path: child, Err: err}
			}
			if err := copyFile(fd, child, d); err != nil {
				return err
			}
		case unix.S_IFLNK:
			target := make([]byte, unix.PathMax)
			n, _ := unix.Readlinkat(dirFD, name, target)
			d.Skip(child, fmt.Sprintf("a symlink to %s, not followed", target[:max(n, 0)]))
		default:
			d.Skip(child, kindOf(st.Mode))
		}
	}
	return nil
}

// copyFile copies the open file fd (which it closes) to rel of d, if it
// is still a regular file.
func copyFile(fd int, rel string, d *Dest) error {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		d.Skip(rel, kindOf(st.Mode))
		return nil
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		return err
	}
	return d.WriteFile(rel, os.FileMode(st.Mode&0o777), mtimeOf(&st), f)
}

func mtimeOf(st *unix.Stat_t) time.Time { return time.Unix(st.Mtim.Unix()) }

// kindOf names a file type for messages.
func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFIFO:
		return "a fifo"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFDIR:
		return "a directory"
	}
	return "not a regular file"
}
