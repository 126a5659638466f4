// Package artifacts brings files out of a pod's containers into a host
// dir: a run's --copy-out, which copies a path of a container's volume
// from the volume's host side when the container ends (CopyTree), and
// `podrun cp`, which extracts the tar stream a running container's tar
// writes through exec (Untar). Both write through Dest, which keeps every
// write inside the host dir and bounds the bytes written. docs/artifacts.md
// is the user's side of it.
//
// What a container wrote is hostile input: a copy never follows a symlink
// out of the volume (the source is resolved as the kubelet resolves a
// subPath, volumes.OpenBeneath, and walked one descriptor at a time) and
// never recreates one on the host, as kubectl cp skips them since its
// CVE-2019-1002101 and CVE-2019-11246 fixes.
package artifacts

import (
	"errors"
	"fmt"
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Spec is one --copy-out, [[NAMESPACE/]POD/]CONTAINER:PATH=HOSTDIR: PATH
// as CONTAINER sees it, copied into HOSTDIR.
type Spec struct {
	Namespace string // "": any
	Pod       string // "": any pod of the run with the container
	Container string
	Path      string // absolute and clean, as the container sees it
	HostDir   string
	Raw       string // as given, for messages
}

func (s Spec) String() string { return s.Raw }

// specSyntax is the syntax messages show.
const specSyntax = "CONTAINER:PATH=HOSTDIR (or POD/CONTAINER:..., NAMESPACE/POD/CONTAINER:...)"

// ParseSpec parses a --copy-out value. The container part ends at the
// first ':' (no pod, namespace or container name holds one), PATH at the
// first '=' after it: HOSTDIR may hold '=' and ':', PATH not '='.
func ParseSpec(v string) (Spec, error) {
	bad := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("invalid --copy-out %q: %s", v, fmt.Sprintf(format, args...))
	}
	who, rest, ok := strings.Cut(v, ":")
	if !ok {
		return bad("want %s", specSyntax)
	}
	p, hostDir, ok := strings.Cut(rest, "=")
	if !ok {
		return bad("no =HOSTDIR: want %s", specSyntax)
	}
	s := Spec{Path: p, HostDir: hostDir, Raw: v}
	parts := strings.Split(who, "/")
	switch len(parts) {
	case 1:
		s.Container = parts[0]
	case 2:
		s.Pod, s.Container = parts[0], parts[1]
	case 3:
		s.Namespace, s.Pod, s.Container = parts[0], parts[1], parts[2]
	default:
		return bad("want %s", specSyntax)
	}
	if s.Container == "" {
		return bad("no container: want %s", specSyntax)
	}
	if errs := validation.IsDNS1123Label(s.Container); len(errs) > 0 {
		return bad("container name %q: %s", s.Container, strings.Join(errs, "; "))
	}
	if len(parts) > 1 {
		if errs := validation.IsDNS1123Subdomain(s.Pod); len(errs) > 0 {
			return bad("pod name %q: %s", s.Pod, strings.Join(errs, "; "))
		}
	}
	if len(parts) > 2 {
		if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
			return bad("namespace %q: %s", s.Namespace, strings.Join(errs, "; "))
		}
	}
	if !path.IsAbs(s.Path) {
		return bad("PATH %q must be absolute (the path as the container sees it)", s.Path)
	}
	if strings.IndexByte(s.Path, 0) >= 0 || strings.IndexByte(s.HostDir, 0) >= 0 {
		return bad("a path holds a NUL byte")
	}
	s.Path = path.Clean(s.Path)
	if s.HostDir == "" {
		return bad("HOSTDIR is empty")
	}
	return s, nil
}

// matches tells whether the spec names pod: its namespace and name, when
// given, and a container of that name.
func (s Spec) matches(pod *v1.Pod) bool {
	if (s.Namespace != "" && s.Namespace != pod.Namespace) || (s.Pod != "" && s.Pod != pod.Name) {
		return false
	}
	return findContainer(pod, s.Container) != nil
}

// ForPod is the specs that name pod (one of the run's, which CheckRun
// let through), each with its source.
func ForPod(pod *v1.Pod, specs []Spec) []Planned {
	var out []Planned
	for _, s := range specs {
		if !s.matches(pod) {
			continue
		}
		src, err := Resolve(pod, s.Container, s.Path)
		out = append(out, Planned{Spec: s, Source: src, Err: err})
	}
	return out
}

// Planned is a spec with where its PATH lies, or why it cannot be copied.
type Planned struct {
	Spec   Spec
	Source Source
	Err    error
}

// CheckRun is the pre-flight of a run's --copy-out specs, before anything
// is created: each names exactly one pod of the run (a container of that
// name, in the pod it names if it names one) and a PATH on an emptyDir or
// hostPath volume of that container (Resolve). The errors name the spec;
// several are joined.
func CheckRun(pods []*v1.Pod, specs []Spec) error {
	var errs []error
	for _, s := range specs {
		var hits []*v1.Pod
		for _, p := range pods {
			if s.matches(p) {
				hits = append(hits, p)
			}
		}
		switch {
		case len(hits) == 0:
			errs = append(errs, fmt.Errorf("--copy-out %s: %s", s, noPod(pods, s)))
		case len(hits) > 1:
			names := make([]string, len(hits))
			for i, p := range hits {
				names[i] = p.Namespace + "/" + p.Name
			}
			errs = append(errs, fmt.Errorf("--copy-out %s: the pods %s all have a container %q: name the pod, as POD/%s:%s=%s or NAMESPACE/POD/...",
				s, strings.Join(names, ", "), s.Container, s.Container, s.Path, s.HostDir))
		default:
			if _, err := Resolve(hits[0], s.Container, s.Path); err != nil {
				errs = append(errs, fmt.Errorf("--copy-out %s: %w", s, err))
			}
		}
	}
	return errors.Join(errs...)
}

// noPod says why no pod of the run matches s.
func noPod(pods []*v1.Pod, s Spec) string {
	if s.Pod != "" {
		for _, p := range pods {
			if p.Name == s.Pod && (s.Namespace == "" || p.Namespace == s.Namespace) {
				return fmt.Sprintf("pod %s/%s has no container %q (its containers: %s)", p.Namespace, p.Name, s.Container, containerNames(p))
			}
		}
		name := s.Pod
		if s.Namespace != "" {
			name = s.Namespace + "/" + s.Pod
		}
		return fmt.Sprintf("the run has no pod %s", name)
	}
	if len(pods) == 1 {
		p := pods[0]
		return fmt.Sprintf("pod %s/%s has no container %q (its containers: %s)", p.Namespace, p.Name, s.Container, containerNames(p))
	}
	return fmt.Sprintf("no pod of the run has a container %q", s.Container)
}

func containerNames(pod *v1.Pod) string {
	var names []string
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
