package runner

// `podrun ps`: every podrun pod on the node — of any run and any
// --root-dir, attached, detached or orphaned — as a v1.Pod: the manifest
// podrun ran (records.go) with the status a run generates, from the
// runtime's view of it (the observer's poll, as a run observes) and the
// pod's status record, by podStatusFor. A pod no podrun looks after any
// more says so (unsupervisedStatus).

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/podref"
	"github.com/podrun/podrun/sources/podresources"
)

// Reasons of the conditions of a pod no podrun probes any more.
const reasonReadinessNotProbed = "ReadinessNotProbed"

// PodLister lists podrun's pods for `podrun ps`. One lister serves a watch:
// it asks the runtime again only for what changed (a container's status
// when its state changed, a sandbox's IPs once).
type PodLister struct {
	rt        Runtime
	obs       *observer
	ips       map[string][]string // sandbox ID → pod IPs
	manifests map[string]*v1.Pod  // data dir → the pod podrun ran
	alive     func(Owner) bool
}

// NewPodLister returns a lister of every podrun pod on the runtime.
func NewPodLister(rt Runtime) *PodLister {
	return &PodLister{
		rt: rt, obs: newObserver(rt, map[string]string{LabelManaged: "true"}),
		ips: map[string][]string{}, manifests: map[string]*v1.Pod{},
		alive: Owner.Alive,
	}
}

// List returns every podrun pod, one per pod UID, sorted by namespace and
// name.
func (l *PodLister) List(ctx context.Context) ([]podref.Listed, error) {
	if err := l.obs.poll(ctx); err != nil {
		return nil, fmt.Errorf("listing podrun's pods: %w", err)
	}
	byUID := map[string][]*runtimeapi.PodSandbox{}
	seen := map[string]bool{}
	for _, sb := range l.obs.sandboxList() {
		uid := sb.Labels[labelPodUID]
		byUID[uid] = append(byUID[uid], sb)
		seen[sb.Id] = true
	}
	for id := range l.ips {
		if !seen[id] {
			delete(l.ips, id)
		}
	}
	items := make([]podref.Listed, 0, len(byUID))
	dirs := map[string]bool{}
	for uid, sbs := range byUID {
		sort.Slice(sbs, func(i, j int) bool { return newerSandbox(sbs[i], sbs[j]) })
		for _, sb := range sbs {
			l.learnIPs(ctx, sb)
		}
		it, dir := l.item(uid, sbs)
		items = append(items, it)
		dirs[dir] = true
	}
	for dir := range l.manifests {
		if !dirs[dir] {
			delete(l.manifests, dir) // the pod is gone
		}
	}
	podref.Sort(items)
	return items, nil
}

func newerSandbox(a, b *runtimeapi.PodSandbox) bool {
	if a.GetMetadata().GetAttempt() != b.GetMetadata().GetAttempt() {
		return a.GetMetadata().GetAttempt() > b.GetMetadata().GetAttempt()
	}
	return a.CreatedAt > b.CreatedAt
}

// learnIPs asks a ready sandbox's IPs once, as a run learns them when it
// creates the sandbox; a stopped sandbox has none.
func (l *PodLister) learnIPs(ctx context.Context, sb *runtimeapi.PodSandbox) {
	if _, ok := l.ips[sb.Id]; ok {
		return
	}
	if sb.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		l.ips[sb.Id] = nil
		return
	}
	st, err := l.rt.PodSandboxStatus(ctx, sb.Id, false)
	if err != nil {
		return // gone meanwhile, or a transient error: asked again next time
	}
	l.ips[sb.Id] = sandboxIPs(st)
}

// item is the pod of sandboxes sbs (newest first) as ps lists it, and its
// data dir ("" when the sandbox names none).
func (l *PodLister) item(uid string, sbs []*runtimeapi.PodSandbox) (podref.Listed, string) {
	sb := sbs[0]
	owner := ownerFromLabels(sb.Labels)
	in := listInput{
		Namespace: sb.Labels[labelPodNamespace], Name: sb.Labels[labelPodName], UID: uid,
		RootDir: sb.Annotations[AnnotationRootDir], Owner: owner, Alive: l.alive(owner),
		Status: l.obs.runtimeStatus(uid, l.ips), RuntimeName: l.rt.DialVersion().GetRuntimeName(),
		FirstSandbox: time.Unix(0, sbs[len(sbs)-1].CreatedAt),
	}
	dir, ok := listedPodDir(in.RootDir, uid)
	recErr := error(os.ErrNotExist)
	if !ok {
		in.ManifestErr = fmt.Errorf("the sandbox names no pod data dir (root dir %q, uid %q)", in.RootDir, uid)
	} else {
		in.Manifest, in.ManifestErr = l.manifest(dir)
		// None yet, or unreadable: what the runtime says alone.
		in.Record, recErr = readStatusRecord(dir)
	}
	// A -d run is the pod's owner until its detach point (podOwner).
	in.Owner.Detached = detachedFor(owner.Detached, in.Record, recErr)
	return podref.Listed{Pod: listedPod(in), Run: owner.RunID, Owner: listedOwner(in), Root: in.RootDir}, dir
}

