package cri_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
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

// dial starts a fake runtime and connects a client to it.
func dial(t *testing.T, opts ...cri.Option) (*cri.Client, *fake.Server) {
	t.Helper()
	s, ep := fake.Start(t)
	c, err := cri.Dial(context.Background(), ep, opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, s
}

// shortTempDir returns a directory whose paths fit in a unix socket address.
func shortTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "critest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func podConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: name + "-uid"},
		Labels:   map[string]string{"app": name},
	}
}

func containerConfig(name, image string, cmd ...string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  cmd,
		Labels:   map[string]string{"container": name},
	}
}

func TestDialBarePathAndUnixScheme(t *testing.T) {
	s, ep := fake.Start(t)
	path := strings.TrimPrefix(ep, "unix://")
	for _, endpoint := range []string{ep, path} {
		c, err := cri.Dial(context.Background(), endpoint)
		if err != nil {
			t.Fatalf("Dial(%q): %v", endpoint, err)
		}
		if c.Endpoint() != endpoint {
			t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), endpoint)
		}
		v, err := c.Version(context.Background())
		if err != nil {
			t.Fatalf("Version: %v", err)
		}
		if v.RuntimeName != "fake" || v.RuntimeApiVersion != "v1" {
			t.Errorf("Version = %v", v)
		}
		c.Close()
	}
	if got := s.Calls(); len(got) != 4 {
		t.Errorf("calls = %v, want two Dial checks and two Version calls", got)
	}
}

func TestDialRefusesOtherProtocols(t *testing.T) {
	_, err := cri.Dial(context.Background(), "tcp://127.0.0.1:1234")
	if err == nil || !strings.Contains(err.Error(), `unsupported protocol "tcp"`) {
		t.Fatalf("Dial(tcp) error = %v, want unsupported protocol", err)
	}
}

func TestDialFirstTakesFirstThatAnswers(t *testing.T) {
	_, ep := fake.Start(t)
	dir := shortTempDir(t)
	missing := "unix://" + filepath.Join(dir, "missing.sock")
	c, err := cri.DialFirst(context.Background(), []string{missing, ep})
	if err != nil {
		t.Fatalf("DialFirst: %v", err)
	}
	defer c.Close()
	if c.Endpoint() != ep {
		t.Errorf("Endpoint() = %q, want %q", c.Endpoint(), ep)
	}
}

func TestDialFirstErrorNamesEverySocket(t *testing.T) {
	dir := shortTempDir(t)
	missing := "unix://" + filepath.Join(dir, "missing.sock")

	// A socket that accepts and hangs up: something listens, but not CRI.
	notCRI := filepath.Join(dir, "not-cri.sock")
	lis, err := net.Listen("unix", notCRI)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()

	// A socket left behind by a runtime that is gone: connecting is refused.
	stale := filepath.Join(dir, "stale.sock")
	slis, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	slis.(*net.UnixListener).SetUnlinkOnClose(false)
	slis.Close()

	start := time.Now()
	_, err = cri.DialFirst(context.Background(), []string{missing, notCRI, stale})
	if err == nil {
		t.Fatal("DialFirst succeeded with no runtime")
	}
	for _, want := range []string{missing, "no such file or directory", notCRI, stale} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The probe is neither retried nor made to wait for a connection: with
	// the client's retries (serviceConfig) it would take 1.5 s of back-off
	// per socket.
	if d := time.Since(start); d > time.Second {
		t.Errorf("DialFirst took %v; dead sockets must fail fast", d)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors.Is(err, os.ErrNotExist) = false for %v", err)
	}
}

