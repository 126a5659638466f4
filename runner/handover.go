package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podref"
)

// The hand-over (`podrun handover`, docs/handover.md): a node bootstrapped
// with `podrun -d` starts its kubelet on the same manifests, and each of
// podrun's pods either goes on under the kubelet or makes way for the
// kubelet's copy of it.
//
// The kubelet keeps a running pod whose UID is one of its static pods'
// (pkg/kubelet/kubelet_pods.go HandlePodCleanups kills every other as an
// orphan at its first housekeeping, 2 s after it starts) and whose sandbox,
// pod cgroup and container hashes it finds as it would have made them: a
// manifest with metadata.uid run with --static-pod-names and --cgroup-root
// at the kubelet's kubepods is adopted with no restart. Any other pod is
// replaced: the kubelet makes a sandbox of its own for the manifest, and
// podrun stops its copy at once, so that the kubelet's container, which
// starts about half a second later, finds the ports and data free. A pod
// whose UID podrun gave (no metadata.uid) is never taken for adopted: the
// kubelet gives its manifest a UID of its own, so it replaces the pod or
// kills it as an orphan, however long it takes to get there (a slow node's
// kubelet can take longer than the settle time).

// DefaultKubeletHealthz is the kubelet's default healthz endpoint
// (healthzBindAddress 127.0.0.1, healthzPort 10248).
const DefaultKubeletHealthz = "http://127.0.0.1:10248/healthz"

// defaultHandoverSettle is how long a pod must go on running, with no copy
// of the kubelet's beside it, after the kubelet answers healthz, to count
// as adopted: three of the kubelet's housekeeping periods (2 s each), at
// the first of which it kills the pods it does not know.
const defaultHandoverSettle = 6 * time.Second

// HandoverOptions says which pods to hand over and how to know the kubelet.
type HandoverOptions struct {
	Args []string // pods as `podrun down` takes them
	All  bool     // every podrun pod of the scope not handed over yet
	// Scope is the pods Args and All take, as for `podrun down`: those of
	// one --root-dir, or (zero) every podrun pod on the runtime.
	Scope podref.Scope
	// RootDir is podrun's root dir: the data dirs of pods handed over
	// earlier whose sandboxes are gone are removed from it first.
	RootDir string
	// Healthz is the kubelet's healthz URL (DefaultKubeletHealthz).
	Healthz string
	// Settle: defaultHandoverSettle when 0.
	Settle time.Duration
	// Progressf reports each pod's hand-over.
	Progressf func(format string, args ...any)

	now   func() time.Time
	httpc *http.Client
	cgsys cgroups.System
}

// HandoverOutcome is how a pod was handed over.
type HandoverOutcome string

const (
	// HandoverAdopted: the kubelet runs podrun's containers as its own.
	HandoverAdopted HandoverOutcome = "adopted"
	// HandoverReplaced: the kubelet made its own copy; podrun's is gone.
	HandoverReplaced HandoverOutcome = "replaced"
	// HandoverGone: podrun's copy ended before the kubelet ran one (the
	// kubelet killed it as an orphan, or it exited); its leftovers are
	// removed.
	HandoverGone HandoverOutcome = "gone"
)

// HandoverResult is one pod's hand-over.
type HandoverResult struct {
	Namespace, Name, UID string
	Outcome              HandoverOutcome
	At                   time.Time // when podrun decided it
}

// handoverView is what decideHandover decides a pod's hand-over from.
type handoverView struct {
	PodrunReady  bool      // podrun's sandbox of the pod is ready
	Adoptable    bool      // a kubelet can give the pod its UID (not one podrun gave)
	KubeletCopy  bool      // a ready sandbox of the same namespace and name that podrun did not make
	HealthySince time.Time // the kubelet has answered healthz since then; zero: not yet
	Now          time.Time
	Settle       time.Duration
}

// handoverStep is what to do with a pod now.
type handoverStep int

const (
	handoverWait    handoverStep = iota // look again on the next change
	handoverReplace                     // stop and remove podrun's copy
	handoverCleanUp                     // podrun's copy has ended: remove what is left of it
	handoverRelease                     // adopted: record it, leave it running
)

