package runner

// A Job's run: podrun as its Job controller. decideJob (jobcontroller.go)
// decides; runJob carries its decisions out with the run's own pod runs
// (runPod): it makes the pods it says, each a new pod with a new name and
// UID and so a fresh sandbox, stops the ones it says (the controller
// deletes them), and decides again when a pod's status changes, a pod's
// run ends, or the time it names comes (a back-off's end, the deadline).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// Job is a Job the run runs as its controller would (docs/workloads.md).
type Job struct {
	// Job is the defaulted and validated Job (sources.Job's): completions,
	// parallelism, backoffLimit, completionMode set; its status is the
	// run's.
	Job *batchv1.Job
	// NewPod makes the Job's pod number n (0 for the first) for completion
	// index index (-1 for a NonIndexed Job), as the controller makes it
	// (sources.Job.Pod).
	NewPod func(n, index int) *v1.Pod
}

// name is the Job's namespace/name.
func (j Job) name() string { return j.Job.Namespace + "/" + j.Job.Name }

// JobResult is how a Job's run ended.
type JobResult struct {
	// Job is the Job with its status as the run ended: its conditions
	// (Complete or Failed, with the reason), its counts and times.
	Job *batchv1.Job
	// Pods are the pods it made, in the order made, each as it ended.
	Pods []PodResult
	// Outcome: reached when the Job completed, failed when it failed;
	// timeout, interrupted or error when the run ended before the Job did.
	Outcome Outcome
	Err     error // set with OutcomeError
	// FailedCode is the exit status of a Job that failed: the exit status
	// of the pod whose failure failed it (the last pod to fail, beyond
	// backoffLimit), 123 for DeadlineExceeded.
	FailedCode int
}

// Reached tells whether the Job completed.
func (r JobResult) Reached() bool { return r.Outcome == OutcomeReached }

// stopCause is why a Job's controller stops one of its pods: the cause of
// the pod's context.
type stopCause struct{ reason string }

func (c *stopCause) Error() string { return c.reason }

// jobPodRun is one pod of a Job's run.
type jobPodRun struct {
	pod    *v1.Pod
	stop   context.CancelCauseFunc
	userns uint32 // its user namespace range, 0 for the host's
}

// jobPodDone is the end of a Job's pod's run.
type jobPodDone struct {
	i   int
	res PodResult
}

// runJob runs a Job until it completes or fails (decideJob), or the run
// ends first (waitCtx: --timeout; ctx: a signal), then waits for its pods
// to be torn down, and calls synced once no pod of it will sync again.
func (r *runState) runJob(ctx, waitCtx context.Context, j Job, synced func()) JobResult {
	defer synced()
	jr := &jobRun{r: r, job: j, done: make(chan jobPodDone), changed: make(chan struct{}, 1), latest: map[int]v1.PodStatus{}}
	return jr.run(ctx, waitCtx)
}

// jobRun is the state of one Job's run.
type jobRun struct {
	r    *runState
	job  Job
	st   jobState
	pods []*jobPodRun
	res  []PodResult
	wg   sync.WaitGroup
	note string // what the last note of a back-off was about, not said twice

	done    chan jobPodDone // a pod's run ended
	changed chan struct{}   // a pod's status changed: latest holds it
	mu      sync.Mutex
	latest  map[int]v1.PodStatus // each pod's status not yet read, by position
}

func (j *jobRun) progressf(reason, format string, args ...any) {
	j.r.progressf("job/%s: %s: %s", j.job.Job.Name, reason, fmt.Sprintf(format, args...))
}

func (j *jobRun) run(ctx, waitCtx context.Context) JobResult {
	j.st.Start = j.r.now()
	out := JobResult{Job: j.job.Job.DeepCopy()}
	var lastErr error
	running := 0
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var d jobDecision
		if lastErr == nil {
			d = decideJob(j.job.Job, j.st, j.r.now())
			out.Job.Status = d.Status
			if d.End != nil && j.st.End == nil {
				j.st.End = d.End
				j.reportEnd(d.End)
			}
		}
		stop := d.Stop
		if lastErr != nil {
			stop = j.activePods()
		}
		for _, i := range stop {
			if !j.st.Pods[i].Stopping {
				j.st.Pods[i].Stopping = true
				j.pods[i].stop(&stopCause{reason: j.stopReason()})
			}
		}
		if waitCtx.Err() == nil && lastErr == nil {
			for _, np := range d.Create {
				j.start(ctx, waitCtx, np)
				running++
			}
		}
		over := j.st.End != nil || waitCtx.Err() != nil || lastErr != nil
		if running == 0 && over {
			break
		}
		if running == 0 && d.Wake.IsZero() {
			// Nothing runs and nothing will: a Job the controller would
			// leave waiting for ever. decideJob never decides it; say so
			// rather than hang.
			lastErr = errors.New("the Job controller makes no pod and waits for nothing")
			break
		}
		var wake <-chan time.Time
		if !over && !d.Wake.IsZero() {
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(max(0, d.Wake.Sub(j.r.now())))
			wake = timer.C
			if len(d.Create) == 0 && !j.anyActive() {
				j.backingOff(d.Wake)
			}
		}
		var waitDone <-chan struct{}
		if !over {
			waitDone = waitCtx.Done()
		}
		select {
		case done := <-j.done:
			running--
			if err := j.ended(done); err != nil && lastErr == nil {
				lastErr = err
			}
		case <-j.changed:
		case <-wake:
		case <-waitDone:
		}
		j.readStatuses()
	}
	j.wg.Wait()
	out.Pods = j.res
	switch {
	case lastErr != nil:
		out.Outcome, out.Err = OutcomeError, lastErr
	case j.st.End != nil && j.st.End.Complete:
		out.Outcome = OutcomeReached
	case j.st.End != nil:
		out.Outcome, out.FailedCode = OutcomeFailed, j.failedCode(j.st.End)
	case ctx.Err() != nil:
		out.Outcome = OutcomeInterrupted
	default:
		out.Outcome = OutcomeTimeout
	}
	return out
}

