package runner

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/credentials"
	"github.com/podrun/podrun/sources/imageref"
)

// Pulls ahead (issue 18): when a run starts, the images its pods will need
// are pulled at once, a few at a time, while the run reclaims, makes data
// dirs, cgroups, volumes, the sandbox and its network. A container still
// waits for its own image at its turn, and what the user sees there is
// what the kubelet shows: Pulling and Pulled, or ErrImagePull and
// ImagePullBackOff, for that container at its turn (ensureImage). An
// ahead pull that failed is not reported before then: a later container's
// missing image does not fail the pod before the earlier containers ran.
//
// planPullsAhead decides what to pull (pure); prefetcher carries it out.

// pullAheadLimit is how many images a run pulls at once (docs/benchmark.md,
// Pulls ahead: the figures it was chosen from).
const pullAheadLimit = 3

// runtimeHandlerAnnotation is the sandbox annotation containerd picks a
// pull's snapshotter by (CRI PullImage's sandbox_config): pulls for pods
// that differ in it are different pulls.
const runtimeHandlerAnnotation = "io.containerd.cri.runtime-handler"

// aheadPull is one image a run pulls ahead, for every container that
// pulls it with the same credentials into the same snapshotter.
type aheadPull struct {
	Image   string                   // with the default tag
	Always  bool                     // some container pulls it with imagePullPolicy Always
	Creds   []credentials.Credential // the first pod's, in the order a pull tries them
	Handler string                   // the pods' runtimeHandlerAnnotation
	// PullConfig is the sandbox_config of the pull: the first pod's
	// metadata and annotations (its sandbox does not exist yet).
	PullConfig *runtimeapi.PodSandboxConfig
	Holders    []int // the indexes, in the pods planned, of the pods that need it
}

// aheadKey tells the ahead pulls apart: the image, the credentials
// (secrets compared, never printed) and the snapshotter's handler.
type aheadKey struct {
	image, creds, handler string
}

func keyOf(image string, creds []credentials.Credential, handler string) aheadKey {
	var b strings.Builder
	for _, c := range creds {
		for _, f := range []string{c.Username, c.Password, c.IdentityToken, c.RegistryToken} {
			b.WriteString(f)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return aheadKey{image: image, creds: b.String(), handler: handler}
}

// pullCredentials are the credentials a pull of image tries for pod: its
// imagePullSecrets' from the run's Secrets, then the node's; missing names
// the pull secrets the run lacks.
func pullCredentials(pod *v1.Pod, image string, secrets []*v1.Secret, node []*credentials.Keyring) (creds []credentials.Credential, missing []string, err error) {
	podRing, missing, err := credentials.PodKeyring(pod, secrets)
	if err != nil {
		return nil, nil, err
	}
	creds, err = credentials.AuthsFor(image, append([]*credentials.Keyring{podRing}, node...))
	return creds, missing, err
}

// pullsAhead reports whether a container's image is pulled ahead: not
// with imagePullPolicy Never, and not for an image that is no reference
// (refused before the run).
func pullsAhead(c *v1.Container) bool {
	return c.ImagePullPolicy != v1.PullNever && invalidImageName(c.Image) == nil
}

// planPullsAhead decides which images a run pulls ahead, in the order the
// pods will want them: every pod's first container (image volumes first,
// then init containers), then every pod's second, and so on. Each image is pulled once
// for all the containers that pull it with the same credentials into the
// same snapshotter; a container with imagePullPolicy Never pulls nothing,
// and a pod whose pull secrets do not parse pulls nothing ahead (its
// containers report it at their turn). Whether an IfNotPresent image is
// present is asked when its pull's turn comes (prefetcher).
func planPullsAhead(pods []*v1.Pod, secrets []*v1.Secret, node []*credentials.Keyring) []aheadPull {
	var plan []aheadPull
	at := map[aheadKey]int{}
	lists := make([][]v1.Container, len(pods))
	longest := 0
	for i, pod := range pods {
		// The image volumes first: the kubelet pulls them before it
		// starts the pod's first container.
		for _, v := range pod.Spec.Volumes {
			if v.Image != nil {
				lists[i] = append(lists[i], v1.Container{Name: imageVolumeTurn(v.Name), Image: v.Image.Reference, ImagePullPolicy: v.Image.PullPolicy})
			}
		}
		lists[i] = append(append(lists[i], pod.Spec.InitContainers...), pod.Spec.Containers...)
		longest = max(longest, len(lists[i]))
	}
	for n := range longest {
		for i, pod := range pods {
			if n >= len(lists[i]) || !pullsAhead(&lists[i][n]) {
				continue
			}
			c := &lists[i][n]
			image := imageref.WithDefaultTag(c.Image)
			creds, _, err := pullCredentials(pod, image, secrets, node)
			if err != nil {
				continue
			}
			handler := pod.Annotations[runtimeHandlerAnnotation]
			k := keyOf(image, creds, handler)
			j, ok := at[k]
			if !ok {
				j = len(plan)
				at[k] = j
				plan = append(plan, aheadPull{Image: image, Creds: creds, Handler: handler, PullConfig: pullConfig(pod)})
			}
			a := &plan[j]
			a.Always = a.Always || c.ImagePullPolicy == v1.PullAlways
			if !slices.Contains(a.Holders, i) {
				a.Holders = append(a.Holders, i)
			}
		}
	}
	return plan
}

// pullConfig is the sandbox_config of an ahead pull for pod: what a
// runtime reads of it for a pull (containerd: the annotations; the
// metadata for its logs), before the sandbox exists.
func pullConfig(pod *v1.Pod) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:    &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID)},
		Annotations: maps.Clone(pod.Annotations),
	}
}

