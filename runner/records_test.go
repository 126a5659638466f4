package runner

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestOwnerLabelsRoundTrip(t *testing.T) {
	for _, o := range []Owner{
		{RunID: "abc123", PID: 4321, PIDStart: 9876543210},
		{RunID: "def456", PID: 1, PIDStart: 0, Detached: true},
	} {
		l := o.labels()
		if l[LabelManaged] != "true" {
			t.Errorf("labels of %+v lack %s=true: %v", o, LabelManaged, l)
		}
		if _, ok := l[labelDetached]; ok != o.Detached {
			t.Errorf("labels of %+v: detached label present = %v", o, ok)
		}
		if got := ownerFromLabels(l); !reflect.DeepEqual(got, o) {
			t.Errorf("ownerFromLabels(labels(%+v)) = %+v", o, got)
		}
	}
	if got := ownerFromLabels(map[string]string{}); !reflect.DeepEqual(got, Owner{}) {
		t.Errorf("ownerFromLabels(no labels) = %+v, want the zero Owner", got)
	}
}

func TestContainersRecord(t *testing.T) {
	sb := &runtimeapi.PodSandbox{Annotations: map[string]string{annotationContainers: containersRecord(webPod())}}
	if got := containersOf(sb, nil); !reflect.DeepEqual(got, webRecord()) {
		t.Errorf("containersOf(containersRecord) = %+v, want %+v", got, webRecord())
	}
	// The annotation is an on-node record that later podruns read: its
	// JSON stays as released.
	const released = `{"restartPolicy":"OnFailure","containers":[{"name":"setup","init":true},{"name":"proxy","init":true,"sidecar":true},{"name":"app"},{"name":"metrics"}]}`
	if got := containersRecord(webPod()); got != released {
		t.Errorf("containersRecord = %s, want %s", got, released)
	}

	// A sandbox without the record: the runtime's containers, oldest
	// first, sidecars (by their annotation) as init containers.
	ctr := func(id, name string, created int64, sidecar bool) *runtimeapi.Container {
		c := &runtimeapi.Container{Id: id, CreatedAt: created, Labels: map[string]string{labelContainerName: name}}
		if sidecar {
			c.Annotations = map[string]string{annotationSidecar: "0"}
		}
		return c
	}
	old := &runtimeapi.PodSandbox{Annotations: map[string]string{"other": "x"}}
	got := containersOf(old, []*runtimeapi.Container{
		ctr("3", "app", 30, false), ctr("1", "proxy", 10, true), ctr("4", "app", 40, false), ctr("2", "metrics", 20, false),
	})
	want := podContainers{Containers: []PodContainer{recordedContainer("proxy", true, true), recordedContainer("metrics", false, false), recordedContainer("app", false, false)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("containersOf without the record = %+v, want %+v", got, want)
	}
}

func TestReadOwnerRecordOfADirWithoutOne(t *testing.T) {
	if _, err := readOwnerRecord(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("readOwnerRecord = %v, want ErrNotExist", err)
	}
}

func TestStatusRecordFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := readStatusRecord(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("readStatusRecord of a dir without one = %v, want ErrNotExist", err)
	}
	if err := markDeleting(dir, time.Now(), 30); err != nil {
		t.Errorf("markDeleting without a record = %v, want nothing done", err)
	}
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rec := statusRecord{StartTime: t0, Reasons: map[string]waitingReason{"a": {Reason: "ErrImagePull"}}, Written: t0}
	if err := writeStatusRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	got, err := readStatusRecord(dir)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("read back %+v, %v; want %+v", got, err, rec)
	}
	if err := markDeleting(dir, t0.Add(time.Minute), 30); err != nil {
		t.Fatal(err)
	}
	got, _ = readStatusRecord(dir)
	if got.Deleting == nil || !got.Deleting.Equal(t0.Add(time.Minute)) || got.GracePeriod == nil || *got.GracePeriod != 30 || got.Reasons["a"].Reason != "ErrImagePull" {
		t.Errorf("after markDeleting: %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != statusFile {
		t.Errorf("dir holds %v, want only %s (no temp file)", entries, statusFile)
	}
	if fi, _ := os.Stat(filepath.Join(dir, statusFile)); fi.Mode().Perm() != 0o640 {
		t.Errorf("record mode %v, want 0640", fi.Mode().Perm())
	}
	// A torn record (a crash of an older writer, a hand edit) is an error, not a zero record that reads as one.
	if err := os.WriteFile(filepath.Join(dir, statusFile), []byte(`{"startTime":`), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := readStatusRecord(dir); err == nil {
		t.Errorf("readStatusRecord of a torn record succeeded")
	}
	// A data dir removed meanwhile (`podrun down`) is not made again.
	gone := filepath.Join(dir, "gone")
	if err := writeStatusRecord(gone, rec); err == nil || exists(gone) {
		t.Errorf("writeStatusRecord into a missing dir = %v, exists %v; want an error and no dir", err, exists(gone))
	}
}

// TestReplaceFile: the new file takes the target's place whether or not
// there was one, and the temp file is gone either way.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	target, tmp := filepath.Join(dir, "record"), filepath.Join(dir, ".record.tmp")
	for i, content := range []string{"first", "second", "third"} {
		if err := os.WriteFile(tmp, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := replaceFile(tmp, target); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if got, err := os.ReadFile(target); err != nil || string(got) != content {
			t.Errorf("write %d: target holds %q, %v; want %q", i, got, err, content)
		}
		if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("write %d: the temp file is left (%v)", i, err)
		}
	}
	if err := replaceFile(filepath.Join(dir, "missing"), target); err == nil {
		t.Error("replaceFile of a missing file succeeded")
	}
	if got, _ := os.ReadFile(target); string(got) != "third" {
		t.Errorf("a failed replace changed the target to %q", got)
	}
}

// A container's own restart policy and rules go into the record, so that
// logs -f, which reads the record after the run, knows whether an exited
// instance is followed by another.
func TestContainersRecordKeepsRestartRules(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{
		{Name: "job", RestartPolicy: ptrTo(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{restartOn(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}},
		{Name: "web"},
	}}}
	rec := containersOf(&runtimeapi.PodSandbox{Annotations: map[string]string{annotationContainers: containersRecord(pod)}}, nil)
	if len(rec.Containers) != 2 {
		t.Fatalf("containersOf = %+v", rec)
	}
	job, web := rec.Containers[0], rec.Containers[1]
	for _, tc := range []struct {
		c    PodContainer
		exit int32
		want bool
	}{{job, 42, true}, {job, 1, false}, {job, 0, false}, {web, 0, true}} {
		if got := restarts(rec.RestartPolicy, tc.c, tc.exit); got != tc.want {
			t.Errorf("restarts(%s, exit %d) = %v, want %v", tc.c.Name, tc.exit, got, tc.want)
		}
	}
}
