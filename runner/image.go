package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/credentials"
	"github.com/podrun/podrun/sources/imageref"
)

// podImages is what a pod's run knows of its images.
type podImages struct {
	refs    map[string]string            // image → ref, pulled or found in this run
	info    map[string]*runtimeapi.Image // ref → the runtime's ImageStatus, once read
	backOff backOff                      // pulls, by "<podUID>_<image>"
	turned  map[string]bool              // containers and image volumes that had their first turn (aheadFor)
	noAhead bool                         // a Job's later pod: the run's pulls ahead are not its
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
// and CRI-O's, which are containers/image's (go.podman.io/image/v5/docker),
// all with code = Unknown:
//
//	initializing source docker://X: reading manifest T in R: manifest unknown
//	  (a missing repository: "name unknown" or "repository name not known
//	  to registry"; a 404 without a body: "StatusCode: 404, ...")
//	... unable to retrieve auth token: invalid username/password:
//	  unauthorized: authentication required
//	... requested access to the resource is denied
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
		has("failed to resolve") && has(": not found") ||
		has("manifest unknown", "name unknown", "repository name not known to registry", "StatusCode: 404,"):
		return "not found", true
	case has("pull access denied", "authorization failed", "401 Unauthorized", "403 Forbidden",
		"code = Unauthenticated", "code = PermissionDenied", "denied: ",
		"invalid username/password", "authentication required", "requested access to the resource is denied"):
		return "unauthorized", true
	case has("code = InvalidArgument", "invalid reference format", "failed to parse image reference"):
		return "invalid image name", true
	}
	return "", false
}

// invalidImageName is the kubelet's InvalidImageName failure of an image
// that is not a reference (applyDefaultImageTag), nil for one that is.
func invalidImageName(image string) *pullError {
	if _, err := imageref.Parse(image); err != nil {
		return &pullError{Reason: reasonInvalidImageName, Message: fmt.Sprintf("Failed to apply default image tag %q: %v", image, err)}
	}
	return nil
}

// checkImageNames refuses, before anything is created, pods with an image
// that is not a reference. The kubelet finds it when the container is to
// be started, after the sandbox, and keeps the pod waiting
// (InvalidImageName); nothing changes in a podrun run, so podrun refuses
// at once, with the kubelet's reason and message and the field. The
// Result holds each pod as the kubelet would show it: Pending, such a
// container waiting with InvalidImageName, the others with the kubelet's
// default waiting reason.
func checkImageNames(pods []*v1.Pod) (*Result, error) {
	var errs []error
	res := &Result{Pods: make([]PodResult, len(pods))}
	for i, pod := range pods {
		st := v1.PodStatus{Phase: v1.PodPending}
		var podErrs []error
		for _, cs := range []struct {
			field    string
			list     []v1.Container
			statuses *[]v1.ContainerStatus
		}{{"spec.initContainers", pod.Spec.InitContainers, &st.InitContainerStatuses}, {"spec.containers", pod.Spec.Containers, &st.ContainerStatuses}} {
			for j, c := range cs.list {
				w := &v1.ContainerStateWaiting{Reason: reasonContainerCreating}
				if cs.field == "spec.containers" && len(pod.Spec.InitContainers) > 0 {
					w.Reason = reasonPodInitializing
				}
				if err := invalidImageName(c.Image); err != nil {
					w = &v1.ContainerStateWaiting{Reason: err.Reason, Message: err.Message}
					podErrs = append(podErrs, fmt.Errorf("%s[%d].image: %w", cs.field, j, err))
				}
				*cs.statuses = append(*cs.statuses, v1.ContainerStatus{Name: c.Name, Image: c.Image, State: v1.ContainerState{Waiting: w}})
			}
		}
		res.Pods[i] = PodResult{Pod: pod, Outcome: OutcomeError, Status: st, Err: errors.Join(podErrs...)}
		if len(podErrs) == 0 {
			res.Pods[i].Err = errors.New("not started: another pod of the run has an invalid image name")
		}
		for _, e := range podErrs {
			errs = append(errs, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, e))
		}
	}
	if len(errs) == 0 {
		return nil, nil
	}
	return res, errors.Join(errs...)
}