// aheadResult is what an ahead pull found, set before its done closes.
type aheadResult struct {
	present bool // the runtime had the image before the pull (ImageStatus)
	// status is ImageStatus's answer when present: the container's turn
	// takes it rather than asking again (ensureImage).
	status  *runtimeapi.Image
	pulled  bool // a pull was made: ref or err is its outcome
	cut     bool // the run cancelled it before it ended
	ref     string
	err     error     // the pull's, or ImageStatus's (pulled false)
	queued  time.Time // when the run asked for it
	started time.Time // when the pull began
	ended   time.Time
}

// aheadEntry is one ahead pull under way or done.
type aheadEntry struct {
	aheadPull
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// begun closes when the pull is sent to the runtime (began is then
	// set), or when the entry ends without a pull.
	begun chan struct{}
	began time.Time
	after *aheadEntry // the entry before it in the plan; nil for the first
	aheadResult
	holders int // pods that may still need it; guarded by prefetcher.mu
}

// prefetcher carries out a run's plan: pullAheadLimit workers take the
// pulls in the plan's order, each sent pullHeadStart after the one
// before it (waitHeadStart). An entry is cancelled once no pod that needs
// it syncs any more (release), every entry when the run ends (stop).
type prefetcher struct {
	rt      Runtime
	now     func() time.Time
	entries map[aheadKey]*aheadEntry
	byPod   map[int][]*aheadEntry
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
}

// startPrefetch starts the plan's pulls under ctx, limit at a time.
func startPrefetch(ctx context.Context, rt Runtime, now func() time.Time, plan []aheadPull, limit int) *prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	f := &prefetcher{rt: rt, now: now, entries: map[aheadKey]*aheadEntry{}, byPod: map[int][]*aheadEntry{}, cancel: cancel}
	queue := make(chan *aheadEntry, len(plan))
	var prev *aheadEntry
	for _, a := range plan {
		e := &aheadEntry{aheadPull: a, done: make(chan struct{}), begun: make(chan struct{}), after: prev, holders: len(a.Holders)}
		prev = e
		e.ctx, e.cancel = context.WithCancel(ctx)
		e.queued = now()
		f.entries[keyOf(a.Image, a.Creds, a.Handler)] = e
		for _, h := range a.Holders {
			f.byPod[h] = append(f.byPod[h], e)
		}
		queue <- e
	}
	close(queue)
	for range min(limit, len(plan)) {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for e := range queue {
				f.waitHeadStart(e)
				f.pull(e)
			}
		}()
	}
	return f
}

// pull carries out one ahead pull: ImageStatus, then, unless every
// container takes a present image as it is (IfNotPresent), the pull.
func (f *prefetcher) pull(e *aheadEntry) {
	defer close(e.done)
	defer e.cancel()
	begin := sync.OnceFunc(func() { close(e.begun) })
	defer begin()
	if e.err = e.ctx.Err(); e.err != nil {
		e.cut = true
		return
	}
	st, err := f.rt.ImageStatus(e.ctx, e.Image)
	if err != nil {
		e.err = err
		return
	}
	e.present, e.status = st != nil, st
	if e.present && !e.Always {
		return
	}
	e.pulled, e.started = true, f.now()
	e.began = time.Now() // the wall clock waitHeadStart's timer runs on
	begin()
	e.ref, e.err = credentials.Pull(e.ctx, f.rt, e.Image, e.Creds, e.PullConfig)
	e.ended, e.cut = f.now(), e.ctx.Err() != nil
}

// pullHeadStart is how long an ahead pull is under way before the next
// one in the plan is sent. A runtime whose download slots are shared by
// all its pulls (containerd 2.x's max_concurrent_downloads) serves the
// layers in the order they ask for a slot; sent at the same instant, the
// pulls' layers take the slots in an order of their own, and the image
// the first container needs may come last. The head start puts its
// layers first in that queue, so the init container runs while the
// later images download. 150 ms is the manifest's round trips on a
// remote link, after which the first pull's layers are queued
// (docs/benchmark.md, "Pulls ahead": the figures it was chosen from).
const pullHeadStart = 150 * time.Millisecond

// waitHeadStart holds e until the pull before it in the plan has been
// under way for pullHeadStart, has ended without a pull (its image was
// there) or ended, or the run cancelled e.
func (f *prefetcher) waitHeadStart(e *aheadEntry) {
	if e.after == nil {
		return
	}
	select {
	case <-e.after.begun:
	case <-e.ctx.Done():
		return
	}
	if e.after.began.IsZero() {
		return
	}
	t := time.NewTimer(time.Until(e.after.began.Add(pullHeadStart)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.after.done:
	case <-e.ctx.Done():
	}
}

// lookup is the ahead pull of image with creds for pod, nil if none.
func (f *prefetcher) lookup(pod *v1.Pod, image string, creds []credentials.Credential) *aheadEntry {
	if f == nil {
		return nil
	}
	return f.entries[keyOf(image, creds, pod.Annotations[runtimeHandlerAnnotation])]
}

// release says that the planned pod at index i no longer syncs: its
// ahead pulls that no other pod needs are cancelled.
func (f *prefetcher) release(i int) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.byPod[i] {
		if e.holders--; e.holders == 0 {
			e.cancel()
		}
	}
	delete(f.byPod, i)
}

// stop cancels the pulls still under way or queued and waits for the
// workers to return.
func (f *prefetcher) stop() {
	if f == nil {
		return
	}
	f.cancel()
	f.wg.Wait()
}
