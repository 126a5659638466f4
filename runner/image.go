package runner

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

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

// permanentPullFailure reports whether a pull error from the runtime means
// the pull cannot succeed by retrying, and why in a few words. The kubelet
// retries every failed pull with back-off; podrun ends the run instead when
// the registry has answered for good, so that a typo does not wait out
// --timeout. The texts are containerd's (1.6, 1.7 and 2.x CRI PullImage):
//
//	rpc error: code = NotFound desc = failed to pull and unpack image "X":
//	  failed to resolve image: X: not found                         (2.x)
//	  failed to resolve reference "X": X: not found                  (1.6, 1.7)
//	rpc error: code = Unknown desc = ... pull access denied, repository does
//	  not exist or may require authorization: authorization failed ...
//	... failed to authorize: failed to fetch anonymous token: unexpected
//	  status ...: 401 Unauthorized                                   (1.6)
//	... failed to resolve reference "X": X: unexpected status ...: 403 Forbidden
//
// Anything else (connection refused, timeouts, 5xx, DNS) is transient.
func permanentPullFailure(msg string) (string, bool) {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("code = NotFound") ||
		has("failed to resolve") && has(": not found"):
		return "not found", true
	case has("pull access denied", "authorization failed", "401 Unauthorized", "403 Forbidden",
		"code = Unauthenticated", "code = PermissionDenied", "denied: "):
		return "unauthorized", true
	case has("code = InvalidArgument", "invalid reference format", "failed to parse image reference"):
		return "invalid image name", true
	}
	return "", false
}
