package sources

// Jobs: a Job document, or the Job a CronJob's controller would make from
// its jobTemplate, defaulted and validated as the API server does
// (pkg/apis/batch/v1 SetDefaults_Job, the job registry's
// generateSelector, pkg/apis/batch/validation), its pod template as the
// pod it makes. The runner is the Job's controller (runner/job.go); the
// pods it makes are Job.Pod's.

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podrun/podrun/sources/jobindexes"
)

// Labels the API server gives a Job's pod template (generateSelector).
const (
	jobNameLabel             = batchv1.JobNameLabel       // batch.kubernetes.io/job-name
	controllerUIDLabel       = batchv1.ControllerUidLabel // batch.kubernetes.io/controller-uid
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// jobController is the managedBy of the built-in Job controller, whose
// part podrun plays.
const jobController = "kubernetes.io/job-controller"

// completionIndexEnv is the env var an Indexed Job's containers get, the
// pod's completion index (the controller's completionIndexEnvName).
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// cronJobNameMax is the longest CronJob name the API server takes: its
// Jobs' names add 11 characters.
const cronJobNameMax = 52

// Job is a decoded, defaulted and validated Job, whose pods the runner
// makes with Pod as it runs them.
type Job struct {
	// Job is the Job as the API server would store it: defaulted
	// (completions, parallelism, backoffLimit, completionMode, ...), its
	// selector and its template's labels generated, its UID set.
	Job    *batchv1.Job
	Origin Origin
	// GivenUID: the manifest has no metadata.uid and podrun gave the Job
	// its UID (its pods' UIDs are always podrun's).
	GivenUID bool
	// Workload is the CronJob the Job was made from; nil for a Job
	// document.
	Workload *Workload

	template *v1.Pod // the template's pod: defaulted, no name, UID or index
	config   string  // the config.source annotation of its pods
	seen     bool    // stamp config.seen on its pods (not in a dry run)
	now      func() time.Time
}

// Pod is the Job's pod number n (0 for the first the Job makes, in the
// order the run makes them) for completion index index (-1 for a
// NonIndexed Job), as the Job controller makes it (manageJob,
// GetPodFromTemplate): the template's labels, annotations and spec,
// generateName <job>- (<job>-<index>- for an Indexed Job) and the Job's
// controller ownerReference; an Indexed Job's pod has the index as the
// batch.kubernetes.io/job-completion-index annotation and label and the
// hostname <job>-<index>. Its UID is derived from the Job's and n, its
// name's 5 characters from its UID, so that a manifest gives the same
// names run after run. It has the annotations of a pod of its source, and
// no batch.kubernetes.io/job-tracking finalizer: no API server holds it.
func (j *Job) Pod(n, index int) *v1.Pod {
	pod := j.template.DeepCopy()
	pod.Labels = maps.Clone(j.template.Labels)
	pod.Annotations = maps.Clone(j.template.Annotations)
	pod.GenerateName = podsPrefix(j.Job.Name)
	if index >= 0 {
		ix := strconv.Itoa(index)
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = ix
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = ix
		pod.Spec.Hostname = fmt.Sprintf("%s-%d", j.Job.Name, index)
		pod.GenerateName = indexedGenerateName(j.Job.Name, index)
	}
	pod.UID = derivedUID(j.Job.UID, fmt.Sprintf("Pod %d", n))
	pod.Name = generatedName(pod.GenerateName, pod.UID)
	var seen time.Time
	if j.seen {
		seen = j.now()
	}
	annotateSourced(pod, j.config, seen)
	return pod
}

// indexedGenerateName is an Indexed Job's pods' generateName
// (podGenerateNameWithIndex): <job>-<index>-, the Job's name cut so that
// the whole fits in 58 characters.
func indexedGenerateName(job string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	name := job + suffix
	if len(name) > maxGeneratedNameLength {
		name = name[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return name
}

// job decodes a Job document.
func (d *decoder) job(w workloadObject, job *batchv1.Job) {
	if errs := d.checkJob(job, field.NewPath("spec")); len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addJob(w.origin, job, w.givenUID, nil)
}

// cronJob decodes a CronJob document into the Job its controller would
// make now (getJobFromTemplate2): named <cronjob>-<the scheduled time in
// minutes since the epoch>, with the jobTemplate's labels and annotations,
// the batch.kubernetes.io/cronjob-scheduled-timestamp annotation (in the
// CronJob's timeZone) and the CronJob's controller ownerReference. The
// scheduled time is when the run read its manifests (Options.Seen, else
// now), to the minute. The schedule, suspend, concurrencyPolicy,
// startingDeadlineSeconds and the history limits are not read: podrun
// runs the Job once, now.
func (d *decoder) cronJob(w workloadObject, cj *batchv1.CronJob) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(cj.Name) > cronJobNameMax {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, fmt.Sprintf("must be no more than %d characters", cronJobNameMax)))
	}
	if cj.Spec.Schedule == "" {
		errs = append(errs, field.Required(spec.Child("schedule"), ""))
	}
	loc, err := time.LoadLocation(ptrDeref(cj.Spec.TimeZone, ""))
	if err != nil {
		errs = append(errs, field.Invalid(spec.Child("timeZone"), *cj.Spec.TimeZone, "unknown time zone "+*cj.Spec.TimeZone))
	}
	scheduled := d.opts.Seen
	if scheduled.IsZero() {
		scheduled = time.Now()
	}
	scheduled = scheduled.Truncate(time.Minute)
	tmpl := &cj.Spec.JobTemplate
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60),
			Namespace:         cj.Namespace,
			Labels:            maps.Clone(tmpl.Labels),
			Annotations:       maps.Clone(tmpl.Annotations),
			CreationTimestamp: metav1.NewTime(scheduled),
			OwnerReferences:   []metav1.OwnerReference{controllerRef("batch/v1", "CronJob", cj.Name, w.uid)},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	if err == nil {
		job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	}
	job.UID = derivedUID(w.uid, "Job "+job.Name)
	mp := spec.Child("jobTemplate", "metadata")
	errs = append(errs, validateLabelsAndAnnotations(&tmpl.ObjectMeta, mp)...)
	errs = append(errs, d.checkJob(job, spec.Child("jobTemplate", "spec"))...)
	if len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addJob(w.origin, job, true, &Workload{Kind: w.kind, Name: cj.Name})
}