// listedOwner is the OWNER column: the kubelet for a pod handed over to it
// (podrun handover), else ownerText.
func listedOwner(in listInput) string {
	if in.Record.HandedOver != nil {
		return ownerKubelet
	}
	return ownerText(in.Owner.PID, in.Alive, in.Owner.Detached)
}

// ownerKubelet is the OWNER of a pod handed over to a kubelet (podrun
// handover): the kubelet runs it as its own.
const ownerKubelet = "kubelet"

// ownerText is the OWNER column: "pid N" while the podrun that runs the
// pod lives (it probes, restarts and will tear the pod down), "detached"
// for a pod whose podrun left it running (--detach) and exited, and "pid N
// (gone)" for one whose podrun died without detaching (the next run
// reclaims it).
func ownerText(pid int, alive, detached bool) string {
	switch {
	case alive:
		return fmt.Sprintf("pid %d", pid)
	case detached:
		return "detached"
	}
	return fmt.Sprintf("pid %d (gone)", pid)
}

// manifest reads the pod podrun ran from its data dir, once.
func (l *PodLister) manifest(dir string) (*v1.Pod, error) {
	if p, ok := l.manifests[dir]; ok {
		return p, nil
	}
	p, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	l.manifests[dir] = p
	return p, nil
}

// listInput is everything listedPod decides from.
type listInput struct {
	Namespace, Name, UID string // the sandbox's labels
	RootDir              string
	Manifest             *v1.Pod // nil: ManifestErr says why
	ManifestErr          error
	Record               statusRecord // zero when the pod has none
	Status               *runtimeStatus
	RuntimeName          string
	Owner                Owner
	Alive                bool      // the owner's process runs
	FirstSandbox         time.Time // when the pod's first sandbox was made
}

// listedPod is the pod as ps shows it: the manifest podrun ran with the
// status podStatusFor generates from the runtime's view and the pod's
// status record, its creationTimestamp the time podrun took it on, its
// deletionTimestamp set while podrun tears it down, and the run, root dir,
// owner and pod cgroup (with its driver and the driver's source) in
// annotations. A pod no podrun looks after any more
// (detached, or its podrun died) is reported as nobody supervises it: its
// exited containers stay exited (no waiting reason, a terminal phase), and
// its readiness and message say what is no longer probed
// (unsupervisedStatus).
func listedPod(in listInput) *v1.Pod {
	rec := in.Record
	start := rec.StartTime
	if start.IsZero() {
		start = in.FirstSandbox
	}
	var pod *v1.Pod
	if in.Manifest == nil {
		// Without the manifest there is no spec to judge the containers by.
		pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, UID: types.UID(in.UID)}}
		pod.Status = v1.PodStatus{Phase: v1.PodUnknown,
			Message: fmt.Sprintf("podrun cannot read the pod's manifest: %v", in.ManifestErr)}
		if len(in.Status.Sandboxes) > 0 {
			for _, ip := range in.Status.Sandboxes[0].IPs {
				pod.Status.PodIPs = append(pod.Status.PodIPs, v1.PodIP{IP: ip})
			}
			if len(pod.Status.PodIPs) > 0 {
				pod.Status.PodIP = pod.Status.PodIPs[0].IP
			}
		}
	} else {
		pod = in.Manifest.DeepCopy()
		// Unsupervised, every container ending is final (Terminal): one
		// that ran and exited is not waiting for a restart; one that never
		// ran keeps its reason (ImagePullBackOff), still why it did not.
		st := podStatusFor(statusInput{
			Pod: pod, Status: in.Status, Reasons: rec.Reasons, Probes: rec.probeResults(),
			RuntimeName: in.RuntimeName, HostIP: rec.HostIP, StartTime: start, Terminal: !in.Alive,
		})
		keepTransitions(&st, rec.Conditions)
		if !in.Alive {
			unsupervisedStatus(&st, pod, in.Status, rec, in.Owner)
		}
		pod.Status = st
	}
	pod.TypeMeta = metav1.TypeMeta{}
	pod.CreationTimestamp = metav1.NewTime(start)
	if rec.Deleting != nil {
		t := metav1.NewTime(*rec.Deleting)
		pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &t, rec.GracePeriod
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annotationListedRun] = in.Owner.RunID
	pod.Annotations[AnnotationRootDir] = in.RootDir
	pod.Annotations[annotationListedOwner] = listedOwner(in)
	if rec.Cgroup != "" {
		pod.Annotations[annotationCgroupParent] = rec.Cgroup
		pod.Annotations[annotationListedCgroupDriver] = rec.CgroupDriver
		pod.Annotations[annotationListedCgroupDriverSource] = rec.CgroupDriverSource
	}
	return pod
}

