package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Labels the kubelet puts on every sandbox and container (kuberuntime/labels.go).
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"

	annotationRestartCount              = "io.kubernetes.container.restartCount"
	annotationTerminationMessagePath    = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy  = "io.kubernetes.container.terminationMessagePolicy"
	annotationPodTerminationGracePeriod = "io.kubernetes.pod.terminationGracePeriod"
	annotationContainerPorts            = "io.kubernetes.container.ports"
	// annotationPreStopHandler is the container's preStop hook as JSON, as
	// the kubelet records it, so that a stop without the pod's spec
	// (`podrun down`) still runs it.
	annotationPreStopHandler = "io.kubernetes.container.preStopHandler"
)

// formatPod names a pod as the kubelet's format.Pod does in messages and
// events: NAME_NAMESPACE(UID).
func formatPod(name, namespace, uid string) string {
	return fmt.Sprintf("%s_%s(%s)", name, namespace, uid)
}

// Labels that identify what podrun created, which run created it and which
// process owns it. A later run reclaims what belongs to a process that is gone.
// The exported ones are those the e2e tests read.
const (
	LabelManaged  = "io.podrun.managed"   // "true" on every sandbox and container podrun creates
	labelRun      = "io.podrun.run"       // the run ID
	LabelPID      = "io.podrun.pid"       // the owning podrun's process ID
	labelPIDStart = "io.podrun.pid-start" // its start time in clock ticks since boot (guards against PID reuse)
	labelDetached = "io.podrun.detached"  // "true" when started with --detach: never reclaimed

	// AnnotationRootDir records the --root-dir of the run, so that `podrun
	// down` and reclaiming find the pod's data dir.
	AnnotationRootDir = "io.podrun.root-dir"
	// annotationLogDir records the pod's log directory.
	annotationLogDir = "io.podrun.log-dir"
	// annotationCgroupParent records the pod's cgroup (the sandbox's
	// CgroupParent), so that `podrun down` and reclaiming remove it.
	annotationCgroupParent = "io.podrun.cgroup-parent"
	// annotationSidecar marks a restartable init container (a sidecar)
	// with its index among the pod's init containers, so that `podrun
	// down` stops the sidecars after the regular containers, in reverse
	// order, as the kubelet does.
	annotationSidecar = "io.podrun.sidecar"
	// annotationUIDGiven marks a pod whose UID podrun gave (its manifest
	// has no metadata.uid), which no kubelet can adopt: `podrun handover`
	// waits for the kubelet's copy or its kill. Sandboxes of older podruns
	// lack it and are judged by the settle time alone.
	annotationUIDGiven = "io.podrun.uid-given"
)

// Owner identifies a podrun process.
type Owner struct {
	RunID    string
	PID      int
	PIDStart uint64
	Detached bool
}

// newOwner returns the identity of this process for a new run.
func newOwner(detached bool) (Owner, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Owner{}, err
	}
	start, err := processStartTime(os.Getpid())
	if err != nil {
		return Owner{}, fmt.Errorf("reading this process's start time: %w", err)
	}
	return Owner{RunID: hex.EncodeToString(b[:]), PID: os.Getpid(), PIDStart: start, Detached: detached}, nil
}

// labels returns the podrun labels of the owner.
func (o Owner) labels() map[string]string {
	l := map[string]string{
		LabelManaged:  "true",
		labelRun:      o.RunID,
		LabelPID:      strconv.Itoa(o.PID),
		labelPIDStart: strconv.FormatUint(o.PIDStart, 10),
	}
	if o.Detached {
		l[labelDetached] = "true"
	}
	return l
}

// ownerFromLabels reads an owner back from a sandbox's labels.
func ownerFromLabels(l map[string]string) Owner {
	pid, _ := strconv.Atoi(l[LabelPID])
	start, _ := strconv.ParseUint(l[labelPIDStart], 10, 64)
	return Owner{RunID: l[labelRun], PID: pid, PIDStart: start, Detached: l[labelDetached] == "true"}
}

// Alive reports whether the owning process still runs: the PID exists and
// started at the recorded time.
func (o Owner) Alive() bool {
	if o.PID <= 0 {
		return false
	}
	start, err := processStartTime(o.PID)
	if err != nil {
		return false
	}
	return o.PIDStart == 0 || start == o.PIDStart
}

// processStartTime reads field 22 (starttime) of /proc/<pid>/stat.
func processStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatStartTime(string(b))
}

// parseStatStartTime parses the starttime field of a /proc/<pid>/stat line.
// The command name (field 2) may contain spaces and parentheses, so fields
// are counted from the last ')'.
func parseStatStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); starttime is field 22.
	const idx = 22 - 3
	if len(fields) <= idx {
		return 0, fmt.Errorf("malformed stat line: %d fields", len(fields)+2)
	}
	return strconv.ParseUint(fields[idx], 10, 64)
}