// addJob adds a checked Job to the set.
func (d *decoder) addJob(o Origin, job *batchv1.Job, givenUID bool, wl *Workload) {
	job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	d.set.Jobs = append(d.set.Jobs, &Job{
		Job: job, Origin: o, GivenUID: givenUID, Workload: wl,
		template: jobTemplatePod(job, d.opts.NodeName),
		config:   d.src.config, seen: !d.opts.Seen.IsZero(), now: time.Now,
	})
}

// jobTemplatePod is the pod of a defaulted Job's template, before its
// name, UID and index.
func jobTemplatePod(job *batchv1.Job, nodeName string) *v1.Pod {
	owner := controllerRef("batch/v1", "Job", job.Name, job.UID)
	return templatePod(&job.Spec.Template, job.Namespace, owner, nodeName)
}

// checkJob defaults and validates a Job (spec is where its spec is:
// spec, or spec.jobTemplate.spec in a CronJob) and refuses what podrun
// cannot run as the Job controller would: suspend, another controller's
// managedBy, scheduling (docs/workloads.md).
func (d *decoder) checkJob(job *batchv1.Job, spec *field.Path) field.ErrorList {
	if job.Namespace == "" {
		job.Namespace = defaultNamespace
	}
	defaultJob(job)
	js := &job.Spec
	var errs field.ErrorList
	nonNegative := func(v *int32, name string) {
		if v != nil && *v < 0 {
			errs = append(errs, field.Invalid(spec.Child(name), *v, "must be greater than or equal to 0"))
		}
	}
	nonNegative(js.Parallelism, "parallelism")
	nonNegative(js.Completions, "completions")
	nonNegative(js.BackoffLimit, "backoffLimit")
	nonNegative(js.TTLSecondsAfterFinished, "ttlSecondsAfterFinished")
	nonNegative(js.BackoffLimitPerIndex, "backoffLimitPerIndex")
	nonNegative(js.MaxFailedIndexes, "maxFailedIndexes")
	if a := js.ActiveDeadlineSeconds; a != nil && *a < 0 {
		errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), *a, "must be greater than or equal to 0"))
	}
	indexed := *js.CompletionMode == batchv1.IndexedCompletion
	switch *js.CompletionMode {
	case batchv1.NonIndexedCompletion, batchv1.IndexedCompletion:
	default:
		errs = append(errs, field.NotSupported(spec.Child("completionMode"), *js.CompletionMode,
			[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	if js.MaxFailedIndexes != nil && js.BackoffLimitPerIndex == nil {
		errs = append(errs, field.Required(spec.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
	}
	if indexed {
		if js.Completions == nil {
			errs = append(errs, field.Required(spec.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
		} else if js.MaxFailedIndexes != nil && *js.MaxFailedIndexes > *js.Completions {
			errs = append(errs, field.Invalid(spec.Child("maxFailedIndexes"), *js.MaxFailedIndexes, "must be less than or equal to completions"))
		}
		if js.Completions != nil && *js.Completions > 0 {
			host := fmt.Sprintf("%s-%d", job.Name, *js.Completions-1)
			if len(validation.IsDNS1123Label(host)) > 0 {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), job.Name, "will not able to create pod with invalid DNS label: "+host))
			}
		}
	} else {
		if js.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(spec.Child("backoffLimitPerIndex"), *js.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if js.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(spec.Child("maxFailedIndexes"), *js.MaxFailedIndexes, "requires indexed completion mode"))
		}
		if js.SuccessPolicy != nil {
			errs = append(errs, field.Invalid(spec.Child("successPolicy"), *js.SuccessPolicy, "requires indexed completion mode"))
		}
	}
	if js.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(js, spec.Child("podFailurePolicy"))...)
	}
	if js.SuccessPolicy != nil && indexed && js.Completions != nil {
		errs = append(errs, validateSuccessPolicy(js, spec.Child("successPolicy"))...)
	}
	if p := js.PodReplacementPolicy; p != nil {
		allowed := []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}
		if js.PodFailurePolicy != nil {
			allowed = []batchv1.PodReplacementPolicy{batchv1.Failed}
		}
		if !containsString(allowed, *p) {
			errs = append(errs, field.NotSupported(spec.Child("podReplacementPolicy"), *p, allowed))
		}
	}
	errs = append(errs, refuseJob(js, spec)...)
	errs = append(errs, validateJobSelector(job, spec)...)

	tp := spec.Child("template")
	switch rp := js.Template.Spec.RestartPolicy; {
	case rp == v1.RestartPolicyAlways:
		errs = append(errs, field.Required(tp.Child("spec", "restartPolicy"), fmt.Sprintf("valid values: %q, %q", v1.RestartPolicyOnFailure, v1.RestartPolicyNever)))
	case rp != v1.RestartPolicyOnFailure && rp != v1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), rp, []v1.RestartPolicy{v1.RestartPolicyOnFailure, v1.RestartPolicyNever}))
	case js.PodFailurePolicy != nil && rp != v1.RestartPolicyNever:
		errs = append(errs, field.Invalid(tp.Child("spec", "restartPolicy"), rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", v1.RestartPolicyNever)))
	}
	// The pod the template makes, as the controller makes its first.
	index := -1
	if indexed {
		index = 0
	}
	j := &Job{Job: job, template: jobTemplatePod(job, d.opts.NodeName), now: time.Now}
	errs = append(errs, validateTemplatePod(j.Pod(0, index), tp)...)
	return errs
}