// anyActive tells whether a pod of the Job is active (not over, not
// stopping).
func (j *jobRun) anyActive() bool {
	for i := range j.st.Pods {
		if j.st.Pods[i].active() {
			return true
		}
	}
	return false
}

// activePods are the pods whose run has not ended, by position.
func (j *jobRun) activePods() []int {
	var out []int
	for i := range j.st.Pods {
		if !j.st.Pods[i].Ended {
			out = append(out, i)
		}
	}
	return out
}

// stopReason says why the controller stops a pod.
func (j *jobRun) stopReason() string {
	if e := j.st.End; e != nil {
		if e.Complete {
			return fmt.Sprintf("the Job completed (%s)", e.Reason)
		}
		return fmt.Sprintf("the Job failed (%s)", e.Reason)
	}
	return "the Job has more pods active than it wants"
}

// ended takes the end of a pod's run into the state, and returns its
// error when podrun could not run it: the Job cannot go on.
func (j *jobRun) ended(done jobPodDone) error {
	j.res[done.i] = done.res
	if done.res.Outcome == OutcomeError {
		return fmt.Errorf("pod %s: %w", j.st.Pods[done.i].Name, done.res.Err)
	}
	if o := done.res.Outcome; o == OutcomeTimeout || o == OutcomeInterrupted {
		j.st.Pods[done.i].Stopping = true // the run stopped it: not the pod's failure
	}
	j.update(done.i, done.res.Status, true)
	return nil
}

// readStatuses takes the statuses the pods reported since the last time
// into the state.
func (j *jobRun) readStatuses() {
	j.mu.Lock()
	latest := j.latest
	j.latest = map[int]v1.PodStatus{}
	j.mu.Unlock()
	for i, st := range latest {
		if !j.st.Pods[i].Ended {
			j.update(i, st, false)
		}
	}
}

// update takes a pod's status into the state, and whether its run ended.
// A pod is finished once it Succeeded or Failed, though its teardown may
// still run, as the controller counts it (and replaces it) then; its
// failure is noted once.
func (j *jobRun) update(i int, st v1.PodStatus, ended bool) {
	p := &j.st.Pods[i]
	wasTerminal := p.terminal()
	p.Status, p.Ended = st, p.Ended || ended
	if !p.terminal() || wasTerminal {
		return
	}
	p.Finished = jobPodFinishTime(j.pods[i].pod, st, j.r.now())
	if p.failed() && !p.Stopping {
		pod := j.pods[i].pod
		j.progressf("PodFailed", "pod %s failed (exit code %d); %d failed, backoffLimit %d",
			pod.Name, failedContainerExitCode(pod, st), j.failures(), *j.job.Job.Spec.BackoffLimit)
	}
}

// start makes and runs the Job's next pod.
func (j *jobRun) start(ctx, waitCtx context.Context, np newJobPod) {
	n := len(j.pods)
	pod := j.job.NewPod(n, np.Index)
	if j.job.Job.Spec.BackoffLimitPerIndex != nil && np.Index >= 0 {
		pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(np.FailureCount))
		if np.IgnoredFailureCount > 0 {
			pod.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(np.IgnoredFailureCount))
		}
	}
	podCtx, stop := context.WithCancelCause(waitCtx)
	base := j.userns(n)
	j.pods = append(j.pods, &jobPodRun{pod: pod, stop: stop, userns: base})
	j.st.Pods = append(j.st.Pods, jobPod{
		Name: pod.Namespace + "/" + pod.Name, Index: np.Index, Status: v1.PodStatus{Phase: v1.PodPending},
		FailureCount: np.FailureCount, IgnoredFailureCount: np.IgnoredFailureCount,
	})
	j.res = append(j.res, PodResult{Pod: pod, Status: v1.PodStatus{Phase: v1.PodPending}})
	j.note = ""
	j.progressf("SuccessfulCreate", "Created pod: %s", pod.Name)
	p := j.r.newJobPodRun(pod, base)
	// The run pulled ahead for the Job's first pods; a later one (a retry,
	// a further completion) pulls at its turns as a kubelet's would.
	p.images.noAhead = n >= jobParallel(j.job.Job)
	p.onStatus = func(st v1.PodStatus) {
		// Only the latest status matters: one the loop has not read yet
		// is replaced, and a pod never waits on the loop.
		j.mu.Lock()
		j.latest[n] = st
		j.mu.Unlock()
		select {
		case j.changed <- struct{}{}:
		default:
		}
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		res := j.r.runPod(ctx, podCtx, p, func() {})
		stop(nil)
		j.done <- jobPodDone{i: n, res: res}
	}()
}

