package sources

// The apps/v1 workloads, Deployment, ReplicaSet, StatefulSet and
// DaemonSet: each becomes the one pod its controller would make first,
// named, labelled and owned as the controller names, labels and owns it
// (pkg/controller/deployment, replicaset, statefulset and daemon of
// Kubernetes v1.37). The run waits for it as for any pod of restartPolicy
// Always: until Ready (--wait=auto).

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/dump"
)

// Labels and annotations of the apps/v1 controllers' pods.
const (
	// podTemplateHashLabel is the Deployment's pod-template-hash
	// (appsv1.DefaultDeploymentUniqueLabelKey), on its ReplicaSet's
	// template and pods.
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey
	// controllerRevisionHashLabel is a StatefulSet's and a DaemonSet's
	// controller-revision-hash (appsv1.ControllerRevisionHashLabelKey).
	controllerRevisionHashLabel = appsv1.ControllerRevisionHashLabelKey
	// podTemplateGenerationLabel is a DaemonSet pod's
	// pod-template-generation (extensions/v1beta1's
	// DaemonSetTemplateGenerationKey): 1, the generation of a DaemonSet just
	// created.
	podTemplateGenerationLabel = "pod-template-generation"
)

// podTemplateHash is the Deployment and DaemonSet controllers' hash of a
// pod template (controller.ComputeHash): FNV-32a over the template as
// k8s.io/utils/dump.ForHash prints it, then the collision count when
// there is one (none for an object just created), as a decimal string
// encoded with rand.SafeEncodeString. It equals a cluster's when podrun's
// defaulting of the template equals the API server's.
func podTemplateHash(t *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*t))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// statefulSetRevision is the name of a StatefulSet's first
// ControllerRevision, its pods' controller-revision-hash
// (history.NewControllerRevision with collision count 0): the set's
// name, cut to 223 characters, a dash, and the FNV-32 hash of the
// revision's data, the strategic merge patch
// {"spec":{"template":{...,"$patch":"replace"}}} (getPatch), and of "0",
// encoded with rand.SafeEncodeString.
func statefulSetRevision(set *appsv1.StatefulSet) (string, error) {
	b, err := json.Marshal(set)
	if err != nil {
		return "", err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return "", err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		template = map[string]any{}
	}
	template["$patch"] = "replace"
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
	if err != nil {
		return "", err
	}
	h := fnv.New32()
	h.Write(patch)
	h.Write([]byte("0"))
	prefix := set.Name
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32())), nil
}

// appsTemplate defaults and validates an apps/v1 workload's selector and
// template (restartPolicy Always, as the apps API requires) and refuses
// replicas 0.
func appsTemplate(t *v1.PodTemplateSpec, sel *metav1.LabelSelector, replicas *int32, what string, wl *Workload) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateReplicas(replicas, spec, wl)
	errs = append(errs, validateSelector(sel, t, spec, what)...)
	defaultTemplate(t)
	errs = append(errs, validateRestartPolicy(t, spec.Child("template"), v1.RestartPolicyAlways)...)
	return errs
}

// deployment makes a Deployment's pod: the Deployment controller makes a
// ReplicaSet <deployment>-<pod-template-hash> whose template has the
// pod-template-hash label, owned by the Deployment; the ReplicaSet
// controller makes the pod, <replicaset>-<5 characters>, owned by the
// ReplicaSet. A paused Deployment makes no ReplicaSet, so no pod: refused.
func (d *decoder) deployment(w workloadObject, dep *appsv1.Deployment) {
	wl := &Workload{Kind: w.kind, Name: dep.Name}
	errs := appsTemplate(&dep.Spec.Template, dep.Spec.Selector, dep.Spec.Replicas, "deployment", wl)
	if dep.Spec.Paused {
		errs = append(errs, field.Invalid(field.NewPath("spec", "paused"), true, "a paused Deployment makes no ReplicaSet, so no pod; podrun runs one"))
	}
	pod := d.deploymentPod(w, dep)
	errs = append(errs, validateTemplatePod(pod, field.NewPath("spec", "template"))...)
	if len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addWorkloadPod(w.origin, pod, wl)
}

// deploymentPod is the first pod of a Deployment's first ReplicaSet.
func (d *decoder) deploymentPod(w workloadObject, dep *appsv1.Deployment) *v1.Pod {
	hash := podTemplateHash(&dep.Spec.Template, nil)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-" + hash, Namespace: dep.Namespace}}
	rs.UID = derivedUID(w.uid, "ReplicaSet "+rs.Name)
	rs.Spec.Template = *dep.Spec.Template.DeepCopy()
	if rs.Spec.Template.Labels == nil {
		rs.Spec.Template.Labels = map[string]string{}
	}
	rs.Spec.Template.Labels[podTemplateHashLabel] = hash
	return d.replicaSetPod(rs, controllerRef("apps/v1", "ReplicaSet", rs.Name, rs.UID))
}

// replicaSet makes a ReplicaSet's pod, <replicaset>-<5 characters>, owned
// by the ReplicaSet.
func (d *decoder) replicaSet(w workloadObject, rs *appsv1.ReplicaSet) {
	wl := &Workload{Kind: w.kind, Name: rs.Name}
	errs := appsTemplate(&rs.Spec.Template, rs.Spec.Selector, rs.Spec.Replicas, "deployment", wl)
	pod := d.replicaSetPod(rs, controllerRef("apps/v1", "ReplicaSet", rs.Name, w.uid))
	errs = append(errs, validateTemplatePod(pod, field.NewPath("spec", "template"))...)
	if len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addWorkloadPod(w.origin, pod, wl)
}

