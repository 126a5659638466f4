package runner

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func baseSandboxInput() sandboxInput {
	grace := int64(12)
	return sandboxInput{
		Pod: &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: "web", Namespace: "shop", UID: "uid-9",
				Labels:      map[string]string{"app": "web", "io.kubernetes.pod.name": "spoofed"},
				Annotations: map[string]string{"note": "hi"},
			},
			Spec: v1.PodSpec{
				TerminationGracePeriodSeconds: &grace,
				InitContainers: []v1.Container{{Name: "init", Ports: []v1.ContainerPort{
					{ContainerPort: 9000, Protocol: v1.ProtocolTCP},
				}}},
				Containers: []v1.Container{
					{Name: "a", Ports: []v1.ContainerPort{
						{ContainerPort: 80, HostPort: 8080, HostIP: "127.0.0.1", Protocol: v1.ProtocolTCP},
						{ContainerPort: 53, Protocol: v1.ProtocolUDP},
					}},
					{Name: "b", Ports: []v1.ContainerPort{{ContainerPort: 3868, Protocol: v1.ProtocolSCTP}, {ContainerPort: 1}}},
				},
			},
		},
		Attempt:       2,
		Owner:         Owner{RunID: "run1", PID: 42, PIDStart: 99},
		RootDir:       "/var/lib/podrun",
		LogDir:        "/var/lib/podrun/logs/shop_web_uid-9",
		DNS:           &runtimeapi.DNSConfig{Servers: []string{"10.0.0.10"}},
		ClusterDomain: "cluster.local",
		CgroupParent:  "/kubepods/besteffort/poduid-9",
	}
}

func TestSandboxConfigBase(t *testing.T) {
	in := baseSandboxInput()
	cfg := sandboxConfig(in)
	md := cfg.Metadata
	if md.Name != "web" || md.Namespace != "shop" || md.Uid != "uid-9" || md.Attempt != 2 {
		t.Errorf("metadata = %v", md)
	}
	if cfg.Hostname != "web" {
		t.Errorf("hostname = %q, want web", cfg.Hostname)
	}
	if cfg.LogDirectory != in.LogDir || cfg.DnsConfig != in.DNS {
		t.Errorf("logDirectory = %q, dns = %v", cfg.LogDirectory, cfg.DnsConfig)
	}
	wantPorts := []*runtimeapi.PortMapping{
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 9000},
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080, HostIp: "127.0.0.1"},
		{Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53},
		{Protocol: runtimeapi.Protocol_SCTP, ContainerPort: 3868},
		{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 1},
	}
	if !reflect.DeepEqual(cfg.PortMappings, wantPorts) {
		t.Errorf("port mappings =\n%v\nwant\n%v", cfg.PortMappings, wantPorts)
	}
	wantLabels := map[string]string{
		"app":                         "web",
		"io.kubernetes.pod.name":      "web",
		"io.kubernetes.pod.namespace": "shop",
		"io.kubernetes.pod.uid":       "uid-9",
		LabelManaged:                  "true",
		labelRun:                      "run1",
		LabelPID:                      "42",
		labelPIDStart:                 "99",
	}
	if !reflect.DeepEqual(cfg.Labels, wantLabels) {
		t.Errorf("labels =\n%v\nwant\n%v", cfg.Labels, wantLabels)
	}
	wantAnn := map[string]string{
		"note":            "hi",
		AnnotationRootDir: "/var/lib/podrun",
		annotationLogDir:  "/var/lib/podrun/logs/shop_web_uid-9",
		"io.kubernetes.pod.terminationGracePeriod": "12",
		annotationCgroupParent:                     "/kubepods/besteffort/poduid-9",
		annotationContainers:                       containersRecord(in.Pod),
	}
	if !reflect.DeepEqual(cfg.Annotations, wantAnn) {
		t.Errorf("annotations =\n%v\nwant\n%v", cfg.Annotations, wantAnn)
	}
	if _, ok := in.Pod.Annotations[AnnotationRootDir]; ok {
		t.Errorf("sandboxConfig wrote into the pod's own annotations")
	}
	if in.Pod.Labels["io.kubernetes.pod.name"] != "spoofed" {
		t.Errorf("sandboxConfig wrote into the pod's own labels")
	}
	linux := cfg.Linux
	if linux.CgroupParent != in.CgroupParent {
		t.Errorf("cgroupParent = %q", linux.CgroupParent)
	}
	sc := linux.SecurityContext
	if sc.Seccomp.GetProfileType() != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("seccomp = %v, want RuntimeDefault", sc.Seccomp)
	}
	if sc.Privileged || sc.RunAsUser != nil || sc.RunAsGroup != nil || len(sc.SupplementalGroups) != 0 || linux.Sysctls != nil {
		t.Errorf("security context = %v, sysctls = %v; want defaults", sc, linux.Sysctls)
	}
	want := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Ipc: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER}
	if !reflect.DeepEqual(sc.NamespaceOptions, want) {
		t.Errorf("namespace options = %v, want %v", sc.NamespaceOptions, want)
	}
}

