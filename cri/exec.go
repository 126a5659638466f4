package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Exec prepares an interactive command in a running container (CRI Exec)
// and returns the URL where the runtime's streaming server serves it,
// once, to a remotecommand client (SPDY or WebSocket), as the kubelet
// hands it to `kubectl exec`. Nothing runs until a client connects.
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.Exec, req)
	if err != nil {
		return "", wrap(err, "preparing exec of %q in container %q", req.GetCmd(), req.GetContainerId())
	}
	if resp.GetUrl() == "" {
		return "", fmt.Errorf("preparing exec of %q in container %q: runtime returned no URL", req.GetCmd(), req.GetContainerId())
	}
	return resp.GetUrl(), nil
}
