package runner

// The on-node record format: all that podrun leaves on a node for another
// podrun process to read — the labels and annotations on the sandboxes and
// containers it creates (the runtime keeps them), the annotations on the
// pods `podrun ps` lists, and the files of each pod's data dir. The podrun
// that reads a record may be older or newer than the one that wrote it: a
// detached pod outlives its podrun, and ps, down, handover, logs, exec and
// a run's reclaim read the records of whichever podrun made the pod. Each
// key and record below says who reads it and what a reader does when it
// is missing (a podrun from before it wrote none).
//
// The compatibility rules, which every change here keeps:
//
//   - A key or a field, once written, keeps its name, its encoding and its
//     meaning: a new meaning is a new key.
//   - A reader takes a missing key or field as its comment says (the zero
//     value, or a fallback), never as an error; a label or annotation
//     whose value does not parse counts as missing.
//   - A reader ignores keys and fields it does not know (labels and
//     annotations are looked up by name, encoding/json drops unknown
//     fields): a newer podrun may add keys, and an older one reads what it
//     knows.
//   - A podrun that rewrites a record it read (the status record:
//     markDeleting for `podrun down`, markHandedOver for `podrun
//     handover`) drops the fields it does not know: a new field of the
//     status record must be one whose loss, by an older down or handover
//     rewriting it, does no harm.
//   - The io.kubernetes.* keys are the kubelet's (kuberuntime/labels.go),
//     in its encoding: a kubelet adopting podrun's pods (podrun handover)
//     reads them as its own.
//   - The owner record's owner fields are keyed by Owner's Go field names
//     (RunID, PID, PIDStart, Detached): renaming one renames the key.
//
// The code that writes and reads each record back sits here too: the
// owner's labels, the containers annotation, the data dir's files.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/sources/apijson"
)

// The labels of every sandbox and container podrun creates, which the
// runtime filters by (ListPodSandbox, ListContainers).
const (
	// The kubelet's (podLabels): the pod's name, namespace and UID, on
	// sandboxes and containers. Always written; a sandbox without a UID
	// names no data dir (listedPodDir).
	labelPodName      = "io.kubernetes.pod.name"
	labelPodNamespace = "io.kubernetes.pod.namespace"
	labelPodUID       = "io.kubernetes.pod.uid"
	// labelContainerName, the kubelet's, is a container's name. Missing:
	// the name in the container's CRI metadata.
	labelContainerName = "io.kubernetes.container.name"

	// LabelManaged "true" is on every sandbox and container podrun
	// creates: what every podrun command finds podrun's pods by. A sandbox
	// without it is not podrun's (a kubelet's): no podrun touches it.
	// Exported, as LabelPID and AnnotationRootDir: the e2e harness reads
	// them.
	LabelManaged = "io.podrun.managed"
	// labelRun is the run's ID (Owner.RunID): a run observes its own pods
	// by it, and ps shows it (RUN). Missing: "".
	labelRun = "io.podrun.run"
	// LabelPID and labelPIDStart are the owning podrun's process ID and its
	// start time in clock ticks since boot, which guards against PID reuse
	// (Owner.Alive). A PID missing is 0: the owner is gone, and the pod is
	// reclaimed unless detached; a start time missing is 0: the owner lives
	// while its PID does.
	LabelPID      = "io.podrun.pid"
	labelPIDStart = "io.podrun.pid-start"
	// labelDetached "true": the run was started with --detach; its pod is
	// never reclaimed once the status record says Detached (detachedFor).
	// Missing: not detached, reclaimed once its owner is gone.
	labelDetached = "io.podrun.detached"
)

