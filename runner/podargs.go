package runner

// The pods the commands' POD arguments name (NAME, NAMESPACE/NAME or UID),
// among podrun's sandboxes on the runtime: every command takes them with
// podref.Named, over the sandboxes' references (sandboxRef). `podrun down`
// and `handover` take the sandboxes of their scope that it names
// (downWith, handoverChoice); `logs` and `exec` the one pod it names in
// any root dir (findPod); completion lists the pods' names (List).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/podref"
)

// sandboxRef is the reference of the pod of a podrun sandbox: its labels
// and the root dir it is annotated with.
func sandboxRef(sb *runtimeapi.PodSandbox) podref.Ref {
	return podref.Ref{
		Namespace: sb.Labels[labelPodNamespace], Name: sb.Labels[labelPodName], UID: sb.Labels[labelPodUID],
		Root: sb.Annotations[AnnotationRootDir],
	}
}

// byName is sandboxes sorted by their pod's namespace and name, then
// oldest attempt first.
func byName(sbs []*runtimeapi.PodSandbox) []*runtimeapi.PodSandbox {
	sorted := slices.Clone(sbs)
	slices.SortStableFunc(sorted, func(a, b *runtimeapi.PodSandbox) int {
		if c := strings.Compare(a.Labels[labelPodNamespace], b.Labels[labelPodNamespace]); c != 0 {
			return c
		}
		if c := strings.Compare(a.Labels[labelPodName], b.Labels[labelPodName]); c != 0 {
			return c
		}
		return cmp.Compare(a.GetMetadata().GetAttempt(), b.GetMetadata().GetAttempt())
	})
	return sorted
}

// List returns podrun's pods, one per sandbox, sorted by namespace and
// name: the names pod-name completion offers.
func List(ctx context.Context, rt Runtime) ([]podref.Ref, error) {
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return nil, err
	}
	out := make([]podref.Ref, 0, len(sbs))
	for _, sb := range byName(sbs) {
		out = append(out, sandboxRef(sb))
	}
	return out, nil
}

// foundPod is a podrun pod as findPod finds it: its reference and its
// sandboxes, newest first.
type foundPod struct {
	podref.Ref
	Sandboxes []*runtimeapi.PodSandbox
}

// findPod finds the podrun pod that arg names (podref.Named), in any root
// dir: NAME, NAMESPACE/NAME or the pod UID. A NAME that pods of several
// namespaces have is ambiguous.
func findPod(ctx context.Context, rt Runtime, arg string) (*foundPod, error) {
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return nil, err
	}
	return choosePod(arg, sbs)
}

// choosePod is findPod's choice among podrun's sandboxes.
func choosePod(arg string, sbs []*runtimeapi.PodSandbox) (*foundPod, error) {
	named, err := podref.Named(byName(sbs), sandboxRef, []string{arg}, podref.Scope{})
	if err != nil {
		return nil, err
	}
	byUID := map[string]*foundPod{}
	var uids []string
	for _, sb := range named {
		r := sandboxRef(sb)
		p := byUID[r.UID]
		if p == nil {
			p = &foundPod{Ref: r}
			byUID[r.UID] = p
			uids = append(uids, r.UID)
		}
		p.Sandboxes = append(p.Sandboxes, sb)
	}
	if len(uids) == 1 {
		p := byUID[uids[0]]
		sortSandboxesNewestFirst(p.Sandboxes)
		return p, nil
	}
	var names []string
	for _, uid := range uids {
		p := byUID[uid]
		names = append(names, fmt.Sprintf("%s/%s (uid %s)", p.Namespace, p.Name, uid))
	}
	return nil, fmt.Errorf("%q names several podrun pods: %s; give NAMESPACE/NAME or the UID", arg, strings.Join(names, ", "))
}