func TestStatusAndCheckReady(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()

	st, err := c.Status(ctx, true)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if len(st.Status.Conditions) != 2 || st.Info["cniconfig"] == "" {
		t.Errorf("Status = %v, want two conditions and CNI info", st)
	}
	if st, _ := c.Status(ctx, false); len(st.Info) != 0 {
		t.Errorf("non-verbose Status has Info %v", st.Info)
	}
	if err := c.CheckReady(ctx, true); err != nil {
		t.Fatalf("CheckReady on a ready runtime: %v", err)
	}

	s.SetCondition(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized")
	err = c.CheckReady(ctx, true)
	want := "runtime not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
	if err == nil || err.Error() != want {
		t.Errorf("CheckReady(needNetwork) = %v, want %q", err, want)
	}
	var nr *cri.NotReadyError
	if !errors.As(err, &nr) || nr.Condition != runtimeapi.NetworkReady {
		t.Errorf("CheckReady error %v is not a NotReadyError for NetworkReady", err)
	}
	if err := c.CheckReady(ctx, false); err != nil {
		t.Errorf("CheckReady(host network) with network down: %v", err)
	}

	s.SetCondition(runtimeapi.RuntimeReady, false, "ContainerdNotReady", "shim broken")
	if err := c.CheckReady(ctx, false); err == nil || !strings.Contains(err.Error(), "RuntimeReady=false reason:ContainerdNotReady message:shim broken") {
		t.Errorf("CheckReady with runtime down = %v", err)
	}
}

// waitExited polls until the container has exited.
func waitExited(t *testing.T, c *cri.Client, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := c.ContainerStatus(context.Background(), id)
		if err != nil {
			t.Fatalf("ContainerStatus: %v", err)
		}
		if st.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s still %v", id, st.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPodLifecycle(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()
	logDir := t.TempDir()

	// Images: absent, pulled, present.
	img, err := c.ImageStatus(ctx, "busybox")
	if err != nil || img != nil {
		t.Fatalf("ImageStatus before pull = %v, %v; want nil, nil", img, err)
	}
	ref, err := c.PullImage(ctx, "busybox", nil, nil)
	if err != nil {
		t.Fatalf("PullImage: %v", err)
	}
	img, err = c.ImageStatus(ctx, "docker.io/library/busybox:latest")
	if err != nil || img == nil || img.Id != ref {
		t.Fatalf("ImageStatus after pull = %v, %v; want ID %s", img, err, ref)
	}

	// Sandbox.
	pcfg := podConfig("web")
	pcfg.LogDirectory = logDir
	podID, err := c.RunPodSandbox(ctx, pcfg, "")
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	pst, err := c.PodSandboxStatus(ctx, podID, false)
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if pst.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY || !strings.HasPrefix(pst.Status.Network.Ip, "10.99.0.") {
		t.Errorf("sandbox status = %v", pst.Status)
	}
	pods, err := c.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "web"}})
	if err != nil || len(pods) != 1 || pods[0].Id != podID {
		t.Fatalf("ListPodSandbox(app=web) = %v, %v", pods, err)
	}

	// A container that prints and exits 3.
	ccfg := containerConfig("main", "busybox", "sh", "-c", "echo hello; echo oops >&2; exit 3")
	ccfg.LogPath = "main/0.log"
	ctrID, err := c.CreateContainer(ctx, podID, ccfg, pcfg)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := c.StartContainer(ctx, ctrID); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	st := waitExited(t, c, ctrID)
	if st.ExitCode != 3 || st.Reason != "Error" {
		t.Errorf("exit = %d %q, want 3 Error", st.ExitCode, st.Reason)
	}
	logPath := filepath.Join(logDir, "main/0.log")
	if st.LogPath != logPath {
		t.Errorf("LogPath = %q, want %q", st.LogPath, logPath)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ (stdout|stderr) F (.*)$`)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("log line %q is not in the CRI format", l)
		}
		got = append(got, m[1]+":"+m[2])
	}
	if want := []string{"stdout:hello", "stderr:oops"}; !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}

	ctrs, err := c.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: podID,
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_EXITED}})
	if err != nil || len(ctrs) != 1 || ctrs[0].Id != ctrID {
		t.Fatalf("ListContainers(exited in pod) = %v, %v", ctrs, err)
	}

	// Teardown, twice: the second round finds nothing and is still fine.
	for range 2 {
		if err := c.StopContainer(ctx, ctrID, 10); err != nil {
			t.Errorf("StopContainer: %v", err)
		}
		if err := c.RemoveContainer(ctx, ctrID); err != nil {
			t.Errorf("RemoveContainer: %v", err)
		}
		if err := c.StopPodSandbox(ctx, podID); err != nil {
			t.Errorf("StopPodSandbox: %v", err)
		}
		if err := c.RemovePodSandbox(ctx, podID); err != nil {
			t.Errorf("RemovePodSandbox: %v", err)
		}
	}
	if pods, _ := c.ListPodSandbox(ctx, nil); len(pods) != 0 {
		t.Errorf("sandboxes left: %v", pods)
	}

	want := []string{
		"Version", // Dial
		"ImageStatus", "PullImage", "ImageStatus",
		"RunPodSandbox", "PodSandboxStatus", "ListPodSandbox",
		"CreateContainer", "StartContainer",
	}
	calls := s.Calls()
	if !slices.Equal(calls[:len(want)], want) {
		t.Errorf("calls start %q, want %q", calls[:len(want)], want)
	}
}

func TestStopPodSandboxKillsRunningContainers(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()
	s.AddImages("nginx")
	pcfg := podConfig("srv")
	podID, err := c.RunPodSandbox(ctx, pcfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, podID, containerConfig("nginx", "nginx"), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.ContainerStatus(ctx, id); st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("state = %v, want running", st.State)
	}
	if err := c.StopPodSandbox(ctx, podID); err != nil {
		t.Fatal(err)
	}
	if st := waitExited(t, c, id); st.ExitCode != 137 {
		t.Errorf("exit code after StopPodSandbox = %d, want 137", st.ExitCode)
	}
}

func TestStopAndRemoveTreatNotFoundAsDone(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()

	// The fake answers codes.NotFound for unknown IDs on stop.
	if err := c.StopContainer(ctx, "nope", 5); err != nil {
		t.Errorf("StopContainer(unknown) = %v", err)
	}
	if err := c.StopPodSandbox(ctx, "nope"); err != nil {
		t.Errorf("StopPodSandbox(unknown) = %v", err)
	}

	// containerd 1.6 says not found with codes.Unknown on some paths.
	s.FailNext("RemoveContainer", status.Error(codes.Unknown, `failed to delete containerd container "abc": not found`))
	if err := c.RemoveContainer(ctx, "abc"); err != nil {
		t.Errorf("RemoveContainer with Unknown not-found = %v", err)
	}
	s.FailNext("RemovePodSandbox", status.Error(codes.Unknown, `could not find pod "abc": PodSandbox with ID starting with abc not found: ID does not exist`))
	if err := c.RemovePodSandbox(ctx, "abc"); err != nil {
		t.Errorf("RemovePodSandbox with CRI-O not-found = %v", err)
	}

	// Any other failure is reported, with its status kept.
	s.FailNext("StopPodSandbox", status.Error(codes.Unknown, "failed to destroy network for sandbox: plugin type=\"bridge\" failed"))
	err := c.StopPodSandbox(ctx, "abc")
	if err == nil {
		t.Fatal("StopPodSandbox hid a real failure")
	}
	if !strings.HasPrefix(err.Error(), `stopping pod sandbox "abc": rpc error: code = Unknown`) {
		t.Errorf("error = %q", err)
	}
	if st, ok := status.FromError(err); !ok || st.Code() != codes.Unknown {
		t.Errorf("status.FromError(%v) = %v, %v", err, st, ok)
	}

	// Status calls report not-found as an error callers can test.
	_, err = c.ContainerStatus(ctx, "nope")
	if !cri.IsNotFound(err) || status.Code(err) != codes.NotFound {
		t.Errorf("ContainerStatus(unknown) = %v, want a not-found error", err)
	}
}

func TestIsNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"NotFound code", status.Error(codes.NotFound, "whatever"), true},
		{"wrapped NotFound", errorsJoin("stopping x", status.Error(codes.NotFound, "gone")), true},
		{"containerd text", status.Error(codes.Unknown, `an error occurred when try to find container "abc": not found`), true},
		{"CRI-O text", status.Error(codes.Unknown, `container with ID starting with abc not found: ID does not exist`), true},
		{"CNI plugin missing", status.Error(codes.Unknown, `failed to find plugin "bridge" in path [/opt/cni/bin]`), false},
		{"executable not found", status.Error(codes.Unknown, `exec: "nope": executable file not found in $PATH: unknown`), false},
		{"not found text with another code", status.Error(codes.Internal, "not found"), false},
		{"plain error", errors.New("not found"), false},
		{"our wrapping says not found", errorsJoin(`stopping "not found"`, status.Error(codes.Unknown, "boom")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cri.IsNotFound(tc.err); got != tc.want {
				t.Errorf("IsNotFound(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func errorsJoin(msg string, err error) error { return &wrapped{msg, err} }

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func TestPerCallTimeout(t *testing.T) {
	c, s := dial(t, cri.WithCallTimeout(200*time.Millisecond))
	s.Delay("ListContainers", time.Minute)

	start := time.Now()
	_, err := c.ListContainers(context.Background(), nil)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("ListContainers on a hung runtime = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("call took %v, want about 200ms", d)
	}

	// The caller's shorter deadline wins.
	c2, s2 := dial(t)
	s2.Delay("Version", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := c2.Version(ctx); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Version = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("call took %v, want about 100ms", d)
	}
}

func TestStopContainerDeadlineCoversGracePeriod(t *testing.T) {
	c, s := dial(t, cri.WithCallTimeout(200*time.Millisecond))
	ctx := context.Background()
	s.AddImages("app")
	s.SetSecond(500 * time.Millisecond) // the grace period outlasts the call timeout
	s.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{UntilStopped: true, IgnoreSIGTERM: true}
	})
	pcfg := podConfig("stubborn")
	podID, err := c.RunPodSandbox(ctx, pcfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, podID, containerConfig("app", "app"), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.StopContainer(ctx, id, 1); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	if st := waitExited(t, c, id); st.ExitCode != 137 {
		t.Errorf("exit code = %d, want 137 (killed after the grace period)", st.ExitCode)
	}
}

func TestReconnectAcrossRuntimeRestart(t *testing.T) {
	sock := filepath.Join(shortTempDir(t), "cri.sock")
	s1, err := fake.StartAt(sock)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cri.Dial(context.Background(), sock, cri.WithCallTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatalf("Version: %v", err)
	}

	// A new runtime on the same socket: the same Client finds it.
	s1.Close()
	s2, err := fake.StartAt(sock)
	if err != nil {
		t.Fatal(err)
	}
	// Status, a retried call (serviceConfig): the first try finds the
	// old connection gone.
	if _, err := c.Status(context.Background(), false); err != nil {
		t.Fatalf("Status after restart: %v", err)
	}

	// A call made while the runtime is down waits for it to come back.
	s2.Stop()
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := s2.Restart(); err != nil {
			t.Errorf("Restart: %v", err)
		}
	}()
	if _, err := c.Status(context.Background(), false); err != nil {
		t.Fatalf("Status during restart: %v", err)
	}
	s2.Close()
}

func TestGetContainerEventsUnimplemented(t *testing.T) {
	c, _ := dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.GetContainerEvents(ctx)
	if err != nil {
		t.Fatalf("GetContainerEvents: %v", err)
	}
	for range ev.C {
		t.Error("got an event from a runtime without events")
	}
	err = ev.Err()
	if !errors.Is(err, cri.ErrUnimplemented) {
		t.Errorf("Err() = %v, want ErrUnimplemented", err)
	}
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("status.Code(%v) = %v, want Unimplemented", err, status.Code(err))
	}
}

func TestGetContainerEvents(t *testing.T) {
	c, s := dial(t)
	s.EnableEvents(true)
	s.AddImages("busybox")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := c.GetContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the fake has the subscriber before making events.
	for s.EventSubscribers() == 0 {
		time.Sleep(5 * time.Millisecond)
	}

	pcfg := podConfig("ev")
	podID, err := c.RunPodSandbox(ctx, pcfg, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(ctx, podID, containerConfig("x", "busybox", "true"), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitExited(t, c, id)
	if err := c.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	want := []runtimeapi.ContainerEventType{
		runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT,
		runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT,
		runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT,
		runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT,
	}
	for _, w := range want {
		e := <-ev.C
		if e.GetContainerId() != id || e.GetContainerEventType() != w {
			t.Fatalf("event = %v %v, want %v for %s", e.GetContainerEventType(), e.GetContainerId(), w, id)
		}
	}
	cancel()
	for range ev.C {
	}
	if err := ev.Err(); err != nil {
		t.Errorf("Err() after cancel = %v, want nil", err)
	}
}

func TestPullErrors(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()
	s.SetMissing("nope:1.0")
	_, err := c.PullImage(ctx, "nope:1.0", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `pulling image "nope:1.0": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nope:1.0"`) {
		t.Errorf("pull of a missing image = %v", err)
	}

	s.RequireAuth("registry.example.com/private/app:v1", &runtimeapi.AuthConfig{Username: "u", Password: "p"})
	if _, err := c.PullImage(ctx, "registry.example.com/private/app:v1", nil, nil); err == nil || !strings.Contains(err.Error(), "authorization failed") {
		t.Errorf("anonymous pull of a private image = %v", err)
	}
	if _, err := c.PullImage(ctx, "registry.example.com/private/app:v1", &runtimeapi.AuthConfig{Auth: "dTpw"}, nil); err != nil {
		t.Errorf("pull with auth: %v", err)
	}
	pulls := s.Pulls()
	if len(pulls) != 3 || pulls[2].Auth.GetAuth() != "dTpw" {
		t.Errorf("pulls = %v", pulls)
	}
}

