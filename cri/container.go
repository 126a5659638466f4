package cri

import (
	"context"
	"fmt"
	"math"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CreateContainer creates a container in a sandbox and returns its ID.
// sandboxCfg is the config the sandbox was run with.
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.CreateContainer, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        cfg,
		SandboxConfig: sandboxCfg,
	})
	if err != nil {
		return "", wrap(err, "creating container %q in pod sandbox %q", cfg.GetMetadata().GetName(), sandboxID)
	}
	if resp.GetContainerId() == "" {
		return "", fmt.Errorf("creating container %q in pod sandbox %q: runtime returned no ID", cfg.GetMetadata().GetName(), sandboxID)
	}
	return resp.GetContainerId(), nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	if _, err := call(c, ctx, 0, c.runtime.StartContainer, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		return wrap(err, "starting container %q", id)
	}
	return nil
}

// MaxStopTimeout is the longest grace period, in seconds, StopContainer
// hands the runtime: the most seconds a time.Duration holds (about 292
// years). containerd and CRI-O turn the CRI timeout into
// time.Duration(timeout)*time.Second, which wraps around beyond it: the
// kubelet hands them a terminationGracePeriodSeconds of MaxInt64 as it is,
// which containerd reads as -1 s and kills at once, without SIGTERM.
const MaxStopTimeout = math.MaxInt64 / int64(time.Second)

// StopContainer stops a running container: SIGTERM (or the image's stop
// signal), then SIGKILL after timeout seconds (0: at once; beyond
// MaxStopTimeout, MaxStopTimeout: as long as the runtime can wait). The
// RPC may take the grace period on top of the per-call timeout. A
// container that does not exist counts as stopped.
func (c *Client) StopContainer(ctx context.Context, id string, timeout int64) error {
	timeout = stopTimeout(timeout)
	_, err := call(c, ctx, time.Duration(max(timeout, 0))*time.Second, c.runtime.StopContainer,
		&runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
	return done(err, "stopping container %q", id)
}

// stopTimeout is the grace period StopContainer hands the runtime: at most
// MaxStopTimeout.
func stopTimeout(seconds int64) int64 { return min(seconds, MaxStopTimeout) }

// RemoveContainer removes a container, killing it first if it runs. A
// container that does not exist counts as removed.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	_, err := call(c, ctx, 0, c.runtime.RemoveContainer, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	return done(err, "removing container %q", id)
}

// ListContainers lists the containers that match filter (nil: all).
func (c *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	resp, err := call(c, ctx, 0, c.runtime.ListContainers, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, wrap(err, "listing containers")
	}
	return resp.GetContainers(), nil
}

// ContainerStatus returns the container's status. A missing container is an
// error (IsNotFound).
func (c *Client) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	resp, err := call(c, ctx, 0, c.runtime.ContainerStatus, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return nil, wrap(err, "getting status of container %q", id)
	}
	if resp.GetStatus() == nil {
		return nil, fmt.Errorf("getting status of container %q: runtime returned no status", id)
	}
	return resp.GetStatus(), nil
}

// ExecSync runs cmd in a running container and returns its output and exit
// code; a non-zero exit code is not an error. timeout bounds the command in
// the runtime (rounded up to whole seconds, as CRI counts them) and extends
// the RPC's deadline by as much; timeout 0 means no limit, and then, as in
// the kubelet, only the caller's context bounds the call.
func (c *Client) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error) {
	secs := int64((timeout + time.Second - 1) / time.Second)
	var cancel context.CancelFunc
	if secs > 0 {
		ctx, cancel = c.callCtx(ctx, time.Duration(secs)*time.Second)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	resp, err := c.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: secs}, waitForReady())
	if err != nil {
		return nil, nil, 0, wrap(err, "executing %q in container %q", cmd, id)
	}
	return resp.GetStdout(), resp.GetStderr(), resp.GetExitCode(), nil
}
