package artifacts

import (
	"fmt"
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Volume kinds a --copy-out reads.
const (
	KindEmptyDir = "emptyDir"
	KindHostPath = "hostPath"
)

// Source is where a container's PATH lies on the host, decided from the
// pod's spec alone: the container's volumeMount that shows PATH (the
// deepest mountPath that PATH is or lies below, as mounts stack), and
// PATH below it. The mount's host side is the volume's dir, or, for a
// mount with a subPath or subPathExpr, the subpath's bind-mount target
// (volumes.Set.MountSource), which is the subpath resolved safely when
// the container was created.
type Source struct {
	Container string
	Mount     int    // index in the container's volumeMounts
	MountPath string // the mount's path in the container
	Volume    string
	Kind      string // KindEmptyDir or KindHostPath
	Rel       string // PATH below MountPath, slash-separated; "" the mount itself
}

// Resolve finds where PATH (absolute) of the pod's container lies. CRI
// offers no way into an exited container's filesystem, so a PATH that is
// on no volume of the container, or on a volume that is not an emptyDir
// or a hostPath (a configMap, secret, ... volume holds what the run gave
// it), is an error that names the container and the path and says what
// to mount.
func Resolve(pod *v1.Pod, container, p string) (Source, error) {
	c := findContainer(pod, container)
	if c == nil {
		return Source{}, fmt.Errorf("pod %s/%s has no container %q (its containers: %s)", pod.Namespace, pod.Name, container, containerNames(pod))
	}
	p = path.Clean(p)
	best, bestLen := -1, -1
	for i, m := range c.VolumeMounts {
		mp := path.Clean(m.MountPath)
		if !under(p, mp) {
			continue
		}
		if len(mp) >= bestLen { // a later mount at the same path wins, as the runtime mounts them in order
			best, bestLen = i, len(mp)
		}
	}
	if best < 0 {
		return Source{}, fmt.Errorf("%s is not on a volume of container %q of pod %s/%s: podrun cannot read an exited container's own filesystem (CRI offers no way in), only its volumes; mount an emptyDir at %s (or a parent directory)",
			p, container, pod.Namespace, pod.Name, p)
	}
	m := c.VolumeMounts[best]
	src := Source{Container: container, Mount: best, MountPath: path.Clean(m.MountPath), Volume: m.Name}
	src.Rel = strings.TrimPrefix(strings.TrimPrefix(p, src.MountPath), "/")
	var vol *v1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == m.Name {
			vol = &pod.Spec.Volumes[i]
		}
	}
	switch {
	case vol == nil:
		return Source{}, fmt.Errorf("container %q of pod %s/%s mounts volume %q at %s, which the pod does not have", container, pod.Namespace, pod.Name, m.Name, src.MountPath)
	case vol.EmptyDir != nil:
		src.Kind = KindEmptyDir
	case vol.HostPath != nil:
		src.Kind = KindHostPath
	default:
		return Source{}, fmt.Errorf("%s of container %q of pod %s/%s is on volume %q, which is not an emptyDir or a hostPath: --copy-out copies what a container wrote to one of those; mount an emptyDir at %s (or a parent directory)",
			p, container, pod.Namespace, pod.Name, m.Name, p)
	}
	return src, nil
}

// under tells whether p is dir or lies below it (both clean, absolute).
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