func TestExecSync(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()
	s.AddImages("app")
	s.SetSecond(50 * time.Millisecond)
	s.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
		return fake.Behavior{UntilStopped: true, Exec: func(cmd []string) fake.ExecResult {
			switch cmd[0] {
			case "slow":
				return fake.ExecResult{Took: time.Hour}
			case "fail":
				return fake.ExecResult{Stderr: []byte("bad\n"), ExitCode: 2}
			}
			return fake.ExecResult{Stdout: []byte(strings.Join(cmd, " "))}
		}}
	})
	pcfg := podConfig("exec")
	podID, _ := c.RunPodSandbox(ctx, pcfg, "")
	id, err := c.CreateContainer(ctx, podID, containerConfig("app", "app"), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	out, _, code, err := c.ExecSync(ctx, id, []string{"echo", "hi"}, time.Second)
	if err != nil || string(out) != "echo hi" || code != 0 {
		t.Errorf("ExecSync(echo) = %q, %d, %v", out, code, err)
	}
	_, errOut, code, err := c.ExecSync(ctx, id, []string{"fail"}, 0)
	if err != nil || string(errOut) != "bad\n" || code != 2 {
		t.Errorf("ExecSync(fail) = %q, %d, %v; a non-zero exit is no error", errOut, code, err)
	}
	_, _, _, err = c.ExecSync(ctx, id, []string{"slow"}, time.Second)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("ExecSync(slow) = %v, want DeadlineExceeded", err)
	}
}

