//go:build e2e

package e2e

// Workload files (docs/workloads.md): a Job retried as new pods with the
// Job controller's back-off until one succeeds, a Job beyond its
// backoffLimit exiting with its failed pod's status, a Job over its
// activeDeadlineSeconds, and a Deployment run to Ready and torn down.
// newEnv's cleanup checks that nothing is left behind after each.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// jobOutput is podrun's -o json of a run of one Job: the Job with its
// status, then its pods.
func jobOutput(t *testing.T, out string) (*batchv1.Job, []*v1.Pod) {
	t.Helper()
	var l v1.List
	if err := yaml.UnmarshalStrict([]byte(out), &l); err != nil {
		t.Fatalf("stdout is not a v1.List: %v\n%s", err, out)
	}
	var job *batchv1.Job
	var pods []*v1.Pod
	for i, item := range l.Items {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(item.Raw, &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "Job":
			job = &batchv1.Job{}
			if err := yaml.UnmarshalStrict(item.Raw, job); err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
		case "Pod":
			p := &v1.Pod{}
			if err := yaml.UnmarshalStrict(item.Raw, p); err != nil {
				t.Fatalf("item %d: %v", i, err)
			}
			pods = append(pods, p)
		default:
			t.Fatalf("item %d is a %q", i, head.Kind)
		}
	}
	if job == nil {
		t.Fatalf("no Job in the output\n%s", out)
	}
	return job, pods
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == typ && c.Status == v1.ConditionTrue {
			return c
		}
	}
	return nil
}

// TestE2EWorkloadJobRetriesUntilItSucceeds is issue 16's Done-when case:
// a Job with backoffLimit 2 whose first two pods fail and third succeeds
// exits 0 after three pods, each a new pod with a new name, after the
// controller's back-off of 10 s and then 20 s.
func TestE2EWorkloadJobRetriesUntilItSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	f := manifest(t, "job.yaml", fillTemplate(t, "workloads/job-retries.yaml", "DIR", dir, "SUFFIX", randomSuffix(t)))
	r := e.startPodrun([]string{"-o", "json", "-f", f}, "").result(scaled(3 * time.Minute))
	expectCode(t, r, 0)
	job, pods := jobOutput(t, r.stdout)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3\n%s", len(pods), r)
	}
	names := map[string]bool{}
	for i, want := range []v1.PodPhase{v1.PodFailed, v1.PodFailed, v1.PodSucceeded} {
		p := pods[i]
		names[p.Name] = true
		if p.Status.Phase != want {
			t.Errorf("pod %d (%s): phase %s, want %s", i, p.Name, p.Status.Phase, want)
		}
		if p.GenerateName != job.Name+"-" || !strings.HasPrefix(p.Name, job.Name+"-") || len(p.Name) != len(job.Name)+6 {
			t.Errorf("pod %d is %s (generateName %s), want %s-<5 characters>", i, p.Name, p.GenerateName, job.Name)
		}
		for _, l := range []string{batchv1.JobNameLabel, "job-name"} {
			if p.Labels[l] != job.Name {
				t.Errorf("pod %s: label %s = %q, want %s", p.Name, l, p.Labels[l], job.Name)
			}
		}
		if p.Labels[batchv1.ControllerUidLabel] != string(job.UID) || p.Labels["controller-uid"] != string(job.UID) {
			t.Errorf("pod %s: controller-uid labels %v, want %s", p.Name, p.Labels, job.UID)
		}
		if o := p.OwnerReferences; len(o) != 1 || o[0].Kind != "Job" || o[0].Name != job.Name || o[0].UID != job.UID || o[0].Controller == nil || !*o[0].Controller {
			t.Errorf("pod %s: ownerReferences %+v, want the Job as controller", p.Name, o)
		}
	}
	if len(names) != 3 {
		t.Errorf("pod names %v, want 3 different ones", names)
	}
	if c := jobCondition(job, batchv1.JobComplete); c == nil || job.Status.Succeeded != 1 || job.Status.Failed != 2 {
		t.Errorf("job status %+v, want Complete, 1 succeeded, 2 failed", job.Status)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 3 {
		t.Errorf("the counter dir holds %d entries (%v), want one per pod", len(entries), err)
	}
	for i := range 3 {
		if !strings.Contains(r.stderr, "try "+string(rune('0'+i))) {
			t.Errorf("stderr lacks pod %d's output", i)
		}
	}
	for _, want := range []string{"job/" + job.Name + ": BackOff: waiting", "job/" + job.Name + ": complete (3 pods: 1 succeeded, 2 failed)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	// The controller's back-off: 10 s after the first failure, 20 s after
	// the second.
	if r.elapsed < 30*time.Second {
		t.Errorf("the run took %s, less than the back-off of 10 s and 20 s", r.elapsed)
	}
}

// TestE2EWorkloadJobBeyondBackoffLimit: a Job whose pods all fail ends
// BackoffLimitExceeded after backoffLimit+1 pods, and podrun exits with the
// failed pod's exit code.
func TestE2EWorkloadJobBeyondBackoffLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := manifest(t, "job.yaml", fillTemplate(t, "workloads/job-fails.yaml", "SUFFIX", randomSuffix(t)))
	r := e.startPodrun([]string{"-o", "json", "-f", f}, "").result(scaled(2 * time.Minute))
	expectCode(t, r, 3)
	job, pods := jobOutput(t, r.stdout)
	if len(pods) != 2 {
		t.Errorf("%d pods, want 2", len(pods))
	}
	c := jobCondition(job, batchv1.JobFailed)
	if c == nil || c.Reason != batchv1.JobReasonBackoffLimitExceeded || c.Message != "Job has reached the specified backoff limit" {
		t.Errorf("conditions %+v, want Failed, BackoffLimitExceeded", job.Status.Conditions)
	}
	if want := "job/" + job.Name + ": failed: BackoffLimitExceeded: Job has reached the specified backoff limit (2 pods: 2 failed)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
}

