package sources

// Workloads: the Job, CronJob, Deployment, ReplicaSet, StatefulSet and
// DaemonSet documents, whose pods podrun runs as their controllers would
// make them (docs/workloads.md). Each is decoded strictly, defaulted and
// validated like a Pod, its pod template as the pod it makes, with errors
// at the template's own field paths (spec.template.spec.containers[0].image).
// A Deployment-like object becomes one Pod of the Set (apps.go); a Job,
// or a CronJob's Job, becomes a Job of the Set, whose pods the runner
// makes as it runs them (job.go).

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// workloadKind is a workload kind podrun runs: its apiVersion, a new
// object of its type, and what makes the kind's pods or Job of one.
type workloadKind struct {
	apiVersion string
	new        func() any
	decode     func(d *decoder, w workloadObject, obj any)
}

// kindOf is the workloadKind of type T, decoded by decode.
func kindOf[T any](apiVersion string, decode func(d *decoder, w workloadObject, obj *T)) workloadKind {
	return workloadKind{apiVersion, func() any { return new(T) }, func(d *decoder, w workloadObject, obj any) { decode(d, w, obj.(*T)) }}
}

// workloadKinds are the workload kinds podrun runs.
var workloadKinds = map[string]workloadKind{
	"Job":         kindOf("batch/v1", (*decoder).job),
	"CronJob":     kindOf("batch/v1", (*decoder).cronJob),
	"Deployment":  kindOf("apps/v1", (*decoder).deployment),
	"ReplicaSet":  kindOf("apps/v1", (*decoder).replicaSet),
	"StatefulSet": kindOf("apps/v1", (*decoder).statefulSet),
	"DaemonSet":   kindOf("apps/v1", (*decoder).daemonSet),
}

// Workload names the document a pod or a Job of the run was made from
// when it is not a Pod (or Job) document: a Deployment, a CronJob, ...
type Workload struct {
	Kind string // Deployment, ReplicaSet, StatefulSet, DaemonSet or CronJob
	Name string
	// Notes say what podrun does otherwise than the object's controller
	// would (a Deployment of 3 replicas runs one pod), for the run's
	// progress.
	Notes []string
}

// String is "kind/name" in lower case, as kubectl names objects
// (deployment/web).
func (w *Workload) String() string {
	return strings.ToLower(w.Kind) + "/" + w.Name
}

// workloadObject is a decoded workload document before its kind's own
// checks: the typed object (*batchv1.Job, *appsv1.Deployment, ...) and
// what every kind needs of it.
type workloadObject struct {
	origin   Origin
	kind     string
	meta     *metav1.ObjectMeta // the object's, its namespace defaulted
	uid      types.UID          // metadata.uid, or the one podrun gives
	givenUID bool               // podrun gave uid
}

// workload decodes one workload document of kind (a key of
// workloadKinds): its apiVersion and fields, its metadata, then the
// kind's pods or Job.
func (d *decoder) workload(o Origin, raw []byte, m map[string]any, kind string) {
	_, apiVersion, name := typeMeta(m)
	wk := workloadKinds[kind]
	if !d.checkAPIVersion(o, kind, name, apiVersion, wk.apiVersion) {
		return
	}
	target := wk.new()
	if !d.decodeInto(o, kind, name, m, target) {
		return
	}
	meta := reflect.ValueOf(target).Elem().FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
	if meta.Namespace == "" {
		meta.Namespace = defaultNamespace
	}
	if errs := validateObjectMeta(meta); len(errs) > 0 {
		d.fieldErrors(o, kind, name, errs)
		return
	}
	overridden := d.overrideTemplate(meta.Name, workloadTemplate(target))
	w := workloadObject{origin: o, kind: kind, meta: meta, uid: meta.UID}
	if w.uid == "" {
		w.uid, w.givenUID = objectUID(d.src.identity, o, d.opts.NodeName, raw, overridden), true
		meta.UID = w.uid
	}
	wk.decode(d, w, target)
}

// workloadTemplate is a workload's pod template.
func workloadTemplate(obj any) *v1.PodTemplateSpec {
	switch o := obj.(type) {
	case *batchv1.Job:
		return &o.Spec.Template
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.ReplicaSet:
		return &o.Spec.Template
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	}
	return nil
}

// overrideTemplate applies the run's --image and --env (Options.Overrides)
// to a workload's pod template, as to a pod named as the workload (an
// --image POD/CONTAINER=IMAGE names the workload), before its defaults;
// it returns the template's JSON when they changed it, which the UID then
// hashes, as a pod's.
func (d *decoder) overrideTemplate(name string, t *v1.PodTemplateSpec) []byte {
	ov := d.opts.Overrides
	if ov.empty() {
		return nil
	}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: t.Spec}
	if !ov.apply(pod, d.opts.matched) {
		return nil
	}
	t.Spec = pod.Spec
	b, err := json.Marshal(t)
	if err != nil {
		b = []byte(err.Error()) // never: a decoded template marshals
	}
	return b
}

