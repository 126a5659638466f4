//go:build e2e

package e2e

// Pod cgroups end to end (runner/cgroups.go), on the testbed's cgroup v1
// (hybrid) with the cgroupfs driver: the pod cgroup under --cgroup-root by
// QoS class with the pod-level limits while the pod runs, the container's
// own limits as the container sees them, and nothing left once the pod is
// gone.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// cgroupControllers are the hierarchies every pod cgroup is made in and must
// be gone from after the run: the v1 controllers, and the hybrid mode's
// cgroup v2 hierarchy ("unified"), where the library makes it too.
var cgroupControllers = []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "devices", "freezer", "blkio", "systemd", "unified"}

// cgroupFile reads one value of a host cgroup file.
func cgroupFile(t *testing.T, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{cgroupV1}, parts...)...))
	if err != nil {
		t.Errorf("reading host cgroup file: %v", err)
		return ""
	}
	return strings.TrimSpace(string(b))
}

// expectCgroupFiles fails the test unless each host cgroup file (a path
// below the v1 mount) holds its value.
func expectCgroupFiles(t *testing.T, want map[string]string) {
	t.Helper()
	for file, w := range want {
		if got := cgroupFile(t, file); got != w {
			t.Errorf("host %s = %q, want %s", file, got, w)
		}
	}
}

// expectCgroupGone fails the test while the cgroup rel (below every v1
// hierarchy) exists in any of them.
func expectCgroupGone(t *testing.T, rel string) {
	t.Helper()
	for _, ctl := range cgroupControllers {
		if _, err := os.Stat(filepath.Join(cgroupV1, ctl, rel)); err == nil {
			t.Errorf("cgroup %s left behind in %s", rel, ctl)
		}
	}
}

// TestE2ECgroupGuaranteed: a Guaranteed pod's container sees its memory and
// cpu limits in its own cgroup; the pod cgroup is /podrun/pod<uid> with the
// pod-level values while the pod runs, and is gone after the run.
func TestE2ECgroupGuaranteed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := "e2e-cgroup-" + randomSuffix(t)
	p := e.startPodrun([]string{"-f", fromTemplate(t, "cgroups/guaranteed.yaml", "UID", uid)}, "")
	p.waitStdout("done-e2e-cgroup-g", 60*time.Second)

	// While the container sleeps: the pod cgroup on the host.
	pod := filepath.Join("podrun", "pod"+uid)
	expectCgroupFiles(t, map[string]string{
		"cpu/" + pod + "/cpu.shares":               "512",
		"cpu/" + pod + "/cpu.cfs_quota_us":         "50000",
		"cpu/" + pod + "/cpu.cfs_period_us":        "100000",
		"memory/" + pod + "/memory.limit_in_bytes": "134217728",
	})
	r := p.result(defaultRunTimeout)
	expectCode(t, r, 0)

	// What the container saw: its own cgroup, below the pod's.
	for _, want := range []string{"mem=134217728", "quota=50000", "period=100000", "shares=512", ":memory:/podrun/pod" + uid + "/"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("container output lacks %q\n%s", want, r)
		}
	}
	expectCgroupGone(t, pod)
}

// TestE2ECgroupQOSClasses: a Burstable and a BestEffort pod land under
// burstable/ and besteffort/ of --cgroup-root, with the kubelet's shares on
// the pods and the QoS cgroups; the whole root is gone after the run, as it
// lies in podrun's own hierarchy (/podrun/...).
func TestE2ECgroupQOSClasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	suffix := randomSuffix(t)
	root := "/podrun/e2e-" + suffix
	bUID, eUID := "e2e-burstable-"+suffix, "e2e-besteffort-"+suffix
	m := fromTemplate(t, "cgroups/qos.yaml", "BURSTABLE_UID", bUID, "BESTEFFORT_UID", eUID)
	p := e.startPodrun([]string{"--cgroup-root", root, "-f", m}, "")
	p.waitStdout("done-e2e-cgroup-b", 60*time.Second)
	p.waitStdout("done-e2e-cgroup-e", 30*time.Second)

	rel := strings.TrimPrefix(root, "/")
	bPod := filepath.Join(rel, "burstable", "pod"+bUID)
	ePod := filepath.Join(rel, "besteffort", "pod"+eUID)
	expectCgroupFiles(t, map[string]string{
		// Burstable: shares from the request, no quota (no cpu limit),
		// the memory limit (every container has one).
		"cpu/" + bPod + "/cpu.shares":               "102",
		"cpu/" + bPod + "/cpu.cfs_quota_us":         "-1",
		"memory/" + bPod + "/memory.limit_in_bytes": "67108864",
		"cpu/" + rel + "/burstable/cpu.shares":      "102",
		// BestEffort: shares 2, on the pod and its QoS cgroup.
		"cpu/" + ePod + "/cpu.shares":           "2",
		"cpu/" + rel + "/besteffort/cpu.shares": "2",
	})
	if got := cgroupFile(t, "memory", ePod, "memory.limit_in_bytes"); got == "67108864" {
		t.Errorf("the BestEffort pod got a memory limit")
	}
	expectCode(t, p.result(defaultRunTimeout), 0)
	expectCgroupGone(t, rel)
}

