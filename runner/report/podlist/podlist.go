// Package podlist is `podrun ps`'s reading of pods, as `kubectl get pods`
// reads them: the READY, STATUS and RESTARTS columns worked out from a
// v1.Pod as kubectl's printPod works them out (kubernetes
// pkg/printers/internalversion/printers.go), AGE in kubectl's duration
// format, the table's columns, the rows a watch prints again, and the
// v1.List of -o json|yaml.
//
// It decides and formats only. The pods (podref.Listed) come from
// runner.PodLister (the runtime's podrun pods, their status built by the
// run's own status code) or any other source; cmd_ps.go prints them.
package podlist

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/podrun/podrun/runner/podref"
	"github.com/podrun/podrun/sources/podresources"
)

// Summary is what the table shows of a pod's containers.
type Summary struct {
	Ready, Total int    // READY: ready/total
	Status       string // STATUS
	Restarts     int    // RESTARTS
	// LastRestart is when the container last restarted (the end of its
	// previous run): RESTARTS' "(5s ago)". Zero when none is known.
	LastRestart time.Time
}

// Reasons kubectl's printPod knows by name.
const (
	reasonCompleted       = "Completed"
	reasonPodInitializing = "PodInitializing"
	reasonNodeLost        = "NodeLost" // the node controller's, for pods of an unreachable node
)

