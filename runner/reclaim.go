package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/volumes"

	"github.com/podrun/podrun/runner/cgroups"
)

// staleTempDirAge: a half-made pod data dir (".new-*") older than this
// belongs to a podrun that died while making it; a live one finishes in
// microseconds.
const staleTempDirAge = time.Minute

// reclaimable decides whether a sandbox or data dir left by owner may be
// reclaimed: only when the owner is gone, and never once it had detached
// from the pod (o as podOwner reads it: Detached only when the run reached
// its detach point).
func reclaimable(o Owner) bool { return !o.Detached && !o.Alive() }

// detachedFor says whether a pod whose owner's labels (or owner record)
// say labelled was detached: the label io.podrun.detached says only that
// the run was started with --detach, which it is from the moment it makes
// the sandbox; the run hands the pod over at its detach point, once the
// wait is over, by recording it in the pod's status record (rec, read with
// recErr). A `podrun -d` killed while it still waited for the pod never
// handed it over: its pod is the dead run's leftover, reclaimed as any
// other. A pod whose record cannot be read (no data dir, a record podrun
// did not write) keeps the label's word: it is left alone.
func detachedFor(labelled bool, rec statusRecord, recErr error) bool {
	return labelled && (recErr != nil || rec.Detached)
}

// podOwner is the owner of a sandbox's pod as reclaim and checkNotRunning
// judge it: its labels' owner, Detached as detachedFor decides from the
// pod's status record (as `podrun ps` decides it, PodLister).
func podOwner(sb *runtimeapi.PodSandbox) Owner {
	o := ownerFromLabels(sb.Labels)
	if o.Detached {
		o.Detached = dirOwnerDetached(listedPodDir(sb.Annotations[AnnotationRootDir], sb.Labels[labelPodUID]))
	}
	return o
}

// dirOwnerDetached is detachedFor of a labelled-detached pod whose data
// dir is dir (ok false: the sandbox names none).
func dirOwnerDetached(dir string, ok bool) bool {
	if !ok {
		return true
	}
	rec, err := readStatusRecord(dir)
	return detachedFor(true, rec, err)
}

// listManaged lists every sandbox podrun created on this runtime.
func listManaged(ctx context.Context, rt Runtime) ([]*runtimeapi.PodSandbox, error) {
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{LabelManaged: "true"}})
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	return sbs, nil
}

// reclaim tears down what earlier podruns left behind when their process
// is gone (SIGKILL, crash): their sandboxes (from sbs, podrun's sandboxes)
// with their containers, their data dirs and their log dirs. Detached pods
// are left alone.
func reclaim(ctx context.Context, rt Runtime, cgsys cgroups.System, rootDir string, sbs []*runtimeapi.PodSandbox, progressf func(string, ...any)) error {
	var errs []error
	var removed []*runtimeapi.PodSandbox
	for _, sb := range sbs {
		if !reclaimable(podOwner(sb)) {
			continue
		}
		progressf("podrun: reclaiming pod %s/%s left by podrun pid %s (run %s)",
			sb.Labels[labelPodNamespace], sb.Labels[labelPodName], sb.Labels[LabelPID], sb.Labels[labelRun])
		if err := removeSandboxAndPodDirs(ctx, rt, sb, 0); err != nil {
			errs = append(errs, err)
			continue // its cgroup too stays, for the next run
		}
		removed = append(removed, sb)
	}
	if err := removeCgroups(cgsys, removed); err != nil {
		errs = append(errs, err)
	}
	gone := map[string]bool{}
	for _, sb := range removed {
		gone[sb.Id] = true
	}
	var left []*runtimeapi.PodSandbox
	for _, sb := range sbs {
		if !gone[sb.Id] {
			left = append(left, sb)
		}
	}
	if err := reclaimDataDirs(cgsys, rootDir, sandboxUIDs(left), dataDirSweep{}); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sandboxUIDs are the pod UIDs of sandboxes.
func sandboxUIDs(sbs []*runtimeapi.PodSandbox) map[string]bool {
	out := map[string]bool{}
	for _, sb := range sbs {
		out[sb.Labels[labelPodUID]] = true
	}
	return out
}

// dataDirSweep says how reclaimDataDirs judges and reports the data dirs.
type dataDirSweep struct {
	// takeDetached: the data dir of a detached pod whose sandbox is gone
	// goes too (`podrun down --all`, which takes detached pods); a run's
	// reclaim leaves detached pods alone.
	takeDetached bool
	// progressf, if set, reports each data dir removed.
	progressf func(format string, args ...any)
}

// reclaimDataDirs removes pod data dirs (and their podrun-owned log dirs
// and pod cgroups) whose owner is gone and of which no podrun sandbox is
// left (live: the pod UIDs of podrun's sandboxes still on the runtime; a
// sandbox reclaim could not remove keeps its pod whole), and half-made
// ones that are stale. The data dir of a pod handed over to the kubelet
// (podrun handover) goes, with its log dir, once no podrun sandbox of it is
// left; its pod cgroup is the kubelet's.
func reclaimDataDirs(cgsys cgroups.System, rootDir string, live map[string]bool, sweep dataDirSweep) error {
	pods := filepath.Join(rootDir, "pods")
	entries, err := os.ReadDir(pods)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(pods, e.Name())
		if strings.HasPrefix(e.Name(), ".new-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTempDirAge {
				errs = append(errs, volumes.RemoveSafely(dir))
			}
			continue
		}
		rec, err := readOwnerRecord(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue // not ours to judge
		}
		if err == nil && rec.Owner.Detached {
			rec.Owner.Detached = dirOwnerDetached(dir, true)
		}
		if err == nil && rec.Owner.Detached && sweep.takeDetached && !live[e.Name()] {
			if st, serr := readStatusRecord(dir); serr != nil || st.HandedOver == nil {
				rec.Owner.Detached = false // down takes it; a handed-over one is the kubelet's
			}
		}
		if err == nil && !reclaimable(rec.Owner) {
			if st, serr := readStatusRecord(dir); serr == nil && st.HandedOver != nil && !live[e.Name()] {
				if isUnder(rec.LogDir, defaultLogDir(rootDir)) {
					errs = append(errs, volumes.RemoveSafely(rec.LogDir))
				}
				errs = append(errs, volumes.RemoveSafely(dir))
			}
			continue
		}
		if err != nil { // no owner record: not a podrun pod dir
			continue
		}
		if live[e.Name()] { // its sandbox is still there: the pod goes with it
			continue
		}
		if sweep.progressf != nil {
			sweep.progressf("pod/%s: removing the data dir, log dir and cgroup that podrun pid %d left of pod %s/%s (no sandbox of it on the runtime)",
				rec.Name, rec.Owner.PID, rec.Namespace, rec.Name)
		}
		if isUnder(rec.LogDir, defaultLogDir(rootDir)) {
			errs = append(errs, volumes.RemoveSafely(rec.LogDir))
		}
		if rec.Cgroup != "" {
			// Its sandboxes are gone (reclaim removed them first), or it
			// never had one: the owner died before creating it.
			errs = append(errs, cgsys.RemoveRecorded(rec.Cgroup))
		}
		errs = append(errs, volumes.RemoveSafely(dir))
	}
	return errors.Join(errs...)
}

