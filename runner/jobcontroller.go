package runner

// The Job controller's decision, as a pure function: what
// pkg/controller/job's syncJob and manageJob (Kubernetes v1.37) decide on
// each sync, over the pods podrun made for the Job instead of the pods an
// informer lists. decideJob says whether the Job is over (its condition),
// which pods to stop and which to make (with their completion indexes),
// and when to decide again at the latest (a back-off's end, the
// deadline). runner/job.go carries it out.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/sources/jobindexes"
)

// The Job controller's back-off before it makes a pod again after
// failures (DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff): 10 s
// after the first failure since the last success, doubled for each
// further one, at most 10 minutes, counted from the last failure.
// Variables only so that the runner's tests can shorten them
// (export_test.go); nothing else changes them.
var (
	jobPodFailureBackOff    = 10 * time.Second
	maxJobPodFailureBackOff = 10 * time.Minute
)

// The messages of the Job controller's conditions.
const (
	msgBackoffLimitExceeded = "Job has reached the specified backoff limit"
	msgDeadlineExceeded     = "Job was active longer than specified deadline"
	msgMaxFailedIndexes     = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes        = "Job has failed indexes"
	msgCompletionsReached   = "Reached expected number of succeeded pods"
)

// jobPod is one pod of a Job as the controller sees it.
type jobPod struct {
	Name   string       // namespace/name
	Index  int          // completion index; -1 for a NonIndexed Job
	Status v1.PodStatus // as last seen
	// Ended: the pod's run is over (it succeeded, failed, or was stopped
	// and torn down). A pod that ended without succeeding counts as
	// failed, as the controller counts a pod deleted before it succeeded.
	Ended bool
	// Stopping: the controller asked the pod to stop (it deleted it).
	Stopping bool
	// Finished is when the pod ended (jobPodFinishTime), once it did.
	Finished time.Time
	// FailureCount and IgnoredFailureCount are the failures of its index
	// before it (counted by backoffLimitPerIndex, and ignored by the pod
	// failure policy): the job-index-failure-count and
	// job-index-ignored-failure-count annotations it was made with.
	FailureCount, IgnoredFailureCount int32
}

