package sources

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Overrides change the pods as they are read, before defaulting and
// validation, so that validation, a dry run and -o json see the pods as
// they run: --image CONTAINER=IMAGE and --env NAME=VALUE on podrun's
// command line, as `kubectl set image` and `kubectl set env` change a
// manifest.
type Overrides struct {
	// Images, in the order given: a later one wins over an earlier one
	// for the same container.
	Images []ImageOverride
	// Env is set in every container of every pod (init containers and
	// sidecars too), as `kubectl set env` without -c: a variable of the
	// same name is replaced where it stands, a new one appended, in order.
	Env []v1.EnvVar
}

// ImageOverride sets the image of the containers it names.
type ImageOverride struct {
	// Pod, when set, limits it to the pods of that metadata.name (as
	// written, before --static-pod-names adds the node name).
	Pod string
	// Container is the name of an init, sidecar or regular container, or
	// "*" for every container, as kubectl set image takes it. Without Pod
	// it applies to every pod that has that container.
	Container string
	Image     string
}

// Arg is the override as written on the command line.
func (o ImageOverride) Arg() string {
	if o.Pod != "" {
		return o.Pod + "/" + o.Container + "=" + o.Image
	}
	return o.Container + "=" + o.Image
}

// ParseImageOverride parses --image's [POD/]CONTAINER=IMAGE.
func ParseImageOverride(s string) (ImageOverride, error) {
	key, image, ok := strings.Cut(s, "=")
	if !ok || key == "" || image == "" {
		return ImageOverride{}, fmt.Errorf("invalid --image %q: want CONTAINER=IMAGE, POD/CONTAINER=IMAGE or *=IMAGE", s)
	}
	o := ImageOverride{Container: key, Image: image}
	if pod, ctr, ok := strings.Cut(key, "/"); ok {
		if pod == "" || ctr == "" || strings.Contains(ctr, "/") {
			return ImageOverride{}, fmt.Errorf("invalid --image %q: want CONTAINER=IMAGE, POD/CONTAINER=IMAGE or *=IMAGE", s)
		}
		o.Pod, o.Container = pod, ctr
	}
	return o, nil
}

// ParseEnvOverride parses --env's NAME=VALUE, as kubectl run and kubectl
// set env take it; the name is validated with the pod.
func ParseEnvOverride(s string) (v1.EnvVar, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return v1.EnvVar{}, fmt.Errorf("invalid --env %q: want NAME=VALUE", s)
	}
	return v1.EnvVar{Name: name, Value: value}, nil
}

func (o Overrides) empty() bool { return len(o.Images) == 0 && len(o.Env) == 0 }

// apply applies the overrides to pod, a Pod as decoded; matched[i] is set
// when Images[i] named one of its containers. It reports whether the pod
// changed.
func (o Overrides) apply(pod *v1.Pod, matched []bool) bool {
	changed := false
	containers := func(yield func(*v1.Container) bool) {
		for i := range pod.Spec.InitContainers {
			if !yield(&pod.Spec.InitContainers[i]) {
				return
			}
		}
		for i := range pod.Spec.Containers {
			if !yield(&pod.Spec.Containers[i]) {
				return
			}
		}
	}
	for i, im := range o.Images {
		if im.Pod != "" && im.Pod != pod.Name {
			continue
		}
		for c := range containers {
			if im.Container == "*" || im.Container == c.Name {
				matched[i] = true
				changed = changed || c.Image != im.Image
				c.Image = im.Image
			}
		}
	}
	for c := range containers {
		for _, e := range o.Env {
			i := slices.IndexFunc(c.Env, func(x v1.EnvVar) bool { return x.Name == e.Name })
			switch {
			case i < 0:
				c.Env = append(c.Env, e)
				changed = true
			case c.Env[i].Value != e.Value || c.Env[i].ValueFrom != nil:
				c.Env[i] = e
				changed = true
			}
		}
	}
	return changed
}

// unmatchedImages is an error for each --image that named no container of
// pods, the pods of every source, with the containers there are.
func (o Overrides) unmatchedImages(pods []*Pod, matched []bool) []error {
	var errs []error
	for i, im := range o.Images {
		if matched[i] {
			continue
		}
		var named []*Pod
		for _, p := range pods {
			if im.Pod == "" || p.Manifest.Name == im.Pod {
				named = append(named, p)
			}
		}
		var msg string
		switch {
		case len(named) == 0 && im.Pod != "":
			msg = fmt.Sprintf("no pod named %q (%s)", im.Pod, podNamesOf(pods))
		case len(named) == 1:
			msg = fmt.Sprintf("pod %s has no container %q (its containers: %s)", named[0].Manifest.Name, im.Container, containerNamesOf(named[0].Manifest))
		default:
			var each []string
			for _, p := range named {
				each = append(each, p.Manifest.Name+": "+containerNamesOf(p.Manifest))
			}
			msg = fmt.Sprintf("no pod has a container %q (%s)", im.Container, strings.Join(each, "; "))
		}
		errs = append(errs, fmt.Errorf("--image %s: %s", im.Arg(), msg))
	}
	return errs
}

func podNamesOf(pods []*Pod) string {
	if len(pods) == 0 {
		return "no pods"
	}
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Manifest.Name
	}
	return "pods: " + strings.Join(names, ", ")
}

func containerNamesOf(pod *v1.Pod) string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}