// defaultJob applies the API server's defaults to a Job
// (SetDefaults_Job, SetDefaults_PodFailurePolicyOnPodConditionsPattern,
// the template's pod defaults) and generates its selector and its
// template's labels (generateSelector), unless manualSelector.
func defaultJob(job *batchv1.Job) {
	js := &job.Spec
	if js.Completions == nil && js.Parallelism == nil {
		js.Completions, js.Parallelism = ptr[int32](1), ptr[int32](1)
	}
	if js.Parallelism == nil {
		js.Parallelism = ptr[int32](1)
	}
	if js.BackoffLimit == nil {
		if js.BackoffLimitPerIndex != nil {
			js.BackoffLimit = ptr[int32](math.MaxInt32)
		} else {
			js.BackoffLimit = ptr[int32](6)
		}
	}
	if js.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = maps.Clone(js.Template.Labels)
	}
	if js.CompletionMode == nil {
		js.CompletionMode = ptr(batchv1.NonIndexedCompletion)
	}
	if js.Suspend == nil {
		js.Suspend = ptr(false)
	}
	if js.PodReplacementPolicy == nil {
		if js.PodFailurePolicy != nil {
			js.PodReplacementPolicy = ptr(batchv1.Failed)
		} else {
			js.PodReplacementPolicy = ptr(batchv1.TerminatingOrFailed)
		}
	}
	if js.ManualSelector == nil {
		js.ManualSelector = ptr(false)
	}
	if pfp := js.PodFailurePolicy; pfp != nil {
		for i := range pfp.Rules {
			for j := range pfp.Rules[i].OnPodConditions {
				if c := &pfp.Rules[i].OnPodConditions[j]; c.Status == "" {
					c.Status = v1.ConditionTrue
				}
			}
		}
	}
	if *js.CompletionMode == batchv1.IndexedCompletion {
		addCompletionIndexEnv(&js.Template.Spec)
	}
	defaultTemplate(&js.Template)
	if !*js.ManualSelector {
		if js.Template.Labels == nil {
			js.Template.Labels = map[string]string{}
		}
		for k, v := range map[string]string{
			legacyJobNameLabel: job.Name, jobNameLabel: job.Name,
			legacyControllerUIDLabel: string(job.UID), controllerUIDLabel: string(job.UID),
		} {
			if _, ok := js.Template.Labels[k]; !ok {
				js.Template.Labels[k] = v
			}
		}
		if js.Selector == nil {
			js.Selector = &metav1.LabelSelector{}
		}
		if js.Selector.MatchLabels == nil {
			js.Selector.MatchLabels = map[string]string{}
		}
		if _, ok := js.Selector.MatchLabels[controllerUIDLabel]; !ok {
			js.Selector.MatchLabels[controllerUIDLabel] = string(job.UID)
		}
	}
}

