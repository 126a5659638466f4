package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type sandbox struct {
	id        string
	name      string // reserved name, released on remove
	cfg       *runtimeapi.PodSandboxConfig
	handler   string
	state     runtimeapi.PodSandboxState
	createdAt int64
	ip        string
}

// SandboxConfig returns a copy of the config sandbox id was run with, or nil
// if there is no such sandbox.
func (s *Server) SandboxConfig(id string) *runtimeapi.PodSandboxConfig {
	if p, err := lockFind(s, s.pods, "sandbox", id); err == nil {
		defer s.mu.Unlock()
		return clone(p.cfg)
	}
	return nil
}

// sandboxName is containerd's reserved name for a sandbox: two sandboxes
// with the same metadata cannot exist at once.
func sandboxName(md *runtimeapi.PodSandboxMetadata) string {
	return strings.Join([]string{md.GetName(), md.GetNamespace(), md.GetUid(), fmt.Sprint(md.GetAttempt())}, "_")
}

func hostNetwork(cfg *runtimeapi.PodSandboxConfig) bool {
	return cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

func (r *runtimeServer) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	s := r.s
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "sandbox config must include metadata")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := sandboxName(md)
	if owner, ok := s.names[name]; ok {
		return nil, status.Errorf(codes.Unknown, "failed to reserve sandbox name %q: name %q is reserved for %q", name, name, owner)
	}
	if err := s.crioMakeLogDir(cfg.GetLogDirectory()); err != nil {
		return nil, err
	}
	if h := req.GetRuntimeHandler(); !s.knownHandler(h) {
		return nil, status.Errorf(codes.Unknown, "unable to get OCI runtime for sandbox %q: no runtime for %q is configured", name, h)
	}
	id := s.newID("sandbox")
	p := &sandbox{
		id:        id,
		name:      name,
		cfg:       clone(cfg),
		handler:   req.GetRuntimeHandler(),
		state:     runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt: time.Now().UnixNano(),
	}
	if !hostNetwork(cfg) {
		if ready, msg := s.networkReady(); !ready {
			return nil, status.Errorf(codes.Unknown, "failed to setup network for sandbox %q: %s", id, msg)
		}
		s.nextIP++
		p.ip = fmt.Sprintf("10.99.%d.%d", (s.nextIP+1)/254, (s.nextIP+1)%254)
	}
	s.names[name] = id
	s.pods[id] = p
	s.madeWith = append(s.madeWith, md.GetName()+"="+p.handler)
	s.emitSandbox(p, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	s.emitSandbox(p, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find %s %q: not found", kind, id)
}

// lockSandbox locks the server and returns the sandbox id in it; for an
// unknown id it unlocks again and returns NotFound.
func (r *runtimeServer) lockSandbox(id string) (*Server, *sandbox, error) {
	p, err := lockFind(r.s, r.s.pods, "sandbox", id)
	return r.s, p, err
}

// lockFind locks s and returns items[id]; for an unknown id it unlocks
// again and returns NotFound naming kind. (items is one of s's maps, which
// are made once.)
func lockFind[T any](s *Server, items map[string]*T, kind, id string) (*T, error) {
	s.mu.Lock()
	if v := items[id]; v != nil {
		return v, nil
	}
	s.mu.Unlock()
	return nil, notFound(kind, id)
}

// StopPodSandbox kills the sandbox's running containers (exit code 137: the
// runtime stops them without a grace period) and marks it not ready. An
// unknown ID is NotFound, as on containerd before 1.6.35 / 1.7.21.
func (r *runtimeServer) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	s, p, err := r.lockSandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	for _, c := range s.ctrs {
		if c.sandboxID == p.id && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			s.exit(c, exitKilled, "")
		}
	}
	p.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	s.emitSandbox(p, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox kills and removes the sandbox's containers and the
// sandbox. An unknown ID is no error, as in containerd.
func (r *runtimeServer) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	s, p, err := r.lockSandbox(req.GetPodSandboxId())
	if err != nil {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	defer s.mu.Unlock()
	for _, c := range s.ctrs {
		if c.sandboxID == p.id {
			s.remove(c)
		}
	}
	delete(s.names, p.name)
	delete(s.pods, p.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (r *runtimeServer) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	s, p, err := r.lockSandbox(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	resp := &runtimeapi.PodSandboxStatusResponse{
		Status:             s.sandboxStatus(p),
		ContainersStatuses: s.containerStatuses(p.id),
		Timestamp:          time.Now().UnixNano(),
	}
	if req.GetVerbose() {
		info, _ := json.Marshal(map[string]any{
			"pid":            1,
			"runtimeHandler": p.handler,
			"config":         p.cfg,
		})
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

func (s *Server) sandboxStatus(p *sandbox) *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id:        p.id,
		Metadata:  clone(p.cfg.GetMetadata()),
		State:     p.state,
		CreatedAt: p.createdAt,
		Network:   &runtimeapi.PodSandboxNetworkStatus{Ip: p.ip},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: clone(p.cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()),
		}},
		Labels:         clone(p.cfg.GetLabels()),
		Annotations:    clone(p.cfg.GetAnnotations()),
		RuntimeHandler: p.handler,
	}
}

func (r *runtimeServer) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	keep := func(p *sandbox) bool {
		return (f.GetId() == "" || f.GetId() == p.id) &&
			(f.GetState() == nil || f.GetState().GetState() == p.state) &&
			matchLabels(f.GetLabelSelector(), p.cfg.GetLabels())
	}
	summary := func(p *sandbox) *runtimeapi.PodSandbox {
		return &runtimeapi.PodSandbox{
			Id: p.id, Metadata: clone(p.cfg.GetMetadata()), State: p.state, CreatedAt: p.createdAt,
			Labels: clone(p.cfg.GetLabels()), Annotations: clone(p.cfg.GetAnnotations()), RuntimeHandler: p.handler,
		}
	}
	return &runtimeapi.ListPodSandboxResponse{
		Items: list(r.s, r.s.pods, func(p *sandbox) int64 { return p.createdAt }, keep, summary),
	}, nil
}

// list is a List call: under s's lock, the items that keep passes, oldest
// first, each as summary makes it.
func list[T, R any](s *Server, items map[string]*T, createdAt func(*T) int64, keep func(*T) bool, summary func(*T) R) []R {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []R
	for _, v := range sortedByCreation(items, createdAt) {
		if keep(v) {
			out = append(out, summary(v))
		}
	}
	return out
}

// matchLabels reports whether labels has every key and value of selector.
func matchLabels(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
