package volumes

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Check refuses, before anything of the run is created, a pod whose volumes
// podrun cannot set up: a refused volume type or projection, a ConfigMap,
// Secret or key the run does not provide (and that is not optional), an
// invalid file path or mode, a hostPath that fails its type check (nothing
// is created: DirectoryOrCreate and FileOrCreate only check what exists),
// container mounts that API validation refuses, and a subPath of a
// hostPath volume that leads out of it through a symlink. The errors name
// the volume or the mount; several are joined.
func Check(pod *v1.Pod, objs Objects) error {
	vols, err := Plan(pod, objs, Node{})
	errs := []error{err}
	for i := range vols {
		v := &vols[i]
		if v.Kind == KindHostPath {
			if err := checkHostPath(v); err != nil {
				errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
			}
		}
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			errs = append(errs, checkMounts(&cs[i]), checkSubPaths(pod, &cs[i]))
		}
	}
	return flatJoin(errs...)
}

// flatJoin joins errors, lifting the parts of joined ones, so that each
// problem is one error (one line).
func flatJoin(errs ...error) error {
	var flat []error
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else if err != nil {
			flat = append(flat, err)
		}
	}
	return errors.Join(flat...)
}

// Set is a pod's volumes once set up.
type Set struct {
	podDir  string
	pod     *v1.Pod
	vols    []Volume
	paths   map[string]string // volume name → host path
	planned bool              // Planned: nothing is set up, subpaths are not bind-mounted
	// images are the image volumes' images as pulled (ResolveImage), by
	// volume name.
	images map[string]*runtimeapi.ImageSpec
}

// ResolveImage gives the image volume the image to mount: the pulled
// image's reference, as the runtime's CreateContainer takes it in a
// mount.
func (s *Set) ResolveImage(volume string, spec *runtimeapi.ImageSpec) {
	if s.images == nil {
		s.images = map[string]*runtimeapi.ImageSpec{}
	}
	s.images[volume] = spec
}

// vol is the plan of the pod volume named volume (a zero one if none).
func (s *Set) vol(volume string) *Volume {
	for i := range s.vols {
		if s.vols[i].Name == volume {
			return &s.vols[i]
		}
	}
	return &Volume{}
}

// kind is the kind of the pod volume named volume ("" if none).
func (s *Set) kind(volume string) Kind { return s.vol(volume).Kind }

// Planned is the Set that SetUp would make of the plan under podDir,
// without making anything (a dry run): each volume at the host path SetUp
// would give it, and ContainerMounts naming the subpath targets
// without bind-mounting them.
func Planned(podDir string, pod *v1.Pod, vols []Volume) *Set {
	s := &Set{podDir: podDir, pod: pod, vols: vols, paths: map[string]string{}, planned: true}
	for i := range vols {
		v := &vols[i]
		switch v.Kind {
		case KindHostPath:
			s.paths[v.Name] = v.HostPath
		case KindImage:
			s.paths[v.Name] = "" // the runtime's
		default:
			s.paths[v.Name] = volumeDir(podDir, v)
		}
	}
	return s
}

// volumeDir is where a volume lives under the pod dir.
func volumeDir(podDir string, v *Volume) string {
	return filepath.Join(podDir, "volumes", v.Plugin, v.Name)
}

// SetUp carries out the plan under podDir (the pod's data dir, which
// exists): for each volume its dir (and tmpfs), its files, its fsGroup
// ownership; hostPaths are checked and created as their type says. If a
// volume fails, what was set up is undone (unmounted and removed) and the
// error names the volume.
func SetUp(podDir string, pod *v1.Pod, vols []Volume) (*Set, error) {
	s := &Set{podDir: podDir, pod: pod, vols: vols, paths: map[string]string{}}
	for i := range vols {
		v := &vols[i]
		path, err := setUpVolume(podDir, v, time.Now())
		if err != nil {
			err = fmt.Errorf("setting up volume %q: %w", v.Name, err)
			for j := i - 1; j >= 0; j-- {
				err = errors.Join(err, tearDownVolume(podDir, &vols[j]))
			}
			return nil, err
		}
		s.paths[v.Name] = path
	}
	return s, nil
}

// tearDownVolume unmounts and removes one volume's dir and its plugin
// metadata; a hostPath is the host's and stays.
func tearDownVolume(podDir string, v *Volume) error {
	if v.Kind == KindHostPath || v.Kind == KindImage {
		return nil
	}
	return errors.Join(
		RemoveSafely(volumeDir(podDir, v)),
		RemoveSafely(filepath.Join(podDir, "plugins", v.Plugin, v.Name)),
	)
}