func isUnder(path, dir string) bool {
	if path == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// checkNotRunning refuses pods that a live or detached podrun already runs
// (sbs: podrun's sandboxes), in any root dir: two runs of the same pod
// would fight over its sandbox (whose name the runtime holds once) and
// data dir. rootDir is the run's, for the `podrun down` the error names.
func checkNotRunning(pods []*v1.Pod, sbs []*runtimeapi.PodSandbox, rootDir string) error {
	var errs []error
	for _, pod := range pods {
		for _, sb := range sbs {
			if sb.Labels[labelPodUID] != string(pod.UID) {
				continue
			}
			if e := runningElsewhere(sb, rootDir); e != nil {
				e.Namespace, e.Name, e.UID = pod.Namespace, pod.Name, string(pod.UID)
				errs = append(errs, e)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// runningElsewhere is the refusal of a pod whose sandbox sb a live
// podrun runs, or one left running (detached); nil when sb's podrun is
// gone and a run may reclaim it. rootDir is this run's: a pod of another
// root dir says so.
func runningElsewhere(sb *runtimeapi.PodSandbox, rootDir string) *alreadyRunningError {
	o := podOwner(sb)
	if reclaimable(o) {
		return nil
	}
	how := fmt.Sprintf("by podrun pid %d", o.PID)
	if o.Detached {
		how = "detached"
	}
	md := sb.GetMetadata()
	e := &alreadyRunningError{Namespace: md.GetNamespace(), Name: md.GetName(), UID: md.GetUid(), How: how}
	if root := sb.Annotations[AnnotationRootDir]; root != rootDir {
		e.Root = root
	}
	// What --replace would take (decideReplace).
	e.Replaceable = o.Detached && e.Root == "" && !handedOver(sb)
	return e
}

// checkJobsNotRunning refuses a Job a live podrun runs: one of its pods
// (a sandbox with the Job's batch.kubernetes.io/controller-uid label) is
// another run's, or was left running (detached).
func checkJobsNotRunning(jobs []Job, sbs []*runtimeapi.PodSandbox, rootDir string) error {
	var errs []error
	for _, j := range jobs {
		for _, sb := range sbs {
			if sb.Labels[batchv1.ControllerUidLabel] != string(j.Job.UID) {
				continue
			}
			if e := runningElsewhere(sb, rootDir); e != nil {
				e.Replaceable = false // --replace takes pods, not Jobs
				errs = append(errs, fmt.Errorf("job %s/%s: its %w", j.Job.Namespace, j.Job.Name, e))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// alreadyRunningError refuses a pod that another podrun runs, or left
// running (detached): two runs of one pod would fight over its sandbox
// and data dir.
type alreadyRunningError struct {
	Namespace, Name, UID string
	How                  string // "by podrun pid N", "detached"
	// Root is the pod's root dir when it is not the run's: `podrun down`
	// reaches it with that --root-dir.
	Root string
	// Replaceable: the run's --replace would stop the pod first (a
	// detached pod of the run's root dir).
	Replaceable bool
}

func (e *alreadyRunningError) Error() string {
	down := "podrun down"
	if e.Root != "" {
		down += " --root-dir " + e.Root
	}
	replace := ""
	if e.Replaceable {
		replace = ", or run with --replace to stop it and run the pod anew"
	}
	return fmt.Sprintf("pod %s/%s (uid %s) is already running (%s); stop it with `%s %s/%s`%s",
		e.Namespace, e.Name, e.UID, e.How, down, e.Namespace, e.Name, replace)
}

func parseInt64(s string) (int64, error) {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return v, err
}
