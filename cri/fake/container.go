package fake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type container struct {
	id        string
	sandboxID string
	name      string // reserved name, released on remove
	cfg       *runtimeapi.ContainerConfig
	image     *runtimeapi.Image
	logPath   string
	behavior  Behavior

	state      runtimeapi.ContainerState
	createdAt  int64
	startedAt  int64
	finishedAt int64
	exitCode   int32
	reason     string
	message    string

	stop     chan struct{} // closed to end the script
	exited   chan struct{} // closed when the container exits
	haltOnce sync.Once
}

// halt ends the container's script goroutine, if any.
func (c *container) halt() { c.haltOnce.Do(func() { close(c.stop) }) }

// ContainerConfig returns a copy of the config container id was created
// with, or nil if there is no such container.
func (s *Server) ContainerConfig(id string) *runtimeapi.ContainerConfig {
	c, err := lockFind(s, s.ctrs, "container", id)
	if err != nil {
		return nil
	}
	defer s.mu.Unlock()
	return clone(c.cfg)
}

// ExitContainer makes a running container exit now with code, as if it
// crashed or finished on its own.
func (s *Server) ExitContainer(id string, code int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ctrs[id]
	if c == nil || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("exiting container %q: not running", id)
	}
	s.exit(c, code, "")
	return nil
}

// containerName is containerd's reserved name for a container.
func containerName(md *runtimeapi.ContainerMetadata, smd *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{md.GetName(), smd.GetName(), smd.GetNamespace(), smd.GetUid(), fmt.Sprint(md.GetAttempt())}, "_")
}

func (r *runtimeServer) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	s := r.s
	cfg := req.GetConfig()
	if cfg.GetMetadata().GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "container config must include metadata")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[req.GetPodSandboxId()]
	if p == nil {
		return nil, status.Errorf(codes.NotFound, "failed to find sandbox id %q: not found", req.GetPodSandboxId())
	}
	if p.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.Unknown, "failed to create containerd container: sandbox container %q is not running", p.id)
	}
	img := s.lookupImage(cfg.GetImage().GetImage())
	if img == nil {
		return nil, status.Errorf(codes.Unknown, "failed to resolve image %q: no such image", cfg.GetImage().GetImage())
	}
	name := containerName(cfg.GetMetadata(), p.cfg.GetMetadata())
	if owner, ok := s.names[name]; ok {
		return nil, status.Errorf(codes.Unknown, "failed to reserve container name %q: name %q is reserved for %q", name, name, owner)
	}
	script := s.script
	if script == nil {
		second := s.second
		script = func(cfg *runtimeapi.ContainerConfig) Behavior { return CommandBehavior(cfg, second) }
	}
	c := &container{
		id:        s.newID("container"),
		sandboxID: p.id,
		name:      name,
		cfg:       clone(cfg),
		image:     clone(img),
		behavior:  script(clone(cfg)),
		state:     runtimeapi.ContainerState_CONTAINER_CREATED,
		createdAt: time.Now().UnixNano(),
		stop:      make(chan struct{}),
		exited:    make(chan struct{}),
	}
	if dir := p.cfg.GetLogDirectory(); dir != "" && cfg.GetLogPath() != "" {
		c.logPath = filepath.Join(dir, cfg.GetLogPath())
		if s.crio.LogDirs {
			if fi, err := os.Stat(filepath.Dir(c.logPath)); err != nil || !fi.IsDir() {
				return nil, crioNoLogDir()
			}
		}
	}
	s.names[name] = c.id
	s.ctrs[c.id] = c
	s.emit(c, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// lockContainer locks the server and returns the container id in it; for
// an unknown id it unlocks again and returns NotFound.
func (r *runtimeServer) lockContainer(id string) (*Server, *container, error) {
	c, err := lockFind(r.s, r.s.ctrs, "container", id)
	return r.s, c, err
}

func (r *runtimeServer) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	s, c, err := r.lockContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.Unknown, "failed to set starting state for container %q: container is in %s state", c.id, c.state)
	}
	if c.logPath != "" {
		if err := os.MkdirAll(filepath.Dir(c.logPath), 0o755); err != nil {
			return nil, status.Errorf(codes.Unknown, "failed to create container log directory: %v", err)
		}
		f, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
		if err != nil {
			return nil, status.Errorf(codes.Unknown, "failed to create container log file: %v", err)
		}
		f.Close()
	}
	if msg := c.behavior.StartError; msg != "" {
		c.message = msg
		s.exit(c, 128, "StartError")
		if s.crio.RemoveFailedStarts {
			s.remove(c)
			return nil, status.Errorf(codes.Unknown, "failed to start container %s: %s", c.id, msg)
		}
		return nil, status.Errorf(codes.Unknown, "failed to create containerd task: failed to create shim task: %s", msg)
	}
	start := time.Now()
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = start.UnixNano()
	s.emit(c, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	go s.run(c, start)
	return &runtimeapi.StartContainerResponse{}, nil
}

