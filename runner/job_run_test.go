package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// newJob is a defaulted Job of one container, whose pods NewPod makes as
// sources.Job.Pod does (named <job>-<n>, UID <job>-pod-<n>).
func newJob(name string, restart v1.RestartPolicy, backoffLimit int32, script string) runner.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: batchv1.JobSpec{
			Completions: ptr[int32](1), Parallelism: ptr[int32](1), BackoffLimit: &backoffLimit,
			CompletionMode: ptr(batchv1.NonIndexedCompletion), Suspend: ptr(false),
			Template: v1.PodTemplateSpec{Spec: newPod("t", restart, sh("main", script)).Spec},
		},
	}
	return runner.Job{Job: job, NewPod: func(n, index int) *v1.Pod {
		p := newPod(fmt.Sprintf("%s-%d", name, n), restart, sh("main", script))
		p.UID = types.UID(fmt.Sprintf("%s-pod-%d", name, n))
		p.Labels = map[string]string{batchv1.ControllerUidLabel: string(job.UID)}
		p.Annotations = map[string]string{}
		if index >= 0 {
			p.Annotations[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(index)
		}
		return p
	}}
}

func ptr[T any](v T) *T { return &v }

// failFirst has the first n containers the runtime creates exit 1 and the
// rest exit 0.
func failFirst(e *env, n int) {
	var mu sync.Mutex
	created := 0
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		mu.Lock()
		defer mu.Unlock()
		created++
		if created <= n {
			return fake.Behavior{ExitCode: 1}
		}
		return fake.Behavior{}
	})
}

func (e *env) runJobs(t *testing.T, ctx context.Context, jobs ...runner.Job) *runner.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, runLimit)
	defer cancel()
	opts := e.opts
	opts.Jobs = jobs
	res, err := runner.Run(ctx, e.rt, e.facts, nil, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Jobs) != len(jobs) {
		t.Fatalf("Run returned %d job results for %d jobs", len(res.Jobs), len(jobs))
	}
	return res
}

func jobCondition(j runner.JobResult, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Job.Status.Conditions {
		if c := &j.Job.Status.Conditions[i]; c.Type == typ {
			return c
		}
	}
	return nil
}

func TestJobRetriesFailedPodsAsNewPods(t *testing.T) {
	defer runner.SetJobBackOff(300*time.Millisecond, time.Second)()
	e := newEnv(t)
	failFirst(e, 2)
	res := e.runJobs(t, context.Background(), newJob("pi", v1.RestartPolicyNever, 2, "exit 1"))
	j := res.Jobs[0]
	if j.Outcome != runner.OutcomeReached || j.Err != nil {
		t.Fatalf("outcome = %s (err %v), want reached", j.Outcome, j.Err)
	}
	if got := res.ExitCode(0); got != 0 {
		t.Errorf("ExitCode = %d, want 0", got)
	}
	if len(j.Pods) != 3 {
		t.Fatalf("pods = %d, want 3", len(j.Pods))
	}
	for i, want := range []v1.PodPhase{v1.PodFailed, v1.PodFailed, v1.PodSucceeded} {
		if p := j.Pods[i]; p.Status.Phase != want || p.Pod.Name != fmt.Sprintf("pi-%d", i) {
			t.Errorf("pod %d: %s phase %s, want pi-%d %s", i, p.Pod.Name, p.Status.Phase, i, want)
		}
	}
	if c := jobCondition(j, batchv1.JobComplete); c == nil || c.Reason != batchv1.JobReasonCompletionsReached {
		t.Errorf("conditions = %+v, want Complete (CompletionsReached)", j.Job.Status.Conditions)
	}
	if s := j.Job.Status; s.Succeeded != 1 || s.Failed != 2 || s.Active != 0 || s.CompletionTime == nil {
		t.Errorf("status = %+v, want 1 succeeded, 2 failed, none active, a completion time", s)
	}
	t.Logf("progress:\n%s", e.progress)
	if !strings.Contains(e.progress.String(), "job/pi: BackOff: waiting") {
		t.Errorf("progress says nothing of the back-off:\n%s", e.progress)
	}
	e.assertTornDown(t)
}

func TestJobBeyondBackoffLimitFailsWithThePodsStatus(t *testing.T) {
	defer runner.SetJobBackOff(10*time.Millisecond, time.Second)()
	e := newEnv(t)
	res := e.runJobs(t, context.Background(), newJob("bad", v1.RestartPolicyNever, 1, "exit 3"))
	j := res.Jobs[0]
	if j.Outcome != runner.OutcomeFailed || len(j.Pods) != 2 {
		t.Fatalf("outcome = %s after %d pods, want failed after 2", j.Outcome, len(j.Pods))
	}
	if c := jobCondition(j, batchv1.JobFailed); c == nil || c.Reason != batchv1.JobReasonBackoffLimitExceeded {
		t.Errorf("conditions = %+v, want Failed (BackoffLimitExceeded)", j.Job.Status.Conditions)
	}
	if got := res.ExitCode(0); got != 3 {
		t.Errorf("ExitCode = %d, want 3 (the failed pod's)", got)
	}
	e.assertTornDown(t)
}

