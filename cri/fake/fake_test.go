package fake_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

var ctx = context.Background()

func start(t *testing.T) (*fake.Server, *cri.Client) {
	t.Helper()
	s, ep := fake.Start(t)
	c, err := cri.Dial(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s.AddImages("busybox")
	s.SetSecond(10 * time.Millisecond)
	return s, c
}

func pod(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: "uid-" + name},
	}
}

func ctr(name string, cmd ...string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: "busybox"},
		Command:  cmd,
	}
}

// run starts a container in a new sandbox and returns both IDs.
func run(t *testing.T, c *cri.Client, cfg *runtimeapi.ContainerConfig) (podID, id string) {
	t.Helper()
	p := pod(cfg.Metadata.Name)
	podID, err := c.RunPodSandbox(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err = c.CreateContainer(ctx, podID, cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return podID, id
}

func waitExited(t *testing.T, c *cri.Client, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, err := c.ContainerStatus(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container still %v", st.State)
		}
	}
}

func TestRunPodSandboxRefusesDuplicateName(t *testing.T) {
	_, c := start(t)
	id, err := c.RunPodSandbox(ctx, pod("web"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RunPodSandbox(ctx, pod("web"), "")
	if err == nil || !strings.Contains(err.Error(), `failed to reserve sandbox name "web_ns_uid-web_0": name "web_ns_uid-web_0" is reserved for "`+id+`"`) {
		t.Fatalf("second RunPodSandbox = %v", err)
	}
	// Another attempt is another name; removal frees the name.
	p := pod("web")
	p.Metadata.Attempt = 1
	if _, err := c.RunPodSandbox(ctx, p, ""); err != nil {
		t.Errorf("attempt 1: %v", err)
	}
	if err := c.RemovePodSandbox(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunPodSandbox(ctx, pod("web"), ""); err != nil {
		t.Errorf("after remove: %v", err)
	}
}

func TestSandboxNetwork(t *testing.T) {
	s, c := start(t)
	id1, _ := c.RunPodSandbox(ctx, pod("a"), "")
	id2, _ := c.RunPodSandbox(ctx, pod("b"), "")
	host := pod("host")
	host.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
	}}
	id3, _ := c.RunPodSandbox(ctx, host, "")
	var ips []string
	for _, id := range []string{id1, id2, id3} {
		st, err := c.PodSandboxStatus(ctx, id, false)
		if err != nil {
			t.Fatal(err)
		}
		ips = append(ips, st.Status.Network.Ip)
	}
	if want := []string{"10.99.0.2", "10.99.0.3", ""}; !slices.Equal(ips, want) {
		t.Errorf("IPs = %q, want %q", ips, want)
	}

	s.SetCondition(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "cni plugin not initialized")
	if _, err := c.RunPodSandbox(ctx, pod("c"), ""); err == nil || !strings.Contains(err.Error(), "failed to setup network for sandbox") {
		t.Errorf("RunPodSandbox without network = %v", err)
	}
	host.Metadata.Attempt = 1
	if _, err := c.RunPodSandbox(ctx, host, ""); err != nil {
		t.Errorf("host-network RunPodSandbox without network: %v", err)
	}
}

func TestListFilters(t *testing.T) {
	_, c := start(t)
	pa, pb := pod("a"), pod("b")
	pa.Labels = map[string]string{"app": "a", "tier": "web"}
	pb.Labels = map[string]string{"app": "b", "tier": "web"}
	ida, _ := c.RunPodSandbox(ctx, pa, "")
	idb, _ := c.RunPodSandbox(ctx, pb, "")
	c.StopPodSandbox(ctx, idb)

	ids := func(ps []*runtimeapi.PodSandbox) (out []string) {
		for _, p := range ps {
			out = append(out, p.Id)
		}
		return out
	}
	for _, tc := range []struct {
		f    *runtimeapi.PodSandboxFilter
		want []string
	}{
		{nil, []string{ida, idb}},
		{&runtimeapi.PodSandboxFilter{Id: idb}, []string{idb}},
		{&runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, []string{ida}},
		{&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "web"}}, []string{ida, idb}},
		{&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"tier": "web", "app": "b"}}, []string{idb}},
	} {
		got, err := c.ListPodSandbox(ctx, tc.f)
		if err != nil || !slices.Equal(ids(got), tc.want) {
			t.Errorf("ListPodSandbox(%v) = %v, %v; want %v", tc.f, ids(got), err, tc.want)
		}
	}

	cfg := ctr("x", "sleep", "infinity")
	cfg.Labels = map[string]string{"k": "v"}
	cid, err := c.CreateContainer(ctx, ida, cfg, pa)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*runtimeapi.ContainerFilter{
		{Id: cid}, {PodSandboxId: ida}, {LabelSelector: map[string]string{"k": "v"}},
		{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_CREATED}},
	} {
		got, err := c.ListContainers(ctx, f)
		if err != nil || len(got) != 1 || got[0].Id != cid {
			t.Errorf("ListContainers(%v) = %v, %v", f, got, err)
		}
	}
	if got, _ := c.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: idb}); len(got) != 0 {
		t.Errorf("ListContainers(other pod) = %v", got)
	}
}

