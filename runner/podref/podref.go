// Package podref is how podrun's commands name and take podrun's pods:
// a pod's reference (Ref: namespace, name, UID, root dir), the pods
// command-line arguments name (Named: NAME, NAMESPACE/NAME or UID), the
// scope of a command's pods (one --root-dir, or every root dir), and a
// pod as `podrun ps` lists it (Listed). runner makes these values
// (runner.PodLister; `podrun down`, `handover`, `logs` and `exec` choosing
// their pods among the runtime's sandboxes) and the printers read them
// (package podlist), so both import this package; it imports neither.
package podref

import (
	"errors"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Ref is a podrun pod as the commands that take pods name it: its
// namespace, name and UID, and the --root-dir of the run that made it (its
// sandbox's io.podrun.root-dir; Scope).
type Ref struct {
	Namespace, Name, UID, Root string
}

// NamedBy tells whether a command-line argument names the pod: NAME (in
// any namespace), NAMESPACE/NAME, or the pod's UID.
func (r Ref) NamedBy(arg string) bool {
	if ns, n, ok := strings.Cut(arg, "/"); ok {
		return ns == r.Namespace && n == r.Name
	}
	return arg == r.Name || arg == r.UID
}

// Named is the pods of scope that args name (Ref.NamedBy), in the order
// of pods, each once; ref is a pod's reference. Each argument that names
// none of them is an error (Scope.notFound): "no podrun pod X", saying
// where the pods of other root dirs it names are. Without arguments, none.
//
// Every command that takes pods by argument takes them so: `podrun ps`
// among the pods it lists, `down` and `handover` among podrun's sandboxes
// (several of one pod), `logs` and `exec` among the sandboxes of every
// root dir (runner's findPod, which then wants one pod).
func Named[T any](pods []T, ref func(T) Ref, args []string, scope Scope) ([]T, error) {
	var named []T
	found := make([]bool, len(args))
	elsewhere := make([][]Ref, len(args))
	for _, p := range pods {
		r, hit := ref(p), false
		for i, a := range args {
			switch {
			case !r.NamedBy(a):
			case scope.Has(r.Root):
				found[i], hit = true, true
			case !slices.Contains(elsewhere[i], r): // one of several sandboxes of a pod
				elsewhere[i] = append(elsewhere[i], r)
			}
		}
		if hit {
			named = append(named, p)
		}
	}
	var errs []error
	for i, a := range args {
		if !found[i] {
			errs = append(errs, scope.notFound(a, elsewhere[i]))
		}
	}
	return named, errors.Join(errs...)
}

// Listed is one pod `podrun ps` lists: the pod (the manifest podrun ran,
// with its status) and what runs it.
type Listed struct {
	Pod *v1.Pod
	// Run is the podrun invocation the pod belongs to (its run ID: the pods
	// of one `podrun -f ...` share it).
	Run string
	// Owner says who looks after the pod, in the OWNER column's words
	// ("pid N", "pid N (gone)", "detached", "kubelet").
	Owner string
	// Root is the --root-dir of the run that made the pod (Scope).
	Root string
}

// Ref is the listed pod's reference.
func (l Listed) Ref() Ref {
	return Ref{Namespace: l.Pod.Namespace, Name: l.Pod.Name, UID: string(l.Pod.UID), Root: l.Root}
}

// Sort orders items by namespace, then name, as the API server lists pods.
func Sort(items []Listed) {
	slices.SortStableFunc(items, func(a, b Listed) int {
		if c := strings.Compare(a.Pod.Namespace, b.Pod.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Pod.Name, b.Pod.Name)
	})
}
