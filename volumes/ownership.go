package volumes

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Masks of the kubelet's SetVolumeOwnership (pkg/volume/volume_linux.go).
const (
	rwMask   = os.FileMode(0o660)
	roMask   = os.FileMode(0o440)
	execMask = os.FileMode(0o110)
)

// ownershipMode is the mode SetVolumeOwnership gives an entry of a volume
// with an fsGroup: group read (and write unless the volume is read-only)
// added, and for dirs setgid and group/owner search too. Symlinks are not
// touched (ok false).
func ownershipMode(m os.FileMode, readOnly bool) (os.FileMode, bool) {
	if m&os.ModeSymlink != 0 {
		return m, false
	}
	mask := rwMask
	if readOnly {
		mask = roMask
	}
	if m.IsDir() {
		mask |= os.ModeSetgid | execMask
	}
	return m | mask, true
}

// setVolumeOwnership walks dir without following symlinks and gives every
// entry the group fsGroup and the mode ownershipMode says.
func setVolumeOwnership(dir string, fsGroup int64, readOnly bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, int(fsGroup)); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if m, ok := ownershipMode(info.Mode(), readOnly); ok {
			return os.Chmod(p, m)
		}
		return nil
	})
}
