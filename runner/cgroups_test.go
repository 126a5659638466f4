package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/cgroups/cgroupstest"
)

const cgTestUID = "1234-abcd"

// cgPod is a pod of UID cgTestUID with one container per resource spec
// (cgroupstest.Pod).
func cgPod(specs ...string) *v1.Pod { return cgroupstest.Pod(cgTestUID, specs...) }

func cgResources(spec string) v1.ResourceRequirements { return cgroupstest.Resources(spec) }

func fakeCgroups(t *testing.T, v2, useSystemd bool) (cgroups.System, string) {
	fake, root := cgroupstest.FakeFS(t, v2, useSystemd)
	return cgroups.System{NewManager: fake.NewManager, Rmdir: fake.Rmdir, Unified: fake.Unified}, root
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func readCgroupFile(t *testing.T, path string) string { return cgroupstest.ReadFile(t, path) }

// cgFacts are the facts of the cgroup runs: containerd with cgroupfs.
func cgFacts() Facts { return Facts{RuntimeName: "containerd", CgroupDriver: cgroups.DriverCgroupfs} }

// cgRunEnv is a fake runtime and run options with pod cgroups on a fake
// cgroup v1 filesystem.
func cgRunEnv(t *testing.T) (*fake.Server, *cri.Client, Options, cgroups.System, string) {
	t.Helper()
	cgsys, fsRoot := fakeCgroups(t, false, false)
	srv, ep := fake.Start(t)
	srv.SetSecond(time.Millisecond)
	srv.AddImages("busybox")
	rt, err := cri.Dial(context.Background(), ep, cri.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(resolv, []byte("nameserver 10.0.0.1\n"), 0o644)
	opts := Options{
		Config: Config{RootDir: t.TempDir(), ResolvConf: resolv, CgroupRoot: cgroups.DefaultRoot},
		Wiring: Wiring{Stdout: io.Discard, Stderr: io.Discard},
	}
	return srv, rt, opts, cgsys, fsRoot
}

func cgRunPod(name string, cmd ...string) *v1.Pod {
	p := cgPod("500m/500m/128Mi/128Mi")
	p.Name, p.UID = name, types.UID(name+"-uid")
	grace := int64(2)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Spec.DNSPolicy = v1.DNSDefault
	c := &p.Spec.Containers[0]
	c.Image, c.Command, c.ImagePullPolicy = "busybox", cmd, v1.PullIfNotPresent
	return p
}

func TestCgroupRunDownAndReclaim(t *testing.T) {
	_, rt, opts, cgsys, fsRoot := cgRunEnv(t)
	ctx := context.Background()
	cpuDir := func(uid string) string { return filepath.Join(fsRoot, "cpu", "podrun", "pod"+uid) }

	// A detached pod: its cgroup is there, with its resources, and is the
	// sandbox's CgroupParent; `podrun down` removes it.
	opts.Detach, opts.Wait = true, WaitReady
	res, err := runPods(ctx, rt, cgFacts(), []*v1.Pod{cgRunPod("kept", "sleep", "infinity")}, opts, cgsys)
	if err != nil || !res.Pods[0].Reached() {
		t.Fatalf("Run: %v / %+v", err, res.Pods[0])
	}
	if got := readCgroupFile(t, filepath.Join(cpuDir("kept-uid"), "cpu.cfs_quota_us")); got != "50000" {
		t.Errorf("cpu.cfs_quota_us = %s, want 50000", got)
	}
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil || len(sbs) != 1 {
		t.Fatalf("sandboxes: %v, %v", sbs, err)
	}
	if got := sbs[0].Annotations[annotationCgroupParent]; got != "/podrun/podkept-uid" {
		t.Errorf("cgroup annotation = %q", got)
	}
	if err := down(ctx, rt, cgsys, []string{"kept"}, false, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(fsRoot, "cpu", "podrun")) || exists(filepath.Join(fsRoot, "memory", "podrun")) {
		t.Error("podrun down left the pod cgroup or the root")
	}

	// An orphan of a dead podrun is reclaimed with its cgroup.
	opts.Owner = Owner{RunID: "dead", PID: 1 << 30, PIDStart: 1}
	if _, err := runPods(ctx, rt, cgFacts(), []*v1.Pod{cgRunPod("orphan", "sleep", "infinity")}, opts, cgsys); err != nil {
		t.Fatal(err)
	}
	if !exists(cpuDir("orphan-uid")) {
		t.Fatal("the orphan has no cgroup")
	}
	opts.Owner, opts.Detach, opts.Wait = Owner{}, false, WaitAuto
	next := cgRunPod("next", "sh", "-c", "exit 0")
	next.Spec.RestartPolicy = v1.RestartPolicyNever
	res, err = runPods(ctx, rt, cgFacts(), []*v1.Pod{next}, opts, cgsys)
	if err != nil || !res.Pods[0].Reached() {
		t.Fatalf("Run: %v / %+v", err, res.Pods[0])
	}
	if exists(cpuDir("orphan-uid")) || exists(cpuDir("next-uid")) {
		t.Errorf("after the run: orphan cgroup %v, next cgroup %v; want both gone", exists(cpuDir("orphan-uid")), exists(cpuDir("next-uid")))
	}
	if exists(filepath.Join(fsRoot, "cpu", "podrun")) {
		t.Error("the root is left after the last pod")
	}
}

// containerd 1.6 and 1.7 answer no RuntimeConfig; where their status
// info has SystemdCgroup = true (what kubeadm sets up), podrun names the
// pod cgroup a systemd slice and hands the runtime that slice as the
// sandbox's parent — before, it assumed cgroupfs and handed it
// /podrun/pod<uid>, which runc refused. One Status and one RuntimeConfig,
// as before; ps shows the pod cgroup, the driver and where it came from.
func TestContainerd16SystemdPodCgroups(t *testing.T) {
	srv, rt, opts, _, _ := cgRunEnv(t)
	srv.SetStatusInfo(statusInfoFile(t, "status-containerd-1.6-systemd.json"))
	ctx := context.Background()
	srv.ResetCalls()
	facts, err := GatherFacts(ctx, rt, []*v1.Pod{factsPod(true)}, factsConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	const source = `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true`
	if facts.CgroupDriver != cgroups.DriverSystemd || facts.CgroupDriverSource.String() != source {
		t.Fatalf("driver %q, %s; want systemd, %s", facts.CgroupDriver, facts.CgroupDriverSource, source)
	}
	if calls := srv.Calls(); !slices.Equal(calls, []string{"Status", "RuntimeConfig"}) {
		t.Errorf("calls %v, want one Status and one RuntimeConfig", calls)
	}
	srv.ResetCalls()
	c := factsConfig(t)
	c.CgroupDriver = cgroups.DriverCgroupfs
	if f, err := GatherFacts(ctx, rt, []*v1.Pod{factsPod(true)}, c); err != nil || f.CgroupDriver != cgroups.DriverCgroupfs ||
		f.CgroupDriverSource.String() != "from --cgroup-driver" || slices.Contains(srv.Calls(), "RuntimeConfig") {
		t.Errorf("with --cgroup-driver: %q, %s, %v; calls %v", f.CgroupDriver, f.CgroupDriverSource, err, srv.Calls())
	}

	cgsys, _ := fakeCgroups(t, false, true)
	opts.Detach, opts.Wait = true, WaitReady
	res, err := runPods(ctx, rt, facts, []*v1.Pod{cgRunPod("slice", "sleep", "infinity")}, opts, cgsys)
	if err != nil || !res.Pods[0].Reached() {
		t.Fatalf("Run: %v / %+v", err, res.Pods[0])
	}
	t.Cleanup(func() { down(ctx, rt, cgsys, []string{"slice"}, false, func(string, ...any) {}) })
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil || len(sbs) != 1 {
		t.Fatalf("sandboxes: %v, %v", sbs, err)
	}
	const slice = "/podrun.slice/podrun-podslice_uid.slice"
	if got := srv.SandboxConfig(sbs[0].Id).GetLinux().GetCgroupParent(); got != slice {
		t.Errorf("the sandbox's cgroup parent %q, want the slice %q", got, slice)
	}
	items, err := NewPodLister(rt).List(ctx)
	if err != nil || len(items) != 1 {
		t.Fatalf("ps: %v, %v", items, err)
	}
	a := items[0].Pod.Annotations
	if a[annotationCgroupParent] != slice || a[annotationListedCgroupDriver] != "systemd" || a[annotationListedCgroupDriverSource] != source {
		t.Errorf("ps annotations %v, want the slice, systemd and %s", a, source)
	}
}

// The systemd driver makes pod slices through systemd: on a host systemd
// does not run, the run stops before anything is created, saying which
// driver, where it came from, and the flag; before, every pod failed in
// turn with the cgroup library's words (on the host; the fake cgroup
// filesystem made the slices regardless).
func TestRunRefusesSystemdDriverWithoutSystemd(t *testing.T) {
	srv, rt, opts, _, _ := cgRunEnv(t)
	cgsys, fsRoot := fakeCgroups(t, false, true)
	cgsys.SystemdRunning = func() bool { return false }
	facts := Facts{RuntimeName: "containerd", CgroupDriver: cgroups.DriverSystemd,
		CgroupDriverSource: CgroupDriverSource{From: DriverFromStatusInfo, Said: `containerd's default runtime "runc": SystemdCgroup = true`}}
	srv.ResetCalls()
	_, err := runPods(context.Background(), rt, facts, []*v1.Pod{cgRunPod("p", "sleep", "infinity")}, opts, cgsys)
	want := `cgroup driver systemd (from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true): ` +
		"systemd is not running on this host (no /run/systemd/system), and the systemd cgroup driver makes the pod cgroups as slices through it; " +
		"if the runtime does not use systemd cgroups either, run podrun with --cgroup-driver=cgroupfs"
	if err == nil || err.Error() != want {
		t.Errorf("run: %v\nwant %s", err, want)
	}
	if len(srv.Calls()) != 0 || exists(filepath.Join(fsRoot, "cpu", "podrun.slice")) {
		t.Errorf("calls %v, podrun.slice made %v; want nothing asked or made", srv.Calls(), exists(filepath.Join(fsRoot, "cpu", "podrun.slice")))
	}
}

// A sandbox the runtime refuses for a cgroup path of the other driver's
// kind ends the pod with the runtime's words, the driver podrun used,
// where it came from, and the flag.
func TestSandboxCgroupPathRefusalNamesTheDriver(t *testing.T) {
	srv, rt, opts, cgsys, _ := cgRunEnv(t)
	srv.FailNext("RunPodSandbox", status.Error(codes.Unknown, `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/podrun/podp-uid/abc" instead: unknown`))
	facts := cgFacts()
	facts.CgroupDriverSource = CgroupDriverSource{From: DriverAssumed}
	res, err := runPods(context.Background(), rt, facts, []*v1.Pod{cgRunPod("p", "sleep", "infinity")}, opts, cgsys)
	if err != nil {
		t.Fatal(err)
	}
	want := "podrun named the pod cgroup for the cgroupfs cgroup driver (assumed: the runtime did not say), and the runtime uses systemd: run podrun with --cgroup-driver=systemd"
	if res.Pods[0].Outcome != OutcomeError || res.Pods[0].Err == nil || !strings.HasPrefix(res.Pods[0].Err.Error(), "creating the pod sandbox: ") ||
		!strings.HasSuffix(res.Pods[0].Err.Error(), "; "+want) {
		t.Errorf("pod: %v %v\nwant the runtime's error and %q", res.Pods[0].Outcome, res.Pods[0].Err, want)
	}
}
