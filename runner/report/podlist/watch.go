package podlist

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/runner/podref"
)

// Watch remembers what a watch (`podrun ps -w`, as `kubectl get -w`) last
// printed of each pod, so that it prints a row again only for a pod that
// changed: the table once, then one row per change.
type Watch struct {
	last  map[types.UID]rowKey
	items map[types.UID]podref.Listed
	order []types.UID
}

// rowKey is what of a row can change on its own: everything but the
// ages, which change with the clock.
type rowKey struct {
	Ready, Total, Restarts       int
	LastRestart                  int64 // Unix ns
	Status, IP, Node, Run, Owner string
	Namespace, Name              string
}

func keyOf(it podref.Listed) rowKey {
	s := Summarize(it.Pod)
	k := rowKey{
		Ready: s.Ready, Total: s.Total, Restarts: s.Restarts, Status: s.Status,
		IP: podIP(it.Pod), Node: it.Pod.Spec.NodeName, Run: it.Run, Owner: it.Owner,
		Namespace: it.Pod.Namespace, Name: it.Pod.Name,
	}
	if !s.LastRestart.IsZero() {
		k.LastRestart = s.LastRestart.UnixNano()
	}
	return k
}

// NewWatch starts a watch with nothing printed yet.
func NewWatch() *Watch {
	return &Watch{last: map[types.UID]rowKey{}, items: map[types.UID]podref.Listed{}}
}

// Changed takes the pods as they are now and returns those to print: the
// new ones and those whose row changed, in the order given, then those
// that are gone, with the last state seen (kubectl prints a deleted pod's
// last state once more).
func (w *Watch) Changed(items []podref.Listed) []podref.Listed {
	var out []podref.Listed
	seen := map[types.UID]bool{}
	for _, it := range items {
		uid := it.Pod.UID
		seen[uid] = true
		k := keyOf(it)
		if prev, ok := w.last[uid]; !ok || prev != k {
			out = append(out, it)
		}
		if _, ok := w.last[uid]; !ok {
			w.order = append(w.order, uid)
		}
		w.last[uid], w.items[uid] = k, it
	}
	w.order = slices.DeleteFunc(w.order, func(uid types.UID) bool {
		if seen[uid] {
			return false
		}
		out = append(out, w.items[uid])
		delete(w.last, uid)
		delete(w.items, uid)
		return true
	})
	return out
}
