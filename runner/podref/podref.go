// Package podref is how podrun's commands name and take podrun's pods:
// the pods a command-line argument names (NAME, NAMESPACE/NAME or UID),
// the scope of a command's pods (one --root-dir, or every root dir), and
// a pod as `podrun ps` lists it (Listed). runner makes these values
// (runner.PodLister, `podrun down` and `handover` choosing their pods) and
// the printers read them (package podlist), so both import this package;
// it imports neither.
package podref

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

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

// Matches tells whether a command-line argument names the pod: NAME (in
// any namespace), NAMESPACE/NAME, or the pod's UID.
func Matches(arg, namespace, name, uid string) bool {
	if ns, n, ok := strings.Cut(arg, "/"); ok {
		return ns == namespace && n == name
	}
	return arg == name || arg == uid
}

// Select keeps the items the arguments name, in the items' order, and
// returns the arguments that name none. Without arguments it keeps all.
func Select(items []Listed, args []string) (selected []Listed, missing []string) {
	if len(args) == 0 {
		return items, nil
	}
	found := make([]bool, len(args))
	for _, it := range items {
		hit := false
		for i, a := range args {
			if Matches(a, it.Pod.Namespace, it.Pod.Name, string(it.Pod.UID)) {
				found[i], hit = true, true
			}
		}
		if hit {
			selected = append(selected, it)
		}
	}
	for i, a := range args {
		if !found[i] {
			missing = append(missing, a)
		}
	}
	return selected, missing
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