func TestJobDeadlineStopsTheRunningPod(t *testing.T) {
	e := newEnv(t)
	job := newJob("slow", v1.RestartPolicyNever, 6, "sleep infinity")
	job.Job.Spec.ActiveDeadlineSeconds = ptr[int64](1)
	start := time.Now()
	res := e.runJobs(t, context.Background(), job)
	j := res.Jobs[0]
	if j.Outcome != runner.OutcomeFailed {
		t.Fatalf("outcome = %s, want failed", j.Outcome)
	}
	if c := jobCondition(j, batchv1.JobFailed); c == nil || c.Reason != batchv1.JobReasonDeadlineExceeded {
		t.Errorf("conditions = %+v, want Failed (DeadlineExceeded)", j.Job.Status.Conditions)
	}
	if len(j.Pods) != 1 || j.Pods[0].Outcome != runner.OutcomeStopped {
		t.Errorf("pods = %+v, want one, stopped", j.Pods)
	} else if ph := j.Pods[0].Status.Phase; ph != v1.PodFailed {
		t.Errorf("the stopped pod's phase = %s, want Failed", ph)
	}
	if got := res.ExitCode(0); got != runner.ExitDeadlineExceeded {
		t.Errorf("ExitCode = %d, want 123", got)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the Job ended after %s, before its deadline of 1s", took)
	}
	e.assertTornDown(t)
}

func TestJobPodFailurePolicyFailJob(t *testing.T) {
	e := newEnv(t)
	job := newJob("pfp", v1.RestartPolicyNever, 6, "exit 42")
	job.Job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	res := e.runJobs(t, context.Background(), job)
	j := res.Jobs[0]
	c := jobCondition(j, batchv1.JobFailed)
	if j.Outcome != runner.OutcomeFailed || len(j.Pods) != 1 || c == nil || c.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("outcome = %s after %d pods, conditions %+v; want failed after 1, PodFailurePolicy", j.Outcome, len(j.Pods), j.Job.Status.Conditions)
	}
	if want := "Container main for pod default/pfp-0 failed with exit code 42 matching FailJob rule at index 0"; c.Message != want {
		t.Errorf("message = %q, want %q", c.Message, want)
	}
	if got := res.ExitCode(0); got != 42 {
		t.Errorf("ExitCode = %d, want 42", got)
	}
	e.assertTornDown(t)
}

func TestJobOnFailureRestartsCountAgainstBackoffLimit(t *testing.T) {
	e := newEnv(t)
	res := e.runJobs(t, context.Background(), newJob("onf", v1.RestartPolicyOnFailure, 1, "exit 5"))
	j := res.Jobs[0]
	if c := jobCondition(j, batchv1.JobFailed); j.Outcome != runner.OutcomeFailed || c == nil || c.Reason != batchv1.JobReasonBackoffLimitExceeded {
		t.Fatalf("outcome = %s, conditions %+v; want failed, BackoffLimitExceeded", j.Outcome, j.Job.Status.Conditions)
	}
	if len(j.Pods) != 1 || j.Pods[0].Outcome != runner.OutcomeStopped {
		t.Errorf("pods = %d, want one, stopped", len(j.Pods))
	}
	if got := res.ExitCode(0); got != 5 {
		t.Errorf("ExitCode = %d, want 5", got)
	}
	e.assertTornDown(t)
}

func TestJobParallelIndexedRunsEveryIndex(t *testing.T) {
	e := newEnv(t)
	job := newJob("ix", v1.RestartPolicyNever, 0, "sleep 1")
	job.Job.Spec.Completions, job.Job.Spec.Parallelism = ptr[int32](4), ptr[int32](2)
	job.Job.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
	res := e.runJobs(t, context.Background(), job)
	j := res.Jobs[0]
	if j.Outcome != runner.OutcomeReached || len(j.Pods) != 4 {
		t.Fatalf("outcome = %s after %d pods, want reached after 4", j.Outcome, len(j.Pods))
	}
	if got := j.Job.Status.CompletedIndexes; got != "0-3" {
		t.Errorf("completedIndexes = %q, want 0-3", got)
	}
	e.assertTornDown(t)
}

func TestJobTimeout(t *testing.T) {
	e := newEnv(t)
	e.opts.Timeout = 300 * time.Millisecond
	res := e.runJobs(t, context.Background(), newJob("long", v1.RestartPolicyNever, 6, "sleep infinity"))
	if j := res.Jobs[0]; j.Outcome != runner.OutcomeTimeout {
		t.Fatalf("outcome = %s, want timeout", j.Outcome)
	}
	if got := res.ExitCode(0); got != runner.ExitTimeout {
		t.Errorf("ExitCode = %d, want 124", got)
	}
	e.assertTornDown(t)
}