// failWorkload reports the errors of a workload document, each once.
func (d *decoder) failWorkload(w workloadObject, errs field.ErrorList) {
	d.fieldErrors(w.origin, w.kind, w.meta.Name, errs)
}

// defaultTemplate applies the API server's pod defaulting to a pod
// template, as it does when it stores the workload: what defaultPod does
// to a pod's spec, without podrun's own spec.nodeName.
func defaultTemplate(t *v1.PodTemplateSpec) {
	p := &v1.Pod{Spec: t.Spec}
	defaultPod(p, "")
	t.Spec = p.Spec
}

// controllerRef is the ownerReference a controller gives what it makes
// (metav1.NewControllerRef): controller and blockOwnerDeletion true.
func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name, UID: uid,
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}
}

// podsPrefix is the generateName of a controller's pods
// (controller.getPodsPrefix): the controller's name and a dash.
func podsPrefix(controller string) string {
	return controller + "-"
}

// templatePod is the pod a controller makes from its template
// (controller.GetPodFromTemplate): the template's labels, annotations,
// finalizers and spec, in namespace ns, owned by owner, on this node
// unless the template names one.
func templatePod(t *v1.PodTemplateSpec, ns string, owner metav1.OwnerReference, nodeName string) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns,
			Labels:          maps.Clone(t.Labels),
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if pod.Spec.NodeName == "" {
		pod.Spec.NodeName = nodeName
	}
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	return pod
}

// validateTemplatePod validates the pod a template makes, with each error
// at the template's path under root (spec.template, or
// spec.jobTemplate.spec.template): spec.containers[0].image is
// spec.template.spec.containers[0].image. The pod's name, namespace and
// UID are the controller's, made from the workload's checked metadata,
// and not the template's to be wrong about.
func validateTemplatePod(pod *v1.Pod, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, e := range validatePod(pod) {
		switch {
		case strings.HasPrefix(e.Field, "metadata.name"), strings.HasPrefix(e.Field, "metadata.namespace"),
			strings.HasPrefix(e.Field, "metadata.uid"):
			continue
		}
		e.Field = root.String() + "." + e.Field
		errs = append(errs, e)
	}
	return errs
}

// validateRestartPolicy checks a template's restartPolicy against the
// ones the workload's API takes.
func validateRestartPolicy(t *v1.PodTemplateSpec, root *field.Path, allowed ...v1.RestartPolicy) field.ErrorList {
	p := root.Child("spec", "restartPolicy")
	if slices.Contains(allowed, t.Spec.RestartPolicy) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, t.Spec.RestartPolicy, allowed)}
}

// validateSelector checks a workload's selector as the apps/v1 API server
// does: required, valid, not empty ("empty selector is invalid for
// <what>": deployment for a Deployment and a ReplicaSet), and matching
// the template's labels.
func validateSelector(sel *metav1.LabelSelector, t *v1.PodTemplateSpec, spec *field.Path, what string) field.ErrorList {
	p := spec.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := mapErrors(metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p))
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return errs
	}
	if s.Empty() {
		errs = append(errs, field.Invalid(p, sel, "empty selector is invalid for "+what))
	}
	if !s.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// validateReplicas refuses replicas 0 and notes what podrun does with
// more: it runs one pod (docs/workloads.md).
func validateReplicas(replicas *int32, spec *field.Path, w *Workload) field.ErrorList {
	p := spec.Child("replicas")
	switch {
	case replicas == nil, *replicas == 1:
		return nil
	case *replicas < 0:
		return field.ErrorList{field.Invalid(p, *replicas, "must be greater than or equal to 0")}
	case *replicas == 0:
		return field.ErrorList{field.Invalid(p, *replicas, fmt.Sprintf("a %s of no replicas runs no pod; podrun runs one", w.Kind))}
	}
	w.Notes = append(w.Notes, fmt.Sprintf("replicas %d: podrun runs one pod", *replicas))
	return nil
}

// addWorkloadPod adds a pod a workload document made to the set, with the
// annotations of a pod of its source.
func (d *decoder) addWorkloadPod(o Origin, pod *v1.Pod, w *Workload) {
	annotateSourced(pod, d.src.config, d.opts.Seen)
	p := &Pod{Pod: pod, Origin: o, GivenUID: true, Workload: w}
	if d.opts.KeepManifests || !d.opts.Overrides.empty() {
		p.Manifest = pod.DeepCopy()
	}
	d.set.Pods = append(d.set.Pods, p)
}