// ensureImage makes sure the runtime has the container's image, pulling it
// as imagePullPolicy says, and returns the image reference to create with.
// It follows the kubelet's EnsureImageExists: a pull that fails is retried
// with back-off (ErrImagePull, then ImagePullBackOff until the back-off
// ends; no reference, and wakeAt says when to look again). Unlike the
// kubelet, a pull that fails for good (permanentPullFailure) ends the run.
//
// At a container's first turn, the run's ahead pull of its image
// (prefetch.go), if any, stands for its pull: ensureImage waits for it and
// reports it as the kubelet reports a pull at that turn (Pulling, then
// Pulled or the failure), so nothing of it is seen before the turn. An
// image that was present before goes as it would without one, from the
// ImageStatus the ahead pull made (not asked again: one CRI call less per
// container); an ahead pull cut short and the pulls of later turns
// (restarts, retries after back-off) go as they would without one.
func (p *podRun) ensureImage(ctx context.Context, c *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (ref string, wakeAt time.Time, err error) {
	return p.ensureImageAt(ctx, c, c.Name, sandboxCfg)
}

// ensureImageAt is ensureImage at a turn: the container's own (its name),
// or an image volume's ("volume/" and the volume's name, c then standing
// for the volume's image at the turn of the container that mounts it).
func (p *podRun) ensureImageAt(ctx context.Context, c *v1.Container, turn string, sandboxCfg *runtimeapi.PodSandboxConfig) (ref string, wakeAt time.Time, err error) {
	if err := invalidImageName(c.Image); err != nil {
		p.reasons[c.Name] = waitingReason{Reason: err.Reason, Message: err.Message}
		return "", time.Time{}, err
	}
	image := imageref.WithDefaultTag(c.Image)
	if ref, ok := p.images.refs[image]; ok && c.ImagePullPolicy != v1.PullAlways {
		return ref, time.Time{}, nil
	}
	key := p.uid + "_" + c.Image
	a := p.aheadFor(turn, c, image)
	if a != nil {
		select {
		case <-a.done:
		case <-ctx.Done():
			return "", time.Time{}, ctx.Err()
		}
		_, inBackOff := p.images.backOff.untilSinceUpdate(key, p.r.now())
		presentAsIs := a.present && c.ImagePullPolicy != v1.PullAlways
		if a.pulled && !a.cut && !presentAsIs && !inBackOff {
			return p.pulledAhead(ctx, c, image, key, a)
		}
	}
	var st *runtimeapi.Image
	if a != nil && a.status != nil {
		// The run's ImageStatus of it, made when the run began: the image
		// was there, as later turns of the pod take its reference as it is.
		st = a.status
	} else if st, err = p.r.rt.ImageStatus(ctx, image); err != nil {
		return "", time.Time{}, &pullError{Reason: "ImageInspectError", Message: fmt.Sprintf("Failed to inspect image %q: %v", image, err)}
	}
	pull, err := pullDecision(c.ImagePullPolicy, image, st != nil)
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonErrImageNeverPull, Message: err.(*pullError).Message}
		return "", time.Time{}, err
	}
	if !pull {
		p.event("Pulled", "Container image %q already present on machine", c.Image)
		ref := st.Id
		p.images.refs[image] = ref
		p.images.info[ref] = st
		return ref, time.Time{}, nil
	}
	now := p.r.now()
	if until, in := p.images.backOff.untilSinceUpdate(key, now); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		if p.reasons[c.Name].Reason != reasonImagePullBackOff {
			p.event("BackOff", "%s", msg)
		}
		p.reasons[c.Name] = waitingReason{Reason: reasonImagePullBackOff, Message: msg}
		return "", until, nil
	}
	p.event("Pulling", "Pulling image %q", c.Image)
	creds, missing, err := pullCredentials(p.pod, image, p.r.opts.Secrets, p.r.nodeKeyrings)
	if err == nil {
		ref, err = credentials.Pull(ctx, p.r.rt, image, creds, sandboxCfg)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", time.Time{}, ctx.Err()
		}
		return p.pullFailed(c, key, now, err, missing)
	}
	d := p.r.now().Sub(now)
	p.pulledEvent(ctx, c, ref, d, d)
	p.images.refs[image] = ref
	return ref, time.Time{}, nil
}