func TestUnimplementedCallsMatchErrUnimplemented(t *testing.T) {
	c, s := dial(t)
	s.FailNext("RunPodSandbox", status.Error(codes.Unimplemented, "unknown method"))
	_, err := c.RunPodSandbox(context.Background(), podConfig("x"), "")
	if !errors.Is(err, cri.ErrUnimplemented) || status.Code(err) != codes.Unimplemented {
		t.Errorf("err = %v, want ErrUnimplemented with its status", err)
	}
	if !strings.HasPrefix(err.Error(), `running pod sandbox "default/x": rpc error: code = Unimplemented`) {
		t.Errorf("err = %q", err)
	}
}

func TestCgroupDriver(t *testing.T) {
	c, s := dial(t)
	_, err := c.CgroupDriver(context.Background())
	if !errors.Is(err, cri.ErrUnimplemented) {
		t.Errorf("CgroupDriver on a runtime without RuntimeConfig: err = %v, want ErrUnimplemented", err)
	}
	for d, want := range map[runtimeapi.CgroupDriver]string{
		runtimeapi.CgroupDriver_SYSTEMD:  "systemd",
		runtimeapi.CgroupDriver_CGROUPFS: "cgroupfs",
	} {
		s.SetCgroupDriver(d)
		got, err := c.CgroupDriver(context.Background())
		if err != nil || got != want {
			t.Errorf("CgroupDriver with %v = %q, %v; want %q", d, got, err, want)
		}
	}
}