// userns is the user namespace range of the Job's pod n: one of the
// ranges the run holds for the Job (one per pod it runs at once) that no
// pod of it still running holds.
func (j *jobRun) userns(n int) uint32 {
	bases := j.r.jobUserns[j.job.name()]
	if len(bases) == 0 {
		return 0
	}
	held := map[uint32]bool{}
	for i := range j.st.Pods {
		if !j.st.Pods[i].Ended {
			held[j.pods[i].userns] = true
		}
	}
	for _, b := range bases {
		if !held[b] {
			return b
		}
	}
	return bases[n%len(bases)]
}

// backingOff says once that the Job waits before its next pod.
func (j *jobRun) backingOff(until time.Time) {
	wait := until.Sub(j.r.now())
	if j.st.End != nil || wait <= 0 {
		return
	}
	if wait >= time.Second {
		wait = wait.Round(time.Second)
	} else {
		wait = wait.Round(time.Millisecond)
	}
	failed := fmt.Sprintf("%d failed pods", j.failures())
	if j.failures() == 1 {
		failed = "1 failed pod"
	}
	note := fmt.Sprintf("waiting %s before the next pod: the Job controller's back-off after %s", wait, failed)
	key := fmt.Sprint(j.failures())
	if ads := j.job.Job.Spec.ActiveDeadlineSeconds; ads != nil && until.Equal(j.st.Start.Add(time.Duration(*ads)*time.Second)) {
		note = fmt.Sprintf("the back-off after %s outlasts activeDeadlineSeconds %d: the Job fails in %s", failed, *ads, wait)
		key += " deadline"
	}
	if key != j.note {
		j.note = key
		j.progressf("BackOff", "%s", note)
	}
}

// failures counts the Job's failed pods.
func (j *jobRun) failures() int {
	n := 0
	for i := range j.st.Pods {
		if j.st.Pods[i].failed() {
			n++
		}
	}
	return n
}

// reportEnd reports the Job's end, as the controller's events do.
func (j *jobRun) reportEnd(e *jobEnd) {
	if e.Complete {
		j.progressf("Completed", "Job completed (%s)", e.Reason)
		return
	}
	j.progressf(e.Reason, "%s", e.Message)
}

// failedCode is the exit status of a Job that failed: 123 for
// DeadlineExceeded (its activeDeadlineSeconds passed, as a pod's does),
// else the exit status of the pod that failed it (failedPodExitCode: its
// first failed container's exit code, 1 without one).
func (j *jobRun) failedCode(e *jobEnd) int {
	if e.Reason == batchv1.JobReasonDeadlineExceeded {
		return ExitDeadlineExceeded
	}
	if e.Pod < 0 || e.Pod >= len(j.res) {
		return 1
	}
	r := j.res[e.Pod]
	return failedPodExitCode(r.Pod, r.Status)
}

// newJobPodRun is the run of a pod of a Job: it waits for the pod to
// complete whatever --wait says, is never left running (-d), runs in the
// user namespace range base, and its UID is podrun's.
func (r *runState) newJobPodRun(pod *v1.Pod, base uint32) *podRun {
	p := newPodRun(r, pod)
	p.wait, p.inJob, p.usernsBase, p.givenUID = WaitComplete, true, base, true
	return p
}

// JobFirstPods are the pods each Job makes first: as many as it runs at
// once (parallelism, no more than its completions), the lowest indexes of
// an Indexed Job. Admission and the run's other refusals judge them
// before anything is made, as they judge the run's pods.
func JobFirstPods(jobs []Job) []*v1.Pod {
	var out []*v1.Pod
	for _, j := range jobs {
		n := jobParallel(j.Job)
		for i := range n {
			index := -1
			if isIndexedJob(j.Job) {
				index = i
			}
			out = append(out, j.NewPod(i, index))
		}
	}
	return out
}

// jobParallel is how many pods a Job runs at once at most: parallelism,
// no more than its completions, at least one.
func jobParallel(job *batchv1.Job) int {
	n := int(*job.Spec.Parallelism)
	if c := job.Spec.Completions; c != nil && int(*c) < n {
		n = int(*c)
	}
	return max(n, 1)
}
