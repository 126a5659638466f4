package main

// Around a run's workloads (docs/workloads.md): the run's Jobs from the
// manifests (setJobs), what podrun says of the Deployments, CronJobs, ...
// the pods came from (noteWorkloads), each Job's outcome (reportJobs) and
// the objects -o json|yaml prints (resultObjects).

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/report/podlist"
	"github.com/podrun/podrun/sources"
)

// setJobs are the set's Jobs as the runner runs them.
func setJobs(set *sources.Set) []runner.Job {
	return objectsOf(set.Jobs, runnerJob)
}

func runnerJob(j *sources.Job) runner.Job { return runner.Job{Job: j.Job, NewPod: j.Pod} }

// podsToCheck are the pods a run's pre-flight checks: the set's pods and
// the pods each Job makes first (runner.JobFirstPods), as runner.Run's
// refusals check them.
func podsToCheck(set *sources.Set) []*v1.Pod {
	return append(setPods(set), runner.JobFirstPods(setJobs(set))...)
}

// workloadNotes are what podrun says of the workloads of set before it
// runs them: a Deployment of 3 replicas runs one pod, a CronJob runs its
// Job now.
func workloadNotes(set *sources.Set) []string {
	var notes []string
	for _, p := range set.Pods {
		if w := p.Workload; w != nil {
			for _, n := range w.Notes {
				notes = append(notes, fmt.Sprintf("%s: %s", w, n))
			}
		}
	}
	for _, j := range set.Jobs {
		if w := j.Workload; w != nil {
			notes = append(notes, fmt.Sprintf("%s: running its Job now, as job/%s", w, j.Job.Name))
		}
	}
	return notes
}

// jobOfPod says, in a dry run's summary, which Job a pod is the first of:
// " (job default/pi, its first pod: up to 7 pods, backoffLimit 6)".
func jobOfPod(p runner.DryRunPod) string {
	if p.Job == nil {
		return ""
	}
	s := p.Job.Spec
	return fmt.Sprintf(" (job %s/%s, its first pod: backoffLimit %d, completions %s, parallelism %d)",
		p.Job.Namespace, p.Job.Name, *s.BackoffLimit, optional(s.Completions), *s.Parallelism)
}

// optional is a count that may be unset: "-" when it is.
func optional(n *int32) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// noteWorkloads writes workloadNotes to the run's progress.
func noteWorkloads(set *sources.Set, progress runner.Progress) {
	if progress == nil {
		return
	}
	for _, n := range workloadNotes(set) {
		progress.Note(n)
	}
}

// reportJobs notes each Job's outcome after its pods': how it ended, its
// condition's reason and message, and what became of its pods.
func reportJobs(res *runner.Result, progress runner.Progress) {
	if progress == nil {
		return
	}
	for _, j := range res.Jobs {
		for _, p := range j.Pods {
			progress.Note(podLine(p))
		}
		progress.Note(jobLine(j))
	}
}

// jobLine is a Job's outcome in a line: "job/pi: complete (1 pod: 1
// succeeded)", "job/pi: failed: BackoffLimitExceeded: Job has reached the
// specified backoff limit (3 pods: 3 failed)".
func jobLine(j runner.JobResult) string {
	st := j.Job.Status
	how := j.Outcome.String()
	for _, c := range st.Conditions {
		switch {
		case c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue:
			how = "complete"
		case c.Type == batchv1.JobFailed && c.Status == v1.ConditionTrue:
			how = fmt.Sprintf("failed: %s: %s", c.Reason, c.Message)
		}
	}
	pods := fmt.Sprintf("%d pods", len(j.Pods))
	if len(j.Pods) == 1 {
		pods = "1 pod"
	}
	var counts []string
	if st.Succeeded > 0 {
		counts = append(counts, fmt.Sprintf("%d succeeded", st.Succeeded))
	}
	if st.Failed > 0 {
		counts = append(counts, fmt.Sprintf("%d failed", st.Failed))
	}
	if len(counts) > 0 {
		pods += ": " + strings.Join(counts, ", ")
	}
	return fmt.Sprintf("job/%s: %s (%s)", j.Job.Name, how, pods)
}

// resultObjects are what -o json|yaml prints of a run: each pod of the
// run with its final status, then each Job with its status followed by
// every pod it made; a run of one pod prints that pod alone, anything
// else a v1.List.
func resultObjects(res *runner.Result) any {
	var objs []k8sruntime.Object
	withStatus := func(r runner.PodResult) *v1.Pod {
		p := podlist.WithKind(r.Pod)
		p.Status = r.Status
		return p
	}
	for _, r := range res.Pods {
		objs = append(objs, withStatus(r))
	}
	for _, j := range res.Jobs {
		job := j.Job.DeepCopy()
		job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
		objs = append(objs, job)
		for _, r := range j.Pods {
			objs = append(objs, withStatus(r))
		}
	}
	if len(objs) == 1 && len(res.Jobs) == 0 {
		return objs[0]
	}
	l := &v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: []k8sruntime.RawExtension{}}
	for _, o := range objs {
		l.Items = append(l.Items, k8sruntime.RawExtension{Object: o})
	}
	return l
}
