package sources

import (
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/sources/imageref"
)

// staticPodDefaults is what the kubelet's file source does to every static
// pod besides the API server's defaults (pkg/kubelet/config/common.go
// applyDefaults): the name gets the node's name, lower-cased, as a suffix
// (generatePodName), spec.nodeName is this node whatever the manifest
// says, and a toleration of every NoExecute taint is added, replacing one
// that matches it (same key, operator, value and effect: a
// tolerationSeconds goes), as AddOrUpdateTolerationInPod does. The UID is not the kubelet's (see docs/handover.md), and a
// namespace is defaulted by defaultPod already.
func staticPodDefaults(pod *v1.Pod, nodeName string) {
	if pod.Name != "" {
		pod.Name = pod.Name + "-" + strings.ToLower(nodeName)
	}
	pod.Spec.NodeName = nodeName
	all := v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}
	var out []v1.Toleration
	replaced := false
	for _, t := range pod.Spec.Tolerations {
		if all.MatchToleration(&t) {
			t, replaced = all, true
		}
		out = append(out, t)
	}
	if !replaced {
		out = append(out, all)
	}
	pod.Spec.Tolerations = out
}

// Defaults the API server applies (pkg/apis/core/v1/defaults.go and the
// generated zz_generated.defaults.go) that podrun relies on.
const (
	defaultNamespace   = metav1.NamespaceDefault
	defaultGracePeriod = int64(v1.DefaultTerminationGracePeriodSeconds)
	defaultVolumeMode  = int32(0o644)
	// defaultTokenExpirationSeconds is serviceAccountToken.expirationSeconds.
	defaultTokenExpirationSeconds = int64(3600)
)

// defaultPod applies the API server's v1 defaulting to a decoded pod, sets
// spec.nodeName to nodeName when empty, and resets the status to phase
// Pending, as pod creation and the kubelet's static-pod source do.
//
// The name is kept as written: the kubelet renames static pods to
// "<name>-<nodename>", podrun does so only with --static-pod-names
// (staticPodDefaults).
func defaultPod(pod *v1.Pod, nodeName string) {
	if pod.Namespace == "" {
		pod.Namespace = defaultNamespace
	}
	spec := &pod.Spec
	if spec.NodeName == "" {
		spec.NodeName = nodeName
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr(defaultGracePeriod)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr(v1.DefaultEnableServiceLinks)
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.EphemeralContainers {
		c := (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(c, false)
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
}

// defaultContainer applies the Container, ContainerPort, Probe,
// HTTPGetAction and ObjectFieldSelector defaults, copies limits into
// missing requests and, with hostNetwork, hostPort from containerPort.
func defaultContainer(c *v1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*v1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			defaultFieldRef(vf.FieldRef)
		}
	}
	if c.Resources.Limits != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
}

// pullPolicy is the default imagePullPolicy: Always for the tag "latest"
// (which an image with neither tag nor digest has), IfNotPresent for
// everything else, including digest-only and unparsable references.
func pullPolicy(image string) v1.PullPolicy {
	if imageref.Tag(image) == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
}

func defaultFieldRef(f *v1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

// defaultVolume gives a volume with no source an emptyDir and fills in
// modes, the hostPath type, token expiry and image pull policy.
func defaultVolume(v *v1.Volume) {
	if volumeSourceCount(&v.VolumeSource) == 0 {
		v.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	if s := v.Secret; s != nil && s.DefaultMode == nil {
		s.DefaultMode = ptr(defaultVolumeMode)
	}
	if s := v.ConfigMap; s != nil && s.DefaultMode == nil {
		s.DefaultMode = ptr(defaultVolumeMode)
	}
	if s := v.DownwardAPI; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = ptr(defaultVolumeMode)
		}
		for i := range s.Items {
			defaultFieldRef(s.Items[i].FieldRef)
		}
	}
	if s := v.HostPath; s != nil && s.Type == nil {
		s.Type = ptr(v1.HostPathUnset)
	}
	if s := v.Image; s != nil && s.PullPolicy == "" {
		s.PullPolicy = pullPolicy(s.Reference)
	}
	if s := v.Projected; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = ptr(defaultVolumeMode)
		}
		for i := range s.Sources {
			src := &s.Sources[i]
			if d := src.DownwardAPI; d != nil {
				for j := range d.Items {
					defaultFieldRef(d.Items[j].FieldRef)
				}
			}
			if t := src.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr(defaultTokenExpirationSeconds)
			}
		}
	}
}

// volumeSourceCount counts the sources set in a VolumeSource: every field
// is a pointer to one volume type.
func volumeSourceCount(s *v1.VolumeSource) int {
	n := 0
	rv := reflect.ValueOf(s).Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

// defaultConfigMap puts a ConfigMap without namespace in "default".
func defaultConfigMap(cm *v1.ConfigMap) {
	if cm.Namespace == "" {
		cm.Namespace = defaultNamespace
	}
}

// defaultSecret puts a Secret without namespace in "default", defaults its
// type to Opaque and merges stringData into data, stringData winning, as
// the API server's conversion does; stringData is then cleared.
func defaultSecret(s *v1.Secret) {
	if s.Namespace == "" {
		s.Namespace = defaultNamespace
	}
	if s.Type == "" {
		s.Type = v1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// defaultRuntimeClass clears a RuntimeClass's namespace: the object is
// cluster-scoped, and the API server clears a namespace given on create
// (EnsureObjectNamespaceMatchesRequestNamespace). It has no defaults.
func defaultRuntimeClass(rc *nodev1.RuntimeClass) {
	rc.Namespace = ""
}

func ptr[T any](v T) *T { return &v }
