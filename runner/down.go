package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podlist"
)

// `podrun down`: the stop of a pod whose podrun has returned (--detach),
// from what the runtime records, as the kubelet kills a pod whose spec it
// no longer has (kuberuntime_container.go killContainersWithSyncResult,
// restoreSpecsFromContainerLabels, and the sidecar termination ordering of
// termination_ordering.go).

// downContainer is a running container as `podrun down` sees it: restored
// from its labels and annotations.
type downContainer struct {
	ID      string
	Name    string
	PreStop *v1.LifecycleHandler
	Ports   []v1.ContainerPort
	// Sidecar is the container's index among the init containers when it
	// is a sidecar, else -1.
	Sidecar int
}

// restoreContainer reads what `podrun down` needs of a container from its
// labels and annotations (containerAnnotations). An annotation that does
// not parse is left out (no hook, no ports), as the kubelet does.
func restoreContainer(c *runtimeapi.Container) downContainer {
	d := downContainer{ID: c.Id, Name: c.Labels[labelContainerName], Sidecar: -1}
	if d.Name == "" && c.Metadata != nil {
		d.Name = c.Metadata.Name
	}
	if s := c.Annotations[annotationPreStopHandler]; s != "" {
		var h v1.LifecycleHandler
		if json.Unmarshal([]byte(s), &h) == nil {
			d.PreStop = &h
		}
	}
	if s := c.Annotations[annotationContainerPorts]; s != "" {
		_ = json.Unmarshal([]byte(s), &d.Ports)
	}
	if s, ok := c.Annotations[annotationSidecar]; ok {
		if i, err := strconv.Atoi(s); err == nil && i >= 0 {
			d.Sidecar = i
		}
	}
	return d
}

// stopTurns says, for each container of cs (by index), which others must
// have stopped before it is: none for a regular container; for a sidecar,
// every regular container and every sidecar declared after it — the
// kubelet's termination ordering, which stops sidecars after the main
// containers, in reverse order.
func stopTurns(cs []downContainer) [][]int {
	turns := make([][]int, len(cs))
	for i, c := range cs {
		if c.Sidecar < 0 {
			continue
		}
		for j, o := range cs {
			if j != i && (o.Sidecar < 0 || o.Sidecar > c.Sidecar) {
				turns[i] = append(turns[i], j)
			}
		}
	}
	return turns
}

// terminationOrdering is the kubelet's (kuberuntime
// termination_ordering.go) for one stop of a pod: a container waits for
// the containers stopTurns names, for at most the grace period it has
// left, before it is stopped itself. The run's teardown (killPod) and
// `podrun down` (stopForDown) stop pods through it alike.
type terminationOrdering struct {
	turns   [][]int
	stopped []chan struct{}
}

func newTerminationOrdering(cs []downContainer) *terminationOrdering {
	o := &terminationOrdering{turns: stopTurns(cs), stopped: make([]chan struct{}, len(cs))}
	for i := range o.stopped {
		o.stopped[i] = make(chan struct{})
	}
	return o
}

// waitForTurn waits until every container before container i has stopped,
// at most grace seconds, or until force closes (forced), and returns the
// whole seconds it waited, which the container's grace period loses.
func (o *terminationOrdering) waitForTurn(i int, grace int64, force <-chan struct{}) (elapsed int64, forced bool) {
	if len(o.turns[i]) == 0 || grace <= 0 {
		return 0, false
	}
	start := time.Now()
	wait := time.NewTimer(graceDuration(grace))
	defer wait.Stop()
	for _, j := range o.turns[i] {
		select {
		case <-o.stopped[j]:
		case <-wait.C:
			return int64(time.Since(start) / time.Second), false
		case <-force:
			return int64(time.Since(start) / time.Second), true
		}
	}
	return int64(time.Since(start) / time.Second), false
}

// terminated marks container i stopped; it is called once per container.
func (o *terminationOrdering) terminated(i int) { close(o.stopped[i]) }