func TestSandboxConfigVariants(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*sandboxInput)
		check  func(*testing.T, *runtimeapi.PodSandboxConfig)
	}{
		{
			name:   "a UID podrun gave is marked for the hand-over",
			mutate: func(in *sandboxInput) { in.GivenUID = true },
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if got := cfg.Annotations[annotationUIDGiven]; got != "true" {
					t.Errorf("annotation %s = %q, want true", annotationUIDGiven, got)
				}
			},
		},
		{
			name:   "a host network pod gets no hostname",
			mutate: func(in *sandboxInput) { in.Pod.Spec.HostNetwork = true },
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if cfg.Hostname != "" {
					t.Errorf("hostname = %q, want none", cfg.Hostname)
				}
				if cfg.Linux.SecurityContext.NamespaceOptions.Network != runtimeapi.NamespaceMode_NODE {
					t.Errorf("network namespace = %v, want NODE", cfg.Linux.SecurityContext.NamespaceOptions.Network)
				}
			},
		},
		{
			name: "spec.hostname wins over the pod name",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.Hostname = "box"
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if cfg.Hostname != "box" {
					t.Errorf("hostname = %q, want box", cfg.Hostname)
				}
			},
		},
		{
			name: "setHostnameAsFQDN with a subdomain makes the hostname the FQDN",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.Subdomain = "db"
				in.Pod.Spec.SetHostnameAsFQDN = ptrTo(true)
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if want := "web.db.shop.svc.cluster.local"; cfg.Hostname != want {
					t.Errorf("hostname = %q, want %q", cfg.Hostname, want)
				}
			},
		},
		{
			name: "a subdomain alone leaves the short hostname",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.Subdomain = "db"
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if cfg.Hostname != "web" {
					t.Errorf("hostname = %q, want web", cfg.Hostname)
				}
			},
		},
		{
			name: "hostIPC, hostPID and shareProcessNamespace set the namespace options",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.HostIPC = true
				in.Pod.Spec.HostPID = true
				in.Pod.Spec.ShareProcessNamespace = ptrTo(true)
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				ns := cfg.Linux.SecurityContext.NamespaceOptions
				if ns.Ipc != runtimeapi.NamespaceMode_NODE || ns.Pid != runtimeapi.NamespaceMode_NODE || ns.Network != runtimeapi.NamespaceMode_POD {
					t.Errorf("namespace options = %v, want ipc and pid NODE (hostPID wins), network POD", ns)
				}
			},
		},
		{
			name:   "shareProcessNamespace shares the pod's PID namespace",
			mutate: func(in *sandboxInput) { in.Pod.Spec.ShareProcessNamespace = ptrTo(true) },
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if got := cfg.Linux.SecurityContext.NamespaceOptions.Pid; got != runtimeapi.NamespaceMode_POD {
					t.Errorf("pid namespace = %v, want POD", got)
				}
			},
		},
		{
			name: "sysctl names with slashes are normalised to dots",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{
					{Name: "net/ipv4/ip_local_port_range", Value: "1024 65000"},
					{Name: "kernel.shm_rmid_forced", Value: "1"},
				}}
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				want := map[string]string{"net.ipv4.ip_local_port_range": "1024 65000", "kernel.shm_rmid_forced": "1"}
				if !reflect.DeepEqual(cfg.Linux.Sysctls, want) {
					t.Errorf("sysctls = %v, want %v", cfg.Linux.Sysctls, want)
				}
			},
		},
		{
			name: "a privileged init container makes the sandbox privileged",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.InitContainers[0].SecurityContext = &v1.SecurityContext{Privileged: ptrTo(true)}
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if !cfg.Linux.SecurityContext.Privileged {
					t.Errorf("sandbox not privileged")
				}
			},
		},
		{
			name: "privileged: false keeps the sandbox unprivileged",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptrTo(false)}
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if cfg.Linux.SecurityContext.Privileged {
					t.Errorf("sandbox privileged")
				}
			},
		},
		{
			name: "runAsUser, runAsGroup, fsGroup and supplementalGroups reach the sandbox",
			mutate: func(in *sandboxInput) {
				in.Pod.Spec.SecurityContext = &v1.PodSecurityContext{
					RunAsUser: ptrTo(int64(1000)), RunAsGroup: ptrTo(int64(2000)),
					FSGroup: ptrTo(int64(3000)), SupplementalGroups: []int64{4000, 5000},
				}
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				sc := cfg.Linux.SecurityContext
				if sc.RunAsUser.GetValue() != 1000 || sc.RunAsGroup.GetValue() != 2000 {
					t.Errorf("runAsUser=%v runAsGroup=%v", sc.RunAsUser, sc.RunAsGroup)
				}
				if want := []int64{3000, 4000, 5000}; !reflect.DeepEqual(sc.SupplementalGroups, want) {
					t.Errorf("supplementalGroups = %v, want %v", sc.SupplementalGroups, want)
				}
			},
		},
		{
			name: "a pod without labels or annotations still gets podrun's",
			mutate: func(in *sandboxInput) {
				in.Pod.Labels, in.Pod.Annotations = nil, nil
				in.Pod.Spec.TerminationGracePeriodSeconds = nil
				in.Owner.Detached = true
				in.CgroupParent = "" // no pod cgroups (--cgroup-root "")
			},
			check: func(t *testing.T, cfg *runtimeapi.PodSandboxConfig) {
				if cfg.Labels[labelDetached] != "true" || cfg.Labels[labelPodUID] != "uid-9" {
					t.Errorf("labels = %v", cfg.Labels)
				}
				if len(cfg.Annotations) != 3 || cfg.Annotations[AnnotationRootDir] == "" || cfg.Annotations[annotationContainers] == "" {
					t.Errorf("annotations = %v, want only root and log dir and the containers", cfg.Annotations)
				}
				if cfg.Linux.CgroupParent != "" {
					t.Errorf("cgroupParent = %q, want none", cfg.Linux.CgroupParent)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := baseSandboxInput()
			tc.mutate(&in)
			tc.check(t, sandboxConfig(in))
		})
	}
}

