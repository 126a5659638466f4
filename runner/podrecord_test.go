package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNextStatusRecord(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(5 * time.Second)
	prev := statusRecord{
		StartTime: t0, HostIP: "192.0.2.1",
		Readiness: map[string]recordedProbe{
			"c1": {Container: "web", Result: "Success", Since: t0},
			"c2": {Container: "db", Result: "Failure", Since: t0},
		},
		Written: t0,
	}
	in := recordInput{
		Reasons: map[string]waitingReason{"job": {Reason: reasonCrashLoopBackOff, Message: "back-off 10s"}},
		Probes: probeResults{
			Readiness: map[string]probeResult{"c1": probeSuccess, "c2": probeSuccess, "c3": probeFailure},
			Startup:   map[string]probeResult{"c1": probeSuccess},
		},
		Names:      map[string]string{"c1": "web", "c2": "db", "c3": "side"},
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}},
		Now:        t1,
	}
	next := nextStatusRecord(prev, in)
	want := statusRecord{
		StartTime: t0, HostIP: "192.0.2.1",
		Reasons: in.Reasons,
		Startup: map[string]recordedProbe{"c1": {Container: "web", Result: "Success", Since: t1}},
		Readiness: map[string]recordedProbe{
			"c1": {Container: "web", Result: "Success", Since: t0}, // unchanged: keeps its time
			"c2": {Container: "db", Result: "Success", Since: t1},  // changed
			"c3": {Container: "side", Result: "Failure", Since: t1},
		},
		Conditions: in.Conditions,
		Written:    t0, // the writer sets it
	}
	if !reflect.DeepEqual(next, want) {
		t.Errorf("next record:\n%+v\nwant\n%+v", next, want)
	}
	if !next.changed(prev) {
		t.Errorf("changed = false for a record with new results")
	}
	again := nextStatusRecord(next, recordInput{Reasons: in.Reasons, Probes: in.Probes, Names: in.Names, Conditions: in.Conditions, Now: t1.Add(time.Minute)})
	again.Written = t1
	if again.changed(next) {
		t.Errorf("changed = true for the same view a minute later:\n%+v\n%+v", again, next)
	}
	if got := next.probeResults(); !reflect.DeepEqual(got.Readiness, in.Probes.Readiness) || !reflect.DeepEqual(got.Startup, in.Probes.Startup) {
		t.Errorf("probeResults = %+v, want the input's %+v", got, in.Probes)
	}
	if got := nextStatusRecord(next, recordInput{Now: t1}); got.Reasons != nil || got.Readiness != nil || got.Startup != nil {
		t.Errorf("a record of no reasons and no results keeps %+v", got)
	}
}

func TestMakePodDataDirsWithManifest(t *testing.T) {
	root := t.TempDir()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}}}
	m, err := manifestData(pod)
	if err != nil {
		t.Fatal(err)
	}
	rec := statusRecord{StartTime: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), HostIP: "192.0.2.1"}
	dir, err := makePodDataDirs(root, "uid-1", ownerRecord{Name: "web"}, m, statusData(rec))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "Pod" || got.APIVersion != "v1" || got.Name != "web" || got.Spec.Containers[0].Image != "busybox" {
		t.Errorf("manifest read back = %+v", got)
	}
	if r, err := readStatusRecord(dir); err != nil || !r.StartTime.Equal(rec.StartTime) || r.HostIP != rec.HostIP {
		t.Errorf("status record read back = %+v, %v", r, err)
	}
	for _, f := range []string{manifestFile, statusFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %v, mode %v; want 0640", f, err, fi.Mode())
		}
	}
}
