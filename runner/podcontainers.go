package runner

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// How `podrun logs` and `podrun exec` choose a pod's container, as
// kubectl and the API server choose it, from what the sandbox records of
// the pod's spec (podContainers, from the annotation io.podrun.containers:
// records.go; podrun keeps no spec after a run).

// defaultContainerAnnotation names the container kubectl picks when none
// is given (kubectl's podcmd.DefaultContainerAnnotationName).
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// regular and inits are the pod's regular and init containers, in order.
func (p podContainers) regular() []PodContainer { return p.filter(false) }
func (p podContainers) inits() []PodContainer   { return p.filter(true) }

func (p podContainers) filter(init bool) []PodContainer {
	var out []PodContainer
	for _, c := range p.Containers {
		if (c.Kind != KindContainer) == init {
			out = append(out, c)
		}
	}
	return out
}

func (p podContainers) find(name string) (PodContainer, bool) {
	for _, c := range p.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return PodContainer{}, false
}

// allNames lists the containers as kubectl's AllContainerNames does:
// regular ones, then init ones marked "(init)".
func (p podContainers) allNames() string {
	var names []string
	for _, c := range p.regular() {
		names = append(names, c.Name)
	}
	for _, c := range p.inits() {
		names = append(names, c.Name+" (init)")
	}
	return strings.Join(names, ", ")
}

// logContainers are the containers `podrun logs` reads. --all-containers
// takes every one, init containers first (kubectl). Otherwise the named
// one, which must exist (the API server's "container X is not valid for
// pod Y"); without a name the one the pod's default-container annotation
// names (kubectl; warn tells of an annotation naming none), or the only
// regular container; a pod with several needs a name, and the error lists
// them as the API server does.
func logContainers(pod string, rec podContainers, annotation, name string, all bool, warn func(string)) ([]PodContainer, error) {
	switch {
	case all:
		return append(rec.inits(), rec.regular()...), nil
	case name != "":
		c, ok := rec.find(name)
		if !ok {
			return nil, fmt.Errorf("container %s is not valid for pod %s", name, pod)
		}
		return []PodContainer{c}, nil
	}
	if annotation != "" {
		if c, ok := rec.find(annotation); ok {
			return []PodContainer{c}, nil
		}
		warn(fmt.Sprintf("Default container name %q not found in pod %s", annotation, pod))
	}
	regular := rec.regular()
	switch len(regular) {
	case 1:
		return regular, nil
	case 0:
		return nil, fmt.Errorf("a container name must be specified for pod %s", pod)
	}
	var names []string
	for _, c := range append(rec.inits(), regular...) {
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("a container name must be specified for pod %s, choose one of: %s", pod, names)
}

// execContainer is the container `podrun exec` runs in, as kubectl's
// FindOrDefaultContainerByName picks it: the named one, else the one the
// default-container annotation names, which must exist; else the first
// regular container, with a notice naming the others when there are any.
func execContainer(pod string, rec podContainers, annotation, name string) (c PodContainer, notice string, err error) {
	if len(rec.regular()) == 0 {
		return c, "", fmt.Errorf("pod %s does not have any containers", pod)
	}
	if name == "" {
		name = annotation
	}
	if name != "" {
		c, ok := rec.find(name)
		if !ok {
			return c, "", fmt.Errorf("container %s is not valid for pod %s out of: %s", name, pod, rec.allNames())
		}
		return c, "", nil
	}
	c = rec.regular()[0]
	if len(rec.Containers) > 1 {
		notice = fmt.Sprintf("Defaulted container %q out of: %s", c.Name, rec.allNames())
	}
	return c, notice, nil
}

// restarts says whether the kubelet starts a container again after an
// instance of it exited with exitCode: a sidecar always; an init
// container after a failure that its restart rules or policy, else the
// pod's, restart (containerRestarts); a regular container likewise
// (OnFailure: after a failure). An unknown pod policy counts as the
// default, Always.
func restarts(policy v1.RestartPolicy, c PodContainer, exitCode int32) bool {
	switch c.Kind {
	case KindSidecar:
		return true
	case KindInit:
		return exitCode != 0 && containerRestarts(c.Container, policy, exitCode)
	}
	return containerRestarts(c.Container, policy, exitCode)
}
