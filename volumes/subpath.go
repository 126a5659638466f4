package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
)

// expandSubPathExpr expands $(VAR) references in a subPathExpr from the
// container's environment (ExpandContainerVolumeMounts): the syntax of env
// expansion ("$$" is "$"; "$" before anything else, or an unclosed "$(",
// stays as written), but a variable that is missing or empty is an error.
func expandSubPathExpr(expr string, env map[string]string) (string, error) {
	var out strings.Builder
	missing := map[string]bool{}
	for i := 0; i < len(expr); i++ {
		if expr[i] != '$' || i+1 >= len(expr) {
			out.WriteByte(expr[i])
			continue
		}
		switch expr[i+1] {
		case '$':
			out.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(expr[i+2:], ')')
			if end < 0 {
				out.WriteString("$(")
				i++
				continue
			}
			name := expr[i+2 : i+2+end]
			v := env[name]
			if v == "" {
				missing[name] = true
			}
			out.WriteString(v)
			i += 2 + end
		default:
			out.WriteByte(expr[i])
		}
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", fmt.Errorf("missing value for %s", strings.Join(names, ", "))
	}
	return out.String(), nil
}

// validateSubPath checks a (expanded) subPath as makeMounts does: relative,
// without a ".." element; and without a NUL byte, which no path can hold.
func validateSubPath(sub string) error { return validateShownSubPath(sub, sub) }

// validateShownSubPath is validateSubPath of sub with messages that show
// it as shown (MaskedValue when it takes anything from a Secret).
func validateShownSubPath(sub, shown string) error {
	if filepath.IsAbs(sub) {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", shown)
	}
	if strings.IndexByte(sub, 0) >= 0 {
		return fmt.Errorf("error SubPath %q must not contain a NUL byte", shown)
	}
	if err := noBacksteps(sub); err != nil {
		return fmt.Errorf("unable to provision SubPath `%s`: %w", shown, err)
	}
	return nil
}

// Env is a container's environment as its subPathExprs expand in it:
// Values, what the container runs with, and Shown, the same environment
// made from the run's Secrets masked (MaskSecrets). An expansion that
// differs between the two takes something from a Secret, wholly or in
// part: every message shows it as MaskedValue, never its text. A nil
// Shown shows every expansion as it is (an environment without Secrets).
type Env struct {
	Values map[string]string
	Shown  map[string]string
}

// subPath is the one decision on a mount's subpath, the same before the
// container exists (CheckSubPathExprs) and at its creation
// (containerMounts): the subPath as written, or the subPathExpr expanded
// in env, then checked (validateSubPath). shown is the subpath as
// messages print it: MaskedValue when it takes anything from a Secret.
// The errors (a variable without a value; an absolute path, a '..'
// element or a NUL byte) start with the subPathExpr quoted, or are
// validateSubPath's for a subPath as written; none holds a Secret's value.
// A subpath refused by the check is returned with its error, so that
// expansions can be compared (CheckSubPathExprs).
func subPath(m v1.VolumeMount, env Env) (sub, shown string, err error) {
	if m.SubPathExpr == "" {
		if m.SubPath == "" {
			return "", "", nil
		}
		return m.SubPath, m.SubPath, validateSubPath(m.SubPath)
	}
	sub, err = expandSubPathExpr(m.SubPathExpr, env.Values)
	if err != nil {
		return "", "", fmt.Errorf("%q: %w", m.SubPathExpr, err)
	}
	shown = sub
	if env.Shown != nil {
		if s, err := expandSubPathExpr(m.SubPathExpr, env.Shown); err != nil || s != sub {
			shown = MaskedValue
		}
	}
	if err := validateShownSubPath(sub, shown); err != nil {
		return sub, shown, fmt.Errorf("%q expands to %q: %w", m.SubPathExpr, shown, err)
	}
	return sub, shown, nil
}

// subPathTarget is where a container's subpath mount is bind-mounted:
// <pod dir>/volume-subpaths/<volume>/<container>/<mount index>.
func subPathTarget(podDir, volume, container string, index int) string {
	return filepath.Join(podDir, "volume-subpaths", volume, container, strconv.Itoa(index))
}

// ErrNotBeneath is a subpath that resolves outside its volume.
var ErrNotBeneath = errors.New("not within the volume")

