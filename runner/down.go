package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podref"
)

// `podrun down`: the stop of a pod whose podrun has returned (--detach),
// from what the runtime records, as the kubelet kills a pod whose spec it
// no longer has (kuberuntime_container.go killContainersWithSyncResult,
// restoreSpecsFromContainerLabels, and the sidecar termination ordering of
// termination_ordering.go). The stop itself, stopForDown, is in stop.go
// beside the run's and reclaim's.

// DownOptions say which podrun pods `podrun down` takes, and how.
type DownOptions struct {
	// Args name pods (podref.Named); each must exist.
	Args []string
	// All takes every podrun pod of the scope but those handed over to a
	// kubelet.
	All bool
	// Scope is the pods Args and All take: those of one --root-dir, or
	// (zero) every podrun pod on the runtime. A pod of another root dir
	// that Args name is refused, saying which --root-dir reaches it.
	Scope podref.Scope
	// Force, once closed (a second signal), stops the containers at once
	// instead of waiting out their grace period; everything is still
	// removed.
	Force <-chan struct{}
	// Progressf reports each step.
	Progressf func(format string, args ...any)
	// RootDir, with All, is the root dir (--root-dir, whatever the Scope)
	// whose pod data dirs are swept once the pods are down: each one of
	// which no podrun sandbox is left on the runtime (the runtime's state
	// wiped, a podrun killed before its sandbox or after its removal) and
	// whose podrun is not alive goes, with its log dir and pod cgroup, as
	// the next run on the root dir would reclaim it (sweepRootDir).
	RootDir string
}

// Down tears down podrun pods fully: containers stopped with their preStop
// hooks and their pod's termination grace period (stopForDown), sandboxes
// stopped and removed, data and log dirs removed. With all, every podrun
// pod of every root dir; otherwise the named ones, each of which must
// exist.
func Down(ctx context.Context, rt Runtime, args []string, all bool, progressf func(string, ...any)) error {
	return DownWith(ctx, rt, DownOptions{Args: args, All: all, Progressf: progressf})
}

// DownWith is Down as opts say. It carries on until every pod chosen is
// gone or has failed to go; ctx bounds the runtime calls (the CLI's is
// not cancelled by a first signal: a stop abandoned half way would leave
// a pod half removed).
func DownWith(ctx context.Context, rt Runtime, opts DownOptions) error {
	return downWith(ctx, rt, cgroups.HostSystem(), opts)
}

// down is Down with the host's cgroups reached through cgsys.
func down(ctx context.Context, rt Runtime, cgsys cgroups.System, args []string, all bool, progressf func(string, ...any)) error {
	return downWith(ctx, rt, cgsys, DownOptions{Args: args, All: all, Progressf: progressf})
}

// downWith is DownWith with the host's cgroups reached through cgsys.
func downWith(ctx context.Context, rt Runtime, cgsys cgroups.System, opts DownOptions) error {
	progressf := opts.Progressf
	if progressf == nil {
		progressf = func(string, ...any) {}
	}
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return err
	}
	named, err := podref.Named(sbs, sandboxRef, opts.Args, opts.Scope)
	errs := []error{err}
	want := map[string]bool{}
	for _, sb := range named {
		want[sb.Id] = true
	}
	var chosen []*runtimeapi.PodSandbox
	others := map[string]bool{} // pod UIDs of other root dirs --all leaves
	for _, sb := range sbs {
		switch {
		case want[sb.Id]:
			chosen = append(chosen, sb)
		case !opts.All:
		case !opts.Scope.Has(sb.Annotations[AnnotationRootDir]):
			others[sb.Labels[labelPodUID]] = true
		case handedOver(sb):
			progressf("pod/%s: handed over to the kubelet: left running (name it to stop it)", sb.Labels[labelPodName])
		default:
			chosen = append(chosen, sb)
		}
	}
	switch n := len(others); {
	case n == 1:
		progressf("podrun: 1 podrun pod of another root dir left running (--all-roots takes it too)")
	case n > 1:
		progressf("podrun: %d podrun pods of other root dirs left running (--all-roots takes them too)", n)
	}
	errs = append(errs, downPods(ctx, rt, cgsys, chosen, opts.Force, progressf))
	if opts.All && opts.RootDir != "" {
		errs = append(errs, sweepRootDir(ctx, rt, cgsys, opts.RootDir, progressf))
	}
	return errors.Join(errs...)
}

// sweepRootDir removes what pods of rootDir left without a sandbox on the
// runtime: their data dirs, log dirs and pod cgroups (reclaimDataDirs,
// detached pods included), once their podrun is gone.
func sweepRootDir(ctx context.Context, rt Runtime, cgsys cgroups.System, rootDir string, progressf func(string, ...any)) error {
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return err
	}
	if err := reclaimDataDirs(cgsys, rootDir, sandboxUIDs(sbs), dataDirSweep{takeDetached: true, progressf: progressf}); err != nil {
		return fmt.Errorf("removing what pods of %s left: %w", rootDir, err)
	}
	return nil
}

// downPods stops the pods of the sandboxes chosen at once, as a kubelet's
// pod workers stop them, and removes their sandboxes, data and log dirs and
// pod cgroups. A pod whose containers or sandbox could not be stopped and
// removed keeps its data dir, log dir, status record and cgroup
// (removeSandboxAndPodDirs): it stays whole, for another `podrun down` to
// take.
func downPods(ctx context.Context, rt Runtime, cgsys cgroups.System, chosen []*runtimeapi.PodSandbox, force <-chan struct{}, progressf func(string, ...any)) error {
	var errs []error
	downErrs := make([]error, len(chosen))
	gone := make([]bool, len(chosen))
	var wg sync.WaitGroup
	for i, sb := range chosen {
		wg.Go(func() {
			grace := int64(v1.DefaultTerminationGracePeriodSeconds)
			if g, err := parseInt64(sb.Annotations[annotationPodTerminationGracePeriod]); err == nil {
				grace = g
			}
			progressf("pod/%s: Killing: stopping pod %s/%s", sb.Labels[labelPodName], sb.Labels[labelPodNamespace], sb.Labels[labelPodName])
			if dir, ok := listedPodDir(sb.Annotations[AnnotationRootDir], sb.Labels[labelPodUID]); ok {
				_ = markDeleting(dir, time.Now(), grace) // ps shows it Terminating; no record, no mark
			}
			ctrs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sb.Id})
			if err == nil {
				err = stopForDown(ctx, rt, sb, ctrs, grace, force, progressf)
			}
			rerr := removeSandboxAndPodDirs(ctx, rt, sb, 0)
			gone[i] = rerr == nil
			if rerr != nil || err != nil {
				downErrs[i] = errors.Join(err, rerr)
			}
		})
	}
	wg.Wait()
	errs = append(errs, downErrs...)
	var removed []*runtimeapi.PodSandbox
	for i, sb := range chosen {
		if gone[i] {
			removed = append(removed, sb)
		}
	}
	if err := removeCgroups(cgsys, removed); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
