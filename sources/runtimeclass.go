package sources

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// admitRuntimeClasses is the API server's RuntimeClass admission plugin
// (plugin/pkg/admission/runtimeclass, Admit then Validate) over the pods
// of a run, with the run's RuntimeClasses in place of the API server's:
// for each pod that names one (spec.runtimeClassName),
//
//   - a class the run does not have refuses the pod ("pod rejected:
//     RuntimeClass %q not found" on an API server; an API-server kubelet
//     given such a pod fails its sandbox: runtimeclass.node.k8s.io %q not
//     found);
//   - the class's overhead.podFixed becomes the pod's spec.overhead; a pod
//     that sets another overhead, or one where the class has none, is
//     refused;
//   - the class's scheduling is merged into the pod: its nodeSelector
//     into spec.nodeSelector (a key the pod sets to another value
//     refuses it) and its tolerations into spec.tolerations, a toleration
//     another one covers dropped (MergeTolerations).
//
// The pods of workloads are admitted too: a Deployment's (and the other
// controllers') as the pods they are, a Job's template once for the pods
// the run makes from it, errors at the template's field paths.
//
// A pod without runtimeClassName is left as it is, spec.overhead
// included (a standalone kubelet takes a static pod's overhead as
// written; the API server would refuse an overhead without a class).
// The merged nodeSelector is then admitted against podrun's node as a
// manifest's own (admission: --node-labels), as the scheduler would place
// the pod only on a node that has those labels.
func admitRuntimeClasses(set *Set) []error {
	classes := map[string]*nodev1.RuntimeClass{}
	for _, rc := range set.RuntimeClasses {
		if _, dup := classes[rc.Name]; !dup { // a duplicate is checkDuplicates' error
			classes[rc.Name] = rc.RuntimeClass
		}
	}
	var errs []error
	for _, p := range set.Pods {
		if err := admitRuntimeClass(p.Pod, classes); err != nil {
			kind, name, field := "Pod", p.Name, err.Field
			if w := p.Workload; w != nil { // a Deployment's, ...: its template's path
				kind, name, field = w.Kind, w.Name, "spec.template."+field
			}
			errs = append(errs, &Error{Origin: p.Origin, Kind: kind, Name: name, Field: field, Msg: err.ErrorBody()})
		}
	}
	// A Job's pods are made from its template as the run goes: the
	// template is admitted once, as the API server would admit each pod.
	for _, j := range set.Jobs {
		if err := admitRuntimeClass(j.template, classes); err != nil {
			kind, name, field := "Job", j.Job.Name, "spec.template."+err.Field
			if w := j.Workload; w != nil { // a CronJob's
				kind, name, field = w.Kind, w.Name, "spec.jobTemplate.spec.template."+err.Field
			}
			errs = append(errs, &Error{Origin: j.Origin, Kind: kind, Name: name, Field: field, Msg: err.ErrorBody()})
		}
	}
	return errs
}

// admitRuntimeClass admits one pod against classes, by name, changing it
// as the admission plugin does; the error says what refuses it.
func admitRuntimeClass(pod *v1.Pod, classes map[string]*nodev1.RuntimeClass) *field.Error {
	if pod.Spec.RuntimeClassName == nil {
		return nil
	}
	name := *pod.Spec.RuntimeClassName
	rc, ok := classes[name]
	if !ok {
		return &field.Error{Type: field.ErrorTypeNotFound, Field: "spec.runtimeClassName", BadValue: name,
			Detail: fmt.Sprintf("no RuntimeClass %q in the run: give it with -f (apiVersion %s), as the API server refuses the pod without it (RuntimeClass %q not found)",
				name, nodeAPIVersion, name)}
	}
	if err := setOverhead(pod, rc); err != nil {
		return err
	}
	return setScheduling(pod, rc)
}

// setOverhead is the plugin's setOverhead and validateOverhead: the
// class's overhead, if any, is the pod's, and a pod that sets one of its
// own must set that one.
func setOverhead(pod *v1.Pod, rc *nodev1.RuntimeClass) *field.Error {
	p := field.NewPath("spec", "overhead")
	if rc.Overhead == nil {
		if pod.Spec.Overhead != nil {
			return field.Forbidden(p, fmt.Sprintf("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead (RuntimeClass %q has none)", rc.Name))
		}
		return nil
	}
	if len(pod.Spec.Overhead) > 0 && !equality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
		return field.Forbidden(p, fmt.Sprintf("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead (RuntimeClass %q)", rc.Name))
	}
	pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	return nil
}

// setScheduling is the plugin's setScheduling: the class's nodeSelector
// and tolerations merged into the pod's.
func setScheduling(pod *v1.Pod, rc *nodev1.RuntimeClass) *field.Error {
	s := rc.Scheduling
	if s == nil {
		return nil
	}
	sel := maps.Clone(pod.Spec.NodeSelector)
	if sel == nil {
		sel = maps.Clone(s.NodeSelector)
	}
	for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
		v := s.NodeSelector[k]
		if pv, ok := sel[k]; ok && pv != v {
			return field.Forbidden(field.NewPath("spec", "nodeSelector").Key(k),
				fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s (RuntimeClass %q)", k, v, k, pv, rc.Name))
		}
		sel[k] = v
	}
	pod.Spec.NodeSelector = sel
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	return nil
}

// mergeTolerations is the API server's MergeTolerations
// (pkg/util/tolerations): first's and second's tolerations in order, but
// those another one tolerates a superset of (isSuperset), and of two equal
// ones the second.
func mergeTolerations(first, second []v1.Toleration) []v1.Toleration {
	all := append(slices.Clone(first), second...)
	var merged []v1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if isSuperset(m, t) {
				continue next
			}
		}
		for _, o := range all[i+1:] {
			if !equality.Semantic.DeepEqual(&t, &o) && isSuperset(o, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// isSuperset tells whether ss tolerates every taint t tolerates.
func isSuperset(ss, t v1.Toleration) bool {
	if equality.Semantic.DeepEqual(&t, &ss) {
		return true
	}
	// An empty key with Exists matches every key and value.
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != v1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == v1.TaintEffectNoExecute && ss.TolerationSeconds != nil {
		if t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds {
			return false
		}
	}
	switch ss.Operator {
	case v1.TolerationOpEqual, "":
		return t.Operator == v1.TolerationOpEqual && t.Value == ss.Value
	case v1.TolerationOpExists:
		return true
	}
	return false
}
