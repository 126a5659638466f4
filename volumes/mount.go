package volumes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// MountRequest is one container mount as decided: the CRI mount, with the
// volume's own host path, and the subpath to bind-mount first when set.
type MountRequest struct {
	Volume  string
	Index   int    // the volumeMount's index in the container
	SubPath string // expanded and validated; "" for none
	Shown   string // SubPath as messages show it (MaskedValue: from a Secret)
	Mount   *runtimeapi.Mount
}

// containerMounts decides a container's mounts as the kubelet's makeMounts
// does, in volumeMounts order: the volume's host path (paths, by volume
// name), read-only when the mount or the plugin says so, the propagation
// translated to CRI, SELinux relabelling on the first mount of a managed
// volume in the pod, and the subPath or expanded subPathExpr (env: the
// container's environment; subPath decides). A nil env leaves
// subPathExprs unexpanded (a Planned set names the subpaths' targets
// only, which do not depend on them; the pre-flight judged them): their
// SubPath is the subPathExpr as written.
func containerMounts(pod *v1.Pod, c *v1.Container, vols []Volume, paths map[string]string, env *Env) ([]MountRequest, error) {
	byName := map[string]*Volume{}
	for i := range vols {
		byName[vols[i].Name] = &vols[i]
	}
	var out []MountRequest
	for i, m := range c.VolumeMounts {
		v, ok := byName[m.Name]
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", m.Name, c.Name)
		}
		prop, err := propagation(m.MountPropagation)
		if err != nil {
			return nil, err
		}
		var sub, shown string
		switch {
		case m.SubPathExpr != "" && env == nil:
			sub, shown = m.SubPathExpr, m.SubPathExpr
		case m.SubPathExpr != "":
			if sub, shown, err = subPath(m, *env); err != nil {
				return nil, fmt.Errorf("volumeMount %q of container %q: subPathExpr %w", m.Name, c.Name, err)
			}
		default:
			if sub, shown, err = subPath(m, Env{}); err != nil {
				return nil, err
			}
		}
		ctr, idx := firstMount(pod, m.Name)
		out = append(out, MountRequest{
			Volume: m.Name, Index: i, SubPath: sub, Shown: shown,
			Mount: &runtimeapi.Mount{
				ContainerPath:     m.MountPath,
				HostPath:          paths[m.Name],
				Readonly:          m.ReadOnly || v.ReadOnly,
				RecursiveReadOnly: m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == v1.RecursiveReadOnlyEnabled,
				Propagation:       prop,
				SelinuxRelabel:    v.SELinuxRelabel && ctr == c.Name && idx == i,
			},
		})
	}
	return out, nil
}

// propagation translates a mount's propagation mode to CRI: none or None is
// private, the kubelet's default.
func propagation(m *v1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	switch {
	case m == nil, *m == v1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case *m == v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case *m == v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("invalid MountPropagation mode: %q", *m)
}

// firstMount is the first mount of a volume in the pod, init containers
// first: the one the kubelet relabels (later mounts find it labelled).
func firstMount(pod *v1.Pod, volume string) (string, int) {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for i, m := range c.VolumeMounts {
				if m.Name == volume {
					return c.Name, i
				}
			}
		}
	}
	return "", -1
}

// checkMounts is the pre-flight of a container's mounts: what API
// validation refuses and what fails before the container is created.
func checkMounts(c *v1.Container) error {
	var errs []error
	privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
	for _, m := range c.VolumeMounts {
		name := fmt.Sprintf("container %q: volumeMount %q", c.Name, m.Name)
		if _, err := propagation(m.MountPropagation); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		} else if m.MountPropagation != nil && *m.MountPropagation == v1.MountPropagationBidirectional && !privileged {
			errs = append(errs, fmt.Errorf("%s: Bidirectional mount propagation is available only to privileged containers", name))
		}
		if m.SubPath != "" {
			if err := validateSubPath(m.SubPath); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
		if r := m.RecursiveReadOnly; r != nil && *r != v1.RecursiveReadOnlyDisabled {
			if !m.ReadOnly {
				errs = append(errs, fmt.Errorf("%s: recursiveReadOnly %s needs readOnly", name, *r))
			}
			if m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone {
				errs = append(errs, fmt.Errorf("%s: recursiveReadOnly %s needs mountPropagation None", name, *r))
			}
		}
	}
	return errors.Join(errs...)
}

// MountsUnder lists the mount points at or below dir, deepest first.
func MountsUnder(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return mountsUnderIn(f, abs)
}

// mountsUnderIn lists the mount points of the mountinfo table r that are
// at or below the absolute, clean path abs, deepest first. A node's table
// holds a few lines for each running pod (its sandbox's shm, its
// containers' root filesystems), and every pod's teardown reads it, so a
// line that is not below abs costs no allocation: its mount point is
// compared where it lies in the scanner's buffer, unescaped only when it
// has an escape.
func mountsUnderIn(r io.Reader, abs string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		mp, ok := mountinfoField(sc.Bytes(), 4)
		if !ok {
			continue
		}
		if bytes.IndexByte(mp, '\\') >= 0 {
			if m := UnescapeOctal(string(mp)); under(m, abs) {
				out = append(out, m)
			}
		} else if underBytes(mp, abs) {
			out = append(out, string(mp))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// under tells whether the path p is abs or below it.
func under(p, abs string) bool {
	if !strings.HasPrefix(p, abs) {
		return false
	}
	return len(p) == len(abs) || abs == "/" || p[len(abs)] == '/'
}

// underBytes is under of a path in a buffer, compared where it lies.
func underBytes(p []byte, abs string) bool {
	if len(p) < len(abs) || string(p[:len(abs)]) != abs { // no copy: a comparison
		return false
	}
	return len(p) == len(abs) || abs == "/" || p[len(abs)] == '/'
}

// mountinfoField is the field of index i (from 0) of a mountinfo line,
// whose fields are separated by single spaces; false if it has fewer.
func mountinfoField(line []byte, i int) ([]byte, bool) {
	for ; i > 0; i-- {
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, false
		}
		line = line[sp+1:]
	}
	if sp := bytes.IndexByte(line, ' '); sp >= 0 {
		line = line[:sp]
	}
	return line, len(line) > 0
}

// UnescapeOctal undoes mountinfo's octal escapes (\040 for a space).
func UnescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isMountPoint tells whether path is itself a mount point.
func isMountPoint(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	ms, err := MountsUnder(path)
	if err != nil {
		return false, err
	}
	abs, _ := filepath.Abs(path)
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for _, m := range ms {
		if m == abs {
			return true, nil
		}
	}
	return false, nil
}

// RemoveSafely unmounts everything mounted at or below dir, deepest first,
// and then removes dir. It never deletes through a mount: if a mount
// cannot be undone the dir stays and the error says which. A dir already
// gone counts as removed, and so does one whose name is too long to exist
// (ENAMETOOLONG: a pod log dir the runtime could not create, which
// os.RemoveAll reported as "unlinkat ...: file name too long").
func RemoveSafely(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENAMETOOLONG) {
		return nil
	}
	ms, err := MountsUnder(dir)
	if err != nil {
		return err
	}
	if len(ms) == 0 { // the usual case: nothing to undo, no second read
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
		return nil
	}
	for _, m := range ms {
		if err := unix.Unmount(m, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			if err := unix.Unmount(m, unix.MNT_DETACH); err != nil {
				return fmt.Errorf("unmounting %s: %w", m, err)
			}
		}
	}
	if left, err := MountsUnder(dir); err != nil {
		return err
	} else if len(left) > 0 {
		return fmt.Errorf("not removing %s: %s is still mounted", dir, left[0])
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}
