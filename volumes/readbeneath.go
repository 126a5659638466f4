package volumes

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReadFileBeneath reads at most max bytes of the regular file rel below
// dir, resolving rel without ever leaving dir (a container can put symlinks
// into a volume it writes). rel must be relative without "..".
func ReadFileBeneath(dir, rel string, max int64) ([]byte, error) {
	p, err := OpenBeneath(dir, rel)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(p.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Join(dir, rel))
	}
	// An O_PATH descriptor cannot be read: reopen the very file it names.
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", p.Fd()))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// OpenBeneath opens rel below dir as an O_PATH file (fstat it, or open
// what it names through /proc/self/fd or openat), resolving rel as a
// subPath is resolved (openBeneath): symlinks are followed only while
// they stay below dir, and one that leads out is ErrNotBeneath. dir
// itself is trusted (its own symlinks are followed); rel must be relative
// without "..", "" being dir itself (which may then be a file).
func OpenBeneath(dir, rel string) (*os.File, error) {
	if filepath.IsAbs(rel) {
		return nil, fmt.Errorf("path %q must be relative", rel)
	}
	if err := noBacksteps(rel); err != nil {
		return nil, fmt.Errorf("path %q: %w", rel, err)
	}
	if rel == "" || rel == "." {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: dir, Err: err}
		}
		return os.NewFile(uintptr(fd), dir), nil
	}
	base, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(base)
	fd, err := openBeneath(base, rel)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, rel), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, rel)), nil
}