// The annotations podrun puts on a pod's sandbox (sandboxConfig) besides
// the pod's own annotations, which they override.
const (
	// AnnotationRootDir is the run's --root-dir, which holds the pod's data
	// dir (<root>/pods/<uid>): ps reads the manifest and the status record
	// there, down and reclaim remove it, and --root-dir scopes commands by
	// it (podref.Scope). Missing: the sandbox names no data dir
	// (listedPodDir): ps lists the pod from the runtime alone, down removes
	// no dirs, and only --all-roots takes the pod.
	AnnotationRootDir = "io.podrun.root-dir"
	// annotationLogDir is the pod's log dir, removed with the pod when it
	// is under the root dir's (not --pod-logs-dir's). Missing: no log dir
	// is removed.
	annotationLogDir = "io.podrun.log-dir"
	// annotationCgroupParent is the pod cgroup podrun made and handed the
	// runtime as the sandbox's CgroupParent, which down, handover and
	// reclaim remove once the pod's sandboxes are gone (removeCgroups).
	// Missing (no pod
	// cgroups: --cgroup-root ''): none is removed.
	annotationCgroupParent = "io.podrun.cgroup-parent"
	// annotationContainers is the pod's restart policy and its containers
	// (podContainers as JSON), which logs and exec choose a container from.
	// Missing or not parsing: the containers the runtime holds
	// (containersOf).
	annotationContainers = "io.podrun.containers"
	// annotationUsernsBase is the first host ID of the pod's user namespace
	// (hostUsers: false), a range later runs skip while the sandbox lives
	// (usedUsernsBases). Missing: the sandbox holds no range.
	annotationUsernsBase = "io.podrun.userns-base"
	// annotationUIDGiven "true" marks a pod whose UID podrun gave (its
	// manifest has no metadata.uid), which no kubelet can adopt: `podrun
	// handover` waits for the kubelet's copy or its kill. Missing (so on
	// every sandbox of a podrun before it): adoptable, judged by the settle
	// time alone.
	annotationUIDGiven = "io.podrun.uid-given"
	// annotationPodTerminationGracePeriod, the kubelet's, on the sandbox
	// and on each container: spec.terminationGracePeriodSeconds, which
	// `podrun down` stops the pod with. Missing (no such spec field): 30
	// seconds, the API's default.
	annotationPodTerminationGracePeriod = "io.kubernetes.pod.terminationGracePeriod"
)

// The annotations podrun puts on each container (containerAnnotations):
// the kubelet's, so that a kubelet adopting the pod reads them as its own,
// and what `podrun down` needs to stop the container without the pod's
// spec (restoreContainer).
const (
	// annotationRestartCount is the container instance's restart count.
	// Missing: 0.
	annotationRestartCount = "io.kubernetes.container.restartCount"
	// annotationTerminationMessagePath and annotationTerminationMessagePolicy
	// say where the container's termination message is and whether the end
	// of its log stands in for it (withTerminationMessage). Missing: no
	// message file is read; the policy File.
	annotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	// annotationContainerHash is the kubelet's hash of the container
	// (containerHash), which a kubelet adopting the pod compares with its
	// own: another value restarts the container. No podrun reads it.
	annotationContainerHash = "io.kubernetes.container.hash"
	// annotationContainerPorts is the container's ports as JSON, by which
	// a preStop HTTP hook names its port. Missing: none.
	annotationContainerPorts = "io.kubernetes.container.ports"
	// annotationPreStopHandler is the container's preStop hook as JSON, as
	// the kubelet records it, so that a stop without the pod's spec
	// (`podrun down`) still runs it. Missing: no hook.
	annotationPreStopHandler = "io.kubernetes.container.preStopHandler"
	// annotationSidecar marks a restartable init container (a sidecar)
	// with its index among the pod's init containers, so that `podrun
	// down` stops the sidecars after the regular containers, in reverse
	// order, as the kubelet does. Missing: a regular container.
	annotationSidecar = "io.podrun.sidecar"
)

