package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// planHostPath decides a hostPath volume (kubelet pkg/volume/hostpath): the
// host path is bind-mounted as it is, with no dir under the pod; a path with
// a ".." element is refused; the type is checked at setup.
func planHostPath(v *Volume, hp *v1.HostPathVolumeSource) error {
	v.Kind, v.HostPath = KindHostPath, hp.Path
	if hp.Type != nil {
		v.HostPathType = *hp.Type
	}
	if err := noBacksteps(hp.Path); err != nil {
		return fmt.Errorf("invalid HostPath `%s`: %w", hp.Path, err)
	}
	switch v.HostPathType {
	case v1.HostPathUnset, v1.HostPathDirectoryOrCreate, v1.HostPathDirectory, v1.HostPathFileOrCreate,
		v1.HostPathFile, v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev:
		return nil
	}
	return fmt.Errorf("%s is an invalid volume type", v.HostPathType)
}

// noBacksteps refuses a path with a ".." element (ValidatePathNoBacksteps).
func noBacksteps(p string) error {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return errors.New("must not contain '..'")
		}
	}
	return nil
}

// fileType is what a host path is, as the hostPath type checker sees it
// (following symlinks).
type fileType int

const (
	ftMissing fileType = iota
	ftDirectory
	ftFile
	ftSocket
	ftCharDevice
	ftBlockDevice
	ftOther // a fifo, say
)

func fileTypeOf(fi os.FileInfo) fileType {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return ftDirectory
	case m.IsRegular():
		return ftFile
	case m&os.ModeSocket != 0:
		return ftSocket
	case m&os.ModeDevice != 0 && m&os.ModeCharDevice != 0:
		return ftCharDevice
	case m&os.ModeDevice != 0:
		return ftBlockDevice
	}
	return ftOther
}

// hostPathCreate is what a hostPath setup must create.
type hostPathCreate int

const (
	createNothing hostPathCreate = iota
	createDir                    // DirectoryOrCreate: MkdirAll 0755
	createFile                   // FileOrCreate: an empty file 0644, parent not created
)

// hostPathDecision is the kubelet's checkType for a path of type ft: what to
// create, or the error that fails the setup. The messages are the
// kubelet's.
func hostPathDecision(path string, t v1.HostPathType, ft fileType) (hostPathCreate, error) {
	var (
		want   fileType
		what   string         // in the kubelet's message: "is not a ..."
		create hostPathCreate // what a missing path gets; createNothing: it fails
	)
	switch t {
	case v1.HostPathUnset:
		return createNothing, nil
	case v1.HostPathDirectoryOrCreate, v1.HostPathDirectory:
		want, what = ftDirectory, "directory"
		if t == v1.HostPathDirectoryOrCreate {
			create = createDir
		}
	case v1.HostPathFileOrCreate, v1.HostPathFile:
		want, what = ftFile, "file"
		if t == v1.HostPathFileOrCreate {
			create = createFile
		}
	case v1.HostPathSocket:
		want, what = ftSocket, "socket file"
	case v1.HostPathCharDev:
		want, what = ftCharDevice, "character device"
	case v1.HostPathBlockDev:
		want, what = ftBlockDevice, "block device"
	default:
		return createNothing, fmt.Errorf("%s is an invalid volume type", t)
	}
	switch {
	case ft == ftMissing && create != createNothing:
		return create, nil
	case ft != want:
		return createNothing, fmt.Errorf("hostPath type check failed: %s is not a %s", path, what)
	}
	return createNothing, nil
}

// statType is the file type at path, following symlinks.
func statType(path string) (fileType, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return ftMissing, nil
	}
	if err != nil {
		return ftMissing, err
	}
	return fileTypeOf(fi), nil
}

// decideHostPath is hostPathDecision for the volume's path as it is now.
// The path may be a symlink: it is followed, as the kubelet's type checker
// and the runtime's bind mount follow it, and a failed check says where it
// led. A dangling symlink is refused whatever the type (see
// danglingSymlink).
func decideHostPath(v *Volume) (hostPathCreate, error) {
	if target, ok := danglingSymlink(v.HostPath); ok {
		return createNothing, fmt.Errorf("hostPath %s is a symlink to %s, which does not exist: nothing is created through it", v.HostPath, target)
	}
	ft, err := statType(v.HostPath)
	if err != nil {
		return createNothing, err
	}
	c, err := hostPathDecision(v.HostPath, v.HostPathType, ft)
	if err != nil {
		if target, lerr := os.Readlink(v.HostPath); lerr == nil {
			err = fmt.Errorf("%w (a symlink to %s)", err, target)
		}
	}
	return c, err
}

// danglingSymlink tells whether path is a symlink that leads nowhere, and
// where it points. The kubelet would create a DirectoryOrCreate path
// through it and fail (mkdir: file exists), create a FileOrCreate path at
// the symlink's target, wherever that is, and leave an untyped one to the
// runtime, which fails to create the bind mount's source the same way.
// podrun refuses all three before anything is created: the first and the
// last fail anyway, and a file is never created outside the path the
// manifest names.
func danglingSymlink(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	target, err := os.Readlink(path)
	if err != nil {
		return "", false
	}
	return target, true
}

// checkHostPath runs the type check without creating anything: the
// pre-flight. A FileOrCreate path whose parent dir is missing fails here, as
// its creation would.
func checkHostPath(v *Volume) error {
	c, err := decideHostPath(v)
	if err != nil {
		return err
	}
	if c == createFile {
		if pt, err := statType(filepath.Dir(v.HostPath)); err != nil || pt != ftDirectory {
			return fmt.Errorf("creating hostPath file %s: its parent dir %s does not exist", v.HostPath, filepath.Dir(v.HostPath))
		}
	}
	return nil
}

// setUpHostPath checks the host path's type and creates it where the type
// says so.
func setUpHostPath(v *Volume) error {
	c, err := decideHostPath(v)
	if err != nil {
		return err
	}
	switch c {
	case createDir:
		if err := os.MkdirAll(v.HostPath, 0o755); err != nil {
			return fmt.Errorf("creating hostPath dir: %w", err)
		}
	case createFile:
		f, err := os.OpenFile(v.HostPath, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("creating hostPath file: %w", err)
		}
		f.Close()
	}
	return nil
}
