package runner

import (
	"context"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/credentials"
)

// pullWithCredentials pulls a container's image with the credentials the
// pod's imagePullSecrets and the node hold for it. When the pull fails and
// some of the pod's imagePullSecrets were not in the run, a
// FailedToRetrieveImagePullSecret warning names them, as the kubelet's
// event does.
func (p *podRun) pullWithCredentials(ctx context.Context, image string, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	podRing, missing, err := credentials.PodKeyring(p.pod, p.r.opts.Secrets)
	if err != nil {
		return "", err
	}
	creds, err := credentials.AuthsFor(image, append([]*credentials.Keyring{podRing}, p.r.nodeKeyrings...))
	if err != nil {
		return "", err
	}
	ref, err := credentials.Pull(ctx, p.r.rt, image, creds, sandboxCfg)
	if err != nil && len(missing) > 0 && ctx.Err() == nil {
		p.event("Warning", "FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.",
			strings.Join(missing, ", "))
	}
	return ref, err
}