// decideHandover is the hand-over's decision for one pod. The kubelet's
// own copy decides first: two copies of a host-network pod fight over its
// ports and data. A podrun copy that is no longer ready was killed by the
// kubelet (an orphan) or ended. An adoptable pod the kubelet has left
// running for Settle since it answered healthz is its own; one that is not
// adoptable waits for the kubelet's copy or its end.
func decideHandover(v handoverView) handoverStep {
	switch {
	case v.KubeletCopy:
		return handoverReplace
	case !v.PodrunReady:
		return handoverCleanUp
	case v.Adoptable && !v.HealthySince.IsZero() && v.Now.Sub(v.HealthySince) >= v.Settle:
		return handoverRelease
	}
	return handoverWait
}

// Handover hands podrun's pods over to a kubelet starting on the same
// runtime, until each is adopted, replaced or gone, or ctx ends (an error
// naming the pods still waiting).
func Handover(ctx context.Context, rt Runtime, opts HandoverOptions) ([]HandoverResult, error) {
	if opts.now == nil {
		opts.now = time.Now
	}
	if opts.httpc == nil {
		opts.httpc = &http.Client{Timeout: time.Second}
	}
	if opts.cgsys.NewManager == nil {
		opts.cgsys = cgroups.HostSystem()
	}
	if opts.Healthz == "" {
		opts.Healthz = DefaultKubeletHealthz
	}
	if opts.Settle == 0 {
		opts.Settle = defaultHandoverSettle
	}
	if opts.Progressf == nil {
		opts.Progressf = func(string, ...any) {}
	}
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return nil, err
	}
	if opts.RootDir != "" {
		if err := reclaimDataDirs(opts.cgsys, opts.RootDir, sandboxUIDs(sbs), dataDirSweep{}); err != nil {
			opts.Progressf("handover: removing what earlier hand-overs left: %v", err)
		}
	}
	pending, err := handoverChoice(sbs, opts.Args, opts.All, opts.Scope)
	if err != nil {
		return nil, err
	}
	var results []HandoverResult
	var healthySince time.Time
	var mu sync.Mutex
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if healthySince.IsZero() && kubeletHealthy(ctx, opts.httpc, opts.Healthz) {
			healthySince = opts.now()
			opts.Progressf("handover: the kubelet answers on %s", opts.Healthz)
		}
		all, err := rt.ListPodSandbox(ctx, nil)
		if err != nil {
			return // looked at again on the next tick
		}
		for uid, sb := range pending {
			v := handoverView{
				PodrunReady:  podrunReady(all, uid),
				Adoptable:    sb.Annotations[annotationUIDGiven] != "true",
				KubeletCopy:  hasKubeletCopy(all, sb),
				HealthySince: healthySince, Now: opts.now(), Settle: opts.Settle,
			}
			res := HandoverResult{Namespace: sb.Labels[labelPodNamespace], Name: sb.Labels[labelPodName], UID: uid, At: v.Now}
			name := sb.Labels[labelPodName]
			switch decideHandover(v) {
			case handoverWait:
				continue
			case handoverReplace:
				opts.Progressf("pod/%s: Killing: the kubelet runs its own copy: stopping podrun's", name)
				err = downPods(ctx, rt, opts.cgsys, sandboxesOfUID(all, uid), nil, opts.Progressf)
				res.Outcome = HandoverReplaced
			case handoverCleanUp:
				opts.Progressf("pod/%s: podrun's copy has ended: removing what is left of it", name)
				err = downPods(ctx, rt, opts.cgsys, sandboxesOfUID(all, uid), nil, opts.Progressf)
				res.Outcome = HandoverGone
			case handoverRelease:
				err = markHandedOver(sb, v.Now)
				res.Outcome = HandoverAdopted
				opts.Progressf("pod/%s: adopted by the kubelet: left running", name)
			}
			if err != nil {
				opts.Progressf("pod/%s: handover: %v", name, err)
				continue // tried again on the next change
			}
			results = append(results, res)
			delete(pending, uid)
		}
	}
	if len(pending) == 0 {
		return results, nil
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		onChanges(watchCtx, rt, map[string]string{}, 500*time.Millisecond, 100*time.Millisecond, nil, func() {
			check()
			mu.Lock()
			left := len(pending)
			mu.Unlock()
			if left == 0 {
				stop()
			}
		})
	}()
	check()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(pending) > 0 {
		var names []string
		for _, sb := range pending {
			names = append(names, sb.Labels[labelPodNamespace]+"/"+sb.Labels[labelPodName])
		}
		return results, fmt.Errorf("not handed over (%v): %s", ctx.Err(), strings.Join(names, ", "))
	}
	return results, nil
}

