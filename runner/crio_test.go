package runner

// What differs on CRI-O (docs/cri-o.md), one test per difference, against
// the fake CRI set to answer as CRI-O does: the facts podrun gathers, its
// pod cgroups under the systemd driver, the runtime handlers and the log
// files. The differences seen in a whole run are in crio_run_test.go.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner/cgroups"
)

// crioStatusInfo is a verbose Status's Info as CRI-O answers it
// (server/runtime_status.go createRuntimeInfo): one key, "config", with
// the pause image and CRI-O's [crio.runtime] table; nothing about CNI.
func crioStatusInfo() map[string]string {
	return map[string]string{"config": `{"sandboxImage":"registry.k8s.io/pause:3.10.1","crio":{"NoPivot":false,"SELinux":false,"DefaultRuntime":"crun","ConmonCgroup":"","CgroupManagerName":"systemd"}}`}
}

// crioHandlers are a verbose Status's runtime handlers as CRI-O reports
// them: each configured runtime by name, and the default one again with
// an empty name (server/runtime_status.go).
func crioHandlers(userns bool) []*runtimeapi.RuntimeHandler {
	h := func(name string, userns bool) *runtimeapi.RuntimeHandler {
		return &runtimeapi.RuntimeHandler{Name: name, Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true, UserNamespaces: userns}}
	}
	return []*runtimeapi.RuntimeHandler{h("crun", userns), h("", userns), h("runc", false)}
}

// TestCRIOFacts: from CRI-O's Version, Status and RuntimeConfig podrun
// learns the runtime's name (the scheme of container IDs, "cri-o://"),
// the systemd cgroup driver it reports by default, and its handlers; its
// Status says nothing of CNI, so the pod network's files are checked where
// --cni-conf-dir and --cni-bin-dir say, and without them not at all:
// NetworkReady decides, as for the kubelet.
func TestCRIOFacts(t *testing.T) {
	srv, ep := fake.Start(t)
	confDir, binDir := srv.FakeCNI(t)
	srv.SetVersion("cri-o", "1.34.0") // asked when podrun dials
	rt, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	srv.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD)
	srv.SetStatusInfo(crioStatusInfo())
	srv.SetRuntimeHandlers(crioHandlers(true))
	c := factsConfig(t)
	c.CNI.ConfDir, c.CNI.BinDirs = confDir, []string{binDir}
	f, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, c)
	if err != nil {
		t.Fatalf("GatherFacts: %v", err)
	}
	if f.RuntimeName != "cri-o" || f.RuntimeVersion != "1.34.0" || f.CgroupDriver != cgroups.DriverSystemd || len(f.RuntimeHandlers) != 3 {
		t.Errorf("facts %+v", f)
	}

	// A flag's dir is checked.
	c.CNI.ConfDir = t.TempDir()
	_, err = GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, c)
	if err == nil || !strings.Contains(err.Error(), "in "+c.CNI.ConfDir+" (from --cni-conf-dir)") {
		t.Errorf("GatherFacts with an empty --cni-conf-dir: %v, want it refused", err)
	}

	// Without the flags, no CNI files are looked for (CRI-O's network_dir
	// may be anywhere): NetworkReady decides.
	if _, err := GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, factsConfig(t)); err != nil {
		t.Errorf("GatherFacts without CNI flags: %v, want no file check", err)
	}
	srv.SetCondition(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "no CNI configuration file in /etc/crio/net.d/")
	_, err = GatherFacts(context.Background(), rt, []*v1.Pod{factsPod(false)}, factsConfig(t))
	if nr := (*cri.NotReadyError)(nil); !errors.As(err, &nr) || nr.Condition != runtimeapi.NetworkReady {
		t.Errorf("GatherFacts with NetworkReady false: %v, want the runtime's NetworkReady", err)
	}
}

// TestCRIOSystemdPodCgroups: with the systemd driver CRI-O reports, pod
// cgroups are slices and the sandbox's cgroup parent is one (CRI-O
// refuses a parent that is not a slice under systemd).
func TestCRIOSystemdPodCgroups(t *testing.T) {
	srv, rt, opts, _, _ := cgRunEnv(t)
	srv.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD)
	cgsys, _ := fakeCgroups(t, false, true)
	ctx := context.Background()
	driver, _, err := cgroupDriver(ctx, rt, "", nil)
	if err != nil || driver != cgroups.DriverSystemd {
		t.Fatalf("cgroupDriver = %q, %v", driver, err)
	}
	facts := Facts{RuntimeName: "cri-o", CgroupDriver: driver}
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
	if got, want := sbs[0].Annotations[annotationCgroupParent], "/podrun.slice/podrun-pod"+"slice_uid.slice"; got != want {
		t.Errorf("cgroup parent %q, want the slice %q", got, want)
	}
}