func TestPodHostnameAndDomain(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b" // 64 chars: the cut leaves a trailing '-'
	cases := []struct {
		name                 string
		podName, hostname    string
		subdomain, domain    string
		fqdn                 bool
		wantHost, wantDomain string
	}{
		{name: "the pod name", podName: "web", wantHost: "web"},
		{name: "spec.hostname wins", podName: "web", hostname: "h", wantHost: "h"},
		{name: "a long pod name is cut to 63 without a trailing '-'", podName: long, wantHost: strings.Repeat("a", 62)},
		{name: "a long pod name is cut to 63 without trailing '.' and '-'", podName: strings.Repeat("a", 61) + ".-xyz", wantHost: strings.Repeat("a", 61)},
		{name: "exactly 63 characters are kept", podName: strings.Repeat("a", 63), wantHost: strings.Repeat("a", 63)},
		{name: "a subdomain gives the domain", podName: "web", subdomain: "db", domain: "cluster.local",
			wantHost: "web", wantDomain: "db.ns.svc.cluster.local"},
		{name: "setHostnameAsFQDN makes the hostname the FQDN", podName: "web", hostname: "h", subdomain: "db", domain: "c.local", fqdn: true,
			wantHost: "h.db.ns.svc.c.local", wantDomain: "db.ns.svc.c.local"},
		{name: "setHostnameAsFQDN without a subdomain changes nothing", podName: "web", fqdn: true, domain: "c.local", wantHost: "web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.podName, Namespace: "ns"},
				Spec: v1.PodSpec{Hostname: tc.hostname, Subdomain: tc.subdomain, SetHostnameAsFQDN: &tc.fqdn}}
			host, dom := podHostnameAndDomain(pod, tc.domain)
			if host != tc.wantHost || dom != tc.wantDomain {
				t.Errorf("podHostnameAndDomain = %q, %q; want %q, %q", host, dom, tc.wantHost, tc.wantDomain)
			}
		})
	}
}
