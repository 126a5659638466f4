//go:build e2e

package e2e

// Admission end to end (runner/admit.go): each kubelet rejection reason
// exits 125 with the reason on stderr and nothing started, the same pod
// runs once the node matches, and the corpus rows that admission decides.

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// expectRejected checks a run that admission stopped: exit 125, the reason
// and the kubelet's message on stderr for each pod named, and nothing
// created (no root dir content, no sandbox of any pod of the run).
func expectRejected(t *testing.T, e *env, r result, reason string, pods ...string) {
	t.Helper()
	expectCode(t, r, 125)
	for _, name := range pods {
		want := fmt.Sprintf("/%s: Pod was rejected: ", name)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
	if !strings.Contains(r.stderr, "(reason "+reason+")") {
		t.Errorf("stderr lacks the reason %s\n%s", reason, r)
	}
	expectNothingCreated(t, e)
	for _, name := range pods {
		if n := sandboxesIn(t, e, name); n != 0 {
			t.Errorf("pod %s has %d sandboxes, want none", name, n)
		}
	}
}

func TestE2EAdmitReasons(t *testing.T) {
	t.Parallel()
	var manyPods []string
	for i := range 111 {
		manyPods = append(manyPods, fillTemplate(t, "admit/many.yaml", "NAME", fmt.Sprintf("admit-many-%03d", i)))
	}
	tests := []struct {
		name     string
		file     string // under testdata/e2e/admit; "" for the 111 pods
		flags    []string
		reason   string
		message  string // part of the message, "" = not checked
		rejected string // the rejected pod
	}{
		{name: "cpu", reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: ",
			file: "cpu.yaml", rejected: "admit-cpu"},
		{name: "cpu less system-reserved", reason: "OutOfcpu", message: "requested: 100, used: 0, capacity: 0",
			flags: []string{"--system-reserved", "cpu=1000"},
			file:  "cpu-small.yaml", rejected: "admit-cpu-small"},
		{name: "memory", reason: "OutOfmemory",
			file: "memory.yaml", rejected: "admit-memory"},
		{name: "ephemeral-storage", reason: "OutOfephemeral-storage",
			file: "ephemeral-storage.yaml", rejected: "admit-ephemeral-storage"},
		{name: "pods", reason: "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 110, capacity: 110",
			rejected: "admit-many-110"},
		{name: "extended resource", reason: "OutOfexample.com/dongle", message: "example.com/dongle, requested: 1, used: 0, capacity: 0",
			file: "extended-resource.yaml", rejected: "admit-extended-resource"},
		{name: "node name", reason: "NodeName", message: "Predicate NodeName failed: node(s) didn't match the requested node name",
			file: "node-name.yaml", rejected: "admit-node-name"},
		{name: "node selector", reason: "NodeAffinity", message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
			file: "node-selector.yaml", rejected: "admit-node-selector"},
		{name: "node affinity", reason: "NodeAffinity",
			file: "node-affinity.yaml", rejected: "admit-node-affinity"},
		{name: "node labels that do not match", reason: "NodeAffinity",
			flags: []string{"--node-labels", "disktype=hdd"},
			file:  "node-selector.yaml", rejected: "admit-node-selector"},
		{name: "host ports", reason: "NodePorts", message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
			file: "host-ports.yaml", rejected: "admit-port-b"},
		{name: "unsafe sysctl", reason: "SysctlForbidden", message: `forbidden sysctl: "kernel.msgmax" not allowlisted`,
			file: "sysctl-unsafe.yaml", rejected: "admit-sysctl-unsafe"},
		{name: "unsafe sysctl not allowed by the flag", reason: "SysctlForbidden",
			flags: []string{"--allowed-unsafe-sysctls", "kernel.shm*"},
			file:  "sysctl-unsafe.yaml", rejected: "admit-sysctl-unsafe"},
		{name: "net sysctl with host network", reason: "SysctlForbidden", message: `"net.ipv4.tcp_syncookies" not allowed with host net enabled`,
			file: "sysctl-net-hostnet.yaml", rejected: "admit-sysctl-net-hostnet"},
		{name: "spec.os", reason: "PodOSNotSupported", message: "Failed to admit pod as the OS field doesn't match node OS",
			file: "os.yaml", rejected: "admit-os"},
		{name: "os label", reason: "PodOSSelectorNodeLabelDoesNotMatch",
			file: "os-label.yaml", rejected: "admit-os-label"},
		{name: "scheduling gates", reason: "SchedulingGated", message: "pod has scheduling gates example.com/foo",
			file: "scheduling-gates.yaml", rejected: "admit-scheduling-gates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			path := testdata("admit/" + tt.file)
			if tt.file == "" {
				path = manifest(t, "pods.yaml", strings.Join(manyPods, "---\n"))
			}
			r := e.runPodrun(append([]string{"-f", path}, tt.flags...), "")
			expectRejected(t, e, r, tt.reason, tt.rejected)
			if tt.message != "" && !strings.Contains(r.stderr, tt.message) {
				t.Errorf("stderr lacks %q\n%s", tt.message, r)
			}
		})
	}
}

