package sources

import (
	"maps"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// decodeOne decodes doc as the file w.yaml on node node1.
func decodeOne(t *testing.T, doc string) (*Set, error) {
	t.Helper()
	return Decode("w.yaml", []byte(doc), Options{NodeName: "node1", Seen: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
}

const podSpec = `
      containers:
      - name: c
        image: busybox:1.28`

func TestWorkloadPods(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		podName   string // a regexp's worth: "*" stands for the 5 generated characters
		labels    map[string]string
		owner     string // kind/name
		hostname  string
	}{
		{name: "Deployment: <deploy>-<hash>-<5>, owned by its ReplicaSet", doc: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:` + podSpec,
			podName: "web-HASH-*", labels: map[string]string{"app": "web", "pod-template-hash": "HASH"}, owner: "ReplicaSet/web-HASH"},
		{name: "ReplicaSet: <rs>-<5>", doc: `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec:` + podSpec,
			podName: "rs-*", labels: map[string]string{"app": "rs"}, owner: "ReplicaSet/rs"},
		{name: "StatefulSet: <sts>-<ordinal> with its identity", doc: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: dbs
  ordinals: {start: 2}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:` + podSpec,
			podName: "db-2", labels: map[string]string{"app": "db", "statefulset.kubernetes.io/pod-name": "db-2",
				"apps.kubernetes.io/pod-index": "2", "controller-revision-hash": "db-REV"}, owner: "StatefulSet/db", hostname: "db-2"},
		{name: "DaemonSet: <ds>-<5>", doc: `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:` + podSpec,
			podName: "agent-*", labels: map[string]string{"app": "agent", "controller-revision-hash": "HASH", "pod-template-generation": "1"},
			owner: "DaemonSet/agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := decodeOne(t, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Pods) != 1 || len(set.Jobs) != 0 {
				t.Fatalf("%d pods, %d jobs; want one pod", len(set.Pods), len(set.Jobs))
			}
			p := set.Pods[0]
			hash := p.Labels["pod-template-hash"] + p.Labels["controller-revision-hash"]
			rev := strings.TrimPrefix(hash, "db-")
			sub := func(s string) string {
				return strings.NewReplacer("HASH", hash, "REV", rev).Replace(s)
			}
			want := sub(tc.podName)
			if prefix, ok := strings.CutSuffix(want, "*"); ok {
				if !strings.HasPrefix(p.Name, prefix) || len(p.Name) != len(prefix)+5 || p.GenerateName != prefix {
					t.Errorf("name %s (generateName %s), want %s<5 characters>", p.Name, p.GenerateName, prefix)
				}
				for _, c := range p.Name[len(prefix):] {
					if !strings.ContainsRune(generatedNameChars, c) {
						t.Errorf("name %s: %q is not a character of generated names", p.Name, c)
					}
				}
			} else if p.Name != want {
				t.Errorf("name %s, want %s", p.Name, want)
			}
			wantLabels := map[string]string{}
			for k, v := range tc.labels {
				wantLabels[k] = sub(v)
			}
			if !maps.Equal(p.Labels, wantLabels) || (hash == "" && strings.Contains(tc.podName+tc.owner+strings.Join(slicesOf(tc.labels), ""), "HASH")) {
				t.Errorf("labels %v, want %v", p.Labels, wantLabels)
			}
			o := p.OwnerReferences
			if len(o) != 1 || o[0].Kind+"/"+o[0].Name != sub(tc.owner) || o[0].Controller == nil || !*o[0].Controller ||
				o[0].BlockOwnerDeletion == nil || !*o[0].BlockOwnerDeletion || o[0].UID == "" {
				t.Errorf("ownerReferences %+v, want %s as controller", o, sub(tc.owner))
			}
			if p.Spec.Hostname != tc.hostname || p.Spec.NodeName != "node1" || p.Spec.RestartPolicy != v1.RestartPolicyAlways {
				t.Errorf("hostname %q, node %q, restartPolicy %s", p.Spec.Hostname, p.Spec.NodeName, p.Spec.RestartPolicy)
			}
			if !p.GivenUID || p.Workload == nil || p.Annotations[ConfigSourceAnnotationKey] != "file" {
				t.Errorf("givenUID %t, workload %v, annotations %v", p.GivenUID, p.Workload, p.Annotations)
			}
			again, _ := decodeOne(t, tc.doc)
			if again.Pods[0].Name != p.Name || again.Pods[0].UID != p.UID {
				t.Errorf("a second decode gives %s %s, the first %s %s", again.Pods[0].Name, again.Pods[0].UID, p.Name, p.UID)
			}
		})
	}
}

