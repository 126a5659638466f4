package admission

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// admitNode is the base node of the admission tests: 2 cpu, 4Gi, 20Gi of
// ephemeral storage, 110 pods, no AppArmor, kernel 6.1.
func admitNode() Node {
	return Node{
		Name: "node1",
		Labels: map[string]string{
			v1.LabelHostname: "node1", v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
			"disktype": "ssd", "rack": "7",
		},
		Allocatable: v1.ResourceList{
			v1.ResourceCPU:              resource.MustParse("2"),
			v1.ResourceMemory:           resource.MustParse("4Gi"),
			v1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
			v1.ResourcePods:             resource.MustParse("110"),
		},
		KernelVersion: "6.1.0-18-amd64",
	}
}

// admitBasePod is the base pod: default/web, one container asking for
// 100m and 64Mi, bound to node1.
func admitBasePod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.PodSpec{
			NodeName: "node1",
			Containers: []v1.Container{{
				Name: "main", Image: "busybox",
				Resources: v1.ResourceRequirements{Requests: requests("cpu", "100m", "memory", "64Mi")},
			}},
		},
	}
}

// requests builds a ResourceList from name, quantity pairs.
func requests(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// podRequesting is a pod other than the base one, with one container
// asking for the given resources.
func podRequesting(name string, kv ...string) *v1.Pod {
	p := admitBasePod()
	p.Name = name
	p.Spec.Containers[0].Resources.Requests = requests(kv...)
	return p
}

func withHostPort(p *v1.Pod, ip, proto string, port int32) *v1.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports,
		v1.ContainerPort{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: v1.Protocol(proto)})
	return p
}

func requiredAffinity(terms ...v1.NodeSelectorTerm) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

func expr(key string, op v1.NodeSelectorOperator, vals ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
}

func sysctls(p *v1.Pod, names ...string) {
	if p.Spec.SecurityContext == nil {
		p.Spec.SecurityContext = &v1.PodSecurityContext{}
	}
	for _, n := range names {
		p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: n, Value: "1"})
	}
}

func sidecar(name string, kv ...string) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	return v1.Container{Name: name, Image: "busybox", RestartPolicy: &always,
		Resources: v1.ResourceRequirements{Requests: requests(kv...)}}
}

func initCtr(name string, kv ...string) v1.Container {
	return v1.Container{Name: name, Image: "busybox", Resources: v1.ResourceRequirements{Requests: requests(kv...)}}
}

