package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

// A pod's sandbox, as the kubelet's kuberuntime_sandbox.go has it: its
// creation (createSandbox: the log dir, RunPodSandbox, made again when the
// runtime went away during the call, the pod's IPs) beside the config it
// is created with (podSandboxConfig gathers sandboxInput, sandboxConfig
// decides).

// podSandboxConfig is the pod's sandbox config for attempt (the kubelet's
// generatePodSandboxConfig), with the DNS warnings to report. Like the
// kubelet's, it refuses a pod whose hostname it cannot form (an FQDN over
// 64 characters, say).
func (p *podRun) podSandboxConfig(attempt uint32) (*runtimeapi.PodSandboxConfig, []string, error) {
	if !p.pod.Spec.HostNetwork {
		if _, err := podHostnames(p.pod, p.r.opts.ClusterDomain); err != nil {
			return nil, nil, fmt.Errorf("generating the pod sandbox config: %w", err)
		}
	}
	dns, warnings := dnsConfigFor(dnsInput{Pod: p.pod, Host: p.r.host, ClusterDNS: p.r.opts.ClusterDNS, ClusterDomain: p.r.opts.ClusterDomain})
	return sandboxConfig(sandboxInput{
		Pod: p.pod, Attempt: attempt, Owner: p.r.opts.Owner, RootDir: p.r.opts.RootDir,
		LogDir: p.logDir, DNS: dns, ClusterDomain: p.r.opts.ClusterDomain, CgroupParent: p.cgroup,
		UsernsBase: p.usernsBase, GivenUID: p.givenUID,
	}), warnings, nil
}

// createSandbox runs a new sandbox for the pod and learns its IPs.
func (p *podRun) createSandbox(ctx context.Context, attempt uint32) (string, error) {
	cfg, warnings, err := p.podSandboxConfig(attempt)
	if err != nil {
		return "", err
	}
	for _, w := range warnings {
		p.event("Warning", "%s", w)
	}
	// The pod's log dir, 0755, as the kubelet's createPodSandbox makes it
	// before RunPodSandbox: containerd would make it 0755 too, CRI-O 0700.
	if dir := cfg.GetLogDirectory(); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("creating the pod sandbox: creating its log directory: %w", err)
		}
	}
	// A signal must not cut a call that creates something: the runtime
	// would go on creating it after podrun stopped looking, and teardown
	// would miss it. The call is bounded by the client's per-call timeout.
	ctx = context.WithoutCancel(ctx)
	id, err := p.runPodSandbox(ctx, cfg)
	if err != nil {
		if !p.pod.Spec.HostNetwork {
			// The plugins' versions, asked only now (cni.Pending).
			if nerr := p.r.facts.Network.Explain(ctx); nerr != nil {
				return "", fmt.Errorf("creating the pod sandbox: %w; %v", err, nerr)
			}
		}
		return "", p.withCgroupDriverHint(fmt.Errorf("creating the pod sandbox: %w", err))
	}
	if !p.pod.Spec.HostNetwork {
		p.r.facts.Network.Confirm() // the runtime ran the network's plugins
	}
	p.sandboxes[id] = cfg
	// The observer learns of it now rather than from a listing.
	sb := &runtimeapi.PodSandbox{Id: id, Metadata: cfg.Metadata, State: runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: p.r.now().UnixNano(), Labels: cfg.Labels, Annotations: cfg.Annotations}
	p.acted.sandboxes = append(p.acted.sandboxes, sb)
	if !p.pod.Spec.HostNetwork {
		st, err := p.r.rt.PodSandboxStatus(ctx, id, false)
		if err != nil {
			return "", fmt.Errorf("reading the pod sandbox status: %w", err)
		}
		sb.State, sb.CreatedAt = st.GetStatus().GetState(), st.GetStatus().GetCreatedAt()
		if ips := sandboxIPs(st); len(ips) > 0 {
			p.ips[id] = ips
		}
	}
	return id, nil
}

// runPodSandboxAttempts bounds the RunPodSandbox calls of one sandbox that
// the runtime cuts short by going away.
const runPodSandboxAttempts = 3

// runPodSandbox is RunPodSandbox, with the runtime handler of the pod's
// RuntimeClass (runtimeclass.go; "" the runtime's default), made again
// when the runtime went away during the call (restarted: the client waits
// for it to come back), as the kubelet's next SyncPod would make it. What the lost call made — a
// sandbox of the pod's run that podrun has no ID of, half made or whole —
// is removed first, so that nothing is left of it and its name is free.
func (p *podRun) runPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig) (string, error) {
	for attempt := 1; ; attempt++ {
		handler, err := lookupRuntimeHandler(p.pod, p.r.opts.RuntimeClasses) // refusals checked it
		if err != nil {
			return "", err
		}
		id, err := p.r.rt.RunPodSandbox(ctx, cfg, handler)
		if err != nil {
			p.sandboxUnsure = true
		}
		if err == nil || !cri.IsUnavailable(err) || attempt == runPodSandboxAttempts {
			return id, err
		}
		p.event("FailedCreatePodSandBox", "Failed to create pod sandbox: %v; the runtime went away: trying again", err)
		for _, id := range p.sandboxIDs(ctx) {
			if _, known := p.sandboxes[id]; known {
				continue
			}
			if err := removeSandboxRetrying(ctx, p.r.rt, id); err != nil {
				return "", fmt.Errorf("removing pod sandbox %s, left by a RunPodSandbox the runtime cut short: %w", id, err)
			}
		}
	}
}

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