// keepTransitions gives each condition the lastTransitionTime the run
// recorded while its status is still the one recorded; a condition that
// changed since has none (nobody saw when).
func keepTransitions(st *v1.PodStatus, recorded []v1.PodCondition) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		for _, r := range recorded {
			if r.Type == c.Type && r.Status == c.Status {
				c.LastTransitionTime = r.LastTransitionTime
			}
		}
	}
}

// unsupervisedStatus says, in a status generated for a pod no podrun looks
// after any more, what nobody does for it: status.message says that its
// containers are no longer probed or restarted; where readiness rests on a
// readiness probe's result (a running container that has one), that result
// is the last one podrun recorded, and the Ready and ContainersReady
// conditions say so — reason ReadinessNotProbed, the results and when they
// were recorded in the message, lastProbeTime the latest of them — unless
// another container's state, which is current, makes them false.
func unsupervisedStatus(st *v1.PodStatus, pod *v1.Pod, rs *runtimeStatus, rec statusRecord, o Owner) {
	since := ""
	if !rec.Written.IsZero() {
		since = " at " + rec.Written.UTC().Format(time.RFC3339)
	}
	why := fmt.Sprintf("podrun (pid %d) left the pod running%s (--detach)", o.PID, since)
	if !o.Detached {
		why = fmt.Sprintf("the podrun that ran the pod (pid %d) is gone, last heard of%s", o.PID, since)
	}
	st.Message = why + ": nothing probes its containers or restarts them since"
	if rec.HandedOver != nil {
		// The kubelet probes and restarts it; podrun sees only the runtime.
		st.Message = "handed over to the kubelet at " + rec.HandedOver.UTC().Format(time.RFC3339) +
			": the kubelet probes and restarts its containers; podrun shows the runtime's view and the readiness it last saw"
	}

	var probed []string // running containers whose readiness is a recorded result
	var last time.Time
	byName := map[string]bool{}
	var containers []*v1.Container
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podresources.IsSidecar(c) {
			containers = append(containers, c)
		}
	}
	for i := range pod.Spec.Containers {
		containers = append(containers, &pod.Spec.Containers[i])
	}
	for _, c := range containers {
		cur := rs.latest(c.Name)
		if c.ReadinessProbe == nil || cur == nil || cur.State != stateRunning {
			continue
		}
		byName[c.Name] = true
		rp, ok := rec.Readiness[cur.ID]
		if !ok {
			probed = append(probed, c.Name+": not probed yet")
			continue
		}
		probed = append(probed, fmt.Sprintf("%s: %s at %s", c.Name, rp.Result, rp.Since.UTC().Format(time.RFC3339)))
		if rp.Since.After(last) {
			last = rp.Since
		}
	}
	if len(probed) == 0 {
		return
	}
	note := fmt.Sprintf("readiness as podrun last recorded it [%s]; not probed since: %s", strings.Join(probed, ", "), why)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != v1.PodReady && c.Type != v1.ContainersReady {
			continue
		}
		if !last.IsZero() {
			c.LastProbeTime = metav1.NewTime(last)
		}
		if c.Status == v1.ConditionTrue || c.Reason == reasonContainersNotReady && onlyThese(unreadyNames(c.Message), byName) {
			c.Reason, c.Message = reasonReadinessNotProbed, note
		} else if c.Message != "" {
			c.Message += "; " + note
		} else {
			c.Message = note
		}
	}
}

// unreadyNames reads the container names of a ContainersNotReady message
// ("containers with unready status: [a b]").
func unreadyNames(msg string) []string {
	i, j := strings.IndexByte(msg, '['), strings.LastIndexByte(msg, ']')
	if i < 0 || j < i {
		return nil
	}
	return strings.Fields(msg[i+1 : j])
}

func onlyThese(names []string, set map[string]bool) bool {
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return len(names) > 0
}

// Changes signals when podrun's pods may have changed: at once on a
// container event of a podrun pod where the runtime streams events, and
// every interval in any case (probe results and waiting reasons, in the
// status records, change without an event; a runtime without events is
// polled). It is closed when ctx ends.
func (l *PodLister) Changes(ctx context.Context, every time.Duration) <-chan struct{} {
	out := make(chan struct{}, 1)
	signal := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(out)
		onChanges(ctx, l.rt, l.obs.sel, every, every, nil, signal)
	}()
	return out
}