// TestE2EWorkloadJobDeadline: a Job over its activeDeadlineSeconds stops
// its running pod and fails with DeadlineExceeded; podrun exits 123, as
// for a pod past its own deadline.
func TestE2EWorkloadJobDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := manifest(t, "job.yaml", fillTemplate(t, "workloads/job-deadline.yaml", "SUFFIX", randomSuffix(t)))
	r := e.startPodrun([]string{"-o", "json", "-f", f}, "").result(scaled(time.Minute))
	expectCode(t, r, 123)
	job, pods := jobOutput(t, r.stdout)
	if c := jobCondition(job, batchv1.JobFailed); c == nil || c.Reason != batchv1.JobReasonDeadlineExceeded {
		t.Errorf("conditions %+v, want Failed, DeadlineExceeded", job.Status.Conditions)
	}
	if len(pods) != 1 || pods[0].Status.Phase != v1.PodFailed {
		t.Fatalf("pods %v, want one, Failed", podNames(pods))
	}
	if cs := containerStatus(t, pods[0], "sleep"); cs.State.Terminated == nil {
		t.Errorf("the stopped pod's container: %+v, want terminated", cs.State)
	}
	if r.elapsed < 3*time.Second {
		t.Errorf("the run took %s, less than the deadline", r.elapsed)
	}
}

// TestE2EWorkloadDeploymentRunsToReady: a Deployment's pod runs until
// Ready, named and labelled as its controllers would, and is torn down.
func TestE2EWorkloadDeploymentRunsToReady(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sfx := randomSuffix(t)
	deploy := "e2e-deploy-" + sfx
	f := manifest(t, "deploy.yaml", fillTemplate(t, "workloads/deployment.yaml", "SUFFIX", sfx))
	r := e.startPodrun([]string{"--timeout", "60s", "-o", "json", "-f", f}, "").result(scaled(2 * time.Minute))
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if !podReady(p) || p.Status.Phase != v1.PodRunning {
		t.Errorf("pod %s: phase %s, Ready %s; want Running and Ready", p.Name, p.Status.Phase, condition(p, v1.PodReady))
	}
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	rs := deploy + "-" + hash
	if hash == "" || !strings.HasPrefix(p.Name, rs+"-") || len(p.Name) != len(rs)+6 || p.GenerateName != rs+"-" {
		t.Errorf("pod %s (pod-template-hash %q), want %s-<hash>-<5 characters>", p.Name, hash, deploy)
	}
	if o := p.OwnerReferences; len(o) != 1 || o[0].Kind != "ReplicaSet" || o[0].Name != rs {
		t.Errorf("ownerReferences %+v, want the ReplicaSet %s", o, rs)
	}
	if !strings.Contains(r.stderr, "deployment/"+deploy+": replicas 3: podrun runs one pod") {
		t.Errorf("stderr does not note the replicas\n%s", r)
	}
}

// TestE2EWorkloadJobCopyOut: --copy-out works on a Job's pod as on any
// pod: `podrun --copy-out tests:/out=./artifacts -f job.yaml` brings back
// the report its exited container wrote to its emptyDir.
func TestE2EWorkloadJobCopyOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "artifacts")
	f := manifest(t, "job.yaml", fillTemplate(t, "workloads/job-copyout.yaml", "SUFFIX", randomSuffix(t)))
	r := e.runPodrun([]string{"--copy-out", "tests:/out=" + dir, "-f", f}, "")
	expectCode(t, r, 0)
	b, err := os.ReadFile(filepath.Join(dir, "report.xml"))
	if err != nil || string(b) != "<testsuites name=\"e2e\"/>\n" {
		t.Errorf("report.xml: %q, %v\n%s", b, err, r)
	}
}
