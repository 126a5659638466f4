package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The calls served by the runtime's streaming server: each prepares a
// session and returns the URL where the server serves it, once, to a
// remotecommand client (SPDY or WebSocket), as the kubelet hands it to
// kubectl. Nothing runs until a client connects.

// Exec prepares an interactive command in a running container (CRI Exec),
// as for `kubectl exec`.
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.Exec, req)
	return streamURL(resp, err, "exec of %q in container %q", req.GetCmd(), req.GetContainerId())
}

// Attach prepares an attach to a running container's stdio (CRI Attach),
// as for `kubectl attach`. With a container's stdinOnce, the runtime
// closes its stdin when the first attach that streams stdin ends.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.Attach, req)
	return streamURL(resp, err, "attach to container %q", req.GetContainerId())
}

// streamURL is the URL of a streaming call's answer resp, or the call's
// error, or an error for an answer without one; what and args say what
// was being prepared.
func streamURL(resp interface{ GetUrl() string }, err error, what string, args ...any) (string, error) {
	if err != nil {
		return "", wrap(err, "preparing "+what, args...)
	}
	if resp.GetUrl() == "" {
		return "", fmt.Errorf("preparing "+what+": runtime returned no URL", args...)
	}
	return resp.GetUrl(), nil
}
