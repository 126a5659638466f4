package sources

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podrun/podrun/sources/podresources"
)

// The validation here follows the API server's ValidatePodCreate, with
// the same field paths and messages, for what podrun relies on. It runs
// after defaulting, so "required" defaults are always present.

// validateObjectMeta checks name (required: podrun does not generate
// names), namespace, uid, labels and annotations.
//
// A uid, when given, must be a lowercase RFC 1123 label (at most 63
// lowercase letters, digits and '-', starting and ending with a letter
// or digit). podrun puts it in its data dir, log dir
// (<namespace>_<name>_<uid>) and cgroup paths, where ".", "..", "/", "_",
// a newline or 300 characters would name another place, or none. Every
// UID the API server gives (apimachinery's k8s-uuid format, lowercase
// 8-4-4-4-12 hex), the kubelet's own static-pod UIDs (32 hex digits) and
// podrun's are labels. The API server replaces a uid given on create and
// the kubelet keeps a static pod's uid unchecked: podrun refuses what its
// paths cannot hold.
func validateObjectMeta(m *metav1.ObjectMeta) field.ErrorList {
	return validateMeta(m, true)
}

// validateMeta is validateObjectMeta for a namespaced object, or for a
// cluster-scoped one (namespaced false), whose namespace defaulting has
// cleared.
func validateMeta(m *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	p := field.NewPath("metadata")
	var errs field.ErrorList
	if m.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "podrun does not generate names"))
	} else {
		errs = appendMsgs(errs, p.Child("name"), m.Name, validation.IsDNS1123Subdomain(m.Name))
	}
	if namespaced {
		errs = appendMsgs(errs, p.Child("namespace"), m.Namespace, validation.IsDNS1123Label(m.Namespace))
	}
	if m.UID != "" {
		errs = appendMsgs(errs, p.Child("uid"), m.UID, validation.IsDNS1123Label(string(m.UID)))
	}
	errs = append(errs, mapErrors(metav1validation.ValidateLabels(m.Labels, p.Child("labels")))...)
	errs = append(errs, mapErrors(apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations")))...)
	return errs
}

// mapErrors puts the errors of an apimachinery validator that ranges over
// a map (labels, annotations, a selector's matchLabels) in one order: by
// field path, then bad value, then detail. Go's map order is random, and
// the same manifest must give the same message every time (FuzzDecode
// found two invalid labels reported in either order). Each error's own
// path is kept; errors with the same path keep their relative order.
func mapErrors(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(strings.Compare(a.Field, b.Field),
			strings.Compare(fmt.Sprint(a.BadValue), fmt.Sprint(b.BadValue)),
			strings.Compare(a.Detail, b.Detail))
	})
	return errs
}

// appendMsgs turns the messages of a validation.Is* check into Invalid
// errors.
func appendMsgs(errs field.ErrorList, p *field.Path, value any, msgs []string) field.ErrorList {
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// The values the API server accepts for each enumerated field.
func restartPolicies() []v1.RestartPolicy {
	return []v1.RestartPolicy{v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever}
}

func dnsPolicies() []v1.DNSPolicy {
	return []v1.DNSPolicy{v1.DNSClusterFirstWithHostNet, v1.DNSClusterFirst, v1.DNSDefault, v1.DNSNone}
}

func pullPolicies() []v1.PullPolicy {
	return []v1.PullPolicy{v1.PullAlways, v1.PullNever, v1.PullIfNotPresent}
}

func protocols() []v1.Protocol { return []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP} }

func terminationMsgPolicys() []v1.TerminationMessagePolicy {
	return []v1.TerminationMessagePolicy{v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError}
}

func mountPropagations() []v1.MountPropagationMode {
	return []v1.MountPropagationMode{v1.MountPropagationNone, v1.MountPropagationHostToContainer, v1.MountPropagationBidirectional}
}

// validatePod validates a defaulted pod.
func validatePod(pod *v1.Pod) field.ErrorList {
	errs := validateObjectMeta(&pod.ObjectMeta)
	spec := &pod.Spec
	sp := field.NewPath("spec")

	vols, verrs := validateVolumes(spec.Volumes, sp.Child("volumes"))
	errs = append(errs, verrs...)

	names := map[string]bool{}
	grace := spec.TerminationGracePeriodSeconds
	for i := range spec.InitContainers {
		errs = append(errs, validateContainer(&spec.InitContainers[i], sp.Child("initContainers").Index(i), vols, names, grace, true)...)
	}
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(sp.Child("containers"), ""))
	}
	for i := range spec.Containers {
		errs = append(errs, validateContainer(&spec.Containers[i], sp.Child("containers").Index(i), vols, names, grace, false)...)
	}
	errs = append(errs, validateHostPorts(spec.Containers, sp.Child("containers"))...)
	errs = append(errs, validateTolerations(spec.Tolerations, sp.Child("tolerations"))...)
	if r := spec.Resources; r != nil {
		errs = append(errs, validateResources(r, sp.Child("resources"), podResourceName)...)
		errs = append(errs, validatePodResourceConsistency(pod, sp.Child("resources"))...)
	}
	if spec.Overhead != nil {
		// The API server's validateOverhead: the overhead as a container's
		// limits, named spec.overhead.limits[NAME] as it names them.
		errs = append(errs, validateResources(&v1.ResourceRequirements{Limits: spec.Overhead}, sp.Child("overhead"), containerResourceName)...)
	}
	errs = append(errs, validatePodSecurityContext(spec.SecurityContext, sp.Child("securityContext"))...)
	if spec.RuntimeClassName != nil {
		// The API server's ValidateRuntimeClassName.
		errs = appendMsgs(errs, sp.Child("runtimeClassName"), *spec.RuntimeClassName, validation.IsDNS1123Subdomain(*spec.RuntimeClassName))
	}
	if len(spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(sp.Child("ephemeralContainers"), "cannot be set on create"))
	}

	if !containsString(restartPolicies(), spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), spec.RestartPolicy, restartPolicies()))
	}
	if !containsString(dnsPolicies(), spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(sp.Child("dnsPolicy"), spec.DNSPolicy, dnsPolicies()))
	}
	if spec.DNSPolicy == v1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(sp.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when dnsPolicy is None"))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(sp.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	// The API server's range (ValidatePodSpec): 1 s to about 68 years.
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), *d, fmt.Sprintf("must be between %d and %d, inclusive", 1, math.MaxInt32)))
	}
	return errs
}

