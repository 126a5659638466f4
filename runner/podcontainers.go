package runner

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// How `podrun logs` and `podrun exec` choose a pod's container, as
// kubectl and the API server choose it, from what the sandbox records of
// the pod's spec (podrun keeps no spec after a run).

// annotationContainers records, on a pod's sandbox, the pod's restart
// policy and its containers in spec order, init containers first and
// sidecars marked (podContainers as JSON).
const annotationContainers = "io.podrun.containers"

// defaultContainerAnnotation names the container kubectl picks when none
// is given (kubectl's podcmd.DefaultContainerAnnotationName).
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// podContainers is what annotationContainers records.
type podContainers struct {
	RestartPolicy v1.RestartPolicy `json:"restartPolicy,omitempty"`
	Containers    []podContainer   `json:"containers"`
}

// podContainer is one container of a pod.
type podContainer struct {
	Name    string `json:"name"`
	Init    bool   `json:"init,omitempty"`
	Sidecar bool   `json:"sidecar,omitempty"` // a restartable init container
}

// containersRecord is the annotationContainers value of a pod.
func containersRecord(pod *v1.Pod) string {
	rec := podContainers{RestartPolicy: pod.Spec.RestartPolicy}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		rec.Containers = append(rec.Containers, podContainer{Name: c.Name, Init: true, Sidecar: podresources.IsSidecar(c)})
	}
	for _, c := range pod.Spec.Containers {
		rec.Containers = append(rec.Containers, podContainer{Name: c.Name})
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

// containersOf reads a pod's containers from its sandbox's annotation.
// A sandbox without it (made by an older podrun) gives the containers the
// runtime holds, in the order they were first created, sidecars marked,
// every other one taken as a regular container, and no restart policy.
func containersOf(sb *runtimeapi.PodSandbox, ctrs []*runtimeapi.Container) podContainers {
	var rec podContainers
	if s := sb.GetAnnotations()[annotationContainers]; s != "" && json.Unmarshal([]byte(s), &rec) == nil && len(rec.Containers) > 0 {
		return rec
	}
	rec = podContainers{}
	first := map[string]int64{}
	sidecar := map[string]bool{}
	for _, c := range ctrs {
		d := restoreContainer(c)
		if t, ok := first[d.Name]; !ok || c.CreatedAt < t {
			first[d.Name] = c.CreatedAt
		}
		sidecar[d.Name] = sidecar[d.Name] || d.Sidecar >= 0
	}
	for name := range first {
		rec.Containers = append(rec.Containers, podContainer{Name: name, Init: sidecar[name], Sidecar: sidecar[name]})
	}
	sort.Slice(rec.Containers, func(i, j int) bool {
		a, b := rec.Containers[i], rec.Containers[j]
		if first[a.Name] != first[b.Name] {
			return first[a.Name] < first[b.Name]
		}
		return a.Name < b.Name
	})
	return rec
}

// regular and inits are the pod's regular and init containers, in order.
func (p podContainers) regular() []podContainer { return p.filter(false) }
func (p podContainers) inits() []podContainer   { return p.filter(true) }

func (p podContainers) filter(init bool) []podContainer {
	var out []podContainer
	for _, c := range p.Containers {
		if c.Init == init {
			out = append(out, c)
		}
	}
	return out
}

func (p podContainers) find(name string) (podContainer, bool) {
	for _, c := range p.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return podContainer{}, false
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
func logContainers(pod string, rec podContainers, annotation, name string, all bool, warn func(string)) ([]podContainer, error) {
	switch {
	case all:
		return append(rec.inits(), rec.regular()...), nil
	case name != "":
		c, ok := rec.find(name)
		if !ok {
			return nil, fmt.Errorf("container %s is not valid for pod %s", name, pod)
		}
		return []podContainer{c}, nil
	}
	if annotation != "" {
		if c, ok := rec.find(annotation); ok {
			return []podContainer{c}, nil
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
func execContainer(pod string, rec podContainers, annotation, name string) (c podContainer, notice string, err error) {
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
// container after a failure, unless the pod's policy is Never; a regular
// container by the pod's policy (OnFailure: after a failure). An unknown
// policy counts as the default, Always.
func restarts(policy v1.RestartPolicy, c podContainer, exitCode int32) bool {
	switch {
	case c.Sidecar:
		return true
	case c.Init:
		return exitCode != 0 && policy != v1.RestartPolicyNever
	case policy == v1.RestartPolicyNever:
		return false
	case policy == v1.RestartPolicyOnFailure:
		return exitCode != 0
	}
	return true
}