// TestStopContainerHugeGracePeriod: a grace period beyond what a
// time.Duration holds (terminationGracePeriodSeconds up to MaxInt64 passes
// validation, as on the API server) reaches the runtime as MaxStopTimeout,
// which its time.Duration(timeout)*time.Second does not wrap around, and
// the RPC waits for it: the stop lasts until the caller's deadline. The
// grace period was handed on as it was: the fake, computing as containerd
// does, read MaxInt64 as -1 s and killed the container at once, and the
// client's own deadline had wrapped into the past.
func TestStopContainerHugeGracePeriod(t *testing.T) {
	for _, grace := range []int64{math.MaxInt64, cri.MaxStopTimeout + 1, 1 << 62, cri.MaxStopTimeout} {
		c, s := dial(t, cri.WithCallTimeout(200*time.Millisecond))
		bg := context.Background()
		s.AddImages("app")
		handed := make(chan int64, 1)
		s.SetBehavior(func(*runtimeapi.ContainerConfig) fake.Behavior {
			return fake.Behavior{UntilStopped: true, IgnoreSIGTERM: true, OnStop: func(timeout int64) { handed <- timeout }}
		})
		pcfg := podConfig("stubborn")
		podID, err := c.RunPodSandbox(bg, pcfg, "")
		if err != nil {
			t.Fatal(err)
		}
		id, err := c.CreateContainer(bg, podID, containerConfig("app", "app"), pcfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.StartContainer(bg, id); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg, 500*time.Millisecond)
		start := time.Now()
		err = c.StopContainer(ctx, id, grace)
		took := time.Since(start)
		cancel()
		if status.Code(err) != codes.DeadlineExceeded || took < 400*time.Millisecond {
			t.Errorf("StopContainer(%d) = %v after %v; want the caller's deadline (500ms)", grace, err, took)
		}
		select {
		case got := <-handed:
			if got != cri.MaxStopTimeout {
				t.Errorf("StopContainer(%d) handed the runtime a timeout of %d, want %d", grace, got, cri.MaxStopTimeout)
			}
		default:
			t.Errorf("StopContainer(%d) did not reach the runtime", grace)
		}
		st, err := c.ContainerStatus(bg, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("StopContainer(%d): the container is %s (exit %d), want still running in its grace period", grace, st.State, st.ExitCode)
		}
	}
}