// The annotations `podrun ps` adds to the pods it lists (-o json|yaml), as
// the kubelet adds its config.* annotations to a static pod's mirror: the
// run, the root dir (AnnotationRootDir, as on the sandbox) and the owner
// (listedOwner), and the pod cgroup (annotationCgroupParent, as on the
// sandbox) with the cgroup driver podrun named it for and where the run
// found the driver (the status record's; none without pod cgroups). No
// podrun reads them back: they are output, for scripts (docs/ps.md), and
// keep their names and meanings as any output does.
const (
	annotationListedRun                = "io.podrun.run"
	annotationListedOwner              = "io.podrun.owner"
	annotationListedCgroupDriver       = "io.podrun.cgroup-driver"
	annotationListedCgroupDriverSource = "io.podrun.cgroup-driver-source"
)

// The files of a pod's data dir, <root>/pods/<uid> (podDir), made with the
// dir (makePodDataDirs: under a temp name, ".new-<uid>-*", renamed once
// whole) and removed with it (teardown, down, reclaim).
const (
	// ownerFile is the ownerRecord: which podrun owns the dir.
	ownerFile = "podrun-owner.json"
	// manifestFile is the pod as podrun ran it (decoded and defaulted),
	// written once, which ps lists the pod with. Missing or not parsing:
	// ps lists the pod from what the runtime says alone, saying why.
	manifestFile = "podrun-pod.json"
	// statusFile is the statusRecord, rewritten whenever it changes
	// (writeStatusRecord: through a temp file, ".podrun-status.json.tmp-*").
	statusFile = "podrun-status.json"
)

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

// podContainers is a pod's restart policy and its containers in spec
// order, init containers first, as annotationContainers records them:
// PodContainers with their kinds, names and restart policies and rules
// only (podrun keeps no spec after a run), which logs, exec and down
// choose from.
type podContainers struct {
	RestartPolicy v1.RestartPolicy
	Containers    []PodContainer
}

// containersJSON is annotationContainers' format. Its fields are
// podrun's on-node record: an older podrun's sandbox is read by a newer
// one, so fields are only ever added.
type containersJSON struct {
	RestartPolicy v1.RestartPolicy `json:"restartPolicy,omitempty"`
	Containers    []containerJSON  `json:"containers"`
}

type containerJSON struct {
	Name    string `json:"name"`
	Init    bool   `json:"init,omitempty"`
	Sidecar bool   `json:"sidecar,omitempty"` // a restartable init container
	// The container's own restart policy and rules (ContainerRestartRules),
	// which decide before the pod's whether an exited instance is followed
	// by another.
	RestartPolicy      *v1.ContainerRestartPolicy `json:"restartPolicy,omitempty"`
	RestartPolicyRules []v1.ContainerRestartRule  `json:"restartPolicyRules,omitempty"`
}