// setUpVolume sets up one volume and returns its host path.
func setUpVolume(podDir string, v *Volume, now time.Time) (string, error) {
	if v.Kind == KindImage {
		// The runtime mounts the image when it creates a container that
		// mounts it, and unmounts it with the sandbox.
		return "", nil
	}
	if v.Kind == KindHostPath {
		return v.HostPath, setUpHostPath(v)
	}
	dir := volumeDir(podDir, v)
	undo := func(err error) (string, error) {
		return "", errors.Join(err, tearDownVolume(podDir, v))
	}
	if err := setUpDir(podDir, v, dir); err != nil {
		return undo(err)
	}
	if v.Payload != nil {
		var setPerms func(string) error
		if v.FSGroup != nil {
			g := *v.FSGroup
			setPerms = func(string) error { return setVolumeOwnership(dir, g, v.ReadOnly) }
		}
		if err := writeAtomic(dir, v.Payload, setPerms, now); err != nil {
			return undo(fmt.Errorf("writing files: %w", err))
		}
	} else if v.FSGroup != nil {
		if err := setVolumeOwnership(dir, *v.FSGroup, v.ReadOnly); err != nil {
			return undo(fmt.Errorf("applying fsGroup %d: %w", *v.FSGroup, err))
		}
	}
	return dir, nil
}

// Path is the host path of a set-up volume.
func (s *Set) Path(volume string) string { return s.paths[volume] }

// ContainerMounts decides a container instance's CRI mounts and
// bind-mounts its subpaths under <pod dir>/volume-subpaths (a Planned set
// only names them, and does not expand subPathExprs: their targets do not
// depend on the expansion, and the pre-flight, CheckSubPathExprs, judged
// what can be judged before the container exists). env is the
// container's environment, for subPathExpr. Its errors are container
// config errors (CreateContainerConfigError); they show a subpath that
// takes anything from a Secret as MaskedValue.
func (s *Set) ContainerMounts(c *v1.Container, env Env) ([]*runtimeapi.Mount, error) {
	e := &env
	if s.planned {
		e = nil
	}
	reqs, err := containerMounts(s.pod, c, s.vols, s.paths, e)
	if err != nil {
		return nil, err
	}
	out := make([]*runtimeapi.Mount, 0, len(reqs))
	for _, r := range reqs {
		if s.kind(r.Volume) == KindImage {
			// The runtime mounts the image, and its subPath in it
			// (ImageSubPath); a subPath that is not in the image fails
			// CreateContainer there.
			img := s.images[r.Volume]
			switch {
			case img == nil && s.planned:
				// A dry run pulls nothing: the image as written.
				ref := s.vol(r.Volume).Image
				img = &runtimeapi.ImageSpec{Image: ref, UserSpecifiedImage: ref}
			case img == nil:
				return nil, fmt.Errorf("image volume %q of container %q: its image is not pulled", r.Volume, c.Name)
			}
			r.Mount.Image, r.Mount.ImageSubPath, r.Mount.SelinuxRelabel = img, r.SubPath, false
			out = append(out, r.Mount)
			continue
		}
		if r.SubPath != "" && s.planned {
			r.Mount.HostPath = subPathTarget(s.podDir, r.Volume, c.Name, r.Index)
		} else if r.SubPath != "" {
			target, err := prepareSubPath(s.podDir, r.Volume, c.Name, r.Index, r.Mount.HostPath, r.SubPath, r.Shown)
			if err != nil {
				return nil, err
			}
			r.Mount.HostPath = target
		}
		out = append(out, r.Mount)
	}
	return out, nil
}

// TearDown unmounts and removes the pod's subpath mounts and volumes
// (hostPaths are the host's and stay). It never removes through a mount.
func (s *Set) TearDown() error {
	return TearDown(s.podDir)
}

// TearDown unmounts and removes <podDir>/volume-subpaths and
// <podDir>/volumes (subpaths first: they may be mounts of the volumes).
func TearDown(podDir string) error {
	return errors.Join(
		RemoveSafely(filepath.Join(podDir, "volume-subpaths")),
		RemoveSafely(filepath.Join(podDir, "volumes")),
	)
}

// MountSource is the host side of the container's volumeMounts[index] as
// the container sees it: the volume's host path, or for a mount with a
// subPath or subPathExpr the target its subpath is bind-mounted at,
// resolved safely when the container was created (it does not exist
// before). "" when the pod has no such container or mount.
func (s *Set) MountSource(container string, index int) string {
	for _, cs := range [][]v1.Container{s.pod.Spec.InitContainers, s.pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name != container || index < 0 || index >= len(cs[i].VolumeMounts) {
				continue
			}
			m := cs[i].VolumeMounts[index]
			if s.kind(m.Name) == KindImage {
				return "" // the runtime's mount
			}
			if m.SubPath != "" || m.SubPathExpr != "" {
				return subPathTarget(s.podDir, m.Name, container, index)
			}
			return s.paths[m.Name]
		}
	}
	return ""
}