// TestE2EAdmitAppArmor runs a pod asking for the runtime's default AppArmor
// profile, which the kubelet refuses on a host without AppArmor (even
// RuntimeDefault), and one asking for Unconfined, which it runs.
func TestE2EAdmitAppArmor(t *testing.T) {
	t.Parallel()
	if hostHasAppArmor() {
		t.Skip("this host has AppArmor: the rejection needs a host without it")
	}
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("admit/apparmor-runtime-default.yaml")}, "")
	expectRejected(t, e, r, "AppArmor", "admit-apparmor")
	if want := "Cannot enforce AppArmor: AppArmor is not enabled on the host"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	r = e.runPodrun([]string{"-f", testdata("admit/apparmor-annotation.yaml")}, "")
	expectRejected(t, e, r, "AppArmor", "admit-apparmor")

	r = e.runPodrun([]string{"-f", testdata("admit/apparmor-unconfined.yaml")}, "")
	expectCode(t, r, 0)
}

// TestE2EAdmitNodeLabels runs the same pods rejected for their node
// selector and affinity once --node-labels gives the node the labels.
func TestE2EAdmitNodeLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pod := testdata("admit/node-labels.yaml")
	r := e.runPodrun([]string{"-f", pod}, "")
	expectRejected(t, e, r, "NodeAffinity", "admit-labels")

	r = e.runPodrun([]string{"-f", pod, "--node-labels", "disktype=ssd,rack=8"}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"-f", pod, "--node-labels", "disktype=ssd", "--node-labels", "rack=9"}, "")
	expectCode(t, r, 0)
}

// TestE2EAdmitAllowedUnsafeSysctls runs a pod with an unsafe IPC sysctl
// once --allowed-unsafe-sysctls allows it, and checks the container sees it.
func TestE2EAdmitAllowedUnsafeSysctls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pod := testdata("admit/sysctl-allowed.yaml")
	r := e.runPodrun([]string{"-f", pod, "--allowed-unsafe-sysctls", "kernel.msg*"}, "")
	expectCode(t, r, 0)
	if strings.TrimSpace(r.stdout) != "12345" {
		t.Errorf("kernel.msgmax in the pod %q, want 12345\n%s", r.stdout, r)
	}
}

// TestE2EAdmitOnePodRejectedNoneStarted runs a pod that fits with one that
// does not: neither starts.
func TestE2EAdmitOnePodRejectedNoneStarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{
		"-f", testdata("admit/fits.yaml"),
		"-f", testdata("admit/big.yaml"),
	}, "")
	expectRejected(t, e, r, "OutOfcpu", "admit-big")
	if n := sandboxesIn(t, e, "admit-fits"); n != 0 {
		t.Errorf("the pod that fits has %d sandboxes, want none", n)
	}
}

// TestE2EAdmitOutputJSON prints a rejected pod as the kubelet's status
// does: phase Failed, the reason and "Pod was rejected: ...".
func TestE2EAdmitOutputJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("admit/output-json.yaml")}, "")
	expectRejected(t, e, r, "NodeName", "admit-json")
	p := parsePod(t, r.stdout)
	want := "Pod was rejected: Predicate NodeName failed: node(s) didn't match the requested node name"
	if p.Status.Phase != v1.PodFailed || p.Status.Reason != "NodeName" || p.Status.Message != want {
		t.Errorf("status %+v, want Failed, NodeName, %q", p.Status, want)
	}
}

// TestE2EAdmitCorpus runs the corpus rows that admission decides, read in
// place from ../shared/corpus/website.
func TestE2EAdmitCorpus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		row, pod, reason string
		flags            []string
	}{
		{"pods/resource/cpu-request-limit-2.yaml", "cpu-demo-2", "OutOfcpu", nil},
		{"pods/resource/extended-resource-pod.yaml", "extended-resource-demo", "OutOfexample.com/dongle", nil},
		{"pods/resource/extended-resource-pod-2.yaml", "extended-resource-demo-2", "OutOfexample.com/dongle", nil},
		{"pods/assigning-pods-to-nodes-affinity.yaml", "with-node-affinity", "NodeAffinity", nil},
		{"pods/pod-with-scheduling-gates.yaml", "test-pod", "SchedulingGated", nil},
		{"pods/pod-with-affinity-anti-affinity.yaml", "with-affinity-anti-affinity", "", nil},
		{"pods/assigning-pods-to-nodes-affinity.yaml", "with-node-affinity", "", []string{"--node-labels", "topology.kubernetes.io/zone=antarctica-east1"}},
	} {
		name := tt.row
		if tt.flags != nil {
			name += " " + strings.Join(tt.flags, " ")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			args := append([]string{"-f", corpusPod(t, tt.row), "--timeout", "60s"}, tt.flags...)
			r := e.runPodrun(args, "")
			if tt.reason != "" {
				expectRejected(t, e, r, tt.reason, tt.pod)
				return
			}
			// Admitted: the pause stand-in runs until Ready, then podrun
			// tears it down.
			expectCode(t, r, 0)
			if strings.Contains(r.stderr, "Pod was rejected") {
				t.Errorf("rejected:\n%s", r)
			}
		})
	}
}