// TestE2ECgroupQOSCorpus runs the corpus row pods/qos/qos-pod.yaml (read in
// place) in qos-example: Guaranteed, its pod cgroup directly under /podrun
// with the pod's limits while it runs detached, gone after `podrun down`.
func TestE2ECgroupQOSCorpus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.downOnCleanup("qos-example/qos-demo")
	r := e.runPodrun([]string{"-d", "-q", "-o", "json", "--timeout", "60s", "-f", corpusPod(t, "pods/qos/qos-pod.yaml")}, "")
	expectCode(t, r, 0)
	pod := parsePod(t, r.stdout)
	if pod.Namespace != "qos-example" || pod.Status.QOSClass != v1.PodQOSGuaranteed {
		t.Fatalf("pod %s/%s qosClass %q, want qos-example and Guaranteed", pod.Namespace, pod.Name, pod.Status.QOSClass)
	}
	rel := filepath.Join("podrun", "pod"+string(pod.UID))
	expectCgroupFiles(t, map[string]string{
		"cpu/" + rel + "/cpu.shares":               "716",
		"cpu/" + rel + "/cpu.cfs_quota_us":         "70000",
		"memory/" + rel + "/memory.limit_in_bytes": "209715200",
	})
	expectCode(t, e.runPodrun([]string{"down", "qos-example/qos-demo"}, ""), 0)
	expectCgroupGone(t, rel)
}

// TestE2ECgroupConcurrentRuns: podruns running side by side share the root
// and QoS cgroups, and each removes them once they look empty to it; a
// podrun making its pod cgroup while another one's teardown removes the
// QoS cgroup still runs its pod. Several podruns each run short BestEffort
// pods back to back under one root; every run succeeds and the root is
// gone at the end.
func TestE2ECgroupConcurrentRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const procs, rounds = 6, 6
	root := "/podrun/e2e-concurrent-" + randomSuffix(t)
	errs := make(chan string, procs*rounds)
	done := make(chan struct{}, procs)
	for i := range procs {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range rounds {
				name := fmt.Sprintf("e2e-cgroup-conc-%d-%d", i, j)
				m := fromTemplate(t, "cgroups/concurrent.yaml", "NAME", name)
				r := e.startPodrun([]string{"-q", "--cgroup-root", root, "-f", m}, "").result(defaultRunTimeout)
				if r.code != 0 {
					errs <- fmt.Sprintf("%s: exit %d\n%s", name, r.code, r)
				}
			}
		}()
	}
	for range procs {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	expectCgroupGone(t, strings.TrimPrefix(root, "/"))
}

// TestE2ECgroupReclaimedWithoutSandbox: a podrun killed after making a pod's
// data dir and cgroup, before its sandbox, leaves a cgroup no sandbox
// names. The next run reclaims the data dir (its owner is gone) and, from
// the owner record, the cgroup too. The leftovers are made by hand as that
// podrun would have left them.
func TestE2ECgroupReclaimedWithoutSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := "e2e-reclaim-cg-" + randomSuffix(t)
	rel := "podrun/besteffort/pod" + uid
	for _, ctl := range []string{"cpu", "memory"} {
		if err := os.MkdirAll(filepath.Join(cgroupV1, ctl, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, ctl := range []string{"cpu", "memory"} {
			os.Remove(filepath.Join(cgroupV1, ctl, rel))
		}
	})
	dead := 0
	for pid := 4194000; pid > 1000; pid-- {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			dead = pid
			break
		}
	}
	dir := filepath.Join(e.root, "pods", uid)
	if err := os.MkdirAll(filepath.Join(dir, "volumes"), 0o750); err != nil {
		t.Fatal(err)
	}
	record := fmt.Sprintf(`{"RunID":"dead","PID":%d,"PIDStart":1,"namespace":"default","name":"gone","cgroup":"/%s"}`, dead, rel)
	if err := os.WriteFile(filepath.Join(dir, "podrun-owner.json"), []byte(record), 0o640); err != nil {
		t.Fatal(err)
	}
	expectCode(t, e.runPodrun([]string{"-q", "-f", testdata("run/exit0.yaml")}, ""), 0)
	expectCgroupGone(t, rel)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the dead podrun's data dir %s is left", dir)
	}
}