// openBeneath opens rel below the dir baseFD as an O_PATH fd, resolving
// symlinks only while they stay below it (openat2 RESOLVE_BENEATH: an
// absolute symlink, or one leading out, fails). Without openat2 (Linux
// before 5.6) it walks rel one element at a time and refuses any symlink.
func openBeneath(baseFD int, rel string) (int, error) {
	if rel == "" {
		rel = "." // the base, as openNoSymlinks has it (openat2 says ENOENT)
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(baseFD, rel, &how)
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return -1, ErrNotBeneath
	case !errors.Is(err, unix.ENOSYS):
		return -1, err
	}
	return openNoSymlinks(baseFD, rel)
}

// openNoSymlinks opens rel below baseFD one element at a time with
// O_NOFOLLOW, refusing symlinks.
func openNoSymlinks(baseFD int, rel string) (int, error) {
	cur, err := unix.Dup(baseFD)
	if err != nil {
		return -1, err
	}
	for _, e := range splitPath(rel) {
		next, err := unix.Openat(cur, e, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, ErrNotBeneath
		}
		cur = next
	}
	return cur, nil
}

func splitPath(rel string) []string {
	var out []string
	for _, e := range strings.Split(filepath.ToSlash(rel), "/") {
		if e != "" && e != "." {
			out = append(out, e)
		}
	}
	return out
}

// safeMakeDir creates the missing dirs of rel below baseFD with perm (the
// volume root's mode), as the kubelet's SafeMakeDir: the existing part must
// resolve below the volume, and each new dir is made with mkdirat in its
// parent's fd, so a symlink swapped in meanwhile cannot redirect it.
func safeMakeDir(baseFD int, rel string, perm uint32) error {
	elems := splitPath(rel)
	// The longest existing prefix.
	n := len(elems)
	var parent int
	for ; n >= 0; n-- {
		fd, err := openBeneath(baseFD, filepath.Join(append([]string{"."}, elems[:n]...)...))
		if err == nil {
			parent = fd
			break
		}
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	if n < 0 {
		return unix.ENOENT
	}
	defer func() { unix.Close(parent) }()
	for _, e := range elems[n:] {
		// mkdirat needs a real dir fd, not O_PATH: reopen the parent.
		dirFD, err := unix.Openat(parent, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(dirFD, e, perm)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(dirFD)
			return err
		}
		child, err := unix.Openat(dirFD, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dirFD)
		if err != nil {
			return err
		}
		// Exactly perm, whatever the umask.
		if err := unix.Fchmod(child, perm); err != nil {
			unix.Close(child)
			return err
		}
		unix.Close(parent)
		parent = child
	}
	return nil
}

// prepareSubPath bind-mounts the subpath sub of the volume at volPath to
// its target under the pod dir and returns the target, the host path the
// container mount uses. The subpath is resolved without leaving the volume
// and opened once; the bind mount is made from that open file
// (/proc/self/fd/N), so nothing can swap a symlink in between. A missing
// subpath is created as a dir with the volume root's mode. A target that
// is already mounted (a restarted container) is reused. The errors show
// the subpath as shown (MaskedValue when it takes anything from a Secret).
func prepareSubPath(podDir, volume, container string, index int, volPath, sub, shown string) (string, error) {
	if err := validateShownSubPath(sub, shown); err != nil {
		return "", err
	}
	base, err := filepath.EvalSymlinks(volPath)
	if err != nil {
		return "", fmt.Errorf("resolving volume path %s: %w", volPath, err)
	}
	baseFD, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("opening volume path %s: %w", base, err)
	}
	defer unix.Close(baseFD)

	fd, err := openBeneath(baseFD, sub)
	if errors.Is(err, unix.ENOENT) {
		var st unix.Stat_t
		if err := unix.Fstat(baseFD, &st); err != nil {
			return "", err
		}
		if err := safeMakeDir(baseFD, sub, st.Mode&0o7777); err != nil {
			return "", fmt.Errorf("failed to create subPath directory %q in volume %q: %w", shown, volume, err)
		}
		fd, err = openBeneath(baseFD, sub)
	}
	if errors.Is(err, ErrNotBeneath) {
		return "", escapeError(shown, volume)
	}
	if err != nil {
		return "", fmt.Errorf("opening subPath %q of volume %q: %w", shown, volume, err)
	}
	defer unix.Close(fd)

	target := subPathTarget(podDir, volume, container, index)
	if mounted, err := isMountPoint(target); err != nil {
		return "", err
	} else if mounted {
		return target, nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		err = os.Mkdir(target, 0o750)
	} else {
		var f *os.File
		f, err = os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o640)
		if err == nil {
			f.Close()
		}
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating subpath mount point %s: %w", target, err)
	}
	if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), target, "", unix.MS_BIND, ""); err != nil {
		os.Remove(target)
		return "", fmt.Errorf("bind-mounting subPath %q of volume %q at %s: %w", shown, volume, target, err)
	}
	return target, nil
}