// run plays a started container's script: its output at the set times,
// then its exit, unless it is stopped first.
func (s *Server) run(c *container, start time.Time) {
	b := c.behavior
	for _, l := range b.Output {
		if !sleepUntil(start.Add(l.After), c.stop) {
			return
		}
		s.mu.Lock()
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			writeLog(c.logPath, l)
		}
		s.mu.Unlock()
	}
	if b.UntilStopped || !sleepUntil(start.Add(b.ExitAfter), c.stop) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		if b.OOMKilled {
			s.exit(c, exitKilled, "OOMKilled")
		} else {
			s.exit(c, b.ExitCode, "")
		}
	}
}

// sleepUntil waits until t; false if stop closed first.
func sleepUntil(t time.Time, stop <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stop:
		return false
	}
}

// writeLog appends a line to a container log in the CRI format:
// "<RFC3339Nano time> <stream> <F|P> <text>". Multi-line text becomes one
// log line per line. The fake ignores write errors, as a test reading the
// log will see what is missing.
func writeLog(logPath string, l LogLine) {
	if logPath == "" {
		return
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		return
	}
	defer f.Close()
	stream := l.Stream
	if stream == "" {
		stream = string(runtimeapi.Stdout)
	}
	lines := strings.Split(l.Text, "\n")
	var b strings.Builder
	for i, text := range lines {
		tag := runtimeapi.LogTagFull
		if l.Partial && i == len(lines)-1 {
			tag = runtimeapi.LogTagPartial
		}
		fmt.Fprintf(&b, "%s %s %s %s\n", time.Now().Format(time.RFC3339Nano), stream, tag, text)
	}
	f.WriteString(b.String())
}