// TestEventStreamKeepsReadingForASlowReader: a reader that does not take
// its events does not stop the stream reading from the runtime (containerd
// holds up the calls that make events while a subscriber is behind): past
// the buffer the stream drops events and counts them for the reader, who
// re-lists.
func TestEventStreamKeepsReadingForASlowReader(t *testing.T) {
	c, s := dial(t)
	s.EnableEvents(true)
	s.AddImages("busybox")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := c.GetContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for s.EventSubscribers() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	pcfg := podConfig("slow-reader")
	podID, err := c.RunPodSandbox(ctx, pcfg, "")
	if err != nil {
		t.Fatal(err)
	}
	const made = 150 // more than the stream's buffer (64)
	var ids []string
	for i := range made {
		id, err := c.CreateContainer(ctx, podID, containerConfig(fmt.Sprintf("c%d", i), "busybox", "true"), pcfg)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Nothing has read ev.C: every event must still have been taken from
	// the runtime, the first ones queued and the rest counted as dropped.
	var dropped uint64
	for dropped+uint64(len(ev.C)) < made && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		dropped += ev.TakeDropped()
	}
	queued := len(ev.C)
	if queued+int(dropped) != made || dropped == 0 {
		t.Fatalf("%d events queued and %d dropped; want all %d taken from the runtime, the excess dropped", queued, dropped, made)
	}
	for i := range queued {
		e := <-ev.C
		if e.GetContainerId() != ids[i] || e.GetContainerEventType() != runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT {
			t.Fatalf("queued event %d = %v %s; want CREATED for %s (the first ones, in order)", i, e.GetContainerEventType(), e.GetContainerId(), ids[i])
		}
	}
	if n := ev.TakeDropped(); n != 0 {
		t.Errorf("TakeDropped after the count was taken = %d; want 0", n)
	}
}
