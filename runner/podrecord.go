package runner

// The pod's status record as a run keeps it (its format, beside the
// manifest's and the owner record's, is records.go): the next record from
// the run's current view (nextStatusRecord) — why containers wait, the
// probe results it published and when, the conditions' transition times —
// the probe results read back as the status code reads them
// (probeResults), the data dir a sandbox's annotations name
// (listedPodDir), and the mark of a teardown begun (markDeleting), which
// ps shows as Terminating.

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

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

// listedPodDir is the data dir a sandbox's annotations lead to; ok is
// false when they do not name one (not a podrun sandbox, or a uid that is
// not a plain name).
func listedPodDir(root, uid string) (string, bool) {
	if root == "" || !filepath.IsAbs(root) || uid == "" || uid == "." || uid == ".." || strings.ContainsRune(uid, '/') {
		return "", false
	}
	return podDir(root, uid), true
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