// containersRecord is the annotationContainers value of a pod.
func containersRecord(pod *v1.Pod) string {
	rec := containersJSON{RestartPolicy: pod.Spec.RestartPolicy}
	for _, c := range PodContainers(pod) {
		cj := containerJSON{Name: c.Name, Init: c.Kind != KindContainer, Sidecar: c.Kind == KindSidecar}
		if c.Kind != KindSidecar { // a sidecar's Always is its kind
			cj.RestartPolicy, cj.RestartPolicyRules = c.RestartPolicy, c.RestartPolicyRules
		}
		rec.Containers = append(rec.Containers, cj)
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

// recordedContainer is a container as a record names it: a PodContainer
// with only its name.
func recordedContainer(name string, init, sidecar bool) PodContainer {
	k := KindContainer
	switch {
	case sidecar:
		k = KindSidecar
	case init:
		k = KindInit
	}
	return PodContainer{Container: &v1.Container{Name: name}, Kind: k}
}

// containersOf reads a pod's containers from its sandbox's annotation.
// A sandbox without it (made by an older podrun) gives the containers the
// runtime holds, in the order they were first created, sidecars marked,
// every other one taken as a regular container, and no restart policy.
func containersOf(sb *runtimeapi.PodSandbox, ctrs []*runtimeapi.Container) podContainers {
	var rec containersJSON
	if s := sb.GetAnnotations()[annotationContainers]; s != "" && json.Unmarshal([]byte(s), &rec) == nil && len(rec.Containers) > 0 {
		out := podContainers{RestartPolicy: rec.RestartPolicy}
		for _, c := range rec.Containers {
			rc := recordedContainer(c.Name, c.Init, c.Sidecar)
			rc.RestartPolicy, rc.RestartPolicyRules = c.RestartPolicy, c.RestartPolicyRules
			out.Containers = append(out.Containers, rc)
		}
		return out
	}
	first := map[string]int64{}
	sidecar := map[string]bool{}
	for _, c := range ctrs {
		d := restoreContainer(c)
		if t, ok := first[d.Name]; !ok || c.CreatedAt < t {
			first[d.Name] = c.CreatedAt
		}
		sidecar[d.Name] = sidecar[d.Name] || d.Sidecar >= 0
	}
	var out podContainers
	for name := range first {
		out.Containers = append(out.Containers, recordedContainer(name, sidecar[name], sidecar[name]))
	}
	sort.Slice(out.Containers, func(i, j int) bool {
		a, b := out.Containers[i], out.Containers[j]
		if first[a.Name] != first[b.Name] {
			return first[a.Name] < first[b.Name]
		}
		return a.Name < b.Name
	})
	return out
}

// ownerRecord (ownerFile) says which podrun owns a pod data dir, so that a
// later run can reclaim a dir whose owner died. It is written once, with
// the dir, and read by reclaim (a dir whose sandbox is gone, or never was)
// and by a run that lost the race for the dir (dirTaken). Missing: not a
// podrun pod dir, left alone; not parsing: left alone too. Cgroup missing:
// no cgroup is removed with the dir.
type ownerRecord struct {
	Owner
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	LogDir    string `json:"logDir"`
	// Cgroup is the pod cgroup the run makes right after the data dir, so
	// that reclaiming the dir of a podrun killed before its sandbox existed
	// (whose annotation would name it) still removes the cgroup.
	Cgroup string `json:"cgroup,omitempty"`
}

// readOwnerRecord reads a pod data dir's owner record.
func readOwnerRecord(dir string) (ownerRecord, error) {
	var rec ownerRecord
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(b, &rec)
}

// manifestData is the pod as podrun keeps it in its data dir.
func manifestData(pod *v1.Pod) (dataFile, error) {
	p := pod.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	b, err := apijson.Marshal(p)
	if err != nil {
		return dataFile{}, fmt.Errorf("encoding the pod: %w", err)
	}
	return dataFile{name: manifestFile, data: b}, nil
}

// readManifest reads the pod podrun ran from its data dir.
func readManifest(dir string) (*v1.Pod, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var pod v1.Pod
	if err := apijson.Unmarshal(b, &pod); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, manifestFile), err)
	}
	return &pod, nil
}

