package podref

import (
	"fmt"
	"strings"
)

// Scope is which podrun pods a command takes, as a namespace is kubectl's:
// the pods of one --root-dir (every run with that root dir made them), or,
// with --all-roots, every podrun pod on the runtime. Two CI jobs sharing a
// node's runtime, each with its own root dir, then see and stop only their
// own pods. The root dir of a pod is its sandbox's io.podrun.root-dir
// annotation, the --root-dir of the run that made it, made absolute.
type Scope struct {
	// Root is the root dir whose pods are in scope; "" is every root dir
	// (--all-roots).
	Root string
}

// AllRoots reports whether the scope is every podrun pod on the runtime.
func (s Scope) AllRoots() bool { return s.Root == "" }

// Has tells whether a pod of root dir root is in scope.
func (s Scope) Has(root string) bool { return s.Root == "" || root == s.Root }

// Split divides items into those in scope and the others, in order.
func (s Scope) Split(items []Listed) (in, out []Listed) {
	for _, it := range items {
		if s.Has(it.Root) {
			in = append(in, it)
		} else {
			out = append(out, it)
		}
	}
	return in, out
}

// notFound is the error for an argument that names no pod in scope: "no
// podrun pod X" (kubectl's NotFound), saying, when it names pods of other
// root dirs (elsewhere), where they are and how to reach them.
func (s Scope) notFound(arg string, elsewhere []Ref) error {
	if len(elsewhere) == 0 || s.AllRoots() {
		return fmt.Errorf("no podrun pod %q", arg)
	}
	var where []string
	for _, r := range elsewhere {
		where = append(where, fmt.Sprintf("%s/%s (uid %s) is of --root-dir %s", r.Namespace, r.Name, r.UID, r.Root))
	}
	how := "give its --root-dir"
	if len(elsewhere) == 1 {
		how = "give --root-dir " + elsewhere[0].Root
	}
	return fmt.Errorf("no podrun pod %q in --root-dir %s: %s; %s, or --all-roots", arg, s.Root, strings.Join(where, ", "), how)
}

// NoneFound is what ps says when no pod is in scope, as kubectl's "No
// resources found in default namespace.": the root dir it looked in, and
// how many podrun pods other root dirs have (others), which --all-roots
// lists.
func (s Scope) NoneFound(others int) string {
	if s.AllRoots() {
		return "No resources found"
	}
	msg := "No resources found in --root-dir " + s.Root
	switch {
	case others == 1:
		msg += " (1 podrun pod of another root dir: --all-roots lists it)"
	case others > 1:
		msg += fmt.Sprintf(" (%d podrun pods of other root dirs: --all-roots lists them)", others)
	}
	return msg
}
