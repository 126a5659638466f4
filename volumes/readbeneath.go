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
	if filepath.IsAbs(rel) {
		return nil, fmt.Errorf("path %q must be relative", rel)
	}
	if err := noBacksteps(rel); err != nil {
		return nil, fmt.Errorf("path %q: %w", rel, err)
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
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Join(dir, rel))
	}
	// An O_PATH descriptor cannot be read: reopen the very file it names.
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}