// handoverChoice is the newest sandbox of each pod to hand over, by UID:
// the named ones (each must exist in scope), or with all every podrun pod
// of the scope not handed over yet.
func handoverChoice(sbs []*runtimeapi.PodSandbox, args []string, all bool, scope podref.Scope) (map[string]*runtimeapi.PodSandbox, error) {
	named, err := podref.Named(sbs, sandboxRef, args, scope)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, sb := range named {
		want[sb.Labels[labelPodUID]] = true
	}
	out := map[string]*runtimeapi.PodSandbox{}
	for _, sb := range sbs {
		uid := sb.Labels[labelPodUID]
		if !want[uid] && (!all || !scope.Has(sb.Annotations[AnnotationRootDir]) || handedOver(sb)) {
			continue
		}
		if cur, ok := out[uid]; !ok || newerSandbox(sb, cur) {
			out[uid] = sb
		}
	}
	return out, nil
}

// podrunReady: a ready sandbox of the pod UID that podrun made.
func podrunReady(all []*runtimeapi.PodSandbox, uid string) bool {
	for _, sb := range all {
		if sb.Labels[LabelManaged] == "true" && sb.Labels[labelPodUID] == uid && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			return true
		}
	}
	return false
}

// hasKubeletCopy: a ready sandbox of the same namespace and pod name as
// podrun's sb that podrun did not make (the kubelet's, whose UID differs).
func hasKubeletCopy(all []*runtimeapi.PodSandbox, sb *runtimeapi.PodSandbox) bool {
	for _, o := range all {
		if o.Labels[LabelManaged] != "true" && o.State == runtimeapi.PodSandboxState_SANDBOX_READY &&
			o.Labels[labelPodName] == sb.Labels[labelPodName] && o.Labels[labelPodNamespace] == sb.Labels[labelPodNamespace] &&
			o.Labels[labelPodUID] != sb.Labels[labelPodUID] {
			return true
		}
	}
	return false
}

// sandboxesOfUID are podrun's sandboxes of the pod UID.
func sandboxesOfUID(all []*runtimeapi.PodSandbox, uid string) []*runtimeapi.PodSandbox {
	var out []*runtimeapi.PodSandbox
	for _, sb := range all {
		if sb.Labels[LabelManaged] == "true" && sb.Labels[labelPodUID] == uid {
			out = append(out, sb)
		}
	}
	return out
}

// kubeletHealthy: the kubelet's healthz answers 200 "ok".
func kubeletHealthy(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	return resp.StatusCode == http.StatusOK && strings.TrimSpace(string(b)) == "ok"
}

// handedOver: the pod's status record says the kubelet has it.
func handedOver(sb *runtimeapi.PodSandbox) bool {
	dir, ok := listedPodDir(sb.Annotations[AnnotationRootDir], sb.Labels[labelPodUID])
	if !ok {
		return false
	}
	rec, err := readStatusRecord(dir)
	return err == nil && rec.HandedOver != nil
}

// markHandedOver records in the pod's data dir that the kubelet has
// adopted it. The data dir stays: the adopted containers mount what podrun
// made there (/etc/hosts, volumes).
func markHandedOver(sb *runtimeapi.PodSandbox, now time.Time) error {
	dir, ok := listedPodDir(sb.Annotations[AnnotationRootDir], sb.Labels[labelPodUID])
	if !ok {
		return fmt.Errorf("the sandbox names no pod data dir")
	}
	rec, err := readStatusRecord(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	rec.HandedOver, rec.Written = &now, now
	return writeStatusRecord(dir, rec)
}
