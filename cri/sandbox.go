package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunPodSandbox creates and starts a pod sandbox and returns its ID.
// runtimeHandler selects a RuntimeClass handler; "" is the runtime's default.
func (c *Client) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.RunPodSandbox, &runtimeapi.RunPodSandboxRequest{
		Config:         cfg,
		RuntimeHandler: runtimeHandler,
	})
	if err != nil {
		return "", wrap(err, "running pod sandbox %s", sandboxName(cfg))
	}
	if resp.GetPodSandboxId() == "" {
		return "", fmt.Errorf("running pod sandbox %s: runtime returned no ID", sandboxName(cfg))
	}
	return resp.GetPodSandboxId(), nil
}

// StopPodSandbox stops the sandbox's containers and releases its network.
// A sandbox that does not exist counts as stopped.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	_, err := call(c, ctx, 0, c.runtime.StopPodSandbox, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return done(err, "stopping pod sandbox %q", id)
}

// RemovePodSandbox removes the sandbox and its containers. A sandbox that
// does not exist counts as removed.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	_, err := call(c, ctx, 0, c.runtime.RemovePodSandbox, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return done(err, "removing pod sandbox %q", id)
}

// PodSandboxStatus returns the sandbox's status; verbose asks for the
// runtime's Info map too. A missing sandbox is an error (IsNotFound).
func (c *Client) PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	resp, err := call(c, ctx, 0, c.runtime.PodSandboxStatus, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
	if err != nil {
		return nil, wrap(err, "getting status of pod sandbox %q", id)
	}
	if resp.GetStatus() == nil {
		return nil, fmt.Errorf("getting status of pod sandbox %q: runtime returned no status", id)
	}
	return resp, nil
}

// ListPodSandbox lists the sandboxes that match filter (nil: all).
func (c *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	resp, err := call(c, ctx, 0, c.runtime.ListPodSandbox, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, wrap(err, "listing pod sandboxes")
	}
	return resp.GetItems(), nil
}

// sandboxName names a sandbox config in errors as "namespace/name", quoted.
func sandboxName(cfg *runtimeapi.PodSandboxConfig) string {
	md := cfg.GetMetadata()
	return fmt.Sprintf("%q", md.GetNamespace()+"/"+md.GetName())
}
