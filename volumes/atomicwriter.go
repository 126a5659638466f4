package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The atomic writer's names and limits (kubelet pkg/volume/util/atomic_writer.go).
const (
	maxFileNameLength = 255
	maxPathLength     = 4096

	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	tsDirLayout    = "..2006_01_02_15_04_05." // then os.MkdirTemp's random digits
)

// validatePath checks one payload path: not empty, relative, at most 4096
// characters, no ".." element, no element longer than 255 characters, not
// starting with ".." (which would clash with the writer's own names), and
// no NUL byte (which no file name can hold: found by FuzzAtomicWriter).
func validatePath(p string) error {
	if p == "" {
		return fmt.Errorf("invalid path: must not be empty: %q", p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("invalid path: must not contain a NUL byte: %q", p)
	}
	if path.IsAbs(p) {
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	}
	if len(p) > maxPathLength {
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	items := strings.Split(p, "/")
	for _, item := range items {
		if item == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(item) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(items[0], "..") && len(items[0]) > 2 {
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	if path.Clean(p) == "." {
		return fmt.Errorf("invalid path: must name a file: %s", p)
	}
	return nil
}

// validatePayload checks every path and returns the payload keyed by the
// cleaned paths. A path that is both a file and the dir of another is
// refused too.
func validatePayload(payload map[string]FileProjection) (map[string]FileProjection, error) {
	clean := make(map[string]FileProjection, len(payload))
	for k, f := range payload {
		if err := validatePath(k); err != nil {
			return nil, err
		}
		clean[path.Clean(k)] = f
	}
	for k := range clean {
		for d := path.Dir(k); d != "."; d = path.Dir(d) {
			if _, ok := clean[d]; ok {
				return nil, fmt.Errorf("invalid path: %s is a file and the dir of %s", d, k)
			}
		}
	}
	return clean, nil
}

// writeAtomic projects payload into targetDir as the kubelet's AtomicWriter
// does, so that a reader sees either the old or the new files, never a mix:
//
//  1. The payload is validated; if it is invalid, nothing is written.
//  2. The current timestamped dir is found by reading the ..data symlink.
//  3. The old version is walked to find paths the payload no longer has.
//  4. The old files are compared with the payload; with nothing changed
//     and nothing to remove, the write is skipped.
//  5. A new timestamped dir ..<UTC time>.<random> (0755) is created.
//  6. The payload is written into it, each file chmod'ed to exactly its mode.
//  7. setPerms, when given, runs on the new dir before it is published
//     (fsGroup ownership).
//  8. A symlink ..data_tmp → the new timestamped dir is created,
//  9. and renamed to ..data; rename is atomic.
//  10. The user-visible symlinks <top-level name> → ..data/<top-level name>
//     are created where missing.
//  11. User-visible paths the payload no longer has are removed.
//  12. The previous timestamped dir is removed.
//
// Nothing is written through a symlink: files and dirs are created inside
// the fresh timestamped dir only, dirs one element at a time, files with
// O_EXCL|O_NOFOLLOW.
func writeAtomic(targetDir string, payload map[string]FileProjection, setPerms func(tsDir string) error, now time.Time) error {
	// (1)
	clean, err := validatePayload(payload)
	if err != nil {
		return err
	}
	// (2)
	oldTsName, err := currentTsDir(targetDir)
	if err != nil {
		return err
	}
	oldTsPath := ""
	if oldTsName != "" {
		oldTsPath = filepath.Join(targetDir, oldTsName)
	}
	// (3)
	toRemove, err := pathsToRemove(clean, oldTsPath)
	if err != nil {
		return err
	}
	// (4)
	if oldTsPath != "" && len(toRemove) == 0 {
		changed, err := payloadChanged(clean, oldTsPath)
		if err != nil {
			return err
		}
		if !changed {
			return nil
		}
	}
	// (5)
	tsDir, err := os.MkdirTemp(targetDir, now.UTC().Format(tsDirLayout))
	if err != nil {
		return fmt.Errorf("creating the timestamped dir: %w", err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		os.RemoveAll(tsDir)
		return err
	}
	tsName := filepath.Base(tsDir)
	// (6)
	if err := writePayload(tsDir, clean); err != nil {
		os.RemoveAll(tsDir)
		return err
	}
	// (7)
	if setPerms != nil {
		if err := setPerms(tsDir); err != nil {
			os.RemoveAll(tsDir)
			return err
		}
	}
	// (8)
	tmpLink := filepath.Join(targetDir, newDataDirName)
	os.Remove(tmpLink)
	if err := os.Symlink(tsName, tmpLink); err != nil {
		os.RemoveAll(tsDir)
		return fmt.Errorf("creating %s: %w", newDataDirName, err)
	}
	// (9)
	if err := os.Rename(tmpLink, filepath.Join(targetDir, dataDirName)); err != nil {
		os.Remove(tmpLink)
		os.RemoveAll(tsDir)
		return fmt.Errorf("publishing %s: %w", dataDirName, err)
	}
	// (10)
	if err := createUserVisible(targetDir, clean); err != nil {
		return err
	}
	// (11)
	if err := removeUserVisible(targetDir, toRemove); err != nil {
		return err
	}
	// (12)
	if oldTsPath != "" {
		if err := os.RemoveAll(oldTsPath); err != nil {
			return err
		}
	}
	return nil
}

// currentTsDir reads ..data: the name of the timestamped dir in use, or "".
func currentTsDir(targetDir string) (string, error) {
	name, err := os.Readlink(filepath.Join(targetDir, dataDirName))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if strings.Contains(name, "/") || !strings.HasPrefix(name, "..") {
		return "", fmt.Errorf("%s points outside the volume: %s", dataDirName, name)
	}
	return name, nil
}

// pathsToRemove lists the old paths (files and dirs) the payload no longer
// has, parents of new paths excluded.
func pathsToRemove(payload map[string]FileProjection, oldTsPath string) (map[string]bool, error) {
	out := map[string]bool{}
	if oldTsPath == "" {
		return out, nil
	}
	keep := map[string]bool{}
	for p := range payload {
		for d := p; d != "."; d = path.Dir(d) {
			keep[d] = true
		}
	}
	err := filepath.WalkDir(oldTsPath, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(oldTsPath, p)
		if rel != "." && !keep[filepath.ToSlash(rel)] {
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	return out, err
}

// payloadChanged tells whether any file of the payload differs from the old
// version, in content or mode, or is new.
func payloadChanged(payload map[string]FileProjection, oldTsPath string) (bool, error) {
	for p, f := range payload {
		full := filepath.Join(oldTsPath, p)
		fi, err := os.Lstat(full)
		// ENOTDIR: a file of the old version is a dir of this one
		// (found by FuzzAtomicWriter: "a", then "a/b", failed).
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.Mode().IsRegular() || uint32(fi.Mode().Perm()) != uint32(f.Mode) {
			return true, nil
		}
		old, err := os.ReadFile(full)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(old, f.Data) {
			return true, nil
		}
	}
	return false, nil
}

// writePayload writes the files into the fresh dir, creating their dirs
// (0755) one element at a time and never following a symlink.
func writePayload(dir string, payload map[string]FileProjection) error {
	for _, p := range slices.Sorted(maps.Keys(payload)) {
		f := payload[p]
		parent := dir
		elems := strings.Split(p, "/")
		for _, e := range elems[:len(elems)-1] {
			parent = filepath.Join(parent, e)
			err := os.Mkdir(parent, 0o755)
			if err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("creating dir %s: %w", parent, err)
			}
			if fi, err := os.Lstat(parent); err != nil || !fi.IsDir() {
				return fmt.Errorf("creating dir %s: not a dir", parent)
			}
			if err := os.Chmod(parent, 0o755); err != nil {
				return err
			}
		}
		full := filepath.Join(dir, p)
		fd, err := unix.Open(full, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("writing %s: %w", full, err)
		}
		file := os.NewFile(uintptr(fd), full)
		_, werr := file.Write(f.Data)
		// Exactly the item's mode, whatever the umask.
		cerr := file.Chmod(os.FileMode(f.Mode).Perm())
		if err := errors.Join(werr, cerr, file.Close()); err != nil {
			return fmt.Errorf("writing %s with mode %#o: %w", full, f.Mode, err)
		}
	}
	return nil
}

// topLevel is a payload path's first element: the name of its user-visible
// symlink.
func topLevel(p string) string {
	first, _, _ := strings.Cut(p, "/")
	return first
}

// createUserVisible links each top-level name to ..data/<name> where no
// such link exists yet.
func createUserVisible(targetDir string, payload map[string]FileProjection) error {
	for p := range payload {
		name := topLevel(p)
		link := filepath.Join(targetDir, name)
		if _, err := os.Readlink(link); err == nil || !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.Symlink(filepath.Join(dataDirName, name), link); err != nil {
			return fmt.Errorf("creating %s: %w", link, err)
		}
	}
	return nil
}

// removeUserVisible removes the user-visible symlinks of removed top-level
// paths (deeper paths went with the old timestamped dir).
func removeUserVisible(targetDir string, removed map[string]bool) error {
	var errs []error
	for p := range removed {
		if strings.Contains(p, "/") {
			continue
		}
		if err := os.Remove(filepath.Join(targetDir, p)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