// validateVolumes checks volume names and sources and returns the set of
// declared names.
func validateVolumes(vols []v1.Volume, p *field.Path) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range vols {
		v := &vols[i]
		vp := p.Index(i)
		errs = validateUniqueName(errs, v.Name, vp.Child("name"), names)
		switch n := volumeSourceCount(&v.VolumeSource); {
		case n == 0:
			errs = append(errs, field.Required(vp, "must specify a volume type"))
		case n > 1:
			errs = append(errs, field.Forbidden(vp, "may not specify more than 1 volume type"))
		}
		if s := v.HostPath; s != nil && s.Path == "" {
			errs = append(errs, field.Required(vp.Child("hostPath", "path"), ""))
		}
		if s := v.EmptyDir; s != nil && s.SizeLimit != nil {
			errs = append(errs, validateSizeLimit(*s.SizeLimit, vp.Child("emptyDir", "sizeLimit"))...)
		}
		errs = append(errs, validateSourceItems(volumeItems(&v.VolumeSource), vp)...)
		if s := v.Projected; s != nil {
			errs = append(errs, validateProjections(s.Sources, vp.Child("projected", "sources"))...)
		}
		if s := v.Image; s != nil {
			// validateImageVolumeSource: a reference, a known pull policy
			// (defaulted from the reference's tag when not given).
			ip := vp.Child("image")
			if s.Reference == "" {
				errs = append(errs, field.Required(ip.Child("reference"), ""))
			}
			if !containsString(pullPolicies(), s.PullPolicy) {
				errs = append(errs, field.NotSupported(ip.Child("pullPolicy"), s.PullPolicy, pullPolicies()))
			}
		}
	}
	return names, errs
}

// validateSizeLimit checks an emptyDir's sizeLimit as the API server does
// (not negative), and that it fits the int64 of bytes it becomes (the
// API server takes 1e400; validateResources).
func validateSizeLimit(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Forbidden(p, "SizeLimit field must be a valid resource quantity")}
	}
	if limit := maxQuantity(v1.ResourceMemory); q.Cmp(limit) > 0 {
		return field.ErrorList{field.Invalid(p, q.String(), fmt.Sprintf("must be less than or equal to %s (an int64)", limit.String()))}
	}
	return nil
}

// volumeItems is a volume's configMap, secret and downwardAPI sources as
// a projection's, for their items: a volume has one of them, a projection
// source too.
func volumeItems(v *v1.VolumeSource) v1.VolumeProjection {
	var p v1.VolumeProjection
	if s := v.ConfigMap; s != nil {
		p.ConfigMap = &v1.ConfigMapProjection{Items: s.Items}
	}
	if s := v.Secret; s != nil {
		p.Secret = &v1.SecretProjection{Items: s.Items}
	}
	if s := v.DownwardAPI; s != nil {
		p.DownwardAPI = &v1.DownwardAPIProjection{Items: s.Items}
	}
	return p
}

// validateSourceItems checks the paths a volume's or a projection source's
// configMap, secret and downwardAPI items write, and a projection's
// serviceAccountToken path (p is the volume's or the source's path).
func validateSourceItems(src v1.VolumeProjection, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s := src.ServiceAccountToken; s != nil {
		errs = append(errs, validateItemPath(s.Path, p.Child("serviceAccountToken", "path"))...)
	}
	if s := src.ConfigMap; s != nil {
		errs = append(errs, validateKeyToPaths(s.Items, p.Child("configMap", "items"))...)
	}
	if s := src.Secret; s != nil {
		errs = append(errs, validateKeyToPaths(s.Items, p.Child("secret", "items"))...)
	}
	if s := src.DownwardAPI; s != nil {
		errs = append(errs, validateDownwardAPIItems(s.Items, p.Child("downwardAPI", "items"))...)
	}
	return errs
}