// statusRecord (statusFile) is what a podrun knows of its pod that the
// runtime does not, so that `podrun ps` in another process — or after a
// detached podrun has exited — builds the pod's status with the run's own
// status code (podStatusFor; nextStatusRecord, podrecord.go, says how a
// run keeps it). The run that owns the pod writes it, `podrun down` marks
// it Deleting and `podrun handover` HandedOver. Read by ps, by reclaim
// and checkNotRunning (Detached: detachedFor), and by down --all and
// handover (HandedOver). Missing or not parsing: ps shows what the
// runtime says alone, a pod labelled detached keeps the label's word (it
// is left alone), the pod is not handed over, and down marks nothing. A
// field missing is its zero value: no waiting reasons, no probe result
// (not probed yet; likewise a result other than Success, Failure and
// Unknown), not detached, not deleting, not handed over.
type statusRecord struct {
	// StartTime is status.startTime: when podrun took the pod on.
	StartTime time.Time `json:"startTime"`
	// HostIP is the node address the run reports as status.hostIP.
	HostIP string `json:"hostIP,omitempty"`
	// Cgroup is the pod cgroup podrun made and handed the runtime as the
	// sandbox's cgroup parent, CgroupDriver the driver it was named for,
	// and CgroupDriverSource where the run found that driver
	// (CgroupDriverSource.String); all "" without pod cgroups
	// (--cgroup-root '').
	Cgroup             string `json:"cgroup,omitempty"`
	CgroupDriver       string `json:"cgroupDriver,omitempty"`
	CgroupDriverSource string `json:"cgroupDriverSource,omitempty"`
	// Reasons is why containers wait (CrashLoopBackOff, ErrImagePull, ...),
	// by container name, as the kubelet's reason cache.
	Reasons map[string]waitingReason `json:"reasons,omitempty"`
	// Startup and Readiness are the probe results podrun published, by
	// container ID (a missing one: not probed yet).
	Startup   map[string]recordedProbe `json:"startup,omitempty"`
	Readiness map[string]recordedProbe `json:"readiness,omitempty"`
	// Conditions are the pod's conditions as podrun last generated them,
	// for their lastTransitionTime.
	Conditions []v1.PodCondition `json:"conditions,omitempty"`
	// Detached: podrun left the pod running (--detach) when it wrote the
	// record last; nothing probes or restarts it since.
	Detached bool `json:"detached,omitempty"`
	// Deleting is when teardown began (the pod's deletionTimestamp), with
	// the grace period it stops the containers with.
	Deleting    *time.Time `json:"deleting,omitempty"`
	GracePeriod *int64     `json:"gracePeriod,omitempty"`
	// HandedOver is when `podrun handover` found the kubelet running the
	// pod as its own (docs/handover.md): the kubelet probes and restarts
	// it since, and `podrun down --all` leaves it.
	HandedOver *time.Time `json:"handedOver,omitempty"`
	// Written is when podrun last wrote the record.
	Written time.Time `json:"written"`
}

// recordedProbe is one published probe result of a container instance.
type recordedProbe struct {
	Container string `json:"container"`
	Result    string `json:"result"` // Success, Failure, Unknown
	// Since is when podrun published this result.
	Since time.Time `json:"since"`
}

// statusData is the record as a data dir file.
func statusData(rec statusRecord) dataFile {
	b, _ := json.Marshal(rec)
	return dataFile{name: statusFile, data: b}
}

// readStatusRecord reads a pod data dir's status record.
func readStatusRecord(dir string) (statusRecord, error) {
	var rec statusRecord
	b, err := os.ReadFile(filepath.Join(dir, statusFile))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return statusRecord{}, fmt.Errorf("reading %s: %w", filepath.Join(dir, statusFile), err)
	}
	return rec, nil
}

// writeStatusRecord replaces the record of the data dir atomically: the
// new one is written to a temp file in the same dir and renamed over the
// old, so a reader sees the old record or the new, never a part. A crash
// leaves at most the temp file, which goes with the data dir. A data dir
// already gone (`podrun down` took the pod) is not recreated.
func writeStatusRecord(dir string, rec statusRecord) error {
	f := statusData(rec)
	tmp, err := os.CreateTemp(dir, "."+statusFile+".tmp-")
	if err != nil {
		return fmt.Errorf("writing the pod's status record: %w", err)
	}
	_, werr := tmp.Write(f.data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o640)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the pod's status record: %w", err)
	}
	if err := replaceFile(tmp.Name(), filepath.Join(dir, statusFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the pod's status record: %w", err)
	}
	return nil
}

// replaceFile puts the file tmp at target in one step, as rename(2) does,
// so that a reader of target sees the old file or the new one. When target
// exists it exchanges the two (renameat2 RENAME_EXCHANGE) and removes
// tmp, which then holds the old file: ext4 (auto_da_alloc) starts
// writing a file's data out when a rename replaces another file, and
// discards the replaced one's blocks in the same call, about 0.1 ms of a
// run's CPU for the status record's two writes, for a record that is
// removed within the run. Where the exchange is not to be had (no target
// yet, a filesystem without it), it renames.
func replaceFile(tmp, target string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, target, unix.RENAME_EXCHANGE)
	if err == nil {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return rerr
		}
		return nil
	}
	return os.Rename(tmp, target)
}
