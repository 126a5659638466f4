package fake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMsgSize matches the client's, as crictl and containerd set it.
const maxMsgSize = 16 << 20

// maxSocketPath is the longest unix socket path Linux accepts (108 bytes
// with the terminating NUL), with a margin.
const maxSocketPath = 100

// Server is a fake CRI runtime. Its zero value is not usable: use Start or
// StartAt.
type Server struct {
	path string

	mu     sync.Mutex
	gs     *grpc.Server // nil while stopped
	closed bool
	calls  []string
	fail   map[string][]error
	delay  map[string]time.Duration
	second time.Duration
	script func(*runtimeapi.ContainerConfig) Behavior
	conds  []*runtimeapi.RuntimeCondition
	info   map[string]string
	events bool
	// bareEvents: events without ContainersStatuses (EventsWithoutStatuses).
	bareEvents bool
	subs       map[chan *runtimeapi.ContainerEventResponse]struct{}
	nextID     int
	nextIP     int
	names      map[string]string // reserved sandbox and container names → ID
	pods       map[string]*sandbox
	ctrs       map[string]*container
	images     map[string]*runtimeapi.Image // by normalized reference
	missing    map[string]bool
	pullErr    map[string]*pullFailure // injected pull failures by image
	auths      map[string]*runtimeapi.AuthConfig
	pulls      []Pull
	held       map[string]chan struct{} // HoldPulls: pulls that wait, by image
	inFlight   []string                 // held pulls now
	cancelled  []string                 // held pulls whose callers gave up

	cgroupDriver         *runtimeapi.CgroupDriver // nil: RuntimeConfig is unknown, as on containerd 1.6
	handlers             []*runtimeapi.RuntimeHandler
	unreported           []string // handlers RunPodSandbox takes that Status does not report
	madeWith             []string // "POD=HANDLER" of each sandbox made, in order
	crio                 CRIOWays // CRI-O's ways (crio.go)
	versionName, version string   // Version's runtime name and version; "" for the fake's own (SetVersion)
}

// Start serves a new Server on a socket in a temporary directory and returns
// it with its endpoint ("unix:///..."). It is closed when the test ends.
func Start(t testing.TB) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	if len(dir)+len("/cri.sock") > maxSocketPath {
		// Long test names make long temp dirs; sockets need short paths.
		d, err := os.MkdirTemp("", "crifake")
		if err != nil {
			t.Fatalf("fake cri: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	s, err := StartAt(filepath.Join(dir, "cri.sock"))
	if err != nil {
		t.Fatalf("fake cri: %v", err)
	}
	t.Cleanup(s.Close)
	return s, s.Endpoint()
}

// StartAt serves a new Server on the unix socket at path.
func StartAt(path string) (*Server, error) {
	s := &Server{
		path:    path,
		fail:    map[string][]error{},
		delay:   map[string]time.Duration{},
		second:  time.Second,
		info:    map[string]string{},
		subs:    map[chan *runtimeapi.ContainerEventResponse]struct{}{},
		names:   map[string]string{},
		pods:    map[string]*sandbox{},
		ctrs:    map[string]*container{},
		images:  map[string]*runtimeapi.Image{},
		missing: map[string]bool{},
		pullErr: map[string]*pullFailure{},
		held:    map[string]chan struct{}{},
		auths:   map[string]*runtimeapi.AuthConfig{},
		conds: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		},
	}
	s.info["cniconfig"] = `{"PluginDirs":["/opt/cni/bin"],"PluginConfDir":"/etc/cni/net.d","Networks":[{"Config":{"Name":"fake","CNIVersion":"1.0.0"}}]}`
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// Endpoint returns the server's endpoint, "unix://" and the socket path.
func (s *Server) Endpoint() string { return "unix://" + s.path }

// Stop stops serving, like a runtime that goes down: connections close,
// calls in flight fail, the socket goes away. Sandboxes, containers and
// images are kept and containers go on running, as they do under
// containerd's shims; Restart serves them again.
func (s *Server) Stop() {
	s.mu.Lock()
	gs := s.gs
	s.gs = nil
	s.mu.Unlock()
	if gs != nil {
		gs.Stop()
	}
}

// Restart serves the server again on its socket after Stop. It does
// nothing if the server is serving.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("restarting fake cri: server closed")
	}
	if s.gs != nil {
		return nil
	}
	os.Remove(s.path) // a socket left by a crash, as runtimes do
	lis, err := net.Listen("unix", s.path)
	if err != nil {
		return fmt.Errorf("starting fake cri: %w", err)
	}
	gs := grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMsgSize),
		grpc.MaxSendMsgSize(maxMsgSize),
		grpc.UnaryInterceptor(s.unaryIntercept),
		grpc.StreamInterceptor(s.streamIntercept),
	)
	runtimeapi.RegisterRuntimeServiceServer(gs, &runtimeServer{s: s})
	runtimeapi.RegisterImageServiceServer(gs, &imageServer{s: s})
	s.gs = gs
	go gs.Serve(lis)
	return nil
}

// Close stops serving for good and ends every container's script.
func (s *Server) Close() {
	s.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.ctrs {
		c.halt()
	}
}

// Calls returns the names of the CRI methods called so far, in order
// ("Version", "RunPodSandbox", ...), including calls that failed.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// ResetCalls forgets the calls made so far.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// FailNext makes the next call of method (e.g. "RunPodSandbox") fail with
// err instead of running; calling it again queues more failures. err is sent
// as it is if it is a gRPC status error (status.Error(codes.NotFound, ...)),
// and with codes.Unknown otherwise, as containerd sends most errors.
func (s *Server) FailNext(method string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = append(s.fail[method], err)
}