// escapeError is the error of a subpath that leads outside its volume,
// shown as shown.
func escapeError(shown, volume string) error {
	return fmt.Errorf("subPath %q of volume %q leads outside the volume (through a symlink)", shown, volume)
}

// subPathBeneath is the pre-flight of a subpath of a volume whose content
// exists before the run (a hostPath): an error when sub, resolved in the
// volume at volPath, leads out of it through a symlink, which
// prepareSubPath would refuse at container creation. A volume path that is
// missing or not a dir, and a subpath that does not exist yet (created at
// container creation, inside the volume), pass: their own checks or the
// container's creation say what is wrong.
func subPathBeneath(volPath, sub string) bool {
	base, err := filepath.EvalSymlinks(volPath)
	if err != nil {
		return true
	}
	baseFD, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(baseFD)
	fd, err := openBeneath(baseFD, sub)
	if err == nil {
		unix.Close(fd)
	}
	return !errors.Is(err, ErrNotBeneath)
}

// mountField is the field path of a container's volumeMount: c is the
// index'th of the pod's init containers or containers.
func mountField(pod *v1.Pod, c *v1.Container, mount int) string {
	for i := range pod.Spec.InitContainers {
		if &pod.Spec.InitContainers[i] == c {
			return fmt.Sprintf("spec.initContainers[%d].volumeMounts[%d]", i, mount)
		}
	}
	for i := range pod.Spec.Containers {
		if &pod.Spec.Containers[i] == c {
			return fmt.Sprintf("spec.containers[%d].volumeMounts[%d]", i, mount)
		}
	}
	return fmt.Sprintf("container %q: volumeMounts[%d]", c.Name, mount)
}

// hostPathOf is the host path of the pod's hostPath volume name, "" when
// the volume is not a hostPath.
func hostPathOf(pod *v1.Pod, name string) string {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	return ""
}

// checkSubPathEscape refuses a subPath of a hostPath volume that leads
// out of it through a symlink already there (field names the subPath or
// subPathExpr; the error shows the subpath as shown).
func checkSubPathEscape(pod *v1.Pod, m v1.VolumeMount, sub, shown, field string) error {
	host := hostPathOf(pod, m.Name)
	if host == "" {
		return nil
	}
	if !subPathBeneath(host, sub) {
		return fmt.Errorf("%s: %w", field, escapeError(shown, m.Name))
	}
	return nil
}

// checkSubPaths is the pre-flight of the container's subPaths that can
// be judged before anything is created: a subPath of a hostPath volume
// that leads out of it through a symlink (API validation has already
// refused absolute paths and '..').
func checkSubPaths(pod *v1.Pod, c *v1.Container) error {
	var errs []error
	for i, m := range c.VolumeMounts {
		if m.SubPath == "" || validateSubPath(m.SubPath) != nil {
			continue
		}
		errs = append(errs, checkSubPathEscape(pod, m, m.SubPath, m.SubPath, mountField(pod, c, i)+".subPath"))
	}
	return errors.Join(errs...)
}

// CheckSubPathExprs is the pre-flight of the container c's subPathExprs
// (c is one of pod's init containers or containers), for a container
// whose environment is known before it is created. envs are that
// environment under two guesses of what is not known yet (the pod's IPs);
// an expansion that differs between them is left to the container's
// creation. One that is the same is judged now by the decision the
// container's creation makes (subPath; CreateContainerConfigError there):
// a variable without a value, an absolute path, a '..' element, or, in a
// hostPath volume, a symlink out of the volume. The errors name the field
// and show an expansion that takes anything from a Secret as MaskedValue.
func CheckSubPathExprs(pod *v1.Pod, c *v1.Container, envs ...Env) error {
	var errs []error
	for i, m := range c.VolumeMounts {
		if m.SubPathExpr == "" || len(envs) == 0 {
			continue
		}
		sub, shown, err := subPath(m, envs[0])
		same := true
		for _, env := range envs[1:] {
			s, _, e := subPath(m, env)
			same = same && s == sub && (e == nil) == (err == nil)
		}
		if !same {
			continue
		}
		field := mountField(pod, c, i) + ".subPathExpr"
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			continue
		}
		errs = append(errs, checkSubPathEscape(pod, m, sub, shown, field))
	}
	return errors.Join(errs...)
}
