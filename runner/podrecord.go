package runner

// What podrun keeps of a pod beside the runtime, in the pod's data dir,
// so that `podrun ps` in another process — or after a detached podrun has
// exited — builds the pod's status with the run's own status code
// (podStatusFor): the manifest podrun ran (podrun-pod.json, written once
// with the data dir) and what only podrun knows (podrun-status.json,
// rewritten whenever it changes): why containers wait, the probe results it
// published and when, the conditions' transition times, and whether it
// detached or began the teardown, and the pod cgroup with its driver and
// where the driver came from. Both go with the data dir (teardown,
// reclaim, `podrun down`).

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// manifestFile is the pod as podrun ran it (decoded and defaulted).
	manifestFile = "podrun-pod.json"
	// statusFile is the pod's statusRecord.
	statusFile = "podrun-status.json"
)

// statusRecord is what a podrun knows of its pod that the runtime does
// not.
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

var probeResultNames = map[probeResult]string{probeSuccess: "Success", probeFailure: "Failure", probeUnknown: "Unknown"}

// recordInput is what the next record is made of.
type recordInput struct {
	Reasons    map[string]waitingReason
	Probes     probeResults
	Names      map[string]string // container ID → container name
	Conditions []v1.PodCondition
	Now        time.Time
}

// nextStatusRecord is the record after prev with the run's current view:
// a probe result keeps its time while it stays the same.
func nextStatusRecord(prev statusRecord, in recordInput) statusRecord {
	next := prev
	next.Reasons = maps.Clone(in.Reasons)
	if len(next.Reasons) == 0 {
		next.Reasons = nil
	}
	probes := func(old map[string]recordedProbe, results map[string]probeResult) map[string]recordedProbe {
		if len(results) == 0 {
			return nil
		}
		out := make(map[string]recordedProbe, len(results))
		for id, r := range results {
			rp := recordedProbe{Container: in.Names[id], Result: probeResultNames[r], Since: in.Now}
			if o, ok := old[id]; ok && o.Result == rp.Result {
				rp.Since = o.Since
			}
			out[id] = rp
		}
		return out
	}
	next.Startup = probes(prev.Startup, in.Probes.Startup)
	next.Readiness = probes(prev.Readiness, in.Probes.Readiness)
	next.Conditions = in.Conditions
	return next
}

// changed tells whether next differs from prev in anything but Written.
func (next statusRecord) changed(prev statusRecord) bool {
	next.Written = prev.Written
	return !reflect.DeepEqual(next, prev)
}

// probeResults is the record's probe results as the status code reads them.
func (rec statusRecord) probeResults() probeResults {
	back := func(m map[string]recordedProbe) map[string]probeResult {
		out := map[string]probeResult{}
		for id, rp := range m {
			for r, name := range probeResultNames {
				if rp.Result == name {
					out[id] = r
				}
			}
		}
		return out
	}
	return probeResults{Startup: back(rec.Startup), Readiness: back(rec.Readiness), Liveness: map[string]probeResult{}}
}

// manifestData is the pod as podrun keeps it in its data dir.
func manifestData(pod *v1.Pod) (dataFile, error) {
	p := pod.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	b, err := json.Marshal(p)
	if err != nil {
		return dataFile{}, fmt.Errorf("encoding the pod: %w", err)
	}
	return dataFile{name: manifestFile, data: b}, nil
}

// statusData is the record as a data dir file.
func statusData(rec statusRecord) dataFile {
	b, _ := json.Marshal(rec)
	return dataFile{name: statusFile, data: b}
}

// listedPodDir is the data dir a sandbox's annotations lead to; ok is
// false when they do not name one (not a podrun sandbox, or a uid that is
// not a plain name).
func listedPodDir(root, uid string) (string, bool) {
	if root == "" || !filepath.IsAbs(root) || uid == "" || uid == "." || uid == ".." || strings.ContainsRune(uid, '/') {
		return "", false
	}
	return podDir(root, uid), true
}

// readManifest reads the pod podrun ran from its data dir.
func readManifest(dir string) (*v1.Pod, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, err
	}
	var pod v1.Pod
	if err := json.Unmarshal(b, &pod); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, manifestFile), err)
	}
	return &pod, nil
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
	if err := os.Rename(tmp.Name(), filepath.Join(dir, statusFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the pod's status record: %w", err)
	}
	return nil
}

// markDeleting records in the pod's data dir that its teardown has begun,
// with the grace period, so that ps shows it Terminating. A pod without a
// record (or a data dir) is left as it is.
func markDeleting(dir string, now time.Time, grace int64) error {
	rec, err := readStatusRecord(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	rec.Deleting, rec.GracePeriod, rec.Written = &now, &grace, now
	return writeStatusRecord(dir, rec)
}
