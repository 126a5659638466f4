package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Attach prepares an attach to a running container's stdio (CRI Attach)
// and returns the URL where the runtime's streaming server serves it,
// once, to a remotecommand client, as the kubelet hands it to `kubectl
// attach`. With a container's stdinOnce, the runtime closes its stdin
// when the first attach that streams stdin ends.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error) {
	resp, err := call(c, ctx, 0, c.runtime.Attach, req)
	if err != nil {
		return "", wrap(err, "preparing attach to container %q", req.GetContainerId())
	}
	if resp.GetUrl() == "" {
		return "", fmt.Errorf("preparing attach to container %q: runtime returned no URL", req.GetContainerId())
	}
	return resp.GetUrl(), nil
}