// addCompletionIndexEnv gives each container of an Indexed Job the
// JOB_COMPLETION_INDEX env var, from the pod's completion index label
// (addCompletionIndexEnvVariables), unless it has one.
func addCompletionIndexEnv(spec *v1.PodSpec) {
	add := func(c *v1.Container) {
		for _, e := range c.Env {
			if e.Name == completionIndexEnv {
				return
			}
		}
		c.Env = append(c.Env, v1.EnvVar{Name: completionIndexEnv, ValueFrom: &v1.EnvVarSource{
			FieldRef: &v1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)},
		}})
	}
	for i := range spec.InitContainers {
		add(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		add(&spec.Containers[i])
	}
}

// validateJobSelector checks the selector as ValidateJobSpec and
// validateGeneratedSelector do: it matches the template's labels, and a
// generated one the labels generated.
func validateJobSelector(job *batchv1.Job, spec *field.Path) field.ErrorList {
	js := &job.Spec
	if js.Selector == nil {
		return field.ErrorList{field.Required(spec.Child("selector"), "")}
	}
	sel, err := metav1.LabelSelectorAsSelector(js.Selector)
	if err != nil {
		return field.ErrorList{field.Invalid(spec.Child("selector"), js.Selector, err.Error())}
	}
	var errs field.ErrorList
	if !sel.Matches(labels.Set(js.Template.Labels)) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), js.Template.Labels, "`selector` does not match template `labels`"))
	}
	if !*js.ManualSelector {
		mp := spec.Child("template", "metadata")
		for _, l := range [][2]string{{legacyControllerUIDLabel, string(job.UID)}, {legacyJobNameLabel, job.Name}, {controllerUIDLabel, string(job.UID)}, {jobNameLabel, job.Name}} {
			if got := js.Template.Labels[l[0]]; got != l[1] {
				errs = append(errs, field.Invalid(mp.Child("labels").Key(l[0]), got, fmt.Sprintf("must be '%s'", l[1])))
			}
		}
	}
	return errs
}

// refuseJob refuses what podrun does not run as the Job controller would.
func refuseJob(js *batchv1.JobSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if *js.Suspend {
		errs = append(errs, field.Invalid(spec.Child("suspend"), true, "a suspended Job makes no pod: podrun would wait for ever; run it with suspend false"))
	}
	if m := js.ManagedBy; m != nil && *m != jobController {
		errs = append(errs, field.Invalid(spec.Child("managedBy"), *m, fmt.Sprintf("podrun runs a Job as the built-in controller, %s, would; a Job another controller manages is that controller's", jobController)))
	}
	if js.Scheduling != nil {
		errs = append(errs, field.Forbidden(spec.Child("scheduling"), "podrun does not schedule: a Job's pod group policy is a scheduler's"))
	}
	return errs
}