// replicaSetPod is the pod the ReplicaSet controller makes first.
func (d *decoder) replicaSetPod(rs *appsv1.ReplicaSet, owner metav1.OwnerReference) *v1.Pod {
	pod := templatePod(&rs.Spec.Template, rs.Namespace, owner, d.opts.NodeName)
	pod.GenerateName = podsPrefix(rs.Name)
	pod.UID = derivedUID(owner.UID, "Pod 0")
	pod.Name = generatedName(pod.GenerateName, pod.UID)
	return pod
}

// statefulSet makes a StatefulSet's first pod, <statefulset>-<ordinal>
// (ordinals.start, 0 by default), with the StatefulSet controller's
// identity: statefulset.kubernetes.io/pod-name and
// apps.kubernetes.io/pod-index labels, the hostname of the pod's name, the
// subdomain of serviceName, and controller-revision-hash. Its
// volumeClaimTemplates need PersistentVolumeClaims: refused.
func (d *decoder) statefulSet(w workloadObject, set *appsv1.StatefulSet) {
	wl := &Workload{Kind: w.kind, Name: set.Name}
	spec := field.NewPath("spec")
	errs := appsTemplate(&set.Spec.Template, set.Spec.Selector, set.Spec.Replicas, "statefulset", wl)
	if len(set.Spec.VolumeClaimTemplates) > 0 {
		errs = append(errs, field.Forbidden(spec.Child("volumeClaimTemplates"),
			"podrun has no PersistentVolumeClaims: use a volume of the pod template (emptyDir, hostPath) instead"))
	}
	ordinal := 0
	if o := set.Spec.Ordinals; o != nil {
		if o.Start < 0 {
			errs = append(errs, field.Invalid(spec.Child("ordinals", "start"), o.Start, "must be greater than or equal to 0"))
		}
		ordinal = int(o.Start)
	}
	revision, err := statefulSetRevision(set)
	if err != nil {
		d.errs = append(d.errs, &Error{Origin: w.origin, Kind: w.kind, Name: set.Name, Msg: "hashing the pod template", Err: err})
		return
	}
	pod := templatePod(&set.Spec.Template, set.Namespace, controllerRef("apps/v1", "StatefulSet", set.Name, w.uid), d.opts.NodeName)
	pod.Name = fmt.Sprintf("%s-%d", set.Name, ordinal)
	pod.UID = derivedUID(w.uid, "Pod "+pod.Name)
	pod.Labels[appsv1.StatefulSetPodNameLabel] = pod.Name
	pod.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
	pod.Labels[appsv1.StatefulSetRevisionLabel] = revision
	pod.Spec.Hostname = pod.Name
	pod.Spec.Subdomain = set.Spec.ServiceName
	errs = append(errs, validateTemplatePod(pod, spec.Child("template"))...)
	if len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addWorkloadPod(w.origin, pod, wl)
}

// daemonSet makes a DaemonSet's pod for this node, <daemonset>-<5
// characters>, as the DaemonSet controller makes it (CreatePodTemplate):
// the controller-revision-hash and pod-template-generation labels and the
// tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations). The
// controller pins the pod to its node with a metadata.name node affinity
// once the template's own affinity matched the node; podrun keeps the
// template's, which admission checks against this node, as the controller
// does before it makes the pod.
func (d *decoder) daemonSet(w workloadObject, ds *appsv1.DaemonSet) {
	wl := &Workload{Kind: w.kind, Name: ds.Name}
	errs := appsTemplate(&ds.Spec.Template, ds.Spec.Selector, nil, "daemonset", wl)
	hash := podTemplateHash(&ds.Spec.Template, nil)
	pod := templatePod(&ds.Spec.Template, ds.Namespace, controllerRef("apps/v1", "DaemonSet", ds.Name, w.uid), d.opts.NodeName)
	pod.Labels[podTemplateGenerationLabel] = "1"
	pod.Labels[controllerRevisionHashLabel] = hash
	addDaemonTolerations(&pod.Spec)
	pod.GenerateName = podsPrefix(ds.Name)
	pod.UID = derivedUID(w.uid, "Pod "+d.opts.NodeName)
	pod.Name = generatedName(pod.GenerateName, pod.UID)
	errs = append(errs, validateTemplatePod(pod, field.NewPath("spec", "template"))...)
	if len(errs) > 0 {
		d.failWorkload(w, errs)
		return
	}
	d.addWorkloadPod(w.origin, pod, wl)
}

// addDaemonTolerations adds the tolerations the DaemonSet controller gives
// every daemon pod (AddOrUpdateDaemonPodTolerations), each replacing a
// toleration that matches it (same key, operator, value and effect).
func addDaemonTolerations(spec *v1.PodSpec) {
	exists := func(key string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
	}
	add := []v1.Toleration{
		exists(v1.TaintNodeNotReady, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute),
		exists(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule),
		exists(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule),
	}
	if spec.HostNetwork {
		add = append(add, exists(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule))
	}
	for _, t := range add {
		replaced := false
		for i := range spec.Tolerations {
			if t.MatchToleration(&spec.Tolerations[i]) {
				spec.Tolerations[i], replaced = t, true
			}
		}
		if !replaced {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
}