// TestCRIORuntimeHandlers: CRI-O reports its default handler twice, by
// name and as "", which is the one podrun (like the kubelet without a
// RuntimeClass) asks about; a refusal does not speak of containerd.
func TestCRIORuntimeHandlers(t *testing.T) {
	f := false
	pods := []*v1.Pod{usernsPod("a", &f)}
	if err := checkUserns(pods, nil, crioHandlers(true)); err != nil {
		t.Errorf("user namespaces refused on CRI-O's default handler: %v", err)
	}
	err := checkUserns(pods, nil, crioHandlers(false))
	if err == nil || !strings.Contains(err.Error(), "the runtime's default handler does not support user namespaces") ||
		strings.Contains(err.Error(), "containerd") {
		t.Errorf("refusal: %v", err)
	}
}

// TestCRIOLogFormat: conmon writes the CRI log format with its local time
// and offset ("2026-05-01T10:00:00.123456789+02:00") where containerd
// writes UTC ("...Z"), and cuts lines at 8 KiB where containerd does at
// 16 KiB: podrun reads the stream, the tag and the text and never the
// time, so both give the same output.
func TestCRIOLogFormat(t *testing.T) {
	long := strings.Repeat("y", 8192)
	logs := map[string]string{
		"containerd": "2026-05-01T08:00:00.123456789Z stdout F hello\n" +
			"2026-05-01T08:00:00.2Z stderr F oops\n" +
			"2026-05-01T08:00:00.3Z stdout P " + long + "\n2026-05-01T08:00:00.3Z stdout F " + long + "\n",
		"cri-o": "2026-05-01T10:00:00.123456789+02:00 stdout F hello\n" +
			"2026-05-01T10:00:00.200000000+02:00 stderr F oops\n" +
			"2026-05-01T10:00:00.300000000+02:00 stdout P " + long + "\n2026-05-01T10:00:00.300000000+02:00 stdout F " + long + "\n",
	}
	got := map[string][2]string{}
	for rt, data := range logs {
		p := filepath.Join(t.TempDir(), "0.log")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		startTailer(p, "", &logSink{stdout: &out, stderr: &errb}).finish(false)
		got[rt] = [2]string{out.String(), errb.String()}
	}
	want := [2]string{"hello\n" + long + long + "\n", "oops\n"}
	for rt, g := range got {
		if g != want {
			t.Errorf("%s log: stdout %.40q… stderr %q; want %.40q… %q", rt, g[0], g[1], want[0], want[1])
		}
	}
}

// TestCRIOPullErrors: CRI-O's pull errors are containers/image's, with
// code Unknown; the ones the registry gives for good end the run at once,
// as containerd's do, and the transient ones are retried.
func TestCRIOPullErrors(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`rpc error: code = Unknown desc = initializing source docker://127.0.0.1:5000/nope:1: reading manifest 1 in 127.0.0.1:5000/nope: manifest unknown`, "not found"},
		{`rpc error: code = Unknown desc = initializing source docker://quay.io/nope/x:latest: reading manifest latest in quay.io/nope/x: name unknown: repository name not known to registry`, "not found"},
		{`rpc error: code = Unknown desc = initializing source docker://r.example/x:1: reading manifest 1 in r.example/x: StatusCode: 404, "404 page not found"`, "not found"},
		{`rpc error: code = Unknown desc = initializing source docker://127.0.0.1:5001/private/busybox:1.0: unable to retrieve auth token: invalid username/password: unauthorized: authentication required`, "unauthorized"},
		{`rpc error: code = Unknown desc = initializing source docker://docker.io/library/private:1: reading manifest 1 in docker.io/library/private: requested access to the resource is denied`, "unauthorized"},
		{`rpc error: code = Unknown desc = RegistryUnavailable: pinging container registry r.example: Get "https://r.example/v2/": dial tcp 10.0.0.1:443: connect: connection refused`, ""},
		{`rpc error: code = Unknown desc = initializing source docker://r.example/x:1: reading manifest 1 in r.example/x: StatusCode: 503, "unavailable"`, ""},
		{`rpc error: code = Unknown desc = initializing source docker://r.example/x:1: pinging container registry r.example: Get "https://r.example/v2/": dial tcp: lookup r.example: no such host`, ""},
	} {
		why, ok := permanentPullFailure(tc.msg)
		if ok != (tc.want != "") || why != tc.want {
			t.Errorf("permanentPullFailure(%.90q…) = %q, %v; want %q", tc.msg, why, ok, tc.want)
		}
	}
}