// aheadFor is the run's ahead pull that stands for the pull at the first
// turn (a container's name, or an image volume's, ensureImageAt) of c's
// image, nil if none (not the first turn, Never, no ahead pull of it).
func (p *podRun) aheadFor(turn string, c *v1.Container, image string) *aheadEntry {
	if p.images.noAhead || p.images.turned[turn] || c.ImagePullPolicy == v1.PullNever {
		return nil
	}
	if p.images.turned == nil {
		p.images.turned = map[string]bool{}
	}
	p.images.turned[turn] = true
	creds, _, err := pullCredentials(p.pod, image, p.r.opts.Secrets, p.r.nodeKeyrings)
	if err != nil {
		return nil
	}
	return p.r.prefetch.lookup(p.pod, image, creds)
}

// pulledAhead reports an ahead pull at the container's turn, as the
// kubelet reports its pull there.
func (p *podRun) pulledAhead(ctx context.Context, c *v1.Container, image, key string, a *aheadEntry) (string, time.Time, error) {
	now := p.r.now()
	p.event("Pulling", "Pulling image %q", c.Image)
	if a.err != nil {
		_, missing, _ := pullCredentials(p.pod, image, p.r.opts.Secrets, p.r.nodeKeyrings)
		return p.pullFailed(c, key, now, a.err, missing)
	}
	p.pulledEvent(ctx, c, a.ref, a.ended.Sub(a.started), a.ended.Sub(a.queued))
	p.images.refs[image] = a.ref
	return a.ref, time.Time{}, nil
}

// pulledEvent is the kubelet's Pulled event of a pull that took took,
// waited counting the time it waited for its turn among pulls (an ahead
// pull: since the run began).
func (p *podRun) pulledEvent(ctx context.Context, c *v1.Container, ref string, took, waited time.Duration) {
	msg := fmt.Sprintf("Successfully pulled image %q in %v (%v including waiting).", c.Image,
		took.Truncate(time.Millisecond), waited.Truncate(time.Millisecond))
	if img, err := p.imageStatus(ctx, ref); err == nil && img != nil {
		msg += fmt.Sprintf(" Image size: %d bytes.", img.GetSize())
	}
	p.event("Pulled", "%s", msg)
}

// pullFailed reports a failed pull of the container's image, as the
// kubelet does, and ends the run if it failed for good
// (permanentPullFailure); otherwise the pull is in back-off. When some of
// the pod's imagePullSecrets were not in the run (missing), a
// FailedToRetrieveImagePullSecret warning names them first, as the
// kubelet's event does.
func (p *podRun) pullFailed(c *v1.Container, key string, now time.Time, err error, missing []string) (string, time.Time, error) {
	if len(missing) > 0 {
		p.event("Warning", "FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.",
			strings.Join(missing, ", "))
	}
	msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
	p.reasons[c.Name] = waitingReason{Reason: reasonErrImagePull, Message: err.Error()}
	if why, ok := permanentPullFailure(err.Error()); ok {
		return "", time.Time{}, &pullError{Reason: reasonErrImagePull, Message: msg + " (" + why + ")"}
	}
	p.event("Failed", "%s", msg)
	p.event("Failed", "Error: %s", reasonErrImagePull)
	p.images.backOff.next(key, now, p.r.now())
	// Look again at once: that sync finds the pull in back-off and
	// reports ImagePullBackOff until it ends.
	return "", p.r.now(), nil
}