// validatePodFailurePolicy is the API server's validatePodFailurePolicy.
func validatePodFailurePolicy(js *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if n := len(js.PodFailurePolicy.Rules); n > 20 {
		errs = append(errs, field.TooMany(rp, n, 20))
	}
	names := map[string]bool{}
	for _, c := range js.Template.Spec.Containers {
		names[c.Name] = true
	}
	for _, c := range js.Template.Spec.InitContainers {
		names[c.Name] = true
	}
	actions := []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	for i, rule := range js.PodFailurePolicy.Rules {
		ip := rp.Index(i)
		ap := ip.Child("action")
		switch {
		case rule.Action == "":
			errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", actions)))
		case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
			if js.BackoffLimitPerIndex == nil {
				errs = append(errs, field.Invalid(ap, rule.Action, "requires the backoffLimitPerIndex to be set"))
			}
		case !containsString(actions, rule.Action):
			errs = append(errs, field.NotSupported(ap, rule.Action, actions))
		}
		if ec := rule.OnExitCodes; ec != nil {
			errs = append(errs, validateOnExitCodes(ec, ip.Child("onExitCodes"), names)...)
		}
		for j, pat := range rule.OnPodConditions {
			pp := ip.Child("onPodConditions").Index(j)
			for _, msg := range validation.IsQualifiedName(string(pat.Type)) {
				errs = append(errs, field.Invalid(pp.Child("type"), pat.Type, msg))
			}
			statuses := []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionUnknown}
			if !containsString(statuses, pat.Status) {
				errs = append(errs, field.NotSupported(pp.Child("status"), pat.Status, statuses))
			}
		}
		if n := len(rule.OnPodConditions); n > 20 {
			errs = append(errs, field.TooMany(ip.Child("onPodConditions"), n, 20))
		}
		switch {
		case rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0:
			errs = append(errs, field.Invalid(ip, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
		case rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0:
			errs = append(errs, field.Invalid(ip, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
		}
	}
	return errs
}

// validateOnExitCodes is the API server's
// validatePodFailurePolicyRuleOnExitCodes.
func validateOnExitCodes(ec *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, names map[string]bool) field.ErrorList {
	var errs field.ErrorList
	ops := []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	switch {
	case ec.Operator == "":
		errs = append(errs, field.Required(p.Child("operator"), fmt.Sprintf("valid values: %q", ops)))
	case !containsString(ops, ec.Operator):
		errs = append(errs, field.NotSupported(p.Child("operator"), ec.Operator, ops))
	}
	if ec.ContainerName != nil && !names[*ec.ContainerName] {
		errs = append(errs, field.Invalid(p.Child("containerName"), *ec.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	vp := p.Child("values")
	switch n := len(ec.Values); {
	case n == 0:
		errs = append(errs, field.Invalid(vp, ec.Values, "at least one value is required"))
	case n > 255:
		errs = append(errs, field.TooMany(vp, n, 255))
	}
	seen := map[int32]bool{}
	ordered := true
	for j, v := range ec.Values {
		if ec.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(vp.Index(j), v))
		}
		seen[v] = true
		if j > 0 && ec.Values[j-1] > v {
			ordered = false
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(vp, ec.Values, "must be ordered"))
	}
	return errs
}

// validateSuccessPolicy is the API server's validateSuccessPolicy.
func validateSuccessPolicy(js *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	switch n := len(js.SuccessPolicy.Rules); {
	case n == 0:
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	case n > 20:
		errs = append(errs, field.TooMany(rp, n, 20))
	}
	for i, rule := range js.SuccessPolicy.Rules {
		ip := rp.Index(i)
		if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
			errs = append(errs, field.Required(ip, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		total := 0
		if rule.SucceededIndexes != nil {
			ix, err := jobindexes.Parse(*rule.SucceededIndexes, *js.Completions)
			if err != nil {
				errs = append(errs, field.Invalid(ip.Child("succeededIndexes"), *rule.SucceededIndexes, "error parsing succeededIndexes: "+err.Error()))
			}
			total = len(ix)
		}
		if c := rule.SucceededCount; c != nil {
			cp := ip.Child("succeededCount")
			if *c < 0 {
				errs = append(errs, field.Invalid(cp, *c, "must be greater than or equal to 0"))
			}
			if *c > *js.Completions {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", *js.Completions)))
			}
			if rule.SucceededIndexes != nil && int(*c) > total {
				errs = append(errs, field.Invalid(cp, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// validateLabelsAndAnnotations checks an embedded object's metadata (a
// CronJob's jobTemplate.metadata): its labels and annotations.
func validateLabelsAndAnnotations(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, e := range validateObjectMeta(&metav1.ObjectMeta{Name: "x", Namespace: defaultNamespace, Labels: m.Labels, Annotations: m.Annotations}) {
		e.Field = p.String() + e.Field[len("metadata"):]
		errs = append(errs, e)
	}
	return errs
}

func ptrDeref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