// Summarize works out READY, STATUS and RESTARTS as kubectl's printPod
// does, in its order: the phase, or the pod's status.reason (an admission
// rejection, say), or SchedulingGated; then the first init container that
// has not completed (Init:N/M, Init:<reason>, Init:ExitCode:N), sidecars
// counted as containers once started; then, once initialised, the regular
// containers from last to first (the first one's reason wins), with
// "Completed" turned back into Running or NotReady while one still runs;
// and Terminating for a pod being deleted that has not ended.
func Summarize(pod *v1.Pod) Summary {
	st := &pod.Status
	s := Summary{Total: len(pod.Spec.Containers), Status: string(st.Phase)}
	if st.Reason != "" {
		s.Status = st.Reason
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonSchedulingGated {
			s.Status = v1.PodReasonSchedulingGated
		}
	}
	sidecar := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podresources.IsSidecar(c) {
			sidecar[c.Name] = true
			s.Total++
		}
	}

	// Init containers, in order, up to the first that has not completed.
	// Only sidecars' restarts count once the pod is initialised.
	sidecarRestarts, sidecarLast := 0, time.Time{}
	initializing := false
	for i, cs := range st.InitContainerStatuses {
		s.Restarts += int(cs.RestartCount)
		s.LastRestart = later(s.LastRestart, lastFinish(cs))
		if sidecar[cs.Name] {
			sidecarRestarts += int(cs.RestartCount)
			sidecarLast = later(sidecarLast, lastFinish(cs))
		}
		t, w := cs.State.Terminated, cs.State.Waiting
		switch {
		case t != nil && t.ExitCode == 0:
			continue
		case sidecar[cs.Name] && cs.Started != nil && *cs.Started:
			if cs.Ready {
				s.Ready++
			}
			continue
		case t != nil: // the init container failed
			s.Status = "Init:" + terminatedReason(t)
		case w != nil && w.Reason != "" && w.Reason != reasonPodInitializing:
			s.Status = "Init:" + w.Reason
		default:
			s.Status = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || conditionTrue(st, v1.PodInitialized) {
		s.Restarts, s.LastRestart = sidecarRestarts, sidecarLast
		hasRunning, errorReason := false, ""
		for i := len(st.ContainerStatuses) - 1; i >= 0; i-- {
			cs := st.ContainerStatuses[i]
			s.Restarts += int(cs.RestartCount)
			s.LastRestart = later(s.LastRestart, lastFinish(cs))
			switch t, w := cs.State.Terminated, cs.State.Waiting; {
			case w != nil && w.Reason != "":
				s.Status = w.Reason
			case t != nil:
				s.Status = terminatedReason(t)
				if t.ExitCode != 0 {
					errorReason = s.Status
				}
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				s.Ready++
			}
		}
		// A completed container beside one that still runs: the pod runs.
		if s.Status == reasonCompleted {
			switch {
			case hasRunning && conditionTrue(st, v1.PodReady):
				s.Status = string(v1.PodRunning)
			case errorReason != "":
				s.Status = errorReason
			case hasRunning:
				s.Status = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case st.Reason == reasonNodeLost:
			s.Status = "Unknown"
		case st.Phase != v1.PodSucceeded && st.Phase != v1.PodFailed:
			s.Status = "Terminating"
		}
	}
	return s
}

// terminatedReason is a terminated container's reason, or Signal:N or
// ExitCode:N without one.
func terminatedReason(t *v1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	}
	return fmt.Sprintf("ExitCode:%d", t.ExitCode)
}

// lastFinish is when the container's previous run ended, zero without one.
func lastFinish(cs v1.ContainerStatus) time.Time {
	if t := cs.LastTerminationState.Terminated; t != nil {
		return t.FinishedAt.Time
	}
	return time.Time{}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func conditionTrue(st *v1.PodStatus, t v1.PodConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// ReadyText is the READY column: ready/total.
func (s Summary) ReadyText() string { return fmt.Sprintf("%d/%d", s.Ready, s.Total) }

// RestartsText is the RESTARTS column: the count, and how long ago the
// last restart was when one is known ("3 (12s ago)").
func (s Summary) RestartsText(now time.Time) string {
	if s.Restarts != 0 && !s.LastRestart.IsZero() {
		return fmt.Sprintf("%d (%s ago)", s.Restarts, Age(now.Sub(s.LastRestart)))
	}
	return strconv.Itoa(s.Restarts)
}

// Age is kubectl's duration format (apimachinery's HumanDuration, which
// kubectl's printers use): 45s, 119s, 2m5s, 9m59s, 10m, 2h59m... 3h, 7h59m,
// 8h, 2d, 2d23h, 3d, 1y...; "<invalid>" for a time more than 2 s ahead.
func Age(d time.Duration) string { return duration.HumanDuration(d) }

// since is Age from t to now, "<unknown>" for a zero t, as kubectl's
// translateTimestampSince.
func since(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return Age(now.Sub(t.Time))
}

// Columns says which columns the table has.
type Columns struct {
	// Namespace: a NAMESPACE column first, when the pods span more than
	// one namespace (kubectl shows it with --all-namespaces).
	Namespace bool
	// Wide (-o wide) adds NODE, RUN and OWNER.
	Wide bool
	// Root adds ROOT, the pod's root dir, after them: with -o wide when
	// the scope is every root dir (--all-roots).
	Root bool
}

// ColumnsFor is the columns of a table of items: NAMESPACE when they span
// more than one namespace.
func ColumnsFor(items []podref.Listed, wide bool) Columns {
	c := Columns{Wide: wide}
	for _, it := range items {
		if it.Pod.Namespace != items[0].Pod.Namespace {
			c.Namespace = true
		}
	}
	return c
}

// Header is the table's header row.
func (c Columns) Header() []string {
	h := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP"}
	if c.Namespace {
		h = append([]string{"NAMESPACE"}, h...)
	}
	if c.Wide {
		h = append(h, "NODE", "RUN", "OWNER")
	}
	if c.Root {
		h = append(h, "ROOT")
	}
	return h
}

// Row is the item's row at time now.
func (c Columns) Row(it podref.Listed, now time.Time) []string {
	pod := it.Pod
	s := Summarize(pod)
	r := []string{pod.Name, s.ReadyText(), s.Status, s.RestartsText(now), since(pod.CreationTimestamp, now), orNone(podIP(pod))}
	if c.Namespace {
		r = append([]string{pod.Namespace}, r...)
	}
	if c.Wide {
		r = append(r, orNone(pod.Spec.NodeName), orNone(it.Run), orNone(it.Owner))
	}
	if c.Root {
		r = append(r, orNone(it.Root))
	}
	return r
}

// podIP is the pod's first IP, as kubectl's IP column.
func podIP(pod *v1.Pod) string {
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// List is the v1.List of the pods, as `kubectl get pods -o json` prints
// it: apiVersion v1, kind List, each item a v1 Pod.
func List(pods []*v1.Pod) *v1.List {
	l := &v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: []k8sruntime.RawExtension{}}
	for _, p := range pods {
		l.Items = append(l.Items, k8sruntime.RawExtension{Object: WithKind(p)})
	}
	return l
}

// WithKind is a copy of the pod with its apiVersion and kind set.
func WithKind(pod *v1.Pod) *v1.Pod {
	p := pod.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	return p
}

// Pods is the items' pods.
func Pods(items []podref.Listed) []*v1.Pod {
	pods := make([]*v1.Pod, len(items))
	for i, it := range items {
		pods[i] = it.Pod
	}
	return pods
}

// Table lays rows out in columns as kubectl's table printer does: each
// cell but the last padded to its column's width, the widest cell plus 3
// spaces and at least 6. It remembers the widths from one call to the
// next and only widens them, so that a watch's later rows line up with
// the header above them.
type Table struct {
	widths []int
}

const (
	tableMinWidth = 6
	tablePadding  = 3
)

// Lines lays out rows, one line each (without the newline).
func (t *Table) Lines(rows [][]string) []string {
	for _, r := range rows {
		for i, cell := range r[:max(len(r)-1, 0)] {
			if i == len(t.widths) {
				t.widths = append(t.widths, tableMinWidth)
			}
			t.widths[i] = max(t.widths[i], len(cell)+tablePadding)
		}
	}
	lines := make([]string, len(rows))
	for n, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			b.WriteString(cell)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", t.widths[i]-len(cell)))
			}
		}
		lines[n] = b.String()
	}
	return lines
}