func validateDownwardAPIItems(items []v1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, it := range items {
		ip := p.Index(j)
		errs = append(errs, validateItemPath(it.Path, ip.Child("path"))...)
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(ip, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		case it.FieldRef == nil && it.ResourceFieldRef == nil:
			errs = append(errs, field.Required(ip, "one of fieldRef and resourceFieldRef is required"))
		}
		if it.FieldRef != nil {
			errs = append(errs, validateFieldRef(it.FieldRef, volumeFieldPaths(), ip.Child("fieldRef"))...)
		} else if it.ResourceFieldRef != nil {
			errs = append(errs, validateResourceFieldRef(it.ResourceFieldRef, ip.Child("resourceFieldRef"), true)...)
		}
	}
	return errs
}

// resourceFieldPaths are the resources a resourceFieldRef may name, besides
// limits.hugepages-* and requests.hugepages-*.
func resourceFieldPaths() []string {
	return []string{"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"}
}

// validateResourceFieldRef is the API server's
// validateContainerResourceFieldSelector: a downward API volume item names
// its container, the resource is one the downward API gives, and the
// divisor one of its units (a divisor of 3, or of 1e400, which the
// int64 arithmetic turned into 0, gave a value no kubelet gives).
func validateResourceFieldRef(f *v1.ResourceFieldSelector, p *field.Path, volume bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && f.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case f.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !slices.Contains(resourceFieldPaths(), f.Resource) && !strings.HasPrefix(f.Resource, "limits."+v1.ResourceHugePagesPrefix) &&
		!strings.HasPrefix(f.Resource, "requests."+v1.ResourceHugePagesPrefix):
		errs = append(errs, field.NotSupported(p.Child("resource"), f.Resource, resourceFieldPaths()))
	}
	if f.Divisor.IsZero() {
		return errs
	}
	bytes := []string{"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
	var units []string
	var msg string
	switch r := f.Resource; {
	case r == "limits.cpu" || r == "requests.cpu":
		units, msg = []string{"1m", "1"}, "only divisor's values 1m and 1 are supported with the cpu resource"
	case r == "limits.memory" || r == "requests.memory":
		units, msg = bytes, "only divisor's values "+strings.Join(bytes, ", ")+" are supported with the memory resource"
	case r == "limits.ephemeral-storage" || r == "requests.ephemeral-storage":
		units, msg = bytes, "only divisor's values "+strings.Join(bytes, ", ")+" are supported with the local ephemeral storage resource"
	case strings.HasPrefix(r, "limits."+v1.ResourceHugePagesPrefix) || strings.HasPrefix(r, "requests."+v1.ResourceHugePagesPrefix):
		units, msg = bytes, "only divisor's values "+strings.Join(bytes, ", ")+" are supported with the hugepages resource"
	default:
		return errs
	}
	if !slices.Contains(units, f.Divisor.String()) {
		errs = append(errs, field.Invalid(p.Child("divisor"), f.Resource, msg))
	}
	return errs
}

// validateProjections checks the paths of a projected volume's sources as
// the API server does (validateProjectionSources): the items of ConfigMaps,
// Secrets and the downward API, and a serviceAccountToken's path.
func validateProjections(sources []v1.VolumeProjection, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, src := range sources {
		errs = append(errs, validateSourceItems(src, p.Index(i))...)
	}
	return errs
}

func validateKeyToPaths(items []v1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		if it.Key == "" {
			errs = append(errs, field.Required(p.Index(i).Child("key"), ""))
		}
		errs = append(errs, validateItemPath(it.Path, p.Index(i).Child("path"))...)
	}
	return errs
}

func validateItemPath(s string, p *field.Path) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return validateLocalDescendingPath(s, p)
}

// validateLocalDescendingPath requires a relative path without "..", and
// without a NUL byte, which no file name can hold (the API server lets it
// through; the kubelet then fails to write the file).
func validateLocalDescendingPath(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(s) {
		errs = append(errs, field.Invalid(p, s, "must be a relative path"))
	}
	if strings.IndexByte(s, 0) >= 0 {
		errs = append(errs, field.Invalid(p, s, "must not contain a NUL byte"))
	}
	for _, el := range strings.Split(s, "/") {
		if el == ".." {
			errs = append(errs, field.Invalid(p, s, "must not contain '..'"))
			break
		}
	}
	return errs
}

// validateUniqueName checks a volume's or container's name: a DNS-1123
// label, not one of names (the names seen so far), which it joins.
func validateUniqueName(errs field.ErrorList, name string, p *field.Path, names map[string]bool) field.ErrorList {
	switch {
	case name == "":
		errs = append(errs, field.Required(p, ""))
	case names[name]:
		errs = append(errs, field.Duplicate(p, name))
	default:
		errs = appendMsgs(errs, p, name, validation.IsDNS1123Label(name))
	}
	names[name] = true
	return errs
}