func TestCreateContainerChecks(t *testing.T) {
	_, c := start(t)
	p := pod("p")
	id, _ := c.RunPodSandbox(ctx, p, "")

	if _, err := c.CreateContainer(ctx, id, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "x"},
		Image:    &runtimeapi.ImageSpec{Image: "not-pulled"},
	}, p); err == nil || !strings.Contains(err.Error(), `failed to resolve image "not-pulled"`) {
		t.Errorf("create with an image not pulled = %v", err)
	}
	if _, err := c.CreateContainer(ctx, id, ctr("x"), p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(ctx, id, ctr("x"), p); err == nil || !strings.Contains(err.Error(), "failed to reserve container name") {
		t.Errorf("duplicate container name = %v", err)
	}
	if _, err := c.CreateContainer(ctx, "nope", ctr("y"), p); !cri.IsNotFound(err) {
		t.Errorf("create in a missing sandbox = %v", err)
	}
	c.StopPodSandbox(ctx, id)
	if _, err := c.CreateContainer(ctx, id, ctr("z"), p); err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Errorf("create in a stopped sandbox = %v", err)
	}
}

func TestScriptedExits(t *testing.T) {
	s, c := start(t)
	s.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		switch cfg.Annotations["test"] {
		case "oom":
			return fake.Behavior{OOMKilled: true, ExitAfter: time.Millisecond}
		case "start-error":
			return fake.Behavior{StartError: `exec: "nope": executable file not found in $PATH`}
		case "clean-term":
			return fake.Behavior{UntilStopped: true, TermExitCode: fake.Code(0)}
		case "term":
			return fake.Behavior{UntilStopped: true}
		case "stubborn":
			return fake.Behavior{UntilStopped: true, IgnoreSIGTERM: true}
		}
		return fake.CommandBehavior(cfg, time.Millisecond)
	})
	withAnn := func(name, v string) *runtimeapi.ContainerConfig {
		cfg := ctr(name)
		cfg.Annotations = map[string]string{"test": v}
		return cfg
	}

	_, id := run(t, c, withAnn("oom", "oom"))
	if st := waitExited(t, c, id); st.ExitCode != 137 || st.Reason != "OOMKilled" {
		t.Errorf("oom: %d %q", st.ExitCode, st.Reason)
	}

	p := pod("se")
	pid, _ := c.RunPodSandbox(ctx, p, "")
	id, _ = c.CreateContainer(ctx, pid, withAnn("se", "start-error"), p)
	if err := c.StartContainer(ctx, id); err == nil || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("start error = %v", err)
	}
	if st, _ := c.ContainerStatus(ctx, id); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 128 || st.Reason != "StartError" {
		t.Errorf("after start error: %v", st)
	}

	for _, tc := range []struct {
		ann     string
		timeout int64
		want    int32
	}{
		{"clean-term", 10, 0},
		{"term", 10, 143},
		{"term", 0, 137},
		{"stubborn", 2, 137},
	} {
		_, id := run(t, c, withAnn(fmt.Sprintf("c-%s-%d", tc.ann, tc.timeout), tc.ann))
		start := time.Now()
		if err := c.StopContainer(ctx, id, tc.timeout); err != nil {
			t.Fatal(err)
		}
		st := waitExited(t, c, id)
		if st.ExitCode != tc.want {
			t.Errorf("%s stopped with timeout %d: exit %d, want %d", tc.ann, tc.timeout, st.ExitCode, tc.want)
		}
		if tc.ann == "stubborn" && time.Since(start) < 2*10*time.Millisecond {
			t.Errorf("stubborn container was killed before its grace period")
		}
	}

	// A created container is left alone by stop, as containerd does.
	p = pod("created")
	pid, _ = c.RunPodSandbox(ctx, p, "")
	id, _ = c.CreateContainer(ctx, pid, ctr("created"), p)
	if err := c.StopContainer(ctx, id, 10); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.ContainerStatus(ctx, id); st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Errorf("stopped created container is %v", st.State)
	}

	_, id = run(t, c, ctr("crash", "sleep", "infinity"))
	if err := s.ExitContainer(id, 42); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.ContainerStatus(ctx, id); st.ExitCode != 42 || st.Reason != "Error" || st.FinishedAt == 0 {
		t.Errorf("ExitContainer: %v", st)
	}
}

func TestLogOutput(t *testing.T) {
	s, c := start(t)
	dir := t.TempDir()
	s.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{Output: []fake.LogLine{
			{Text: "one"},
			{Text: "part", Partial: true, After: 20 * time.Millisecond},
			{Text: "two\nthree", Stream: "stderr", After: 40 * time.Millisecond},
		}, ExitCode: 0}
	})
	p := pod("logs")
	p.LogDirectory = dir
	pid, _ := c.RunPodSandbox(ctx, p, "")
	cfg := ctr("app")
	cfg.LogPath = "app/0.log"
	id, err := c.CreateContainer(ctx, pid, cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	st := waitExited(t, c, id)
	if st.ExitCode != 0 || st.Reason != "Completed" {
		t.Errorf("exit = %d %q", st.ExitCode, st.Reason)
	}
	data, err := os.ReadFile(filepath.Join(dir, "app/0.log"))
	if err != nil {
		t.Fatal(err)
	}
	stamp := regexp.MustCompile(`(?m)^\S+ `)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ts := strings.Fields(l)[0]
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("line %q: bad time: %v", l, err)
		}
	}
	got := stamp.ReplaceAllString(string(data), "")
	want := "stdout F one\nstdout P part\nstderr F two\nstderr F three\n"
	if got != want {
		t.Errorf("log =\n%s\nwant\n%s", got, want)
	}
}

