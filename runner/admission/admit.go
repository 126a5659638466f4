// Package admission decides whether the node takes a pod, before anything
// of a run is created (the kubelet's pkg/kubelet/lifecycle admit handlers),
// and describes the node it admits against (node.go). It follows the
// kubelet's admit handlers in their registration order
// (pkg/kubelet/kubelet.go NewMainKubelet), the first rejection winning:
//
//  0. scheduling gates (podrun's own rule, see ReasonSchedulingGated)
//  1. eviction: podrun watches no node pressure, so it never rejects
//  2. sysctls (pkg/kubelet/sysctl/allowlist.go)
//  3. resource managers (topology, CPU, memory, devices): podrun has none
//  4. predicates (pkg/kubelet/lifecycle/predicate.go): the kubernetes.io/os
//     pod label, spec.os, then the scheduler's AdmissionCheck
//     (pkg/scheduler/schedule_one.go): resource fit, node affinity and
//     selector, node name, host ports. Taints: podrun's node has none.
//  5. AppArmor (pkg/kubelet/lifecycle, pkg/security/apparmor)
//
// The reasons and messages are the kubelet's; the message the pod's status
// carries is "Pod was rejected: " and the handler's message (kubelet.go
// rejectPod).
package admission

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/podrun/podrun/sources/podresources"
)

// Rejection reasons, as the kubelet names them (pkg/kubelet/lifecycle,
// pkg/kubelet/sysctl, the scheduler plugins' names).
const (
	// ReasonSchedulingGated is podrun's: a pod with spec.schedulingGates is
	// one a scheduler must not bind until controllers remove the gates; with
	// no scheduler and no API server nothing ever removes them. (The API
	// server refuses spec.nodeName on a gated pod, so a kubelet never sees
	// one.) The name is the PodScheduled condition's reason for such pods.
	ReasonSchedulingGated = v1.PodReasonSchedulingGated

	ReasonSysctlForbidden                    = "SysctlForbidden"
	ReasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonPodOSNotSupported                  = "PodOSNotSupported"
	ReasonNodeAffinity                       = "NodeAffinity"
	ReasonNodeName                           = "NodeName"
	ReasonNodePorts                          = "NodePorts"
	ReasonAppArmor                           = "AppArmor"

	// An insufficient resource R is reason "OutOf"+R: OutOfcpu,
	// OutOfmemory, OutOfephemeral-storage, OutOfpods, OutOfexample.com/dongle.
	insufficientResourcePrefix = "OutOf"

	// rejectedPrefix starts the message of a rejected pod's status.
	rejectedPrefix = "Pod was rejected: "
)

// The scheduler plugins' failure texts (ErrReason of nodeaffinity, nodename,
// nodeports), which the kubelet reports as "Predicate <name> failed: <text>".
const (
	errNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	errNodeName     = "node(s) didn't match the requested node name"
	errNodePorts    = "node(s) didn't have free ports for the requested pod ports"
)

// Error is a pod the node rejected, with the kubelet's reason and
// the message it would put in the pod's status.
type Error struct {
	Namespace, Name string
	Reason          string // e.g. OutOfcpu, NodeAffinity, SysctlForbidden
	Message         string // "Pod was rejected: ..."
}

func (e *Error) Error() string {
	return fmt.Sprintf("pod %s/%s: %s (reason %s)", e.Namespace, e.Name, e.Message, e.Reason)
}

// Status is the status the kubelet gives a rejected pod (kubelet.go rejectPod).
func (e *Error) Status() v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodFailed, Reason: e.Reason, Message: e.Message}
}

// Admit admits the pods in order, each against the node and the pods
// admitted before it, and returns the rejections (nil when all are admitted).
// A rejected pod takes no room from the pods after it, as on a kubelet.
func Admit(pods []*v1.Pod, node Node) []*Error {
	var admitted []*v1.Pod
	var rejected []*Error
	for _, p := range pods {
		if e := admitPod(p, node, admitted); e != nil {
			rejected = append(rejected, e)
			continue
		}
		admitted = append(admitted, p)
	}
	return rejected
}