// exit marks c exited with code; reason "" means "Completed" for code 0
// and "Error" otherwise, as containerd reports. Called with s.mu held.
func (s *Server) exit(c *container, code int32, reason string) {
	if reason == "" {
		reason = "Error"
		if code == 0 {
			reason = "Completed"
		}
	}
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finishedAt = time.Now().UnixNano()
	c.exitCode = code
	c.reason = reason
	c.halt()
	close(c.exited)
	s.emit(c, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

// remove kills c if it runs and forgets it. Called with s.mu held.
func (s *Server) remove(c *container) {
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.exit(c, exitKilled, "")
	}
	c.halt()
	delete(s.names, c.name)
	delete(s.ctrs, c.id)
	s.emit(c, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
}

// StopContainer stops a running container: at once with 137 when the
// timeout is 0; with its TermExitCode on SIGTERM; or, if it ignores SIGTERM,
// with 137 after the grace period of timeout seconds (see SetSecond). A
// container that is not running is left as it is, as containerd does.
func (r *runtimeServer) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	s, c, err := r.lockContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	b := c.behavior
	if b.OnStop != nil {
		s.mu.Unlock()
		b.OnStop(req.GetTimeout())
		s.mu.Lock()
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			s.mu.Unlock()
			return &runtimeapi.StopContainerResponse{}, nil
		}
	}
	switch {
	case req.GetTimeout() <= 0:
		s.exit(c, exitKilled, "")
		s.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	case !b.IgnoreSIGTERM:
		code := int32(exitTermed)
		if b.TermExitCode != nil {
			code = *b.TermExitCode
		}
		s.exit(c, code, "")
		s.mu.Unlock()
		return &runtimeapi.StopContainerResponse{}, nil
	}
	grace := time.Duration(req.GetTimeout()) * s.second
	exited := c.exited
	s.mu.Unlock()

	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
		return &runtimeapi.StopContainerResponse{}, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	case <-timer.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.exit(c, exitKilled, "")
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer kills the container if it runs and removes it. An unknown
// ID is no error, as in containerd.
func (r *runtimeServer) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ctrs[req.GetContainerId()]
	switch {
	case c != nil:
		s.remove(c)
	case s.crio.RemoveNotFound:
		return nil, crioRemoveNotFound(req.GetContainerId())
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (r *runtimeServer) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	keep := func(c *container) bool {
		return (f.GetId() == "" || f.GetId() == c.id) &&
			(f.GetPodSandboxId() == "" || f.GetPodSandboxId() == c.sandboxID) &&
			(f.GetState() == nil || f.GetState().GetState() == c.state) &&
			matchLabels(f.GetLabelSelector(), c.cfg.GetLabels())
	}
	// The listing is the status's summary, as containerd builds it.
	summary := func(c *container) *runtimeapi.Container {
		st := containerStatus(c)
		return &runtimeapi.Container{
			Id: st.Id, PodSandboxId: c.sandboxID, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt,
			Image: &runtimeapi.ImageSpec{Image: st.ImageId}, ImageRef: st.ImageRef, ImageId: st.ImageId,
			Labels: st.Labels, Annotations: st.Annotations,
		}
	}
	return &runtimeapi.ListContainersResponse{
		Containers: list(r.s, r.s.ctrs, func(c *container) int64 { return c.createdAt }, keep, summary),
	}, nil
}

func (r *runtimeServer) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	s, c, err := r.lockContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return &runtimeapi.ContainerStatusResponse{Status: containerStatus(c)}, nil
}

func containerStatus(c *container) *runtimeapi.ContainerStatus {
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    clone(c.cfg.GetMetadata()),
		State:       c.state,
		CreatedAt:   c.createdAt,
		StartedAt:   c.startedAt,
		FinishedAt:  c.finishedAt,
		ExitCode:    c.exitCode,
		Image:       clone(c.cfg.GetImage()),
		ImageRef:    c.image.GetId(),
		ImageId:     c.image.GetId(),
		Reason:      c.reason,
		Message:     c.message,
		Labels:      clone(c.cfg.GetLabels()),
		Annotations: clone(c.cfg.GetAnnotations()),
		LogPath:     c.logPath,
	}
	for _, m := range c.cfg.GetMounts() {
		st.Mounts = append(st.Mounts, clone(m))
	}
	return st
}

// containerStatuses lists the statuses of a sandbox's containers. Called
// with s.mu held.
func (s *Server) containerStatuses(sandboxID string) []*runtimeapi.ContainerStatus {
	var out []*runtimeapi.ContainerStatus
	for _, c := range sortedByCreation(s.ctrs, func(c *container) int64 { return c.createdAt }) {
		if c.sandboxID == sandboxID {
			out = append(out, containerStatus(c))
		}
	}
	return out
}

func (r *runtimeServer) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	s, c, err := r.lockContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if state := c.state; state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		s.mu.Unlock()
		return nil, status.Errorf(codes.Unknown, "container is in %s state", state)
	}
	exec := c.behavior.Exec
	second := s.second
	s.mu.Unlock()

	var res ExecResult
	if exec != nil {
		res = exec(append([]string(nil), req.GetCmd()...))
	}
	if res.Took > 0 {
		wait := res.Took
		timeout := time.Duration(req.GetTimeout()) * second
		timedOut := timeout > 0 && timeout < wait
		if timedOut {
			wait = timeout
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if timedOut {
			return nil, status.Errorf(codes.DeadlineExceeded, "failed to exec in container: timeout %v exceeded: context deadline exceeded", timeout)
		}
	}
	return &runtimeapi.ExecSyncResponse{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode}, nil
}