// terminal tells whether the pod is done: Succeeded, Failed, or over.
func (p *jobPod) terminal() bool {
	return p.Ended || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// active is the controller's IsPodActive: not terminal and not deleted.
func (p *jobPod) active() bool { return !p.terminal() && !p.Stopping }

func (p *jobPod) succeeded() bool { return p.Status.Phase == v1.PodSucceeded }

// failed is the controller's isPodFailed: phase Failed, or over (deleted)
// without succeeding.
func (p *jobPod) failed() bool {
	return p.Status.Phase == v1.PodFailed || (p.Ended && !p.succeeded())
}

// jobState is what the controller knows of a Job: when it started, every
// pod made for it in order, and its end once decided.
type jobState struct {
	Start time.Time
	Pods  []jobPod
	// End is the Job's end once decided: the controller stops deciding
	// anything else, and stops its active pods.
	End *jobEnd
}

// jobEnd is how a Job ended: Complete, or Failed with a reason.
type jobEnd struct {
	Complete bool
	// Reason and Message are the condition's: CompletionsReached or
	// SuccessPolicy for a Job that completed; BackoffLimitExceeded,
	// DeadlineExceeded, PodFailurePolicy, FailedIndexes or
	// MaxFailedIndexesExceeded for one that failed.
	Reason, Message string
	// Pod is the pod whose failure failed the Job (its position in
	// jobState.Pods), -1 when none did (a deadline, a success).
	Pod int
	At  time.Time
}

// newJobPod is a pod the controller makes: its completion index and its
// index's failure counts.
type newJobPod struct {
	Index                             int
	FailureCount, IgnoredFailureCount int32
}

// jobDecision is one sync of the controller.
type jobDecision struct {
	End    *jobEnd     // set once the Job is over (the same End on every later sync)
	Stop   []int       // pods to stop now, by position
	Create []newJobPod // pods to make now
	// Wake is when to decide again at the latest (a back-off's end, the
	// deadline); zero: when a pod changes.
	Wake   time.Time
	Status batchv1.JobStatus // the Job's status: counts, indexes, conditions, times
}

// decideJob is one sync of the Job controller over st at now. job is the
// defaulted Job (completions and parallelism set as SetDefaults_Job sets
// them, backoffLimit set, ...).
//
// Its order is syncJob's: an end already decided stands; then the pod
// failure policy's FailJob, backoffLimit (failed pods beyond it, or for
// restartPolicy OnFailure container restarts reaching it) and
// activeDeadlineSeconds fail the Job; for an Indexed Job, failed indexes
// (backoffLimitPerIndex) and the success policy end it; then manageJob
// makes the pods the Job wants (at most parallelism, no more than the
// completions left, the lowest pending indexes), unless the back-off since
// the last failure has not passed; then a Job with its completions (any
// one success without completions) and nothing active completes. Once
// the Job is over, every active pod is stopped.
func decideJob(job *batchv1.Job, st jobState, now time.Time) jobDecision {
	c := newJobCounts(job, st)
	d := jobDecision{End: st.End}
	if d.End == nil {
		d.End = c.failure(now, &d)
	}
	if d.End == nil && c.indexed && job.Spec.SuccessPolicy != nil {
		if msg, ok := matchSuccessPolicy(job.Spec.SuccessPolicy, c.completions, c.succeededIndexes); ok {
			d.End = &jobEnd{Complete: true, Reason: batchv1.JobReasonSuccessPolicy, Message: msg, Pod: -1, At: now}
		}
	}
	if d.End != nil {
		for i := range st.Pods {
			if st.Pods[i].active() {
				d.Stop = append(d.Stop, i)
			}
		}
		d.Status = c.status(job, st, d.End, 0)
		return d
	}
	active := c.manage(now, &d)
	complete := false
	if job.Spec.Completions == nil {
		complete = c.succeeded > 0 && active == 0
	} else {
		complete = c.succeeded >= int(*job.Spec.Completions) && active == 0
	}
	if complete {
		d.End = &jobEnd{Complete: true, Reason: batchv1.JobReasonCompletionsReached, Message: msgCompletionsReached, Pod: -1, At: now}
	}
	d.Status = c.status(job, st, d.End, len(d.Create))
	return d
}

// jobCounts is what one sync counts of a Job's pods.
type jobCounts struct {
	job         *batchv1.Job
	st          jobState
	indexed     bool
	perIndex    bool // backoffLimitPerIndex is set
	completions int32
	active      []int // active pods, by position
	terminating int   // pods stopping, not yet over
	succeeded   int   // succeeded pods; for an Indexed Job, succeeded indexes
	failed      int   // failed pods the pod failure policy does not ignore

	succeededIndexes []int
	failedIndexes    []int // with backoffLimitPerIndex
}

func newJobCounts(job *batchv1.Job, st jobState) *jobCounts {
	c := &jobCounts{job: job, st: st, indexed: isIndexedJob(job), perIndex: job.Spec.BackoffLimitPerIndex != nil}
	if job.Spec.Completions != nil {
		c.completions = *job.Spec.Completions
	}
	succeeded, failed := map[int]bool{}, map[int]bool{}
	for i := range st.Pods {
		p := &st.Pods[i]
		switch {
		case p.active():
			c.active = append(c.active, i)
		case p.Stopping && !p.terminal():
			c.terminating++
		}
		if p.succeeded() {
			c.succeeded++
			if c.indexed && p.Index >= 0 && p.Index < int(c.completions) {
				succeeded[p.Index] = true
			}
		}
		if p.failed() {
			if _, counted, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counted {
				c.failed++
			}
			if c.perIndex && p.Index >= 0 && p.Index < int(c.completions) && c.indexFailed(p) {
				failed[p.Index] = true
			}
		}
	}
	if c.indexed {
		c.succeededIndexes = slices.Sorted(maps.Keys(succeeded))
		c.succeeded = len(c.succeededIndexes)
		c.failedIndexes = slices.Sorted(maps.Keys(failed))
	}
	return c
}

// indexFailed is the controller's isIndexFailed: a failed pod whose
// failure matched FailIndex, or counted and its index's
// backoffLimitPerIndex already reached.
func (c *jobCounts) indexFailed(p *jobPod) bool {
	_, counted, action := matchPodFailurePolicy(c.job.Spec.PodFailurePolicy, p)
	if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	return counted && p.FailureCount >= *c.job.Spec.BackoffLimitPerIndex
}

// failure decides whether the Job failed, in syncJob's order, and sets
// d.Wake to the deadline while it has not passed.
func (c *jobCounts) failure(now time.Time, d *jobDecision) *jobEnd {
	job, st := c.job, c.st
	fail := func(reason, msg string, pod int) *jobEnd {
		return &jobEnd{Reason: reason, Message: msg, Pod: pod, At: now}
	}
	if job.Spec.PodFailurePolicy != nil {
		for i := range st.Pods {
			if p := &st.Pods[i]; p.failed() {
				if msg, _, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); msg != nil {
					return fail(batchv1.JobReasonPodFailurePolicy, *msg, i)
				}
			}
		}
	}
	if c.failed > int(*job.Spec.BackoffLimit) {
		return fail(batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimitExceeded, c.lastFailed())
	}
	if pod, past := c.pastBackoffLimitOnFailure(); past {
		return fail(batchv1.JobReasonBackoffLimitExceeded, msgBackoffLimitExceeded, pod)
	}
	if ads := job.Spec.ActiveDeadlineSeconds; ads != nil {
		deadline := st.Start.Add(time.Duration(*ads) * time.Second)
		if !now.Before(deadline) {
			return fail(batchv1.JobReasonDeadlineExceeded, msgDeadlineExceeded, -1)
		}
		d.Wake = deadline
	}
	if c.perIndex {
		if m := job.Spec.MaxFailedIndexes; m != nil && len(c.failedIndexes) > int(*m) {
			return fail(batchv1.JobReasonMaxFailedIndexesExceeded, msgMaxFailedIndexes, c.lastFailed())
		}
		if len(c.failedIndexes) > 0 && len(c.failedIndexes)+len(c.succeededIndexes) >= int(c.completions) {
			return fail(batchv1.JobReasonFailedIndexes, msgFailedIndexes, c.lastFailed())
		}
	}
	return nil
}

