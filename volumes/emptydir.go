package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// planEmptyDir decides an emptyDir (kubelet pkg/volume/emptydir): a dir
// with mode 0777, or emptyDir.mode (EmptyDirVolumeMode, k8s.io/api v0.37:
// permission bits 0000..01777, the sticky bit included; fsGroup's group
// bits are added on top); medium Memory is a tmpfs whose size is the
// smallest positive one of node allocatable memory, the pod's memory limit
// and sizeLimit. On disk, sizeLimit is enforced by the kubelet only through
// quotas or eviction; podrun does neither.
func planEmptyDir(v *Volume, pod *v1.Pod, ed *v1.EmptyDirVolumeSource, node Node) error {
	v.Kind, v.Plugin = KindEmptyDir, PluginEmptyDir
	v.SELinuxRelabel = true
	if m := ed.Mode; m != nil {
		if *m < 0 || *m > 0o1777 {
			return fmt.Errorf("emptyDir.mode %#o: must be a value between 0000 and 01777", *m)
		}
		v.DirMode, v.ModeSet = uint32(*m), true
	}
	switch {
	case ed.Medium == v1.StorageMediumDefault:
	case ed.Medium == v1.StorageMediumMemory:
		v.Tmpfs = true
		var limit int64
		if ed.SizeLimit != nil {
			limit = ed.SizeLimit.Value()
		}
		v.TmpfsSize = memoryVolumeSize(node.AllocatableMemory, podresources.MemoryLimit(pod), limit)
	case strings.HasPrefix(string(ed.Medium), string(v1.StorageMediumHugePages)):
		return fmt.Errorf("emptyDir medium %q is not supported by podrun (hugetlbfs needs the node's huge pages accounting)", ed.Medium)
	default:
		return fmt.Errorf("unknown storage medium %q", ed.Medium)
	}
	return nil
}

// memoryVolumeSize is the size of a memory-backed emptyDir
// (calculateEmptyDirMemorySize): node allocatable memory, lowered to the
// pod's memory limit and then to sizeLimit when each is positive and not
// larger. 0 means unknown (no size option: the kernel's default).
func memoryVolumeSize(allocatable, podLimit, sizeLimit int64) int64 {
	size := allocatable
	for _, l := range []int64{podLimit, sizeLimit} {
		if l > 0 && (size <= 0 || l <= size) {
			size = l
		}
	}
	return size
}

// tmpfsOptions are the mount options of a volume's tmpfs.
func tmpfsOptions(v *Volume, noswap bool) string {
	var opts []string
	if v.TmpfsSize > 0 {
		opts = append(opts, fmt.Sprintf("size=%d", v.TmpfsSize))
	}
	if v.ModeSet {
		opts = append(opts, fmt.Sprintf("mode=%#o", v.DirMode))
	}
	if noswap {
		opts = append(opts, "noswap")
	}
	return strings.Join(opts, ",")
}

// setUpDir makes the volume dir with its mode, mounts the tmpfs when the
// plan says so, and writes the emptyDir ready file.
func setUpDir(podDir string, v *Volume, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	// Chmod, not the umask-reduced mkdir mode; unix.Chmod takes the sticky
	// bit as written (os.Chmod wants os.ModeSticky).
	if err := unix.Chmod(dir, v.DirMode); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	if v.Tmpfs {
		if err := mountTmpfs(dir, v); err != nil {
			return err
		}
	}
	if v.Kind == KindEmptyDir {
		ready := filepath.Join(podDir, "plugins", PluginEmptyDir, v.Name)
		if err := os.MkdirAll(ready, 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(ready, "ready"), nil, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// mountTmpfs mounts the volume's tmpfs at dir, with noswap where the kernel
// knows it (6.4+), as the kubelet does when supported.
func mountTmpfs(dir string, v *Volume) error {
	err := unix.Mount("tmpfs", dir, "tmpfs", 0, tmpfsOptions(v, true))
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mount("tmpfs", dir, "tmpfs", 0, tmpfsOptions(v, false))
	}
	if err != nil {
		return fmt.Errorf("mounting a tmpfs at %s (%s): %w", dir, tmpfsOptions(v, false), err)
	}
	return nil
}