func TestDaemonSetTolerations(t *testing.T) {
	set, err := decodeOne(t, `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      tolerations:
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 30}`+podSpec)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range set.Pods[0].Spec.Tolerations {
		s := tl.Key + ":" + string(tl.Effect)
		if tl.TolerationSeconds != nil {
			s += " (seconds)"
		}
		got = append(got, s)
	}
	want := "node.kubernetes.io/not-ready:NoExecute node.kubernetes.io/unreachable:NoExecute node.kubernetes.io/disk-pressure:NoSchedule " +
		"node.kubernetes.io/memory-pressure:NoSchedule node.kubernetes.io/pid-pressure:NoSchedule node.kubernetes.io/unschedulable:NoSchedule " +
		"node.kubernetes.io/network-unavailable:NoSchedule"
	if strings.Join(got, " ") != want {
		t.Errorf("tolerations\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

const jobDoc = `
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  template:
    metadata: {labels: {team: a}}
    spec:
      restartPolicy: Never` + podSpec

func TestJobPods(t *testing.T) {
	set, err := decodeOne(t, jobDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Jobs) != 1 || len(set.Pods) != 0 {
		t.Fatalf("%d jobs, %d pods; want one job", len(set.Jobs), len(set.Pods))
	}
	j := set.Jobs[0]
	js := j.Job.Spec
	if *js.BackoffLimit != 6 || *js.Suspend || *js.ManualSelector || *js.PodReplacementPolicy != batchv1.TerminatingOrFailed {
		t.Errorf("defaults: %+v", js)
	}
	uid := string(j.Job.UID)
	if js.Selector.MatchLabels[batchv1.ControllerUidLabel] != uid || !j.GivenUID {
		t.Errorf("selector %v, want the controller-uid %s", js.Selector, uid)
	}
	p0, p1, again := j.Pod(0, 0), j.Pod(1, 2), j.Pod(0, 0)
	wantLabels := map[string]string{"team": "a", "job-name": "pi", batchv1.JobNameLabel: "pi", "controller-uid": uid,
		batchv1.ControllerUidLabel: uid, batchv1.JobCompletionIndexAnnotation: "0"}
	if !maps.Equal(p0.Labels, wantLabels) {
		t.Errorf("labels %v\nwant %v", p0.Labels, wantLabels)
	}
	if p0.GenerateName != "pi-0-" || !strings.HasPrefix(p0.Name, "pi-0-") || len(p0.Name) != 10 || p0.Spec.Hostname != "pi-0" {
		t.Errorf("pod 0: %s (generateName %s, hostname %s)", p0.Name, p0.GenerateName, p0.Spec.Hostname)
	}
	if p1.GenerateName != "pi-2-" || p1.Spec.Hostname != "pi-2" || p1.Annotations[batchv1.JobCompletionIndexAnnotation] != "2" {
		t.Errorf("pod 1: %s, hostname %s, annotations %v", p1.GenerateName, p1.Spec.Hostname, p1.Annotations)
	}
	if p0.UID == p1.UID || p0.Name == p1.Name || again.UID != p0.UID || again.Name != p0.Name {
		t.Errorf("UIDs %s %s %s, names %s %s %s: want one per pod number, the same for the same", p0.UID, p1.UID, again.UID, p0.Name, p1.Name, again.Name)
	}
	if o := p0.OwnerReferences; len(o) != 1 || o[0].Kind != "Job" || o[0].Name != "pi" || string(o[0].UID) != uid {
		t.Errorf("ownerReferences %+v", o)
	}
	env := p0.Spec.Containers[0].Env
	if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %+v, want JOB_COMPLETION_INDEX from the index label", env)
	}
	if p0.Labels[batchv1.JobCompletionIndexAnnotation] == p1.Labels[batchv1.JobCompletionIndexAnnotation] {
		t.Errorf("two pods share an index label")
	}
}

func TestCronJobRunsItsJobNow(t *testing.T) {
	set, err := decodeOne(t, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  timeZone: Europe/Paris
  jobTemplate:
    metadata: {labels: {kind: report}}
    spec:
      template:
        spec:
          restartPolicy: OnFailure`+`
          containers:
          - name: c
            image: busybox:1.28`)
	if err != nil {
		t.Fatal(err)
	}
	j := set.Jobs[0]
	// Seen is 2026-01-02T03:04:05Z: minute 29455384 since the epoch.
	if j.Job.Name != "nightly-29455384" || j.Workload == nil || j.Workload.Kind != "CronJob" {
		t.Errorf("job %s from %v", j.Job.Name, j.Workload)
	}
	if got := j.Job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]; got != "2026-01-02T04:04:00+01:00" {
		t.Errorf("scheduled timestamp %q", got)
	}
	if o := j.Job.OwnerReferences; len(o) != 1 || o[0].Kind != "CronJob" || o[0].Name != "nightly" {
		t.Errorf("ownerReferences %+v", o)
	}
	if j.Job.Labels["kind"] != "report" || j.Pod(0, -1).GenerateName != "nightly-29455384-" {
		t.Errorf("labels %v, pod %s", j.Job.Labels, j.Pod(0, -1).GenerateName)
	}
}

func TestWorkloadErrors(t *testing.T) {
	job := func(spec string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n" + spec + `
  template:
    spec:
      restartPolicy: Never` + podSpec
	}
	deploy := func(spec string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n" + spec + `
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:` + podSpec
	}
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"a template's error at the template's path", strings.Replace(job(""), "image: busybox:1.28", "image: ''", 1),
			[]string{`w.yaml: document 1 (Job "j"): spec.template.spec.containers[0].image: Required value`}},
		{"a Job's restartPolicy Always", strings.Replace(job(""), "restartPolicy: Never", "restartPolicy: Always", 1),
			[]string{`w.yaml: document 1 (Job "j"): spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`}},
		{"an unknown field", job("  backofLimit: 2"),
			[]string{`w.yaml: document 1 (Job "j"): spec.backofLimit: unknown field`}},
		{"the wrong apiVersion", strings.Replace(job(""), "batch/v1", "v1", 1),
			[]string{`w.yaml: document 1 (Job "j"): apiVersion: Unsupported value: "v1": supported values: "batch/v1"`}},
		{"suspend refused", job("  suspend: true"),
			[]string{`w.yaml: document 1 (Job "j"): spec.suspend: Invalid value: true: a suspended Job makes no pod: podrun would wait for ever; run it with suspend false`}},
		{"another controller's Job", job("  managedBy: example.com/kueue"),
			[]string{`w.yaml: document 1 (Job "j"): spec.managedBy: Invalid value: "example.com/kueue": podrun runs a Job as the built-in controller, kubernetes.io/job-controller, would; a Job another controller manages is that controller's`}},
		{"FailIndex without backoffLimitPerIndex", job("  podFailurePolicy:\n    rules:\n    - action: FailIndex\n      onExitCodes: {operator: In, values: [1]}"),
			[]string{`w.yaml: document 1 (Job "j"): spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set`}},
		{"backoffLimitPerIndex needs Indexed", job("  backoffLimitPerIndex: 1"),
			[]string{`w.yaml: document 1 (Job "j"): spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode`}},
		{"a negative backoffLimit", job("  backoffLimit: -1"),
			[]string{`w.yaml: document 1 (Job "j"): spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0`}},
		{"a selector that does not match", deploy("  replicas: 1") + "\n", nil},
		{"replicas 0 refused", deploy("  replicas: 0"),
			[]string{`w.yaml: document 1 (Deployment "d"): spec.replicas: Invalid value: 0: a Deployment of no replicas runs no pod; podrun runs one`}},
		{"a paused Deployment refused", deploy("  paused: true"),
			[]string{`w.yaml: document 1 (Deployment "d"): spec.paused: Invalid value: true: a paused Deployment makes no ReplicaSet, so no pod; podrun runs one`}},
		{"a Deployment's restartPolicy Never", strings.Replace(deploy("  replicas: 1"), "    spec:", "    spec:\n      restartPolicy: Never", 1),
			[]string{`w.yaml: document 1 (Deployment "d"): spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`}},
		{"selector not matching the labels", strings.Replace(deploy("  replicas: 1"), "labels: {app: d}", "labels: {app: e}", 1),
			[]string{`w.yaml: document 1 (Deployment "d"): spec.template.metadata.labels: Invalid value: {"app":"e"}: ` + "`selector` does not match template `labels`"}},
		{"volumeClaimTemplates refused", `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  selector: {matchLabels: {app: s}}
  volumeClaimTemplates: [{metadata: {name: data}}]
  template:
    metadata: {labels: {app: s}}
    spec:` + podSpec,
			[]string{`w.yaml: document 1 (StatefulSet "s"): spec.volumeClaimTemplates: Forbidden: podrun has no PersistentVolumeClaims: use a volume of the pod template (emptyDir, hostPath) instead`}},
		{"a CronJob's Job at its path", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never` + strings.ReplaceAll(podSpec, "\n  ", "\n      "),
			[]string{`w.yaml: document 1 (CronJob "c"): spec.schedule: Required value`}},
		{"two Jobs of one name", job("") + "\n---\n" + job(""),
			[]string{`w.yaml: document 2 (Job "j"): metadata.name: Duplicate value: "j": Job default/j is also defined in w.yaml: document 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeOne(t, tc.doc)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("error:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestGeneratedName(t *testing.T) {
	long := strings.Repeat("a", 70)
	if n := generatedName(long+"-", "uid"); len(n) != 63 || !strings.HasPrefix(n, long[:58]) {
		t.Errorf("a long base gives %s (%d), want 58 of it and 5 characters", n, len(n))
	}
	if generatedName("x-", "a") == generatedName("x-", "b") {
		t.Errorf("two UIDs give one name")
	}
	if got := indexedGenerateName(long, 12); len(got) != 58 || !strings.HasSuffix(got, "-12-") {
		t.Errorf("indexedGenerateName = %s (%d)", got, len(got))
	}
}

func slicesOf(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