// imageStatus is the runtime's ImageStatus of ref, read once per run.
func (p *podRun) imageStatus(ctx context.Context, ref string) (*runtimeapi.Image, error) {
	if img, ok := p.images.info[ref]; ok {
		return img, nil
	}
	img, err := p.r.rt.ImageStatus(ctx, ref)
	if err == nil && img != nil {
		p.images.info[ref] = img
	}
	return img, err
}

// imageVolumeTurn is the turn of an image volume's pull (ensureImageAt).
func imageVolumeTurn(volume string) string { return "volume/" + volume }

// imageVolumeContainer stands for an image volume's image at the turn of
// the container c that mounts it: its pull's events name the volume's
// reference, and a failed pull is c's waiting reason, as the kubelet fails
// the start of a container whose image volume did not pull
// (toKubeContainerImageVolumes).
func imageVolumeContainer(c *v1.Container, src *v1.ImageVolumeSource) *v1.Container {
	return &v1.Container{Name: c.Name, Image: src.Reference, ImagePullPolicy: src.PullPolicy}
}

// ensureImageVolumes makes sure the runtime has the image of every image
// volume that c mounts (ImageVolume, GA in v1.36), pulled as the volume's
// pullPolicy says, with the pod's pull secrets, as the kubelet's
// getImageVolumes does before it starts a container, and gives each to
// the pod's volumes to mount. It reports false, with when to look again,
// while a pull failed for now or is in back-off (c waits in ErrImagePull
// or ImagePullBackOff); a pull that fails for good ends the run, as for a
// container's image. The kubelet pulls every image volume of the pod at
// the first start of a sync; podrun pulls one at the first start of a
// container that mounts it (and ahead, prefetch.go).
func (p *podRun) ensureImageVolumes(ctx context.Context, c *v1.Container, sandboxCfg *runtimeapi.PodSandboxConfig) (bool, time.Time, error) {
	for i := range p.pod.Spec.Volumes {
		v := &p.pod.Spec.Volumes[i]
		if v.Image == nil || p.volumes == nil || !slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.Name == v.Name }) {
			continue
		}
		ref, wakeAt, err := p.ensureImageAt(ctx, imageVolumeContainer(c, v.Image), imageVolumeTurn(v.Name), sandboxCfg)
		if err != nil || ref == "" {
			return false, wakeAt, err
		}
		handler, _ := lookupRuntimeHandler(p.pod, p.r.opts.RuntimeClasses) // refusals checked it
		p.volumes.ResolveImage(v.Name, &runtimeapi.ImageSpec{Image: ref, UserSpecifiedImage: v.Image.Reference,
			RuntimeHandler: handler, Annotations: p.pod.Annotations})
	}
	return true, time.Time{}, nil
}

// imageVolumeHint explains a CreateContainer failure of a container that
// mounts an image volume, when the runtime's words do not: a runtime
// without image volumes (containerd before 2.1, CRI-O before 1.31) drops
// the mount's image and fails on its empty host path (containerd 1.6:
// `failed to mkdir ""`). "" when c mounts no image volume, or the
// runtime's error is about the image volume already.
func imageVolumeHint(pod *v1.Pod, c *v1.Container, msg string) string {
	var names []string
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil && slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.Name == v.Name }) {
			names = append(names, fmt.Sprintf("%q", v.Name))
		}
	}
	// containerd 2.x says "failed to mount image volume ..." or
	// "ImageVolumeMountFailed: ..." (the CRI's error for it).
	if lower := strings.ToLower(msg); len(names) == 0 || strings.Contains(lower, "image volume") || strings.Contains(lower, "imagevolume") {
		return ""
	}
	return fmt.Sprintf("container %q mounts the image volume %s: the runtime must support image volumes (Kubernetes' ImageVolume, GA in v1.36: containerd 2.1 or later, CRI-O 1.31 or later); one that does not ignores the mount's image and fails on its empty host path",
		c.Name, strings.Join(names, ", "))
}