// JoinRejections is the error of a run with rejected pods: every rejection,
// each an *Error (errors.As finds the first).
func JoinRejections(rejected []*Error) error {
	errs := make([]error, len(rejected))
	for i, e := range rejected {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// admitPod decides whether the node takes pod, given the pods already
// admitted in this run; nil means admitted.
func admitPod(pod *v1.Pod, node Node, admitted []*v1.Pod) *Error {
	reject := func(reason, format string, args ...any) *Error {
		return &Error{Namespace: pod.Namespace, Name: pod.Name, Reason: reason,
			Message: rejectedPrefix + fmt.Sprintf(format, args...)}
	}

	// 0. Scheduling gates.
	if gates := pod.Spec.SchedulingGates; len(gates) > 0 {
		names := make([]string, len(gates))
		for i, g := range gates {
			names[i] = g.Name
		}
		return reject(ReasonSchedulingGated, "pod has scheduling gates %s, which only a scheduler and its controllers handle; podrun never runs a gated pod",
			strings.Join(names, ", "))
	}

	// 2. Sysctls.
	if msg := forbiddenSysctl(pod, node); msg != "" {
		return reject(ReasonSysctlForbidden, "forbidden sysctl: %s", msg)
	}

	// 4. Predicates: the operating system first (preemption would not help).
	// The kubelet compares with its node's kubernetes.io/os label, which it
	// forces to its own OS.
	if os, ok := pod.Labels[v1.LabelOSStable]; ok && os != runtime.GOOS {
		return reject(ReasonPodOSSelectorNodeLabelDoesNotMatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label")
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != runtime.GOOS {
		return reject(ReasonPodOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS")
	}
	// The scheduler's AdmissionCheck, in its order; the first failure is reported.
	if ir := insufficientResource(pod, node, admitted); ir != nil {
		return reject(insufficientResourcePrefix+string(ir.name),
			"Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			ir.name, ir.requested, ir.used, ir.capacity)
	}
	if !nodeAffinityMatches(pod, node) {
		return reject(ReasonNodeAffinity, "Predicate %s failed: %s", ReasonNodeAffinity, errNodeAffinity)
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return reject(ReasonNodeName, "Predicate %s failed: %s", ReasonNodeName, errNodeName)
	}
	if hostPortsConflict(pod, admitted) {
		return reject(ReasonNodePorts, "Predicate %s failed: %s", ReasonNodePorts, errNodePorts)
	}

	// 5. AppArmor.
	if msg := appArmorProblem(pod, node.AppArmorEnabled); msg != "" {
		return reject(ReasonAppArmor, "Cannot enforce AppArmor: %s", msg)
	}
	return nil
}

// ------------------------------------------------------------- resources --

// insufficient is one resource the pod does not fit in, in the units of the
// kubelet's message: millicores for cpu, bytes, counts.
type insufficient struct {
	name                      v1.ResourceName
	requested, used, capacity int64
}

// insufficientResource is the scheduler's fit check (noderesources fitsRequest)
// of the pod against the node's allocatable less the requests of the pods
// admitted before it: the pod count, then cpu, memory, ephemeral-storage,
// then every other requested resource by name. nil means the pod fits.
//
// Unlike the kubelet, extended resources the node does not have are not
// dropped from the requests first (predicate.go removeMissingExtendedResources):
// the kubelet drops them because a scheduler or DRA already accounted for
// them, and its own comment calls a static pod that needs a missing device
// a case where it "will not fail admission while it should". podrun has no
// scheduler, so it rejects such a pod as the scheduler's fit check would:
// OutOfexample.com/dongle, capacity 0.
func insufficientResource(pod *v1.Pod, node Node, admitted []*v1.Pod) *insufficient {
	allocatable := func(name v1.ResourceName) int64 {
		q, ok := node.Allocatable[name]
		if !ok {
			return 0
		}
		return requestAmount(name, q)
	}
	if capacity := allocatable(v1.ResourcePods); int64(len(admitted))+1 > capacity {
		return &insufficient{v1.ResourcePods, 1, int64(len(admitted)), capacity}
	}
	used := map[v1.ResourceName]int64{}
	for _, p := range admitted {
		addAmounts(used, admissionRequests(p))
	}
	req := admissionRequests(pod)
	check := func(name v1.ResourceName) *insufficient {
		r := req[name]
		if r > 0 && r > allocatable(name)-used[name] {
			return &insufficient{name, r, used[name], allocatable(name)}
		}
		return nil
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if ir := check(name); ir != nil {
			return ir
		}
	}
	var scalars []v1.ResourceName
	for name := range req {
		if isScalarResource(name) {
			scalars = append(scalars, name)
		}
	}
	slices.Sort(scalars)
	for _, name := range scalars {
		if ir := check(name); ir != nil {
			return ir
		}
	}
	return nil
}

// isScalarResource tells whether the scheduler counts a resource besides
// cpu, memory, ephemeral-storage and pods: extended resources (a domain
// prefix), kubernetes.io/ prefixed ones, hugepages-* and
// attachable-volumes-* (scheduler util IsScalarResourceName). Other names
// are not checked.
func isScalarResource(name v1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") || strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}

// admissionRequests is the pod's effective request per resource
// (podresources.Requests) in the units the scheduler counts.
func admissionRequests(pod *v1.Pod) map[v1.ResourceName]int64 {
	reqs := map[v1.ResourceName]int64{}
	for name, q := range podresources.Requests(pod) {
		reqs[name] = requestAmount(name, q)
	}
	return reqs
}

// requestAmount is a quantity in the unit the scheduler counts it in: millicores
// for cpu, else the plain value (bytes, devices), saturated rather than
// wrapped around: a pod whose containers together request more than an
// int64 holds does not fit (it was admitted, its request read as negative).
func requestAmount(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return podresources.MilliValue(q)
	}
	return podresources.Value(q)
}

func addAmounts(dst, src map[v1.ResourceName]int64) {
	for name, n := range src {
		dst[name] += n
	}
}

// --------------------------------------------------------- node affinity --

// nodeAffinityMatches is the scheduler's required node affinity
// (component-helpers scheduling/corev1/nodeaffinity GetRequiredNodeAffinity):
// every nodeSelector label must be on the node with that value, and, if the
// pod has required node affinity, one of its terms must match.
func nodeAffinityMatches(pod *v1.Pod, node Node) bool {
	for k, v := range pod.Spec.NodeSelector {
		if lv, ok := node.Labels[k]; !ok || lv != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

// termMatches tells whether every expression and field requirement of a
// node selector term holds. An empty term matches nothing; so does a term
// with an invalid requirement (the scheduler skips terms it cannot parse).
func termMatches(term v1.NodeSelectorTerm, node Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	for _, r := range term.MatchExpressions {
		if !labelRequirementMatches(r, node.Labels) {
			return false
		}
	}
	for _, r := range term.MatchFields {
		if !fieldRequirementMatches(r, node.Name) {
			return false
		}
	}
	return true
}

// labelRequirementMatches evaluates one matchExpressions entry against the
// node's labels (apimachinery labels.Requirement): In and NotIn need values,
// Exists and DoesNotExist none, Gt and Lt one integer that the label's value
// (also an integer) must be greater or less than. NotIn and DoesNotExist
// hold for a missing label.
func labelRequirementMatches(r v1.NodeSelectorRequirement, labels map[string]string) bool {
	val, has := labels[r.Key]
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return len(r.Values) > 0 && has && slices.Contains(r.Values, val)
	case v1.NodeSelectorOpNotIn:
		return len(r.Values) > 0 && (!has || !slices.Contains(r.Values, val))
	case v1.NodeSelectorOpExists:
		return len(r.Values) == 0 && has
	case v1.NodeSelectorOpDoesNotExist:
		return len(r.Values) == 0 && !has
	case v1.NodeSelectorOpGt, v1.NodeSelectorOpLt:
		if len(r.Values) != 1 || !has {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		got, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return false
		}
		if r.Operator == v1.NodeSelectorOpGt {
			return got > want
		}
		return got < want
	}
	return false
}

// fieldRequirementMatches evaluates one matchFields entry: only
// metadata.name with In or NotIn and exactly one value is valid.
func fieldRequirementMatches(r v1.NodeSelectorRequirement, nodeName string) bool {
	if r.Key != "metadata.name" || len(r.Values) != 1 {
		return false
	}
	switch r.Operator {
	case v1.NodeSelectorOpIn:
		return nodeName == r.Values[0]
	case v1.NodeSelectorOpNotIn:
		return nodeName != r.Values[0]
	}
	return false
}

// ------------------------------------------------------------ host ports --

// hostPort is one (ip, protocol, port) a pod binds on the node.
type hostPort struct {
	ip, protocol string
	port         int32
}

// bindAll is the host IP a port with no hostIP binds.
const bindAll = "0.0.0.0"

// podHostPorts is the host ports of the pod's regular containers, as the
// scheduler's NodePorts plugin counts them (init containers do not count),
// with an empty hostIP as 0.0.0.0 and an empty protocol as TCP.
func podHostPorts(pod *v1.Pod) []hostPort {
	var out []hostPort
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = bindAll
			}
			if hp.protocol == "" {
				hp.protocol = string(v1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	return out
}

// hostPortsConflict tells whether a host port of the pod is taken by a pod
// admitted before it (scheduler framework HostPortInfo.CheckConflict): the
// same protocol and port on the same IP, where 0.0.0.0 on either side
// clashes with every IP.
func hostPortsConflict(pod *v1.Pod, admitted []*v1.Pod) bool {
	used := map[hostPort]bool{}
	for _, p := range admitted {
		for _, hp := range podHostPorts(p) {
			used[hp] = true
		}
	}
	for _, want := range podHostPorts(pod) {
		for u := range used {
			if u.protocol == want.protocol && u.port == want.port &&
				(u.ip == want.ip || u.ip == bindAll || want.ip == bindAll) {
				return true
			}
		}
	}
	return false
}

// --------------------------------------------------------------- sysctls --

// safeSysctl is one sysctl of the kubelet's safe list
// (pkg/kubelet/sysctl/safe_sysctls.go) and the first kernel where it is
// namespaced ("" for always).
type safeSysctl struct{ name, kernel string }

func safeSysctls() []safeSysctl {
	return []safeSysctl{
		{"kernel.shm_rmid_forced", ""},
		{"net.ipv4.ip_local_port_range", ""},
		{"net.ipv4.tcp_syncookies", ""},
		{"net.ipv4.ping_group_range", ""},
		{"net.ipv4.ip_unprivileged_port_start", ""},
		{"net.ipv4.ip_local_reserved_ports", "3.16"},
		{"net.ipv4.tcp_keepalive_time", "4.5"},
		{"net.ipv4.tcp_fin_timeout", "4.6"},
		{"net.ipv4.tcp_keepalive_intvl", "4.5"},
		{"net.ipv4.tcp_keepalive_probes", "4.5"},
		{"net.ipv4.tcp_rmem", "4.15"},
		{"net.ipv4.tcp_wmem", "4.15"},
	}
}

// safeSysctlNames is the safe list on a kernel: a gated sysctl is dropped
// when the kernel is older or its version unknown, as the kubelet does.
func safeSysctlNames(kernel string) []string {
	kv, _ := version.ParseGeneric(kernel)
	var out []string
	for _, s := range safeSysctls() {
		if s.kernel == "" || (kv != nil && kv.AtLeast(version.MustParseGeneric(s.kernel))) {
			out = append(out, s.name)
		}
	}
	return out
}

// sysctlNamespace is the kernel namespace that isolates a sysctl
// (pkg/kubelet/sysctl/namespace.go): "ipc", "net", or "" when the sysctl is
// not known to be namespaced.
func sysctlNamespace(name string) string {
	if name == "kernel.sem" {
		return "ipc"
	}
	for _, p := range []string{"kernel.shm", "kernel.msg", "fs.mqueue."} {
		if strings.HasPrefix(name, p) {
			return "ipc"
		}
	}
	if strings.HasPrefix(name, "net.") {
		return "net"
	}
	return ""
}

// normalizeSysctl turns a slash-separated sysctl name (net/ipv4/conf/eth0.100/x)
// into the dotted form (sysctl.d(5); component-helpers NormalizeName).
func normalizeSysctl(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}

// forbiddenSysctl is the kubelet's sysctl admission (patternAllowlist):
// every sysctl of the pod must be on the safe list or match
// --allowed-unsafe-sysctls (a trailing * is a prefix), and a net or ipc
// sysctl is refused with hostNetwork or hostIPC. It returns the problem with
// the first sysctl that fails, or "".
func forbiddenSysctl(pod *v1.Pod, node Node) string {
	sc := pod.Spec.SecurityContext
	if sc == nil || len(sc.Sysctls) == 0 {
		return ""
	}
	exact := map[string]bool{}
	var prefixes []string
	for _, s := range safeSysctlNames(node.KernelVersion) {
		exact[s] = true
	}
	for _, s := range node.AllowedUnsafeSysctls {
		s = normalizeSysctl(s)
		if p, ok := strings.CutSuffix(s, "*"); ok {
			prefixes = append(prefixes, p)
		} else {
			exact[s] = true
		}
	}
	for _, s := range sc.Sysctls {
		name := normalizeSysctl(s.Name)
		allowed := exact[name]
		for _, p := range prefixes {
			allowed = allowed || strings.HasPrefix(name, p)
		}
		if !allowed {
			return fmt.Sprintf("%q not allowlisted", name)
		}
		// The namespace of the allowlist entry and of the name agree: an
		// entry's namespace is that of its prefix.
		switch ns := sysctlNamespace(name); {
		case ns == "ipc" && pod.Spec.HostIPC, ns == "net" && pod.Spec.HostNetwork:
			return fmt.Sprintf("%q not allowed with host %s enabled", name, ns)
		}
	}
	return ""
}

// -------------------------------------------------------------- AppArmor --

// appArmorProblem is the kubelet's AppArmor validator
// (pkg/security/apparmor/validate.go, helpers.go): a pod needs AppArmor when
// any pod-level or container-level AppArmorProfile, or any deprecated
// container.apparmor.security.beta.kubernetes.io/* annotation, asks for a
// profile other than Unconfined — RuntimeDefault too. Such a pod cannot run
// on a host without AppArmor; on a host with it, a Localhost profile needs a
// name. It returns the problem, or "".
func appArmorProblem(pod *v1.Pod, hostEnabled bool) string {
	if !appArmorRequired(pod) {
		return ""
	}
	if !hostEnabled {
		return "AppArmor is not enabled on the host"
	}
	for _, c := range initAndRegularContainers(pod) {
		p := AppArmorProfile(pod, c)
		if p != nil && p.Type == v1.AppArmorProfileTypeLocalhost &&
			(p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "") {
			return fmt.Sprintf("invalid empty AppArmor profile name: container %q has a Localhost profile without localhostProfile", c.Name)
		}
	}
	return ""
}

func appArmorRequired(pod *v1.Pod) bool {
	confined := func(p *v1.AppArmorProfile) bool { return p != nil && p.Type != v1.AppArmorProfileTypeUnconfined }
	if sc := pod.Spec.SecurityContext; sc != nil && confined(sc.AppArmorProfile) {
		return true
	}
	for _, c := range initAndRegularContainers(pod) {
		if c.SecurityContext != nil && confined(c.SecurityContext.AppArmorProfile) {
			return true
		}
	}
	for k, v := range pod.Annotations {
		if strings.HasPrefix(k, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && v != v1.DeprecatedAppArmorBetaProfileNameUnconfined {
			return true
		}
	}
	return false
}

// AppArmorProfile is a container's effective profile: its own field, then
// the deprecated annotation, then the pod's field (apparmor.GetProfile).
func AppArmorProfile(pod *v1.Pod, c *v1.Container) *v1.AppArmorProfile {
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		return c.SecurityContext.AppArmorProfile
	}
	if v, ok := pod.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]; ok {
		switch {
		case v == v1.DeprecatedAppArmorBetaProfileRuntimeDefault:
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
		case v == v1.DeprecatedAppArmorBetaProfileNameUnconfined:
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
		case strings.HasPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix):
			name := strings.TrimPrefix(v, v1.DeprecatedAppArmorBetaProfileNamePrefix)
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		}
	}
	if sc := pod.Spec.SecurityContext; sc != nil && sc.AppArmorProfile != nil {
		return sc.AppArmorProfile
	}
	return nil
}

// initAndRegularContainers is the pod's init and regular containers, in that order.
func initAndRegularContainers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}
