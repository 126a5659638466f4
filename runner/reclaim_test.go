package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podref"
)

func TestReclaimable(t *testing.T) {
	me, err := newOwner(false)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	cases := []struct {
		name string
		o    Owner
		want bool
	}{
		{"a live owner's pod is not reclaimed", me, false},
		{"a dead owner's pod is reclaimed", Owner{RunID: "r", PID: dead, PIDStart: 1}, true},
		{"a detached pod of a dead owner is never reclaimed", Owner{RunID: "r", PID: dead, PIDStart: 1, Detached: true}, false},
		{"a pod whose owner PID was reused is reclaimed", Owner{RunID: "r", PID: me.PID, PIDStart: me.PIDStart + 7}, true},
		{"a pod without owner labels is reclaimed", Owner{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := reclaimable(tc.o); got != tc.want {
				t.Errorf("reclaimable(%+v) = %v, want %v", tc.o, got, tc.want)
			}
		})
	}
}

// TestDetachedFor: a pod counts as detached once its podrun recorded the
// detach; the -d label alone (a run killed while it waited for the pod)
// does not keep it from being reclaimed.
func TestDetachedFor(t *testing.T) {
	cases := []struct {
		name     string
		labelled bool
		rec      statusRecord
		recErr   error
		want     bool
	}{
		{"not started with -d", false, statusRecord{}, nil, false},
		{"not started with -d, no record", false, statusRecord{}, os.ErrNotExist, false},
		{"-d, detach recorded", true, statusRecord{Detached: true}, nil, true},
		{"-d, still waiting (or killed while it waited)", true, statusRecord{}, nil, false},
		{"-d, handed over to the kubelet after its detach", true, statusRecord{Detached: true, HandedOver: &time.Time{}}, nil, true},
		{"-d, no data dir: the label's word", true, statusRecord{}, os.ErrNotExist, true},
		{"-d, unreadable record: the label's word", true, statusRecord{}, os.ErrInvalid, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := detachedFor(tc.labelled, tc.rec, tc.recErr); got != tc.want {
				t.Errorf("detachedFor = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsUnder(t *testing.T) {
	cases := []struct {
		path, dir string
		want      bool
	}{
		{"/r/logs/ns_n_uid", "/r/logs", true},
		{"/r/logs/a/b", "/r/logs", true},
		{"/r/logs", "/r/logs", false},
		{"/r/logs/", "/r/logs", false},
		{"/r/logs2/x", "/r/logs", false},
		{"/r/logs/../etc", "/r/logs", false},
		{"/var/log/pods/x", "/r/logs", false},
		{"", "/r/logs", false},
		{"relative/x", "/r/logs", false},
	}
	for _, tc := range cases {
		if got := isUnder(tc.path, tc.dir); got != tc.want {
			t.Errorf("isUnder(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

func TestReclaimDataDirs(t *testing.T) {
	root := t.TempDir()
	me, err := newOwner(false)
	if err != nil {
		t.Fatal(err)
	}
	dead := Owner{RunID: "dead", PID: deadPID(t), PIDStart: 1}
	outsideLogs := filepath.Join(t.TempDir(), "ns_keep_uid")
	mk := func(uid string, o Owner, logDir string, files ...dataFile) string {
		t.Helper()
		dir, err := makePodDataDirs(root, uid, ownerRecord{Owner: o, Namespace: "ns", Name: uid, LogDir: logDir}, files...)
		if err != nil {
			t.Fatal(err)
		}
		if logDir != "" {
			// With a container's log dir and file in it, as a run makes them.
			if err := os.MkdirAll(filepath.Join(logDir, "app"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(logDir, "app", "0.log"), nil, 0o640); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	deadLogs := filepath.Join(defaultLogDir(root), "ns_dead_dead")
	deadDir := mk("dead", dead, deadLogs)
	deadOutsideDir := mk("dead-outside", dead, outsideLogs)
	liveDir := mk("live", me, filepath.Join(defaultLogDir(root), "ns_live_live"))
	detached := dead
	detached.Detached = true
	detachedDir := mk("detached", detached, "")
	// A -d run's dir: with the detach recorded, and as a -d run killed
	// while it still waited for its pod leaves it.
	handedDir := mk("handed", detached, "", statusData(statusRecord{Detached: true}))
	killedLogs := filepath.Join(defaultLogDir(root), "ns_killed_killed")
	killedDir := mk("killed", detached, killedLogs, statusData(statusRecord{}))
	foreign := filepath.Join(root, "pods", "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	staleTmp := filepath.Join(root, "pods", ".new-x-1")
	freshTmp := filepath.Join(root, "pods", ".new-y-2")
	for _, d := range []string{staleTmp, freshTmp} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTempDirAge)
	if err := os.Chtimes(staleTmp, old, old); err != nil {
		t.Fatal(err)
	}

	if err := reclaimDataDirs(cgroups.HostSystem(), root, nil, dataDirSweep{}); err != nil {
		t.Fatalf("reclaimDataDirs: %v", err)
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	for _, c := range []struct {
		what string
		path string
		want bool
	}{
		{"a dead owner's pod dir", deadDir, false},
		{"a dead owner's log dir under the default log dir", deadLogs, false},
		{"a dead owner's pod dir with logs elsewhere", deadOutsideDir, false},
		{"a log dir outside podrun's own (--pod-logs-dir)", outsideLogs, true},
		{"a live owner's pod dir", liveDir, true},
		{"a detached pod's dir (no status record)", detachedDir, true},
		{"a detached pod's dir (the detach recorded)", handedDir, true},
		{"a dead -d run's dir from before its detach", killedDir, false},
		{"a dead -d run's log dir from before its detach", killedLogs, false},
		{"a dir without an owner record", foreign, true},
		{"a stale half-made dir", staleTmp, false},
		{"a fresh half-made dir (a live podrun is making it)", freshTmp, true},
	} {
		if got := exists(c.path); got != c.want {
			t.Errorf("%s: exists = %v, want %v", c.what, got, c.want)
		}
	}
}

func TestReclaimDataDirsWithoutAPodsDir(t *testing.T) {
	if err := reclaimDataDirs(cgroups.HostSystem(), t.TempDir(), nil, dataDirSweep{}); err != nil {
		t.Errorf("reclaimDataDirs of an empty root = %v", err)
	}
}

// TestReclaimDataDirsRemovesTheCgroup: a podrun killed after making a pod's
// data dir and cgroup but before its sandbox leaves a cgroup no sandbox
// names; reclaiming the dir removes it (and the parents it emptied), while
// a live owner's stays.
func TestReclaimDataDirsRemovesTheCgroup(t *testing.T) {
	cgsys, mk := podsWithCgroups(t)
	me, err := newOwner(false)
	if err != nil {
		t.Fatal(err)
	}
	dead := Owner{RunID: "dead", PID: deadPID(t), PIDStart: 1}
	root := t.TempDir()
	_, deadCg := mk(root, "dead-uid", dead)
	_, liveCg := mk(root, "live-uid", me)
	if err := reclaimDataDirs(cgsys, root, nil, dataDirSweep{}); err != nil {
		t.Fatalf("reclaimDataDirs: %v", err)
	}
	if _, err := os.Stat(deadCg); err == nil {
		t.Errorf("the dead owner's pod cgroup %s is left", deadCg)
	}
	if _, err := os.Stat(liveCg); err != nil {
		t.Errorf("the live owner's pod cgroup: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "pods", "dead-uid")); err == nil {
		t.Errorf("the dead owner's data dir is left")
	}
}

// `podrun down --all` sweeps its root dir once the pods are down: the data
// dirs, log dirs and pod cgroups of pods left without a sandbox whose
// podrun is gone go, detached ones too (a run's reclaim leaves those), each
// reported; a live podrun's and another root dir's stay.
func TestDownAllSweepsDataDirsWithoutSandbox(t *testing.T) {
	_, rt, _, _ := factsRuntime(t)
	cgsys, mk := podsWithCgroups(t)
	me, err := newOwner(false)
	if err != nil {
		t.Fatal(err)
	}
	dead := Owner{RunID: "dead", PID: deadPID(t), PIDStart: 1}
	detached := dead
	detached.Detached = true
	root, other := t.TempDir(), t.TempDir()
	deadDir, deadCg := mk(root, "dead-uid", dead)
	detDir, detCg := mk(root, "detached-uid", detached)
	liveDir, liveCg := mk(root, "live-uid", me)
	otherDir, _ := mk(other, "other-uid", dead)

	// Without --all, nothing is swept; without a root dir neither.
	if err := downWith(context.Background(), rt, cgsys, DownOptions{Args: nil, All: false, RootDir: root, Scope: podref.Scope{Root: root}}); err != nil {
		t.Logf("down without --all: %v", err)
	}
	if _, err := os.Stat(deadDir); err != nil {
		t.Fatalf("down without --all swept: %v", err)
	}
	var progress []string
	err = downWith(context.Background(), rt, cgsys, DownOptions{All: true, RootDir: root, Scope: podref.Scope{Root: root},
		Progressf: func(f string, a ...any) { progress = append(progress, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("down --all: %v", err)
	}
	for _, gone := range []string{deadDir, deadCg, detDir, detCg} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s is left", gone)
		}
	}
	for _, kept := range []string{liveDir, liveCg, otherDir} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	joined := strings.Join(progress, "\n")
	for _, want := range []string{"pod/pod-dead-uid: removing the data dir", "pod/pod-detached-uid: removing the data dir", "of pod ns/pod-dead-uid (no sandbox of it on the runtime)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("progress lacks %q:\n%s", want, joined)
		}
	}

	// A run's reclaim leaves a detached pod's data dir alone.
	detDir, _ = mk(root, "detached-uid", detached)
	if err := reclaimDataDirs(cgsys, root, nil, dataDirSweep{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(detDir); err != nil {
		t.Errorf("a run's reclaim took a detached pod's data dir: %v", err)
	}
}

// podsWithCgroups gives fake cgroups and mk, which makes a pod's data dir
// in root, owned by o, and its pod cgroup (cgroupfs, v1), and returns the
// data dir and the cgroup's cpu dir.
func podsWithCgroups(t *testing.T) (cgroups.System, func(root, uid string, o Owner) (dataDir, cgroup string)) {
	t.Helper()
	cgsys, fsRoot := fakeCgroups(t, false, false)
	h, err := cgroups.NewHost(cgroups.DefaultRoot, cgroups.DriverCgroupfs, cgsys)
	if err != nil {
		t.Fatal(err)
	}
	return cgsys, func(root, uid string, o Owner) (string, string) {
		t.Helper()
		p := cgPod("-/-/-/-")
		p.UID = types.UID(uid)
		dir, err := makePodDataDirs(root, uid, ownerRecord{Owner: o, Namespace: "ns", Name: "pod-" + uid, Cgroup: h.PodCgroupName(p)})
		if err != nil {
			t.Fatal(err)
		}
		name, err := h.EnsurePodCgroup(p)
		if err != nil {
			t.Fatal(err)
		}
		return dir, filepath.Join(fsRoot, "cpu", name)
	}
}