// validateContainerRestartPolicy checks a container's own restartPolicy and
// restartPolicyRules (feature ContainerRestartRules, beta and on by
// default since v1.35) as the API server's validateContainerRestartPolicy
// does for init, sidecar and regular containers (v1.37, with
// RestartAllContainersOnContainerExits on): a policy of Always, OnFailure
// or Never, set whenever there are rules; at most 20 rules, each with
// exitCodes (operator In or NotIn, at most 255 values) and an action.
// The actions are Restart and RestartAllContainers, which restarts the
// whole pod in place (runner/restartall.go).
func validateContainerRestartPolicy(c *v1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	policies := []v1.ContainerRestartPolicy{v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure}
	switch {
	case c.RestartPolicy == nil && len(c.RestartPolicyRules) > 0:
		errs = append(errs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	case c.RestartPolicy != nil && !slices.Contains(policies, *c.RestartPolicy):
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), *c.RestartPolicy, policies))
	}
	if n := len(c.RestartPolicyRules); n > 20 {
		errs = append(errs, field.TooMany(p.Child("restartPolicyRules"), n, 20))
	}
	actions := []v1.ContainerRestartRuleAction{v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers}
	operators := []v1.ContainerRestartRuleOnExitCodesOperator{v1.ContainerRestartRuleOnExitCodesOpIn, v1.ContainerRestartRuleOnExitCodesOpNotIn}
	for i, r := range c.RestartPolicyRules {
		rp := p.Child("restartPolicyRules").Index(i)
		if !slices.Contains(actions, r.Action) {
			errs = append(errs, field.NotSupported(rp.Child("action"), r.Action, actions))
		}
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(rp.Child("exitCodes"), "must be specified"))
			continue
		}
		if !slices.Contains(operators, r.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(rp.Child("exitCodes", "operator"), r.ExitCodes.Operator, operators))
		}
		if n := len(r.ExitCodes.Values); n > 255 {
			errs = append(errs, field.TooMany(rp.Child("exitCodes", "values"), n, 255))
		}
	}
	return errs
}

// validateContainer validates one init or regular container. names holds
// the container names seen so far, across init and regular containers;
// grace is the pod's terminationGracePeriodSeconds (defaulted), which
// bounds a sleep hook.
func validateContainer(c *v1.Container, p *field.Path, vols, names map[string]bool, grace *int64, init bool) field.ErrorList {
	var errs field.ErrorList
	errs = validateUniqueName(errs, c.Name, p.Child("name"), names)

	switch {
	case strings.TrimSpace(c.Image) == "":
		errs = append(errs, field.Required(p.Child("image"), ""))
	case strings.TrimSpace(c.Image) != c.Image:
		errs = append(errs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	if !containsString(pullPolicies(), c.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, pullPolicies()))
	}
	if !containsString(terminationMsgPolicys(), c.TerminationMessagePolicy) {
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy, terminationMsgPolicys()))
	}

	errs = append(errs, validateContainerRestartPolicy(c, p)...)
	sidecar := init && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways

	errs = append(errs, validatePorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"), containerResourceName)...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	for i, ef := range c.EnvFrom {
		if n := countSet(ef); n != 1 {
			errs = append(errs, field.Invalid(p.Child("envFrom").Index(i), "", "must specify exactly one of: `configMapRef` or `secretRef`"))
		}
	}
	errs = append(errs, validateVolumeMounts(c.VolumeMounts, vols, p.Child("volumeMounts"))...)
	errs = append(errs, validateContainerSecurityContext(c.SecurityContext, p.Child("securityContext"))...)

	probes := []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, pr := range probes {
		if pr.probe == nil {
			continue
		}
		pp := p.Child(pr.name)
		if init && !sidecar {
			errs = append(errs, field.Forbidden(pp, "may not be set for init containers without restartPolicy=Always"))
			continue
		}
		errs = append(errs, validateProbe(pr.probe, pp)...)
		if pr.name != "readinessProbe" && pr.probe.SuccessThreshold != 1 {
			errs = append(errs, field.Invalid(pp.Child("successThreshold"), pr.probe.SuccessThreshold, "must be 1"))
		}
		if g := pr.probe.TerminationGracePeriodSeconds; g != nil && pr.name == "readinessProbe" {
			errs = append(errs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), *g, "must not be set for readinessProbes"))
		}
	}
	if lc := c.Lifecycle; lc != nil {
		if init && !sidecar {
			errs = append(errs, field.Forbidden(p.Child("lifecycle"), "may not be set for init containers without restartPolicy=Always"))
		} else {
			for _, h := range []struct {
				name    string
				handler *v1.LifecycleHandler
			}{{"postStart", lc.PostStart}, {"preStop", lc.PreStop}} {
				if h.handler != nil {
					errs = append(errs, validateHandler(h.handler, grace, p.Child("lifecycle", h.name))...)
				}
			}
		}
	}
	return errs
}

func validatePorts(ports []v1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		pp := p.Index(i)
		if port.Name != "" {
			errs = appendMsgs(errs, pp.Child("name"), port.Name, validation.IsValidPortName(port.Name))
			if names[port.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			errs = appendMsgs(errs, pp.Child("containerPort"), port.ContainerPort, validation.IsValidPortNum(int(port.ContainerPort)))
		}
		if port.HostPort != 0 {
			errs = appendMsgs(errs, pp.Child("hostPort"), port.HostPort, validation.IsValidPortNum(int(port.HostPort)))
		}
		if !containsString(protocols(), port.Protocol) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, protocols()))
		}
	}
	return errs
}

