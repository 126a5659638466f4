package runner

import (
	"maps"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// sandboxInput is everything sandboxConfig decides from.
type sandboxInput struct {
	Pod           *v1.Pod
	Attempt       uint32
	Owner         Owner
	RootDir       string
	LogDir        string // the pod's log directory
	DNS           *runtimeapi.DNSConfig
	ClusterDomain string
	CgroupParent  string
	UsernsBase    uint32 // hostUsers false: the first host ID of the pod's range
	GivenUID      bool   // podrun gave the pod its UID (no metadata.uid)
}

// sandboxConfig is the CRI PodSandboxConfig of a pod (kubelet
// generatePodSandboxConfig): metadata, hostname, log directory, DNS, port
// mappings, labels and annotations, and the Linux namespace options.
func sandboxConfig(in sandboxInput) *runtimeapi.PodSandboxConfig {
	pod := in.Pod
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: in.Attempt,
		},
		LogDirectory: in.LogDir,
		DnsConfig:    in.DNS,
		Labels:       sandboxLabels(pod, in.Owner),
		Annotations:  maps.Clone(pod.Annotations),
	}
	if cfg.Annotations == nil {
		cfg.Annotations = map[string]string{}
	}
	cfg.Annotations[AnnotationRootDir] = in.RootDir
	cfg.Annotations[annotationLogDir] = in.LogDir
	cfg.Annotations[annotationContainers] = containersRecord(pod)
	if in.CgroupParent != "" {
		cfg.Annotations[annotationCgroupParent] = in.CgroupParent
	}
	if in.GivenUID {
		cfg.Annotations[annotationUIDGiven] = "true"
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		cfg.Annotations[annotationPodTerminationGracePeriod] = strconv.FormatInt(*g, 10)
	}
	if !pod.Spec.HostNetwork {
		cfg.Hostname, _ = podHostnameAndDomain(pod, in.ClusterDomain)
	}
	for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, p := range c.Ports {
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{
				Protocol:      protocol(p.Protocol),
				ContainerPort: p.ContainerPort,
				HostPort:      p.HostPort,
				HostIp:        p.HostIP,
			})
		}
	}

	sc := &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: namespaceOptions(pod),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
	}
	if u := usernsOptions(pod, in.UsernsBase); u != nil {
		sc.NamespaceOptions.UsernsOptions = u
		cfg.Annotations[annotationUsernsBase] = strconv.FormatUint(uint64(in.UsernsBase), 10)
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		if psc.FSGroup != nil {
			sc.SupplementalGroups = append(sc.SupplementalGroups, *psc.FSGroup)
		}
		sc.SupplementalGroups = append(sc.SupplementalGroups, psc.SupplementalGroups...)
	}
	for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			sc.Privileged = true
		}
	}
	linux := &runtimeapi.LinuxPodSandboxConfig{CgroupParent: in.CgroupParent, SecurityContext: sc}
	if psc := pod.Spec.SecurityContext; psc != nil && len(psc.Sysctls) > 0 {
		linux.Sysctls = map[string]string{}
		for _, s := range psc.Sysctls {
			// The kubelet normalises slash-separated names to dots.
			linux.Sysctls[strings.ReplaceAll(s.Name, "/", ".")] = s.Value
		}
	}
	cfg.Linux = linux
	return cfg
}

// sandboxLabels: the pod's labels, the kubelet's pod labels and podrun's owner labels.
func sandboxLabels(pod *v1.Pod, o Owner) map[string]string {
	l := maps.Clone(pod.Labels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, podLabels(pod))
	maps.Copy(l, o.labels())
	return l
}

func podLabels(pod *v1.Pod) map[string]string {
	return map[string]string{
		labelPodName:      pod.Name,
		labelPodNamespace: pod.Namespace,
		labelPodUID:       string(pod.UID),
	}
}

// namespaceOptions: network and IPC are the node's with hostNetwork/hostIPC,
// else the pod's; PID is the node's with hostPID, the pod's with
// shareProcessNamespace, else the container's own.
func namespaceOptions(pod *v1.Pod) *runtimeapi.NamespaceOption {
	o := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Ipc:     runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
	}
	if pod.Spec.HostNetwork {
		o.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		o.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		o.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		o.Pid = runtimeapi.NamespaceMode_POD
	}
	return o
}

func protocol(p v1.Protocol) runtimeapi.Protocol {
	switch p {
	case v1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case v1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// podHostnameAndDomain is the sandbox hostname and the pod's domain
// (podHostnames); a pod whose names the kubelet refuses gets none here:
// createSandbox refuses it first.
func podHostnameAndDomain(pod *v1.Pod, clusterDomain string) (string, string) {
	n, err := podHostnames(pod, clusterDomain)
	if err != nil {
		return "", ""
	}
	return n.Nodename, n.Domain
}

// sandboxIPs is a sandbox's pod IPs, the primary first.
func sandboxIPs(st *runtimeapi.PodSandboxStatusResponse) []string {
	n := st.GetStatus().GetNetwork()
	if n == nil || n.Ip == "" {
		return nil
	}
	ips := []string{n.Ip}
	for _, ip := range n.AdditionalIps {
		ips = append(ips, ip.Ip)
	}
	return ips
}