func TestAdmitPod(t *testing.T) {
	localhost := func(name string) *v1.AppArmorProfile {
		return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	tests := []struct {
		name     string
		pod      func(p *v1.Pod)
		node     func(n *Node)
		admitted []*v1.Pod
		reason   string // "" = admitted
		message  string // without "Pod was rejected: "; "" = not checked
	}{
		{name: "a plain pod is admitted"},
		{name: "a pod without nodeName is admitted", pod: func(p *v1.Pod) { p.Spec.NodeName = "" }},
		{name: "a pod without requests is admitted on a full node",
			admitted: []*v1.Pod{podRequesting("big", "cpu", "2", "memory", "4Gi")},
			pod:      func(p *v1.Pod) { p.Spec.Containers[0].Resources = v1.ResourceRequirements{} }},

		// Resources.
		{name: "cpu over allocatable is OutOfcpu",
			pod:    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("cpu", "3") },
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000"},
		{name: "cpu counts the pods admitted before it",
			admitted: []*v1.Pod{podRequesting("a", "cpu", "1500m"), podRequesting("b", "cpu", "300m")},
			pod:      func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("cpu", "201m") },
			reason:   "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 201, used: 1800, capacity: 2000"},
		{name: "cpu that fits exactly is admitted",
			admitted: []*v1.Pod{podRequesting("a", "cpu", "1900m")}},
		{name: "memory over allocatable is OutOfmemory",
			pod:    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("memory", "5Gi") },
			reason: "OutOfmemory", message: "Node didn't have enough resource: memory, requested: 5368709120, used: 0, capacity: 4294967296"},
		{name: "memory that only the containers together request beyond an int64 is OutOfmemory",
			// Each request fits an int64 (validation's bound), their sum
			// does not: read as 0, it was admitted.
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = requests("memory", "5e18")
				p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
				p.Spec.Containers[1].Name = "second"
			},
			reason: "OutOfmemory", message: "Node didn't have enough resource: memory, requested: 9223372036854775807, used: 0, capacity: 4294967296"},
		{name: "ephemeral-storage over allocatable is OutOfephemeral-storage",
			pod:    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("ephemeral-storage", "21Gi") },
			reason: "OutOfephemeral-storage"},
		{name: "one pod more than the node's pods is OutOfpods",
			node:     func(n *Node) { n.Allocatable[v1.ResourcePods] = resource.MustParse("1") },
			admitted: []*v1.Pod{podRequesting("a")},
			reason:   "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"},
		{name: "the pod count is checked before cpu",
			node:     func(n *Node) { n.Allocatable[v1.ResourcePods] = resource.MustParse("1") },
			admitted: []*v1.Pod{podRequesting("a")},
			pod:      func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("cpu", "3") },
			reason:   "OutOfpods"},
		{name: "cpu is checked before memory",
			pod:    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("cpu", "3", "memory", "5Gi") },
			reason: "OutOfcpu"},
		{name: "an extended resource the node does not have is OutOf<resource>",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = requests("example.com/dongle", "3")
				p.Spec.Containers[0].Resources.Limits = requests("example.com/dongle", "3")
			},
			reason: "OutOfexample.com/dongle", message: "Node didn't have enough resource: example.com/dongle, requested: 3, used: 0, capacity: 0"},
		{name: "an extended resource the node has is admitted",
			node: func(n *Node) { n.Allocatable["example.com/dongle"] = resource.MustParse("4") },
			pod:  func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("example.com/dongle", "3") }},
		{name: "an extended resource counts the pods admitted before it",
			node:     func(n *Node) { n.Allocatable["example.com/dongle"] = resource.MustParse("4") },
			admitted: []*v1.Pod{podRequesting("a", "example.com/dongle", "2")},
			pod:      func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("example.com/dongle", "3") },
			reason:   "OutOfexample.com/dongle", message: "Node didn't have enough resource: example.com/dongle, requested: 3, used: 2, capacity: 4"},
		{name: "huge pages the node does not have are OutOfhugepages-2Mi",
			pod:    func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests = requests("hugepages-2Mi", "4Mi") },
			reason: "OutOfhugepages-2Mi"},
		{name: "extended resources are checked in name order",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = requests("z.example/b", "1", "a.example/a", "1", "m.example/c", "1")
			},
			reason: "OutOfa.example/a"},

		// Effective requests (the cpu of the pod is all that matters here).
		{name: "an init container larger than the containers decides",
			pod:    func(p *v1.Pod) { p.Spec.InitContainers = []v1.Container{initCtr("init", "cpu", "2100m")} },
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 2100, used: 0, capacity: 2000"},
		{name: "sidecars add to the containers and to the init containers after them",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{
					sidecar("s1", "cpu", "500m"), sidecar("s2", "cpu", "500m"), initCtr("init", "cpu", "1100m"),
				}
			},
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 2100, used: 0, capacity: 2000"},
		{name: "an init container before a sidecar does not add the sidecar",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{initCtr("init", "cpu", "1900m"), sidecar("s1", "cpu", "500m")}
			}},
		{name: "the pod overhead is added",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = requests("cpu", "1900m")
				p.Spec.Overhead = requests("cpu", "250m")
			},
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 2150, used: 0, capacity: 2000"},
		{name: "pod-level requests replace the containers' cpu",
			pod:    func(p *v1.Pod) { p.Spec.Resources = &v1.ResourceRequirements{Requests: requests("cpu", "2500m")} },
			reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000"},

		// Node name.
		{name: "another spec.nodeName is NodeName",
			pod:    func(p *v1.Pod) { p.Spec.NodeName = "node2" },
			reason: "NodeName", message: "Predicate NodeName failed: node(s) didn't match the requested node name"},

		// Node selector and affinity.
		{name: "a nodeSelector label the node lacks is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"gpu": "yes"} },
			reason: "NodeAffinity", message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"},
		{name: "a nodeSelector with another value is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "hdd"} },
			reason: "NodeAffinity"},
		{name: "a matching nodeSelector is admitted",
			pod: func(p *v1.Pod) {
				p.Spec.NodeSelector = map[string]string{"disktype": "ssd", v1.LabelHostname: "node1"}
			}},
		{name: "affinity In matching is admitted",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(expr(v1.LabelOSStable, v1.NodeSelectorOpIn, "linux", "macOs"))
			}},
		{name: "affinity In not matching is NodeAffinity",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(expr("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "antarctica-east1"))
			},
			reason: "NodeAffinity"},
		{name: "affinity NotIn holds for a missing label",
			pod: func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("zone", v1.NodeSelectorOpNotIn, "a")) }},
		{name: "affinity NotIn with the node's value is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("disktype", v1.NodeSelectorOpNotIn, "ssd")) },
			reason: "NodeAffinity"},
		{name: "affinity Exists is admitted",
			pod: func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("disktype", v1.NodeSelectorOpExists)) }},
		{name: "affinity Exists of a missing label is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("gpu", v1.NodeSelectorOpExists)) },
			reason: "NodeAffinity"},
		{name: "affinity DoesNotExist of a missing label is admitted",
			pod: func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("gpu", v1.NodeSelectorOpDoesNotExist)) }},
		{name: "affinity DoesNotExist of a present label is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("disktype", v1.NodeSelectorOpDoesNotExist)) },
			reason: "NodeAffinity"},
		{name: "affinity Gt below the label is admitted",
			pod: func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("rack", v1.NodeSelectorOpGt, "6")) }},
		{name: "affinity Gt at the label is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("rack", v1.NodeSelectorOpGt, "7")) },
			reason: "NodeAffinity"},
		{name: "affinity Lt above the label is admitted",
			pod: func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("rack", v1.NodeSelectorOpLt, "8")) }},
		{name: "affinity Gt on a non-integer label is NodeAffinity",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(expr("disktype", v1.NodeSelectorOpGt, "1")) },
			reason: "NodeAffinity"},
		{name: "affinity terms are ORed",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(expr("gpu", v1.NodeSelectorOpExists), expr("disktype", v1.NodeSelectorOpIn, "ssd"))
			}},
		{name: "affinity expressions of one term are ANDed",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "disktype", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}},
					{Key: "gpu", Operator: v1.NodeSelectorOpExists},
				}})
			},
			reason: "NodeAffinity"},
		{name: "an empty affinity term matches nothing",
			pod:    func(p *v1.Pod) { p.Spec.Affinity = requiredAffinity(v1.NodeSelectorTerm{}) },
			reason: "NodeAffinity"},
		{name: "affinity matchFields metadata.name In the node is admitted",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node1"}}}})
			}},
		{name: "affinity matchFields metadata.name NotIn the node is NodeAffinity",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: v1.NodeSelectorOpNotIn, Values: []string{"node1"}}}})
			},
			reason: "NodeAffinity"},
		{name: "preferred affinity does not matter",
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
					{Weight: 1, Preference: expr("gpu", v1.NodeSelectorOpExists)}}}}
			}},
		{name: "node labels from the flags match",
			node: func(n *Node) { n.Labels["topology.kubernetes.io/zone"] = "antarctica-east1" },
			pod: func(p *v1.Pod) {
				p.Spec.Affinity = requiredAffinity(expr("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "antarctica-east1"))
			}},

		// Host ports.
		{name: "a host port taken on 0.0.0.0 is NodePorts",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod:      func(p *v1.Pod) { withHostPort(p, "", "TCP", 8080) },
			reason:   "NodePorts", message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		{name: "a host port on another protocol is admitted",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod:      func(p *v1.Pod) { withHostPort(p, "", "UDP", 8080) }},
		{name: "a host port on an IP clashes with 0.0.0.0",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod:      func(p *v1.Pod) { withHostPort(p, "127.0.0.1", "TCP", 8080) },
			reason:   "NodePorts"},
		{name: "a host port on 0.0.0.0 clashes with one on an IP",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "127.0.0.1", "TCP", 8080)},
			pod:      func(p *v1.Pod) { withHostPort(p, "0.0.0.0", "", 8080) },
			reason:   "NodePorts"},
		{name: "host ports on two IPs are admitted",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "127.0.0.1", "TCP", 8080)},
			pod:      func(p *v1.Pod) { withHostPort(p, "127.0.0.2", "TCP", 8080) }},
		{name: "an init container's host port does not count",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox",
					Ports: []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}}}
			}},

		// Sysctls.
		{name: "a safe sysctl is admitted",
			pod: func(p *v1.Pod) { sysctls(p, "net.ipv4.ip_unprivileged_port_start", "kernel.shm_rmid_forced") }},
		{name: "a safe sysctl written with slashes is admitted",
			pod: func(p *v1.Pod) { sysctls(p, "net/ipv4/tcp_syncookies") }},
		{name: "an unsafe sysctl is SysctlForbidden",
			pod:    func(p *v1.Pod) { sysctls(p, "kernel.msgmax") },
			reason: "SysctlForbidden", message: `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{name: "an unsafe sysctl allowed by a pattern is admitted",
			node: func(n *Node) { n.AllowedUnsafeSysctls = []string{"kernel.msg*"} },
			pod:  func(p *v1.Pod) { sysctls(p, "kernel.msgmax") }},
		{name: "an unsafe sysctl allowed by name is admitted",
			node: func(n *Node) { n.AllowedUnsafeSysctls = []string{"net.core.somaxconn"} },
			pod:  func(p *v1.Pod) { sysctls(p, "net.core.somaxconn") }},
		{name: "a net sysctl with hostNetwork is SysctlForbidden",
			pod: func(p *v1.Pod) {
				p.Spec.HostNetwork = true
				sysctls(p, "net.ipv4.tcp_syncookies")
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled`},
		{name: "an ipc sysctl with hostIPC is SysctlForbidden",
			pod: func(p *v1.Pod) {
				p.Spec.HostIPC = true
				sysctls(p, "kernel.shm_rmid_forced")
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled`},
		{name: "an allowed unsafe net sysctl with hostNetwork is SysctlForbidden",
			node: func(n *Node) { n.AllowedUnsafeSysctls = []string{"net.core.*"} },
			pod: func(p *v1.Pod) {
				p.Spec.HostNetwork = true
				sysctls(p, "net.core.somaxconn")
			},
			reason: "SysctlForbidden"},
		{name: "a kernel-gated sysctl on an older kernel is SysctlForbidden",
			node:   func(n *Node) { n.KernelVersion = "4.14.300" },
			pod:    func(p *v1.Pod) { sysctls(p, "net.ipv4.tcp_rmem") },
			reason: "SysctlForbidden", message: `forbidden sysctl: "net.ipv4.tcp_rmem" not allowlisted`},
		{name: "a kernel-gated sysctl on a new enough kernel is admitted",
			node: func(n *Node) { n.KernelVersion = "4.15.0-20-generic" },
			pod:  func(p *v1.Pod) { sysctls(p, "net.ipv4.tcp_rmem", "net.ipv4.tcp_fin_timeout") }},
		{name: "a kernel-gated sysctl on an unknown kernel is SysctlForbidden",
			node:   func(n *Node) { n.KernelVersion = "" },
			pod:    func(p *v1.Pod) { sysctls(p, "net.ipv4.tcp_keepalive_time") },
			reason: "SysctlForbidden"},

		// Operating system.
		{name: "spec.os windows is PodOSNotSupported",
			pod:    func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} },
			reason: "PodOSNotSupported", message: "Failed to admit pod as the OS field doesn't match node OS"},
		{name: "spec.os linux is admitted",
			pod: func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Linux} }},
		{name: "a kubernetes.io/os pod label of another OS is PodOSSelectorNodeLabelDoesNotMatch",
			pod:    func(p *v1.Pod) { p.Labels = map[string]string{v1.LabelOSStable: "windows"} },
			reason: "PodOSSelectorNodeLabelDoesNotMatch", message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},

		// AppArmor.
		{name: "a RuntimeDefault AppArmor profile without AppArmor is AppArmor",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
			},
			reason: "AppArmor", message: "Cannot enforce AppArmor: AppArmor is not enabled on the host"},
		{name: "a pod-level Localhost AppArmor profile without AppArmor is AppArmor",
			pod: func(p *v1.Pod) {
				p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: localhost("k8s-apparmor-example-deny-write")}
			},
			reason: "AppArmor"},
		{name: "an AppArmor annotation without AppArmor is AppArmor",
			pod: func(p *v1.Pod) {
				p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/main": "localhost/deny-write"}
			},
			reason: "AppArmor"},
		{name: "an Unconfined AppArmor profile without AppArmor is admitted",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}}
				p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/main": "unconfined"}
			}},
		{name: "a RuntimeDefault AppArmor profile with AppArmor is admitted",
			node: func(n *Node) { n.AppArmorEnabled = true },
			pod: func(p *v1.Pod) {
				p.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/main": "runtime/default"}
			}},
		{name: "a Localhost AppArmor profile without a name is AppArmor",
			node: func(n *Node) { n.AppArmorEnabled = true },
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost}}
			},
			reason: "AppArmor"},

		// Scheduling gates.
		{name: "scheduling gates are SchedulingGated",
			pod: func(p *v1.Pod) {
				p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/foo"}, {Name: "example.com/bar"}}
			},
			reason: "SchedulingGated", message: "pod has scheduling gates example.com/foo, example.com/bar, which only a scheduler and its controllers handle; podrun never runs a gated pod"},

		// The order of the handlers.
		{name: "scheduling gates come before everything",
			pod: func(p *v1.Pod) {
				p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "g"}}
				sysctls(p, "kernel.msgmax")
			},
			reason: "SchedulingGated"},
		{name: "sysctls come before the predicates",
			pod: func(p *v1.Pod) {
				sysctls(p, "kernel.msgmax")
				p.Spec.OS = &v1.PodOS{Name: v1.Windows}
			},
			reason: "SysctlForbidden"},
		{name: "the OS comes before resources",
			pod: func(p *v1.Pod) {
				p.Spec.OS = &v1.PodOS{Name: v1.Windows}
				p.Spec.Containers[0].Resources.Requests = requests("cpu", "3")
			},
			reason: "PodOSNotSupported"},
		{name: "resources come before node affinity",
			pod: func(p *v1.Pod) {
				p.Spec.NodeSelector = map[string]string{"gpu": "yes"}
				p.Spec.Containers[0].Resources.Requests = requests("cpu", "3")
			},
			reason: "OutOfcpu"},
		{name: "node affinity comes before the node name",
			pod: func(p *v1.Pod) {
				p.Spec.NodeSelector = map[string]string{"gpu": "yes"}
				p.Spec.NodeName = "node2"
			},
			reason: "NodeAffinity"},
		{name: "the node name comes before host ports",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod: func(p *v1.Pod) {
				withHostPort(p, "", "TCP", 8080)
				p.Spec.NodeName = "node2"
			},
			reason: "NodeName"},
		{name: "host ports come before AppArmor",
			admitted: []*v1.Pod{withHostPort(podRequesting("a"), "", "TCP", 8080)},
			pod: func(p *v1.Pod) {
				withHostPort(p, "", "TCP", 8080)
				p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
			},
			reason: "NodePorts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, node := admitBasePod(), admitNode()
			if tt.pod != nil {
				tt.pod(pod)
			}
			if tt.node != nil {
				tt.node(&node)
			}
			got := admitPod(pod, node, tt.admitted)
			if tt.reason == "" {
				if got != nil {
					t.Fatalf("rejected: %v, want admitted", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("admitted, want %s", tt.reason)
			}
			if got.Reason != tt.reason {
				t.Errorf("reason %q (%s), want %q", got.Reason, got.Message, tt.reason)
			}
			if !strings.HasPrefix(got.Message, "Pod was rejected: ") {
				t.Errorf("message %q does not start with %q", got.Message, "Pod was rejected: ")
			}
			if tt.message != "" && got.Message != "Pod was rejected: "+tt.message {
				t.Errorf("message\n  %q\nwant\n  %q", got.Message, "Pod was rejected: "+tt.message)
			}
			if got.Namespace != "default" || got.Name != "web" {
				t.Errorf("names the pod %s/%s, want default/web", got.Namespace, got.Name)
			}
		})
	}
}

func TestAdmitPodRequests(t *testing.T) {
	tests := []struct {
		name string
		pod  func(p *v1.Pod)
		want map[v1.ResourceName]int64
	}{
		{name: "containers add up",
			pod: func(p *v1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, initCtr("b", "cpu", "200m", "memory", "1Mi", "example.com/x", "2"))
			},
			want: map[v1.ResourceName]int64{"cpu": 300, "memory": 64<<20 + 1<<20, "example.com/x": 2}},
		{name: "the largest init container wins per resource",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{initCtr("i1", "cpu", "500m"), initCtr("i2", "memory", "128Mi")}
			},
			want: map[v1.ResourceName]int64{"cpu": 500, "memory": 128 << 20}},
		{name: "sidecars accumulate and the init containers after them carry them",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{
					initCtr("i0", "cpu", "250m"),
					sidecar("s1", "cpu", "100m"),
					initCtr("i1", "cpu", "300m"),
					sidecar("s2", "cpu", "100m"),
					initCtr("i2", "cpu", "250m"),
				}
			},
			// regular 100 + sidecars 200 = 300; i0 250; i1 300+100 = 400; i2 250+200 = 450
			want: map[v1.ResourceName]int64{"cpu": 450, "memory": 64 << 20}},
		{name: "sidecars alone add to the containers",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{sidecar("s1", "cpu", "100m", "memory", "16Mi")}
			},
			want: map[v1.ResourceName]int64{"cpu": 200, "memory": 80 << 20}},
		{name: "pod-level requests replace cpu and memory, not others",
			pod: func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = requests("cpu", "100m", "memory", "64Mi", "ephemeral-storage", "1Gi")
				p.Spec.Resources = &v1.ResourceRequirements{Requests: requests("cpu", "1", "memory", "1Gi")}
			},
			want: map[v1.ResourceName]int64{"cpu": 1000, "memory": 1 << 30, "ephemeral-storage": 1 << 30}},
		{name: "the overhead comes on top",
			pod: func(p *v1.Pod) {
				p.Spec.InitContainers = []v1.Container{initCtr("i", "cpu", "1")}
				p.Spec.Overhead = requests("cpu", "50m", "memory", "10Mi")
			},
			want: map[v1.ResourceName]int64{"cpu": 1050, "memory": 74 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := admitBasePod()
			tt.pod(pod)
			got := admissionRequests(pod)
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s = %d, want %d", name, got[name], want)
				}
			}
			for name, n := range got {
				if _, ok := tt.want[name]; !ok && n != 0 {
					t.Errorf("unexpected %s = %d", name, n)
				}
			}
		})
	}
}

func TestAdmitPodsInOrder(t *testing.T) {
	a := podRequesting("a", "cpu", "1500m")
	b := podRequesting("b", "cpu", "1") // does not fit after a
	c := podRequesting("c", "cpu", "500m")
	d := podRequesting("d", "cpu", "1m") // does not fit after a and c
	rejected := Admit([]*v1.Pod{a, b, c, d}, admitNode())
	if len(rejected) != 2 || rejected[0].Name != "b" || rejected[1].Name != "d" {
		t.Fatalf("rejected %v, want b and d", rejected)
	}
	if want := "used: 1500,"; !strings.Contains(rejected[0].Message, want) {
		t.Errorf("b: %q, want %q", rejected[0].Message, want)
	}
	if want := "used: 2000,"; !strings.Contains(rejected[1].Message, want) {
		t.Errorf("d: %q, want %q (a rejected pod takes no room)", rejected[1].Message, want)
	}

	err := JoinRejections(rejected)
	var ae *Error
	if !errors.As(err, &ae) || ae.Name != "b" {
		t.Fatalf("errors.As: %v", err)
	}
	want := "pod default/b: Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000 (reason OutOfcpu)"
	if first, _, _ := strings.Cut(err.Error(), "\n"); first != want {
		t.Errorf("error\n  %s\nwant\n  %s", first, want)
	}
	if st := ae.Status(); st.Phase != v1.PodFailed || st.Reason != "OutOfcpu" || st.Message != ae.Message {
		t.Errorf("status %+v", st)
	}
	if Admit([]*v1.Pod{a, c}, admitNode()) != nil {
		t.Errorf("a and c fit together")
	}
}
