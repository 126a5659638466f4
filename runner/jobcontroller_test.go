package runner

import (
	"math"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jt0 is when the test Jobs start.
var jt0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// at is jt0 plus d.
func at(d time.Duration) time.Time { return jt0.Add(d) }

// testJob is a defaulted Job: completions 1, parallelism 1, backoffLimit
// 6, NonIndexed, restartPolicy Never, with the changes of mods.
func testJob(mods ...func(*batchv1.JobSpec)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "default"},
		Spec: batchv1.JobSpec{
			Completions: ptrTo[int32](1), Parallelism: ptrTo[int32](1), BackoffLimit: ptrTo[int32](6),
			CompletionMode: ptrTo(batchv1.NonIndexedCompletion),
			Template: v1.PodTemplateSpec{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever,
				Containers: []v1.Container{{Name: "c"}}}},
		},
	}
	for _, m := range mods {
		m(&j.Spec)
	}
	return j
}

func completions(n int32) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) {
		if n < 0 {
			s.Completions = nil
		} else {
			s.Completions = ptrTo(n)
		}
	}
}
func parallelism(n int32) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) { s.Parallelism = ptrTo(n) }
}
func backoffLimit(n int32) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) { s.BackoffLimit = ptrTo(n) }
}
func indexed(s *batchv1.JobSpec) { s.CompletionMode = ptrTo(batchv1.IndexedCompletion) }
func perIndex(n int32) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) {
		s.BackoffLimitPerIndex = ptrTo(n)
		s.BackoffLimit = ptrTo[int32](math.MaxInt32)
	}
}
func deadline(secs int64) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) { s.ActiveDeadlineSeconds = ptrTo(secs) }
}
func onFailure(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = v1.RestartPolicyOnFailure }
func policy(rules ...batchv1.PodFailurePolicyRule) func(*batchv1.JobSpec) {
	return func(s *batchv1.JobSpec) { s.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: rules} }
}
func onExit(action batchv1.PodFailurePolicyAction, codes ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
		Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: codes}}
}

// Pods of the test Jobs, their statuses as a run reports them.
func runningJobPod(index int) jobPod {
	return jobPod{Name: "default/p", Index: index, Status: v1.PodStatus{Phase: v1.PodRunning}}
}
func succeededAt(index int, end time.Duration) jobPod {
	return jobPod{Name: "default/p", Index: index, Status: v1.PodStatus{Phase: v1.PodSucceeded}, Ended: true, Finished: at(end)}
}
func failedAt(index int, end time.Duration, code int32) jobPod {
	return jobPod{Name: "default/p", Index: index, Ended: true, Finished: at(end), Status: v1.PodStatus{Phase: v1.PodFailed,
		ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{
			Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}}}}
}
func withCounts(p jobPod, failures, ignored int32) jobPod {
	p.FailureCount, p.IgnoredFailureCount = failures, ignored
	return p
}
func restarted(index int, restarts int32) jobPod {
	p := runningJobPod(index)
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", RestartCount: restarts}}
	return p
}

func TestDecideJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		pods []jobPod
		now  time.Duration // since jt0

		create []int         // indexes of the pods made
		stop   []int         // positions of the pods stopped
		wake   time.Duration // since jt0; -1: none
		end    string        // "": not over; else the reason
		endPod int           // the pod that failed the Job
		failed int32         // status.failed
	}{
		{name: "a new Job makes its pod", job: testJob(), create: []int{-1}, wake: -1},
		{name: "its pod runs: nothing to do", job: testJob(), pods: []jobPod{runningJobPod(-1)}, wake: -1},
		{name: "its pod succeeded: complete", job: testJob(), pods: []jobPod{succeededAt(-1, 5*time.Second)}, now: 6 * time.Second,
			wake: -1, end: batchv1.JobReasonCompletionsReached, endPod: -1},
		{name: "a failure: a new pod 10 s after it", job: testJob(), pods: []jobPod{failedAt(-1, 5*time.Second, 1)}, now: 6 * time.Second,
			wake: 15 * time.Second, failed: 1},
		{name: "the back-off over: a new pod", job: testJob(), pods: []jobPod{failedAt(-1, 5*time.Second, 1)}, now: 15 * time.Second,
			create: []int{-1}, wake: -1, failed: 1},
		{name: "two failures: 20 s after the last", job: testJob(),
			pods: []jobPod{failedAt(-1, 5*time.Second, 1), failedAt(-1, 20*time.Second, 1)}, now: 21 * time.Second,
			wake: 40 * time.Second, failed: 2},
		{name: "the back-off is at most 10 minutes", job: testJob(backoffLimit(20)),
			pods: slices.Repeat([]jobPod{failedAt(-1, time.Second, 1)}, 8), now: 2 * time.Second,
			wake: time.Second + 10*time.Minute, failed: 8},
		{name: "failures since the last success only", job: testJob(completions(3)),
			pods: []jobPod{failedAt(-1, 1*time.Second, 1), failedAt(-1, 20*time.Second, 1), succeededAt(-1, 40*time.Second), failedAt(-1, 50*time.Second, 1)},
			now:  51 * time.Second, wake: 60 * time.Second, failed: 3},
		{name: "failures beyond backoffLimit: BackoffLimitExceeded, the last failed pod's", job: testJob(backoffLimit(2)),
			pods: []jobPod{failedAt(-1, 1*time.Second, 1), failedAt(-1, 20*time.Second, 2), failedAt(-1, 50*time.Second, 3)},
			now:  51 * time.Second, wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 2, failed: 3},
		{name: "backoffLimit 0: the first failure fails the Job", job: testJob(backoffLimit(0)),
			pods: []jobPod{failedAt(-1, 1*time.Second, 1)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 0, failed: 1},
		{name: "backoffLimit reached, not exceeded: one more pod", job: testJob(backoffLimit(1)),
			pods: []jobPod{failedAt(-1, 1*time.Second, 1)}, now: 12 * time.Second, create: []int{-1}, wake: -1, failed: 1},
		{name: "completions 3, parallelism 1: one at a time", job: testJob(completions(3)),
			pods: []jobPod{succeededAt(-1, time.Second)}, now: 2 * time.Second, create: []int{-1}, wake: -1},
		{name: "completions 3, parallelism 2: two at once", job: testJob(completions(3), parallelism(2)),
			create: []int{-1, -1}, wake: -1},
		{name: "completions 3, parallelism 2, two succeeded: one more", job: testJob(completions(3), parallelism(2)),
			pods: []jobPod{succeededAt(-1, time.Second), succeededAt(-1, time.Second)}, now: 2 * time.Second, create: []int{-1}, wake: -1},
		{name: "completions 3 succeeded: complete", job: testJob(completions(3), parallelism(2)),
			pods: []jobPod{succeededAt(-1, time.Second), succeededAt(-1, time.Second), succeededAt(-1, 3*time.Second)}, now: 4 * time.Second,
			wake: -1, end: batchv1.JobReasonCompletionsReached, endPod: -1},
		{name: "a work queue: parallelism pods", job: testJob(completions(-1), parallelism(3)), create: []int{-1, -1, -1}, wake: -1},
		{name: "a work queue with a success: no new pod, the others finish", job: testJob(completions(-1), parallelism(2)),
			pods: []jobPod{succeededAt(-1, time.Second), runningJobPod(-1)}, now: 2 * time.Second, wake: -1},
		{name: "a work queue with a success and nothing active: complete", job: testJob(completions(-1), parallelism(2)),
			pods: []jobPod{succeededAt(-1, time.Second), failedAt(-1, time.Second, 1)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonCompletionsReached, endPod: -1, failed: 1},
		{name: "activeDeadlineSeconds not passed: wake at it", job: testJob(deadline(60)), pods: []jobPod{runningJobPod(-1)}, now: 10 * time.Second,
			wake: 60 * time.Second},
		{name: "activeDeadlineSeconds passed: DeadlineExceeded, the pod stopped", job: testJob(deadline(60)), pods: []jobPod{runningJobPod(-1)},
			now: 60 * time.Second, stop: []int{0}, wake: -1, end: batchv1.JobReasonDeadlineExceeded, endPod: -1},
		{name: "the deadline comes before the back-off ends", job: testJob(deadline(12)), pods: []jobPod{failedAt(-1, 5*time.Second, 1)},
			now: 6 * time.Second, wake: 12 * time.Second, failed: 1},
		{name: "restartPolicy OnFailure: restarts reaching backoffLimit fail the Job", job: testJob(onFailure, backoffLimit(2)),
			pods: []jobPod{restarted(-1, 2)}, stop: []int{0}, wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 0},
		{name: "restartPolicy OnFailure: restarts below backoffLimit", job: testJob(onFailure, backoffLimit(2)),
			pods: []jobPod{restarted(-1, 1)}, wake: -1},
		{name: "restartPolicy OnFailure, backoffLimit 0: any restart", job: testJob(onFailure, backoffLimit(0)),
			pods: []jobPod{restarted(-1, 1)}, stop: []int{0}, wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 0},
		{name: "podFailurePolicy FailJob", job: testJob(policy(onExit(batchv1.PodFailurePolicyActionFailJob, 42))),
			pods: []jobPod{failedAt(-1, time.Second, 42)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonPodFailurePolicy, endPod: 0, failed: 1},
		{name: "podFailurePolicy Ignore: not counted, backed off", job: testJob(backoffLimit(0), policy(onExit(batchv1.PodFailurePolicyActionIgnore, 137))),
			pods: []jobPod{failedAt(-1, time.Second, 137)}, now: 2 * time.Second, wake: 11 * time.Second},
		{name: "podFailurePolicy Count: counted", job: testJob(backoffLimit(0), policy(onExit(batchv1.PodFailurePolicyActionCount, 3))),
			pods: []jobPod{failedAt(-1, time.Second, 3)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 0, failed: 1},
		{name: "podFailurePolicy, no rule matching: counted", job: testJob(backoffLimit(0), policy(onExit(batchv1.PodFailurePolicyActionIgnore, 137))),
			pods: []jobPod{failedAt(-1, time.Second, 1)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonBackoffLimitExceeded, endPod: 0, failed: 1},
		{name: "Indexed: the lowest indexes first", job: testJob(indexed, completions(3), parallelism(2)), create: []int{0, 1}, wake: -1},
		{name: "Indexed: the next pending index", job: testJob(indexed, completions(3), parallelism(2)),
			pods: []jobPod{succeededAt(0, time.Second), runningJobPod(1)}, now: 2 * time.Second, create: []int{2}, wake: -1},
		{name: "Indexed: a failed index again, after the back-off", job: testJob(indexed, completions(2), parallelism(2)),
			pods: []jobPod{failedAt(0, time.Second, 1), runningJobPod(1)}, now: 12 * time.Second, create: []int{0}, wake: -1, failed: 1},
		{name: "Indexed: every index succeeded", job: testJob(indexed, completions(2), parallelism(2)),
			pods: []jobPod{succeededAt(0, time.Second), succeededAt(1, time.Second)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonCompletionsReached, endPod: -1},
		{name: "backoffLimitPerIndex: an index retried after its own back-off", job: testJob(indexed, completions(2), parallelism(2), perIndex(1)),
			pods: []jobPod{failedAt(0, time.Second, 1), runningJobPod(1)}, now: 2 * time.Second, wake: 11 * time.Second, failed: 1},
		{name: "backoffLimitPerIndex: its back-off over", job: testJob(indexed, completions(2), parallelism(2), perIndex(1)),
			pods: []jobPod{failedAt(0, time.Second, 1), runningJobPod(1)}, now: 11 * time.Second, create: []int{0}, wake: -1, failed: 1},
		{name: "backoffLimitPerIndex: an index beyond it fails; the Job once every index is done", job: testJob(indexed, completions(2), parallelism(2), perIndex(1)),
			pods: []jobPod{failedAt(0, time.Second, 1), withCounts(failedAt(0, 20*time.Second, 1), 1, 0), succeededAt(1, time.Second)}, now: 21 * time.Second,
			wake: -1, end: batchv1.JobReasonFailedIndexes, endPod: 1, failed: 2},
		{name: "backoffLimitPerIndex: a failed index, others still to run", job: testJob(indexed, completions(2), parallelism(1), perIndex(0)),
			pods: []jobPod{failedAt(0, time.Second, 1)}, now: 2 * time.Second, create: []int{1}, wake: -1, failed: 1},
		{name: "maxFailedIndexes exceeded", job: testJob(indexed, completions(3), parallelism(1), perIndex(0), func(s *batchv1.JobSpec) { s.MaxFailedIndexes = ptrTo[int32](0) }),
			pods: []jobPod{failedAt(0, time.Second, 1)}, now: 2 * time.Second,
			wake: -1, end: batchv1.JobReasonMaxFailedIndexesExceeded, endPod: 0, failed: 1},
		{name: "podFailurePolicy FailIndex", job: testJob(indexed, completions(2), parallelism(1), perIndex(3), policy(onExit(batchv1.PodFailurePolicyActionFailIndex, 9))),
			pods: []jobPod{failedAt(0, time.Second, 9)}, now: 2 * time.Second, create: []int{1}, wake: -1, failed: 1},
		{name: "successPolicy met: complete, the rest stopped", job: testJob(indexed, completions(3), parallelism(3), func(s *batchv1.JobSpec) {
			s.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptrTo("0")}}}
		}), pods: []jobPod{succeededAt(0, time.Second), runningJobPod(1), runningJobPod(2)}, now: 2 * time.Second,
			stop: []int{1, 2}, wake: -1, end: batchv1.JobReasonSuccessPolicy, endPod: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decideJob(tc.job, jobState{Start: jt0, Pods: tc.pods}, at(tc.now))
			var created []int
			for _, c := range d.Create {
				created = append(created, c.Index)
			}
			if !slices.Equal(created, tc.create) {
				t.Errorf("created %v, want %v", created, tc.create)
			}
			if !slices.Equal(d.Stop, tc.stop) {
				t.Errorf("stopped %v, want %v", d.Stop, tc.stop)
			}
			wantWake := time.Time{}
			if tc.wake >= 0 {
				wantWake = at(tc.wake)
			}
			if !d.Wake.Equal(wantWake) && !(tc.end != "" && tc.wake < 0) {
				t.Errorf("wake at %v, want %v", d.Wake.Sub(jt0), tc.wake)
			}
			switch {
			case tc.end == "" && d.End != nil:
				t.Errorf("the Job ended: %+v", d.End)
			case tc.end != "" && d.End == nil:
				t.Errorf("the Job did not end, want %s", tc.end)
			case tc.end != "" && (d.End.Reason != tc.end || d.End.Pod != tc.endPod):
				t.Errorf("the Job ended with %s by pod %d, want %s by %d", d.End.Reason, d.End.Pod, tc.end, tc.endPod)
			}
			if d.Status.Failed != tc.failed {
				t.Errorf("status.failed = %d, want %d", d.Status.Failed, tc.failed)
			}
		})
	}
}

func TestDecideJobEndStands(t *testing.T) {
	end := &jobEnd{Reason: batchv1.JobReasonDeadlineExceeded, Message: msgDeadlineExceeded, Pod: -1, At: jt0}
	d := decideJob(testJob(), jobState{Start: jt0, Pods: []jobPod{runningJobPod(-1), succeededAt(-1, time.Second)}, End: end}, at(time.Hour))
	if d.End != end || !slices.Equal(d.Stop, []int{0}) || len(d.Create) != 0 {
		t.Errorf("decision = %+v, want the end decided before, the running pod stopped, nothing made", d)
	}
	if len(d.Status.Conditions) != 2 || d.Status.Conditions[1].Type != batchv1.JobFailed || d.Status.CompletionTime != nil {
		t.Errorf("conditions = %+v, want FailureTarget and Failed, no completion time", d.Status.Conditions)
	}
}

func TestDecideJobNewIndexFailureCounts(t *testing.T) {
	job := testJob(indexed, completions(1), perIndex(3), policy(onExit(batchv1.PodFailurePolicyActionIgnore, 137)))
	for _, tc := range []struct {
		name             string
		last             jobPod
		failures, ignore int32
	}{
		{"a counted failure", withCounts(failedAt(0, time.Second, 1), 1, 0), 2, 0},
		{"an ignored failure", withCounts(failedAt(0, time.Second, 137), 1, 2), 1, 3},
	} {
		d := decideJob(job, jobState{Start: jt0, Pods: []jobPod{tc.last}}, at(time.Hour))
		if len(d.Create) != 1 || d.Create[0].FailureCount != tc.failures || d.Create[0].IgnoredFailureCount != tc.ignore {
			t.Errorf("%s: made %+v, want index 0 with counts %d, %d", tc.name, d.Create, tc.failures, tc.ignore)
		}
	}
}

func TestJobPodFinishTime(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	term := func(name string, end time.Duration) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(at(end))}}}
	}
	fallback := at(time.Hour)
	st := v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{term("a", time.Second), term("b", 3*time.Second)}}
	if got := jobPodFinishTime(pod, st, fallback); !got.Equal(at(3 * time.Second)) {
		t.Errorf("every container terminated: %v, want the last finishedAt", got.Sub(jt0))
	}
	st.ContainerStatuses[1] = v1.ContainerStatus{Name: "b"}
	st.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(at(2 * time.Second))}}
	if got := jobPodFinishTime(pod, st, fallback); !got.Equal(at(2 * time.Second)) {
		t.Errorf("a container not terminated: %v, want Ready=False's transition", got.Sub(jt0))
	}
	st.Conditions = nil
	if got := jobPodFinishTime(pod, st, fallback); !got.Equal(fallback) {
		t.Errorf("nothing to read: %v, want the fallback", got.Sub(jt0))
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	rules := func(r ...batchv1.SuccessPolicyRule) *batchv1.SuccessPolicy { return &batchv1.SuccessPolicy{Rules: r} }
	for _, tc := range []struct {
		name      string
		policy    *batchv1.SuccessPolicy
		succeeded []int
		want      string
	}{
		{"indexes all succeeded", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptrTo("0,2-3")}), []int{0, 2, 3}, "Matched rules at index 0"},
		{"indexes not all", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptrTo("0,2-3")}), []int{0, 2}, ""},
		{"a count of the indexes", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptrTo("0-3"), SucceededCount: ptrTo[int32](2)}), []int{1, 3}, "Matched rules at index 0"},
		{"a count alone", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptrTo("4")}, batchv1.SuccessPolicyRule{SucceededCount: ptrTo[int32](2)}), []int{1, 3}, "Matched rules at index 1"},
		{"nothing succeeded", rules(batchv1.SuccessPolicyRule{SucceededCount: ptrTo[int32](0)}), nil, ""},
	} {
		msg, ok := matchSuccessPolicy(tc.policy, 5, tc.succeeded)
		if msg != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q, %t; want %q", tc.name, msg, ok, tc.want)
		}
	}
}