// Delay makes every call of method wait d before it runs (or until the
// caller gives up), like a hung or slow runtime. d == 0 ends the delay.
func (s *Server) Delay(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.delay, method)
		return
	}
	s.delay[method] = d
}

// SetSecond sets how long one second of the containers' time lasts: the
// seconds of "sleep N" in command lines and of StopContainer's grace
// period. Tests set it to a few milliseconds to run fast. Default 1s.
func (s *Server) SetSecond(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.second = d
}

// SetCondition sets a runtime condition reported by Status
// (runtimeapi.RuntimeReady, runtimeapi.NetworkReady, or another).
// While NetworkReady is false, sandboxes off the host network fail to run,
// as they do when containerd has no CNI config.
func (s *Server) SetCondition(typ string, ready bool, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &runtimeapi.RuntimeCondition{Type: typ, Status: ready, Reason: reason, Message: message}
	for i, old := range s.conds {
		if old.Type == typ {
			s.conds[i] = c
			return
		}
	}
	s.conds = append(s.conds, c)
}

// SetStatusInfo sets the Info map that a verbose Status returns.
func (s *Server) SetStatusInfo(info map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = clone(info)
}

// SetRuntimeHandlers sets the handlers, and their features, that Status
// reports (none until it is called, as on a runtime older than CRI 1.30).
func (s *Server) SetRuntimeHandlers(h []*runtimeapi.RuntimeHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = h
}

// SetUnreportedHandlers makes RunPodSandbox take these runtime handlers
// besides the default and those SetRuntimeHandlers reports, without Status
// reporting them, as containerd 1.6 takes the handlers of its config. Any
// other handler fails RunPodSandbox as containerd fails it.
func (s *Server) SetUnreportedHandlers(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unreported = names
}

// SandboxHandlers are the pod name and runtime handler of every sandbox
// RunPodSandbox made, as "NAME=HANDLER", in order ("NAME=" for the
// default handler).
func (s *Server) SandboxHandlers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.madeWith)
}

// knownHandler tells whether RunPodSandbox takes handler h; s.mu is held.
func (s *Server) knownHandler(h string) bool {
	if h == "" || slices.Contains(s.unreported, h) {
		return true
	}
	return slices.ContainsFunc(s.handlers, func(r *runtimeapi.RuntimeHandler) bool { return r.GetName() == h })
}

// SetCgroupDriver makes RuntimeConfig report the cgroup driver d. Until it
// is called, RuntimeConfig is unknown to the server, as on containerd 1.6.
func (s *Server) SetCgroupDriver(d runtimeapi.CgroupDriver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cgroupDriver = &d
}

// EnableEvents turns GetContainerEvents on or off. Off (the default), the
// method is unknown to the server, as on containerd 1.6.
func (s *Server) EnableEvents(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = on
}

// EventsWithoutStatuses makes the events carry no container statuses (the
// pod's sandbox status only), so that a client must read them itself.
func (s *Server) EventsWithoutStatuses(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bareEvents = on
}

// newID returns the next ID: 64 hex digits like containerd's, but
// deterministic, so output that shows IDs can be compared with golden files.
func (s *Server) newID(kind string) string {
	s.nextID++
	sum := sha256.Sum256(fmt.Appendf(nil, "%s-%d", kind, s.nextID))
	return hex.EncodeToString(sum[:])
}

// methodName is the last part of a gRPC full method name.
func methodName(full string) string { return full[strings.LastIndex(full, "/")+1:] }

func (s *Server) unaryIntercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.enter(ctx, methodName(info.FullMethod)); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *Server) streamIntercept(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.enter(ss.Context(), methodName(info.FullMethod)); err != nil {
		return err
	}
	return handler(srv, ss)
}

// enter logs a call and applies its scripted delay and failure.
func (s *Server) enter(ctx context.Context, method string) error {
	s.mu.Lock()
	s.calls = append(s.calls, method)
	d := s.delay[method]
	var err error
	if q := s.fail[method]; len(q) > 0 {
		err, s.fail[method] = q[0], q[1:]
	}
	s.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Error(codes.Unknown, err.Error())
		}
		return err
	}
	return nil
}

// runtimeServer and imageServer are the two gRPC services, split because
// their Unimplemented bases cannot both be embedded in one type.
type runtimeServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	s *Server
}

type imageServer struct {
	runtimeapi.UnimplementedImageServiceServer
	s *Server
}

func (r *runtimeServer) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       "fake",
		RuntimeVersion:    "0.1.0",
		RuntimeApiVersion: "v1",
	}
	if s.versionName != "" {
		v.RuntimeName, v.RuntimeVersion = s.versionName, s.version
	}
	return v, nil
}

func (r *runtimeServer) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{}}
	for _, c := range s.conds {
		resp.Status.Conditions = append(resp.Status.Conditions, clone(c))
	}
	for _, h := range s.handlers {
		resp.RuntimeHandlers = append(resp.RuntimeHandlers, clone(h))
	}
	if req.GetVerbose() {
		resp.Info = clone(s.info)
	}
	return resp, nil
}

func (r *runtimeServer) RuntimeConfig(ctx context.Context, req *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cgroupDriver == nil {
		return nil, status.Error(codes.Unimplemented, "unknown method RuntimeConfig for service runtime.v1.RuntimeService")
	}
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: *s.cgroupDriver}}, nil
}

// networkReady reports the NetworkReady condition and its message.
func (s *Server) networkReady() (bool, string) {
	for _, c := range s.conds {
		if c.Type == runtimeapi.NetworkReady {
			return c.Status, c.Message
		}
	}
	return true, ""
}
