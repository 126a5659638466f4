package runner

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// imageWithDefaultTag adds ":latest" to an image with neither tag nor
// digest, as the kubelet's applyDefaultImageTag does.
func imageWithDefaultTag(image string) string {
	if strings.Contains(image, "@") {
		return image
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if strings.Contains(last, ":") {
		return image
	}
	return image + ":latest"
}

// pullError is an image failure that ends the run with exit 125: podrun
// cannot run the pod.
type pullError struct {
	Reason  string // ErrImagePull, ErrImageNeverPull, InvalidImageName
	Message string
}

func (e *pullError) Error() string { return e.Reason + ": " + e.Message }

// pullDecision says whether to pull an image under a pull policy given
// whether the runtime already has it, or why the container cannot start.
func pullDecision(policy v1.PullPolicy, image string, present bool) (bool, error) {
	switch policy {
	case v1.PullAlways:
		return true, nil
	case v1.PullNever:
		if !present {
			return false, &pullError{Reason: reasonErrImageNeverPull,
				Message: fmt.Sprintf("Container image %q is not present with pull policy of Never", image)}
		}
		return false, nil
	default: // IfNotPresent
		return !present, nil
	}
}