// stopForDown stops the running containers of a sandbox as the kubelet
// stops a pod: all at once, each with its preStop hook first (run for at
// most the grace period, which it consumes), the sidecars then waiting for
// their turn (terminationOrdering, also consuming the grace period), and
// CRI StopContainer with what is left of it, at least 2 s. A closed force
// (a second signal) cuts whatever is left to 0, as it does for a run's
// teardown (killContainer).
func stopForDown(ctx context.Context, rt Runtime, sb *runtimeapi.PodSandbox, ctrs []*runtimeapi.Container, grace int64, force <-chan struct{}, progressf func(string, ...any)) error {
	var cs []downContainer
	for _, c := range ctrs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			cs = append(cs, restoreContainer(c))
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	if len(cs) == 0 {
		return nil
	}
	name, ns, uid := sb.Labels[labelPodName], sb.Labels[labelPodNamespace], sb.Labels[labelPodUID]
	podName := formatPod(name, ns, uid)
	podIP := ""
	if st, err := rt.PodSandboxStatus(ctx, sb.Id, false); err == nil && st.GetStatus().GetNetwork() != nil {
		podIP = st.GetStatus().GetNetwork().GetIp()
	}
	if podIP == "" {
		// A host-network pod: its servers answer on the node.
		podIP = "127.0.0.1"
	}
	order := newTerminationOrdering(cs)
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			defer order.terminated(i)
			left, forced := grace, false
			progressf("pod/%s: Killing: Stopping container %s", name, c.Name)
			if c.PreStop != nil && left > 0 {
				spec := &v1.Container{Name: c.Name, Ports: c.Ports}
				var elapsed int64
				elapsed, forced = runPreStop(ctx, rt, c.ID, spec, c.PreStop, left, podName, podIP, force, func(reason, format string, a ...any) {
					progressf("pod/%s: %s: %s", name, reason, fmt.Sprintf(format, a...))
				})
				left -= elapsed
			}
			if left > 0 && !forced {
				var elapsed int64
				elapsed, forced = order.waitForTurn(i, left, force)
				left -= elapsed
			}
			left = max(left, minimumGracePeriodSeconds)
			if forced {
				left = 0
			}
			if err := stopContainerUnlessForced(ctx, rt, c.ID, left, force, func() {
				progressf("pod/%s: Killing: Killing container %s now (second signal)", name, c.Name)
			}); err != nil {
				errs[i] = fmt.Errorf("stopping container %s: %w", c.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopContainerUnlessForced stops a container with the grace period,
// stopping it again at once (grace 0) should force close meanwhile.
func stopContainerUnlessForced(ctx context.Context, rt Runtime, id string, grace int64, force <-chan struct{}, forced func()) error {
	if grace == 0 {
		return rt.StopContainer(ctx, id, 0)
	}
	done := make(chan error, 1)
	go func() { done <- rt.StopContainer(ctx, id, grace) }()
	select {
	case err := <-done:
		return err
	case <-force:
		forced()
		err := rt.StopContainer(ctx, id, 0)
		<-done
		return err
	}
}

// DownOptions say which podrun pods `podrun down` takes, and how.
type DownOptions struct {
	// Args name pods (matchPod); each must exist.
	Args []string
	// All takes every podrun pod of the scope but those handed over to a
	// kubelet.
	All bool
	// Scope is the pods Args and All take: those of one --root-dir, or
	// (zero) every podrun pod on the runtime. A pod of another root dir
	// that Args name is refused, saying which --root-dir reaches it.
	Scope podlist.Scope
	// Force, once closed (a second signal), stops the containers at once
	// instead of waiting out their grace period; everything is still
	// removed.
	Force <-chan struct{}
	// Progressf reports each step.
	Progressf func(format string, args ...any)
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
	named, err := namedPods(sbs, opts.Args, opts.Scope)
	errs := []error{err}
	want := map[string]bool{}
	for _, info := range named {
		want[info.SandboxID] = true
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
	return errors.Join(append(errs, downPods(ctx, rt, cgsys, chosen, opts.Force, progressf))...)
}

// downPods stops the pods of the sandboxes chosen at once, as a kubelet's
// pod workers stop them, and removes their sandboxes, data and log dirs and
// pod cgroups. A pod whose containers or sandbox could not be stopped and
// removed keeps its data dir, log dir, status record and cgroup
// (removeSandbox): it stays whole, for another `podrun down` to take.
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
			rerr := removeSandbox(ctx, rt, sb, 0)
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