// lastFailed is the failed pod that finished last, -1 for none.
func (c *jobCounts) lastFailed() int {
	last := -1
	for i := range c.st.Pods {
		p := &c.st.Pods[i]
		if p.failed() && (last < 0 || !p.Finished.Before(c.st.Pods[last].Finished)) {
			last = i
		}
	}
	return last
}

// pastBackoffLimitOnFailure is the controller's: under restartPolicy
// OnFailure, the restarts of the containers of the pods still Pending or
// Running reach backoffLimit (any restart, with backoffLimit 0). It
// returns the first pod that restarted.
func (c *jobCounts) pastBackoffLimitOnFailure() (int, bool) {
	if c.job.Spec.Template.Spec.RestartPolicy != v1.RestartPolicyOnFailure {
		return -1, false
	}
	restarts, first := int32(0), -1
	for i := range c.st.Pods {
		p := &c.st.Pods[i]
		if p.terminal() || (p.Status.Phase != v1.PodRunning && p.Status.Phase != v1.PodPending) {
			continue
		}
		n := int32(0)
		for _, s := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			n += s.RestartCount
		}
		if n > 0 && first < 0 {
			first = i
		}
		restarts += n
	}
	limit := *c.job.Spec.BackoffLimit
	if limit == 0 {
		return first, restarts > 0
	}
	return first, restarts >= limit
}

// manage is manageJob: it stops the active pods beyond what the Job wants,
// or makes the pods it lacks once the back-off allows, and returns how
// many pods are active then (those it makes included).
func (c *jobCounts) manage(now time.Time, d *jobDecision) int {
	job := c.job
	parallelism := int(*job.Spec.Parallelism)
	active := len(c.active)
	want := 0
	switch {
	case job.Spec.Completions == nil && c.succeeded > 0:
		want = active
	case job.Spec.Completions == nil:
		want = parallelism
	default:
		want = max(0, min(int(c.completions)-c.succeeded, parallelism))
	}
	if extra := active - want; extra > 0 {
		// activePodsForRemoval: the controller deletes the ones least
		// advanced; podrun the newest, which started last.
		d.Stop = append(d.Stop, c.active[len(c.active)-extra:]...)
		return active - extra
	}
	terminating := 0
	if onlyReplaceFailedPods(job) {
		terminating = c.terminating
	}
	diff := want - terminating - active
	if diff <= 0 {
		return active
	}
	if !c.perIndex {
		if wait := c.backOff(now); wait > 0 {
			d.wakeBy(now.Add(wait))
			return active
		}
	}
	if !c.indexed {
		for range diff {
			d.Create = append(d.Create, newJobPod{Index: -1})
		}
		return active + diff
	}
	for _, ix := range c.pendingIndexes(diff) {
		np := newJobPod{Index: ix}
		if c.perIndex {
			last := c.lastFailedOfIndex(ix)
			if last >= 0 {
				p := &c.st.Pods[last]
				if wait := backOffFor(int(p.FailureCount+p.IgnoredFailureCount)+1, p.Finished, now); wait > 0 {
					d.wakeBy(now.Add(wait))
					continue
				}
				np.FailureCount, np.IgnoredFailureCount = p.FailureCount, p.IgnoredFailureCount
				if _, counted, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counted {
					np.FailureCount++
				} else {
					np.IgnoredFailureCount++
				}
			}
		}
		d.Create = append(d.Create, np)
	}
	return active + len(d.Create)
}

