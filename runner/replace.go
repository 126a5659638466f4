package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/podref"
)

// --replace: a run that takes the place of a detached pod of the same
// namespace and name. The pod is found among podrun's sandboxes as
// `podrun down` finds a pod it is named (podref's scope: the run's
// --root-dir), and stopped as `podrun down` stops it (downPods: its
// preStop hooks, its termination grace period, its sandboxes, data and log
// dirs and pod cgroup), after the run's refusals and before anything of
// the run is created: a run that is refused leaves the pod running.

// replaceCandidate is one podrun sandbox as the replace decision sees it:
// its pod's reference and who looks after the pod (podOwner, handedOver).
type replaceCandidate struct {
	Sandbox    *runtimeapi.PodSandbox
	Owner      Owner
	Alive      bool // the owner's process still runs
	HandedOver bool // podrun handover gave the pod to a kubelet
}

// decideReplace chooses the sandboxes --replace stops for the run's pods:
// every sandbox in the run's root dir (rootDir) of a pod with the
// namespace and name of one of pods, whatever its UID (the manifest may
// have changed), that a podrun left running detached. Sandboxes of other
// root dirs are not its to take (checkNotRunning still refuses a pod of
// the same UID there, naming that root dir), nor a dead run's leftovers
// (reclaim's). A pod a live podrun runs attached, or one handed over to a
// kubelet, refuses the run: stopping it would fight that podrun or the
// kubelet, each of which would make the pod again.
func decideReplace(pods []*v1.Pod, cands []replaceCandidate, rootDir string) ([]*runtimeapi.PodSandbox, error) {
	scope := podref.Scope{Root: rootDir}
	var chosen []*runtimeapi.PodSandbox
	var errs []error
	refused := map[string]bool{} // pod UIDs refused, each once
	for _, c := range cands {
		ref := sandboxRef(c.Sandbox)
		if !scope.Has(ref.Root) || !slices.ContainsFunc(pods, func(p *v1.Pod) bool { return p.Namespace == ref.Namespace && p.Name == ref.Name }) {
			continue
		}
		var why string
		switch {
		case c.HandedOver:
			why = fmt.Sprintf("was handed over to the kubelet (podrun handover): --replace does not take it from the kubelet; `podrun down %s/%s` stops it", ref.Namespace, ref.Name)
		case c.Owner.Detached:
			chosen = append(chosen, c.Sandbox)
			continue
		case c.Alive:
			why = fmt.Sprintf("is run by podrun pid %d, which is still running: --replace replaces a detached pod (podrun -d); stop that run first (its teardown stops the pod)", c.Owner.PID)
		default:
			continue // a dead run's leftover: reclaim's
		}
		if !refused[ref.UID] {
			refused[ref.UID] = true
			errs = append(errs, fmt.Errorf("pod %s/%s: the running pod %s/%s (uid %s) %s", ref.Namespace, ref.Name, ref.Namespace, ref.Name, ref.UID, why))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return chosen, nil
}

// replace stops what decideReplace chooses among sbs (podrun's sandboxes,
// after reclaim) as `podrun down` would, and returns the sandboxes left.
// The stop is not cut short by a first signal (a pod half stopped would be
// left), as down's is not; a second one (Force) kills the containers at
// once. A stop that fails, or a signal during it, is the run's error:
// nothing of the run is made.
func (r *runState) replace(ctx context.Context, pods []*v1.Pod, sbs []*runtimeapi.PodSandbox) ([]*runtimeapi.PodSandbox, error) {
	cands := make([]replaceCandidate, len(sbs))
	for i, sb := range sbs {
		o := podOwner(sb)
		cands[i] = replaceCandidate{Sandbox: sb, Owner: o, Alive: o.Alive(), HandedOver: handedOver(sb)}
	}
	chosen, err := decideReplace(pods, cands, r.opts.RootDir)
	if err != nil || len(chosen) == 0 {
		return sbs, err
	}
	seen := map[string]bool{}
	for _, sb := range chosen {
		if ref := sandboxRef(sb); !seen[ref.UID] {
			seen[ref.UID] = true
			r.progressf("pod/%s: Replacing: stopping the detached pod %s/%s (uid %s, run %s) first (--replace)",
				ref.Name, ref.Namespace, ref.Name, ref.UID, sb.Labels[labelRun])
		}
	}
	if err := downPods(context.WithoutCancel(ctx), r.rt, r.cgsys, chosen, r.opts.Force, r.progressf); err != nil {
		return nil, fmt.Errorf("--replace: stopping the running pod: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("--replace: interrupted: the running pod was stopped, the new one not started: %w", err)
	}
	return slices.DeleteFunc(slices.Clone(sbs), func(sb *runtimeapi.PodSandbox) bool { return slices.Contains(chosen, sb) }), nil
}