// TestCRIOLogDirs: with CRIOWays.LogDirs, the sandbox's log directory is made
// (0700) and a container whose log file's directory is missing is refused
// at create, as CRI-O's conmon fails; made, it is created; without the
// knob, as containerd, the directory is not needed at create.
func TestCRIOLogDirs(t *testing.T) {
	s, c := start(t)
	s.ActLikeCRIO(fake.CRIOWays{LogDirs: true})
	p := pod("crio-logs")
	p.LogDirectory = filepath.Join(t.TempDir(), "ns_crio-logs_uid")
	pid, err := c.RunPodSandbox(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p.LogDirectory); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("sandbox log dir: %v, %v; want it made 0700", fi, err)
	}
	cfg := ctr("app")
	cfg.LogPath = "app/0.log"
	if _, err := c.CreateContainer(ctx, pid, cfg, p); status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("create without the container's log dir = %v, want Unknown, exit status 1", err)
	}
	if err := os.Mkdir(filepath.Join(p.LogDirectory, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(ctx, pid, cfg, p); err != nil {
		t.Errorf("create with the log dir made: %v", err)
	}

	s.ActLikeCRIO(fake.CRIOWays{})
	cfg = ctr("other")
	cfg.LogPath = "other/0.log"
	if _, err := c.CreateContainer(ctx, pid, cfg, p); err != nil {
		t.Errorf("create without the knob: %v", err)
	}
}

func TestFailNextDelayAndCalls(t *testing.T) {
	s, c := start(t)
	s.FailNext("RunPodSandbox", errors.New("boom"))
	s.FailNext("RunPodSandbox", status.Error(codes.ResourceExhausted, "full"))
	_, err1 := c.RunPodSandbox(ctx, pod("a"), "")
	_, err2 := c.RunPodSandbox(ctx, pod("a"), "")
	_, err3 := c.RunPodSandbox(ctx, pod("a"), "")
	if status.Code(err1) != codes.Unknown || !strings.HasSuffix(err1.Error(), "desc = boom") {
		t.Errorf("first = %v", err1)
	}
	if status.Code(err2) != codes.ResourceExhausted {
		t.Errorf("second = %v", err2)
	}
	if err3 != nil {
		t.Errorf("third = %v", err3)
	}
	want := []string{"Version", "RunPodSandbox", "RunPodSandbox", "RunPodSandbox"}
	if got := s.Calls(); !slices.Equal(got, want) {
		t.Errorf("Calls() = %q, want %q", got, want)
	}
	s.ResetCalls()
	if got := s.Calls(); len(got) != 0 {
		t.Errorf("Calls() after reset = %q", got)
	}

	s.Delay("Version", 100*time.Millisecond)
	start := time.Now()
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Error("Delay did not delay")
	}
}

func TestRestartKeepsState(t *testing.T) {
	s, c := start(t)
	pid, id := run(t, c, ctr("srv", "sleep", "infinity"))
	s.Stop()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	st, err := c.ContainerStatus(ctx, id)
	if err != nil || st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("after restart: %v, %v", st, err)
	}
	if cfg := s.SandboxConfig(pid); cfg.GetMetadata().GetName() != "srv" {
		t.Errorf("SandboxConfig = %v", cfg)
	}
	if cfg := s.ContainerConfig(id); !slices.Equal(cfg.GetCommand(), []string{"sleep", "infinity"}) {
		t.Errorf("ContainerConfig = %v", cfg)
	}
}

func TestImages(t *testing.T) {
	s, c := start(t)
	s.RequireAuth("private.example.com/app", &runtimeapi.AuthConfig{IdentityToken: "tok"})
	if _, err := c.PullImage(ctx, "private.example.com/app", &runtimeapi.AuthConfig{Username: "u", Password: "p"}, nil); err == nil {
		t.Error("pull with wrong auth succeeded")
	}
	ref, err := c.PullImage(ctx, "private.example.com/app", &runtimeapi.AuthConfig{IdentityToken: "tok"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := c.ImageStatus(ctx, ref)
	if err != nil || img == nil || !slices.Equal(img.RepoTags, []string{"private.example.com/app:latest"}) {
		t.Errorf("ImageStatus(by ID) = %v, %v", img, err)
	}
	s.SetMissing("ghost")
	_, err = c.PullImage(ctx, "ghost", nil, nil)
	if status.Code(err) != codes.NotFound || !strings.HasSuffix(err.Error(), "docker.io/library/ghost:latest: not found") {
		t.Errorf("pull of a missing image = %v", err)
	}
}
