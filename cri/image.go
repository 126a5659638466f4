package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ImageStatus returns the image named image (a reference or an ID) as the
// runtime has it, or nil and no error when the runtime does not have it.
func (c *Client) ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error) {
	resp, err := call(c, ctx, 0, c.images.ImageStatus, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, wrap(err, "getting status of image %q", image)
	}
	return resp.GetImage(), nil
}

// PullImage pulls image with auth (nil: anonymous) for the sandbox
// sandboxCfg (nil allowed) and returns the image reference the runtime
// gives back, usually its ID. A pull can take long, so only the caller's
// context bounds it.
func (c *Client) PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := c.images.PullImage(ctx, &runtimeapi.PullImageRequest{
		Image:         &runtimeapi.ImageSpec{Image: image},
		Auth:          auth,
		SandboxConfig: sandboxCfg,
	}, waitForReady())
	if err != nil {
		return "", wrap(err, "pulling image %q", image)
	}
	return resp.GetImageRef(), nil
}

// RemoveImage removes image (a reference or an ID) from the runtime; an
// image the runtime does not have counts as removed.
func (c *Client) RemoveImage(ctx context.Context, image string) error {
	_, err := call(c, ctx, 0, c.images.RemoveImage, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	return done(err, "removing image %q", image)
}