// wakeBy makes the decision wake at t at the latest.
func (d *jobDecision) wakeBy(t time.Time) {
	if d.Wake.IsZero() || t.Before(d.Wake) {
		d.Wake = t
	}
}

// backOff is how long the controller still waits before it makes a pod:
// the back-off for the pods that failed after the last success
// (newBackoffRecord), from the last of them (getRemainingTime).
func (c *jobCounts) backOff(now time.Time) time.Duration {
	var lastSuccess time.Time
	for i := range c.st.Pods {
		if p := &c.st.Pods[i]; p.succeeded() && p.Finished.After(lastSuccess) {
			lastSuccess = p.Finished
		}
	}
	failures := 0
	var lastFailure time.Time
	for i := range c.st.Pods {
		p := &c.st.Pods[i]
		if !p.failed() || !p.Finished.After(lastSuccess) {
			continue
		}
		failures++
		if p.Finished.After(lastFailure) {
			lastFailure = p.Finished
		}
	}
	return backOffFor(failures, lastFailure, now)
}

// backOffFor is getRemainingTimeForFailuresCount: what is left at now of
// the back-off after failures failures, the last at last.
func backOffFor(failures int, last, now time.Time) time.Duration {
	if failures == 0 {
		return 0
	}
	wait := jobPodFailureBackOff
	for i := 1; i < failures; i++ {
		wait *= 2
		if wait >= maxJobPodFailureBackOff {
			wait = maxJobPodFailureBackOff
			break
		}
	}
	if elapsed := now.Sub(last); elapsed < wait {
		return wait - elapsed
	}
	return 0
}

// pendingIndexes is firstPendingIndexes: the lowest count indexes below
// completions that no pod holds: not succeeded, not active, not failed
// (backoffLimitPerIndex) and, when only failed pods are replaced, not
// held by a pod still stopping.
func (c *jobCounts) pendingIndexes(count int) []int {
	taken := map[int]bool{}
	for _, ix := range c.succeededIndexes {
		taken[ix] = true
	}
	for _, ix := range c.failedIndexes {
		taken[ix] = true
	}
	replaceFailed := onlyReplaceFailedPods(c.job)
	for i := range c.st.Pods {
		p := &c.st.Pods[i]
		if p.active() || (replaceFailed && p.Stopping && !p.terminal()) {
			taken[p.Index] = true
		}
	}
	var out []int
	for ix := 0; ix < int(c.completions) && len(out) < count; ix++ {
		if !taken[ix] {
			out = append(out, ix)
		}
	}
	return out
}

// lastFailedOfIndex is the failed pod of index ix whose replacement the
// controller makes next (getPodsWithDelayedDeletionPerIndex): the one with
// the most failures before it, the last to finish among them; -1 for none.
func (c *jobCounts) lastFailedOfIndex(ix int) int {
	last := -1
	for i := range c.st.Pods {
		p := &c.st.Pods[i]
		if p.Index != ix || !p.failed() {
			continue
		}
		if last < 0 {
			last = i
			continue
		}
		l := &c.st.Pods[last]
		if l.FailureCount+l.IgnoredFailureCount <= p.FailureCount+p.IgnoredFailureCount && !p.Finished.Before(l.Finished) {
			last = i
		}
	}
	return last
}

// status is the Job's status after the sync: the counts, the completed
// and failed indexes, and once it is over its conditions (FailureTarget
// and Failed, or SuccessCriteriaMet and Complete, as the controller leaves
// them) and, for a complete Job, its completion time. created pods were
// just made, and are active.
func (c *jobCounts) status(job *batchv1.Job, st jobState, end *jobEnd, created int) batchv1.JobStatus {
	start := metav1.NewTime(st.Start)
	s := batchv1.JobStatus{
		StartTime:   &start,
		Active:      int32(len(c.active) + created),
		Succeeded:   int32(c.succeeded),
		Failed:      int32(c.failed),
		Terminating: ptrTo(int32(c.terminating)),
	}
	ready := int32(0)
	for _, i := range c.active {
		if podReady(st.Pods[i].Status) {
			ready++
		}
	}
	s.Ready = &ready
	if c.indexed {
		s.CompletedIndexes = jobindexes.Format(c.succeededIndexes)
		if c.perIndex {
			s.FailedIndexes = ptrTo(jobindexes.Format(c.failedIndexes))
		}
	}
	if end != nil {
		at := metav1.NewTime(end.At)
		cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
			return batchv1.JobCondition{Type: t, Status: v1.ConditionTrue, Reason: end.Reason, Message: end.Message,
				LastProbeTime: at, LastTransitionTime: at}
		}
		if end.Complete {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}
			s.CompletionTime = &at
		} else {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed)}
		}
	}
	return s
}