// validateHostPorts rejects the same hostPort, protocol and hostIP twice
// among the regular containers.
func validateHostPorts(cs []v1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		for j, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			k := fmt.Sprintf("%s/%s/%d", port.HostIP, port.Protocol, port.HostPort)
			if seen[k] {
				errs = append(errs, field.Duplicate(p.Index(i).Child("ports").Index(j).Child("hostPort"), fmt.Sprintf("%d/%s", port.HostPort, port.Protocol)))
			}
			seen[k] = true
		}
	}
	return errs
}

// envFieldPaths and volumeFieldPaths are the fieldRef paths the API
// server accepts for env vars and downwardAPI volume items;
// metadata.labels['k'] and metadata.annotations['k'] are accepted for
// both.
func envFieldPaths() []string {
	return []string{
		"metadata.name", "metadata.namespace", "metadata.uid",
		"spec.nodeName", "spec.serviceAccountName",
		"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
	}
}

func volumeFieldPaths() []string {
	return []string{
		"metadata.name", "metadata.namespace", "metadata.uid",
		"metadata.labels", "metadata.annotations",
	}
}

var subscriptedFieldPath = regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`)

func validateFieldRef(f *v1.ObjectFieldSelector, supported []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.APIVersion != "v1" {
		errs = append(errs, field.NotSupported(p.Child("apiVersion"), f.APIVersion, []string{"v1"}))
	}
	switch {
	case f.FieldPath == "":
		errs = append(errs, field.Required(p.Child("fieldPath"), ""))
	case containsString(supported, f.FieldPath):
	case subscriptedFieldPath.MatchString(f.FieldPath):
	default:
		errs = append(errs, field.NotSupported(p.Child("fieldPath"), f.FieldPath, supported))
	}
	return errs
}

func validateEnv(env []v1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		ep := p.Index(i)
		if e.Name == "" {
			errs = append(errs, field.Required(ep.Child("name"), ""))
		} else {
			errs = appendMsgs(errs, ep.Child("name"), e.Name, validation.IsRelaxedEnvVarName(e.Name))
		}
		vf := e.ValueFrom
		if vf == nil {
			continue
		}
		vp := ep.Child("valueFrom")
		switch n := countSet(*vf); {
		case n == 0:
			errs = append(errs, field.Invalid(vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
		case n > 1:
			errs = append(errs, field.Invalid(vp, "", "may not have more than one field specified at a time"))
		}
		if e.Value != "" {
			errs = append(errs, field.Invalid(vp, "", "may not be specified when `value` is not empty"))
		}
		if vf.FieldRef != nil {
			errs = append(errs, validateFieldRef(vf.FieldRef, envFieldPaths(), vp.Child("fieldRef"))...)
		}
		if vf.ResourceFieldRef != nil {
			errs = append(errs, validateResourceFieldRef(vf.ResourceFieldRef, vp.Child("resourceFieldRef"), false)...)
		}
	}
	return errs
}

func validateVolumeMounts(mounts []v1.VolumeMount, vols map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]bool{}
	for i, m := range mounts {
		mp := p.Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(mp.Child("name"), ""))
		case !vols[m.Name]:
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		switch {
		case m.MountPath == "":
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		case !path.IsAbs(m.MountPath):
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be an absolute path"))
		case paths[path.Clean(m.MountPath)]:
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths[path.Clean(m.MountPath)] = true
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, mp.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(mp.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			// As written; once expanded it is checked again (volumes).
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, mp.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil && !containsString(mountPropagations(), *mp) {
			errs = append(errs, field.NotSupported(p.Index(i).Child("mountPropagation"), *mp, mountPropagations()))
		}
	}
	return errs
}

// validateHandlerType is what probes and lifecycle handlers share: one
// handler type (n are set), and an httpGet's port.
func validateHandlerType(n int, httpGet *v1.HTTPGetAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a handler type"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 handler type"))
	}
	if httpGet != nil {
		errs = append(errs, validatePortNumOrName(httpGet.Port, p.Child("httpGet", "port"))...)
	}
	return errs
}

// validateExec: an exec handler needs a command.
func validateExec(e *v1.ExecAction, p *field.Path) field.ErrorList {
	if e != nil && len(e.Command) == 0 {
		return field.ErrorList{field.Required(p.Child("exec", "command"), "")}
	}
	return nil
}

func validateProbe(pr *v1.Probe, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	h := pr.ProbeHandler
	errs = append(errs, validateHandlerType(countSet(h), h.HTTPGet, p)...)
	if h.TCPSocket != nil {
		errs = append(errs, validatePortNumOrName(h.TCPSocket.Port, p.Child("tcpSocket", "port"))...)
	}
	if h.GRPC != nil {
		errs = appendMsgs(errs, p.Child("grpc", "port"), h.GRPC.Port, validation.IsValidPortNum(int(h.GRPC.Port)))
	}
	errs = append(errs, validateExec(h.Exec, p)...)
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"initialDelaySeconds", pr.InitialDelaySeconds},
		{"timeoutSeconds", pr.TimeoutSeconds},
		{"periodSeconds", pr.PeriodSeconds},
		{"successThreshold", pr.SuccessThreshold},
		{"failureThreshold", pr.FailureThreshold},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, "must be greater than or equal to 0"))
		}
	}
	// A liveness or startup probe's own grace period (a readiness probe's
	// is refused by validateContainer).
	if g := pr.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	return errs
}

// validateHandler checks a lifecycle handler; a sleep may not outlast the
// pod's grace period (the API server's validateSleepAction, with its
// message and its path, spec...lifecycle.preStop.sleep).
func validateHandler(h *v1.LifecycleHandler, grace *int64, p *field.Path) field.ErrorList {
	errs := validateHandlerType(countSet(*h), h.HTTPGet, p)
	errs = append(errs, validateExec(h.Exec, p)...)
	if s := h.Sleep; s != nil && grace != nil && (s.Seconds < 0 || s.Seconds > *grace) {
		errs = append(errs, field.Invalid(p.Child("sleep"), s.Seconds,
			fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace)))
	}
	return errs
}

func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	if port.Type == intstr.Int {
		return appendMsgs(nil, p, port.IntVal, validation.IsValidPortNum(port.IntValue()))
	}
	return appendMsgs(nil, p, port.StrVal, validation.IsValidPortName(port.StrVal))
}

// maxDataSize is the API server's limit on a ConfigMap's or Secret's data.
const maxDataSize = v1.MaxSecretSize

// validateConfigMap checks metadata, keys and size.
func validateConfigMap(cm *v1.ConfigMap) field.ErrorList {
	errs := validateObjectMeta(&cm.ObjectMeta)
	size := 0
	for _, k := range sortedMapKeys(cm.Data) {
		errs = appendMsgs(errs, field.NewPath("data").Key(k), k, validation.IsConfigMapKey(k))
		size += len(cm.Data[k])
	}
	for _, k := range sortedMapKeys(cm.BinaryData) {
		kp := field.NewPath("binaryData").Key(k)
		errs = appendMsgs(errs, kp, k, validation.IsConfigMapKey(k))
		if _, ok := cm.Data[k]; ok {
			errs = append(errs, field.Invalid(kp, k, "duplicate of key present in data"))
		}
		size += len(cm.BinaryData[k])
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

// validateSecret checks metadata, keys, size and the keys its type
// requires.
func validateSecret(s *v1.Secret) field.ErrorList {
	errs := validateObjectMeta(&s.ObjectMeta)
	dp := field.NewPath("data")
	size := 0
	for _, k := range sortedMapKeys(s.Data) {
		errs = appendMsgs(errs, dp.Key(k), k, validation.IsConfigMapKey(k))
		size += len(s.Data[k])
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(dp, "", maxDataSize))
	}
	requireJSON := func(k string) {
		b, ok := s.Data[k]
		switch {
		case !ok:
			errs = append(errs, field.Required(dp.Key(k), ""))
		case !json.Valid(b):
			errs = append(errs, field.Invalid(dp.Key(k), "<secret contents redacted>", "must be valid JSON"))
		}
	}
	switch s.Type {
	case v1.SecretTypeDockerConfigJson:
		requireJSON(v1.DockerConfigJsonKey)
	case v1.SecretTypeDockercfg:
		requireJSON(v1.DockerConfigKey)
	case v1.SecretTypeTLS:
		for _, k := range []string{v1.TLSCertKey, v1.TLSPrivateKeyKey} {
			if _, ok := s.Data[k]; !ok {
				errs = append(errs, field.Required(dp.Key(k), ""))
			}
		}
	}
	return errs
}

// validateRuntimeClass is the API server's ValidateRuntimeClass
// (pkg/apis/node/validation): the name a DNS subdomain, the handler a DNS
// label, the overhead as a container's limits, the scheduling's
// nodeSelector labels and tolerations valid, each toleration once.
func validateRuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	errs := validateMeta(&rc.ObjectMeta, false)
	hp := field.NewPath("handler")
	if rc.Handler == "" {
		errs = append(errs, field.Required(hp, ""))
	} else {
		errs = appendMsgs(errs, hp, rc.Handler, validation.IsDNS1123Label(rc.Handler))
	}
	if rc.Overhead != nil {
		errs = append(errs, validateResources(&v1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, field.NewPath("overhead"), containerResourceName)...)
	}
	if s := rc.Scheduling; s != nil {
		sp := field.NewPath("scheduling")
		errs = append(errs, mapErrors(metav1validation.ValidateLabels(s.NodeSelector, sp.Child("nodeSelector")))...)
		tp := sp.Child("tolerations")
		errs = append(errs, validateTolerations(s.Tolerations, tp)...)
		var seen []v1.Toleration
		for i, t := range s.Tolerations {
			// Its list key: tolerationSeconds apart.
			k := v1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
			if slices.ContainsFunc(seen, func(o v1.Toleration) bool { return equality.Semantic.DeepEqual(o, k) }) {
				errs = append(errs, field.Duplicate(tp.Index(i), t))
				continue
			}
			seen = append(seen, k)
		}
	}
	return errs
}

// countSet counts the non-nil pointer fields of a struct: the handlers of
// a probe, the sources of an env var, and so on.
func countSet(v any) int {
	rv := reflect.ValueOf(v)
	n := 0
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func containsString[T ~string](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// validateTolerations is the API server's ValidateTolerations with its
// default feature gates (v1.37: the numeric operators Lt and Gt of the
// alpha TaintTolerationComparisonOperators are refused, as kubelet v1.37.2
// refused a static pod with one). podrun has no taints, but a manifest it
// runs should be one a cluster takes.
func validateTolerations(ts []v1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(ip.Child("key"), t.Key, msg))
			}
		} else if t.Operator != v1.TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != v1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case v1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case v1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator,
				[]v1.TolerationOperator{v1.TolerationOpEqual, v1.TolerationOpExists}))
		}
		effects := []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute}
		if t.Effect != "" && !slices.Contains(effects, t.Effect) {
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}

// resourceNameCheck is the part of the API server's resource name
// validation that depends on where the requirements are.
type resourceNameCheck func(name v1.ResourceName, p *field.Path) field.ErrorList

// validateResources is the API server's validateResourceRequirements for a
// container's, the pod's or the overhead's requirements (check is the name
// check of where they are; the names' messages as validateResourceName and
// check give them), with its field paths and messages:
//
//   - every quantity is non-negative, and an integer for an extended
//     resource (ValidateResourceQuantityValue);
//   - a hugepages quantity is a multiple of its page size
//     (validateResourceQuantityHugePageValue);
//   - a request is at most its limit, and equal to it for a resource that
//     may not be overcommitted (extended resources and hugepages), whose
//     request needs a limit;
//   - hugepages need cpu or memory.
//
// podrun adds one bound the API server lacks: a quantity must fit the int64
// the kubelet turns it into (cpu in millicores, everything else in units;
// resource.Quantity's MilliValue and Value wrap around beyond it): the API
// server takes memory: 1e400 or 18446744073709551616, which the kubelet and
// podrun would turn into no limit, or a limit of a few bytes
// (docs/kubelet-differences.md, resource-values).
func validateResources(r *v1.ResourceRequirements, p *field.Path, check resourceNameCheck) field.ErrorList {
	var errs field.ErrorList
	limPath, reqPath := p.Child("limits"), p.Child("requests")
	cpuOrMemory, hugePages := false, false
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		q := r.Limits[name]
		np := limPath.Key(string(name))
		errs = append(errs, validateResourceNameAt(name, np, check)...)
		errs = append(errs, validateQuantity(name, q, np)...)
		hugePages = hugePages || isHugePages(name)
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		q := r.Requests[name]
		np := reqPath.Key(string(name))
		errs = append(errs, validateResourceNameAt(name, np, check)...)
		errs = append(errs, validateQuantity(name, q, np)...)
		lim, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(lim) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
		case ok && q.Cmp(lim) > 0:
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		hugePages = hugePages || isHugePages(name)
		cpuOrMemory = cpuOrMemory || name == v1.ResourceCPU || name == v1.ResourceMemory
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	return errs
}

// validateResourceNameAt checks a name of requests or limits as the API
// server does (validateResourceName, then the container's or the pod's
// own check).
func validateResourceNameAt(name v1.ResourceName, p *field.Path, check resourceNameCheck) field.ErrorList {
	if errs := validateResourceName(name, p); len(errs) > 0 {
		return errs
	}
	return check(name, p)
}

// maxQuantity is the largest quantity of a resource the kubelet's int64
// holds: cpu in millicores (MilliValue), every other resource in units
// (Value).
func maxQuantity(name v1.ResourceName) resource.Quantity {
	if name == v1.ResourceCPU {
		return *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	}
	return *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
}

// validateQuantity is ValidateResourceQuantityValue (non-negative; an
// integer for an integer resource), validateResourceQuantityHugePageValue,
// and podrun's int64 bound (validateResources).
func validateQuantity(name v1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
	}
	if limit := maxQuantity(name); q.Cmp(limit) > 0 {
		unit := "an int64"
		if name == v1.ResourceCPU {
			unit = "an int64 of millicores"
		}
		// Beyond it the checks below would read a wrapped value.
		return append(errs, field.Invalid(p, q.String(), fmt.Sprintf("must be less than or equal to %s (%s)", limit.String(), unit)))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be an integer"))
	}
	if isHugePages(name) && !hugePagesDivisible(name, q) {
		errs = append(errs, field.Invalid(p, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name)))
	}
	return errs
}

func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// hugePagesDivisible is the API's IsHugePageResourceValueDivisible: the
// page size, the name's suffix, is a whole number of bytes and q a
// multiple of it (a page size beyond int64 divides nothing: the API
// server would divide by its wrapped value).
func hugePagesDivisible(name v1.ResourceName, q resource.Quantity) bool {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), v1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.Cmp(maxQuantity(name)) > 0 || size.MilliValue()%1000 != 0 {
		return false
	}
	return q.Value()%size.Value() == 0
}

// isNativeResource is the API's IsNativeResource: no domain, or
// kubernetes.io's.
func isNativeResource(name v1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix)
}

// overcommitAllowed is the API's IsOvercommitAllowed: a request may be
// below its limit for a native resource other than hugepages.
func overcommitAllowed(name v1.ResourceName) bool {
	return isNativeResource(name) && !isHugePages(name)
}

// isIntegerResource is the API's IsIntegerResourceName: the quota's
// object counts and every extended resource.
func isIntegerResource(name v1.ResourceName) bool {
	switch name {
	case v1.ResourcePods, v1.ResourceQuotas, v1.ResourceServices, v1.ResourceReplicationControllers, v1.ResourceSecrets,
		v1.ResourceConfigMaps, v1.ResourcePersistentVolumeClaims, v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers:
		return true
	}
	s := string(name)
	return !isNativeResource(name) && !strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) &&
		len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// validatePodResourceConsistency is the API server's: pod-level requests
// are at least what the containers request together (podresources'
// formula: init containers, sidecars), pod-level hugepages limits at least
// the containers' together, and no regular container's limit is above the
// pod's. p is spec.resources; the last error's path is the API server's
// own, spec.resources.containers[I][NAME].limits.
func validatePodResourceConsistency(pod *v1.Pod, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	podReqs, podLims := pod.Spec.Resources.Requests, pod.Spec.Resources.Limits
	ctrs := *pod
	ctrs.Spec.Resources, ctrs.Spec.Overhead = nil, nil // the containers' aggregate alone
	reqs := podresources.Requests(&ctrs)
	for _, name := range slices.Sorted(maps.Keys(reqs)) {
		agg, pr := reqs[name], podReqs[name]
		if _, ok := podReqs[name]; ok && agg.Cmp(pr) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), pr.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", agg.String())))
		}
	}
	lims := podresources.Limits(&ctrs, nil)
	for _, name := range slices.Sorted(maps.Keys(lims)) {
		agg, pl := lims[name], podLims[name]
		if _, ok := podLims[name]; ok && isHugePages(name) && agg.Cmp(pl) > 0 {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(name)), pl.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", agg.String())))
		}
	}
	for i, c := range pod.Spec.Containers {
		for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
			if pl, ok := podLims[name]; ok {
				if cl := c.Resources.Limits[name]; cl.Cmp(pl) > 0 {
					errs = append(errs, field.Invalid(p.Child("containers").Index(i).Key(string(name)).Child("limits"), cl.String(),
						fmt.Sprintf("must be less than or equal to pod limits of %s", pl.String())))
				}
			}
		}
	}
	return errs
}

// validatePodSecurityContext checks the pod's user and group IDs as the
// API server's validatePodSpecSecurityContext does: each between 0 and
// 2147483647 (math.MaxInt32), which the runtime and the kernel take.
func validatePodSecurityContext(sc *v1.PodSecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		errs = appendMsgs(errs, p.Child("fsGroup"), *sc.FSGroup, validation.IsValidGroupID(*sc.FSGroup))
	}
	errs = appendRunAsErrs(errs, sc.RunAsUser, sc.RunAsGroup, p)
	for i, g := range sc.SupplementalGroups {
		errs = appendMsgs(errs, p.Child("supplementalGroups").Index(i), g, validation.IsValidGroupID(g))
	}
	return errs
}

// validateContainerSecurityContext checks a container's user and group
// IDs as the API server's ValidateSecurityContext does.
func validateContainerSecurityContext(sc *v1.SecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	return appendRunAsErrs(nil, sc.RunAsUser, sc.RunAsGroup, p)
}

// appendRunAsErrs checks runAsUser and runAsGroup, which a pod's and a
// container's security context both have.
func appendRunAsErrs(errs field.ErrorList, user, group *int64, p *field.Path) field.ErrorList {
	if user != nil {
		errs = appendMsgs(errs, p.Child("runAsUser"), *user, validation.IsValidUserID(*user))
	}
	if group != nil {
		errs = appendMsgs(errs, p.Child("runAsGroup"), *group, validation.IsValidGroupID(*group))
	}
	return errs
}

// standardResourceNames are the API's names without a domain
// (pkg/apis/core/helper IsStandardResourceName), quota names included.
func standardResourceNames() []string {
	return []string{"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
		"limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
		"replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
		"requests.storage", "services.nodeports", "services.loadbalancers"}
}

// validateResourceName is the API server's validateResourceName: a
// qualified name, and a standard one unless it has a domain.
func validateResourceName(name v1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(name), "/") && !slices.Contains(standardResourceNames(), string(name)) &&
		!strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) && !strings.HasPrefix(string(name), "requests."+v1.ResourceHugePagesPrefix) {
		errs = append(errs, field.Invalid(p, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// containerResourceName is ValidateContainerResourceName's own check: a
// name without a domain is cpu, memory, ephemeral-storage or hugepages-*;
// one with a domain other than kubernetes.io's is an extended resource
// whose quota name requests.<name> is qualified.
func containerResourceName(name v1.ResourceName, p *field.Path) field.ErrorList {
	s := string(name)
	switch {
	case !strings.Contains(s, "/"):
		if name != v1.ResourceCPU && name != v1.ResourceMemory && name != v1.ResourceEphemeralStorage &&
			!strings.HasPrefix(s, v1.ResourceHugePagesPrefix) {
			return field.ErrorList{field.Invalid(p, name, "must be a standard resource for containers")}
		}
	case strings.Contains(s, "kubernetes.io/"):
		// A native resource.
	case strings.HasPrefix(s, "requests.") || len(validation.IsQualifiedName("requests."+s)) > 0:
		return field.ErrorList{field.Invalid(p, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

// podResourceName is validatePodResourceName's own check: pod-level
// resources are cpu, memory and hugepages-* only.
func podResourceName(name v1.ResourceName, p *field.Path) field.ErrorList {
	if name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, name, []string{"cpu", "hugepages-", "memory"})}
}
