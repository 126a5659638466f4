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
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pods[id]; p != nil {
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
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "an error occurred when try to find %s %q: not found", kind, id)
}

// StopPodSandbox kills the sandbox's running containers (exit code 137: the
// runtime stops them without a grace period) and marks it not ready. An
// unknown ID is NotFound, as on containerd before 1.6.35 / 1.7.21.
func (r *runtimeServer) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[req.GetPodSandboxId()]
	if p == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
	for _, c := range s.ctrs {
		if c.sandboxID == p.id && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			s.exit(c, exitKilled, "")
		}
	}
	p.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox kills and removes the sandbox's containers and the
// sandbox. An unknown ID is no error, as in containerd.
func (r *runtimeServer) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[req.GetPodSandboxId()]
	if p == nil {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
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
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pods[req.GetPodSandboxId()]
	if p == nil {
		return nil, notFound("sandbox", req.GetPodSandboxId())
	}
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
	s := r.s
	f := req.GetFilter()
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := &runtimeapi.ListPodSandboxResponse{}
	for _, p := range sortedByCreation(s.pods, func(p *sandbox) int64 { return p.createdAt }) {
		if f.GetId() != "" && f.GetId() != p.id ||
			f.GetState() != nil && f.GetState().GetState() != p.state ||
			!matchLabels(f.GetLabelSelector(), p.cfg.GetLabels()) {
			continue
		}
		resp.Items = append(resp.Items, &runtimeapi.PodSandbox{
			Id:             p.id,
			Metadata:       clone(p.cfg.GetMetadata()),
			State:          p.state,
			CreatedAt:      p.createdAt,
			Labels:         clone(p.cfg.GetLabels()),
			Annotations:    clone(p.cfg.GetAnnotations()),
			RuntimeHandler: p.handler,
		})
	}
	return resp, nil
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