// matchPodFailurePolicy is the controller's: for a failed pod, the first
// rule whose onExitCodes (a terminated container of the pod, regular ones
// first, with a non-zero exit code In or NotIn the values) or
// onPodConditions (a condition of the pod with that type and status)
// matches decides: FailJob gives the Job's failure message, Ignore does
// not count the failure against backoffLimit, Count and FailIndex count
// it. No policy, or no rule matching: counted.
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, p *jobPod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return nil, true, nil
	}
	for i, rule := range policy.Rules {
		action := rule.Action
		var failMsg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(&p.Status, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			failMsg = fmt.Sprintf("Container %s for pod %s failed with exit code %v matching %v rule at index %d",
				cs.Name, p.Name, cs.State.Terminated.ExitCode, rule.Action, i)
		case rule.OnPodConditions != nil:
			cond := matchOnPodConditions(&p.Status, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			failMsg = fmt.Sprintf("Pod %s has condition %v matching %v rule at index %d", p.Name, cond.Type, rule.Action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		case batchv1.PodFailurePolicyActionFailJob:
			msg := failMsg
			return &msg, true, &action
		}
	}
	return nil, true, nil
}

// matchOnExitCodes is the first terminated container, regular containers
// before init containers, with a non-zero exit code the requirement
// matches.
func matchOnExitCodes(st *v1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue
			}
			in := slices.Contains(req.Values, t.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) ||
				(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
				return cs
			}
		}
	}
	return nil
}

// matchOnPodConditions is the first condition of the pod that a pattern
// matches.
func matchOnPodConditions(st *v1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *v1.PodCondition {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		for _, pat := range patterns {
			if c.Type == pat.Type && c.Status == pat.Status {
				return c
			}
		}
	}
	return nil
}

// matchSuccessPolicy is the controller's: the first rule whose
// succeededIndexes have all succeeded (or succeededCount of them), or
// without succeededIndexes whose succeededCount indexes have succeeded.
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int32, succeeded []int) (string, bool) {
	if len(succeeded) == 0 {
		return "", false
	}
	done := map[int]bool{}
	for _, ix := range succeeded {
		done[ix] = true
	}
	for i, rule := range policy.Rules {
		if rule.SucceededIndexes != nil {
			want, err := jobindexes.Parse(*rule.SucceededIndexes, completions)
			if err != nil || len(want) == 0 {
				continue
			}
			have := 0
			for _, ix := range want {
				if done[ix] {
					have++
				}
			}
			if have == len(want) || (rule.SucceededCount != nil && have >= int(*rule.SucceededCount)) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// jobPodFinishTime is when a pod ended, as the controller's
// getFinishedTime reads it: the last finishedAt of its regular containers
// and sidecars once all have terminated, else when its Ready condition
// turned False, else fallback (when podrun saw its run end).
func jobPodFinishTime(pod *v1.Pod, st v1.PodStatus, fallback time.Time) time.Time {
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	var last time.Time
	all := true
	consider := func(cs v1.ContainerStatus) {
		t := cs.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			all = false
			return
		}
		if t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	for _, cs := range st.ContainerStatuses {
		consider(cs)
	}
	for _, cs := range st.InitContainerStatuses {
		if sidecars[cs.Name] {
			consider(cs)
		}
	}
	if all && !last.IsZero() {
		return last
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady && c.Status == v1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return fallback
}

// isIndexedJob tells whether the Job's completion mode is Indexed.
func isIndexedJob(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// onlyReplaceFailedPods: the controller makes a replacement only once a
// pod has failed, not while it stops (podReplacementPolicy Failed, which a
// pod failure policy implies).
func onlyReplaceFailedPods(job *batchv1.Job) bool {
	if p := job.Spec.PodReplacementPolicy; p != nil && *p == batchv1.Failed {
		return true
	}
	return job.Spec.PodFailurePolicy != nil
}

// podReady tells whether a pod's Ready condition is True.
func podReady(st v1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }
