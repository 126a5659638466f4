package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Lifecycle hooks (pkg/kubelet/lifecycle/handlers.go): postStart after a
// container's start, preStop at its stop (killContainer and stopForDown,
// stop.go).

// killFailedPostStartHook is the kill reason after a failed postStart hook.
const killFailedPostStartHook killReason = "FailedPostStartHook"

// reasonPostStartHookError is the waiting reason a failed postStart leaves.
const reasonPostStartHookError = "PostStartHookError"

// runPreStop runs the preStop hook h of container id (c: its name and
// ports) for at most grace seconds (or until force closes: forced) and
// returns the whole seconds it took. A hook that fails is reported
// (FailedPreStopHook) and the stop goes on. Used by every stop of a run
// (killContainer) and by `podrun down` (stopForDown).
func runPreStop(ctx context.Context, rt execer, id string, c *v1.Container, h *v1.LifecycleHandler, grace int64, podName, podIP string, force <-chan struct{}, event eventFunc) (elapsed int64, forced bool) {
	start := time.Now()
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := runHandler(hctx, rt, id, c, h, podName, podIP); err != nil && hctx.Err() == nil {
			// The kubelet keeps the hook's message out of the event.
			event("FailedPreStopHook", "PreStopHook failed")
		}
	}()
	t := time.NewTimer(graceDuration(grace))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		event("Warning", "PreStop hook of container %s did not complete in the grace period (%ds)", c.Name, grace)
	case <-force:
		forced = true
	}
	return int64(time.Since(start) / time.Second), forced
}

// postStart runs the container's postStart hook, if any, right after its
// start (kuberuntime_container.go startContainer step 12). When it fails,
// the container is killed with reason FailedPostStartHook and the pod's
// grace period and the container waits with PostStartHookError, to be
// restarted by its restart policy. It reports whether the hook failed.
func (p *podRun) postStart(ctx context.Context, id string, c *v1.Container) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return false
	}
	msg, err := runHandler(ctx, p.r.rt, id, c, c.Lifecycle.PostStart, p.fullName(), p.podIP())
	if err == nil || ctx.Err() != nil {
		// Cut by a signal: teardown stops the container.
		return false
	}
	// The kubelet keeps the hook's message out of the event.
	p.event("FailedPostStartHook", "PostStartHook failed")
	if kerr := p.killContainer(context.WithoutCancel(ctx), id, c.Name, killFailedPostStartHook, "FailedPostStartHook", nil, nil); kerr != nil {
		p.event("Warning", "%v", kerr)
	}
	p.reasons[c.Name] = waitingReason{Reason: reasonPostStartHookError, Message: msg}
	return true
}

// podIP is the pod's IP as last observed, else that of a sandbox created
// since ("" when there is none).
func (p *podRun) podIP() string {
	if p.apiStatus.PodIP != "" {
		return p.apiStatus.PodIP
	}
	if p.pod.Spec.HostNetwork {
		return p.r.facts.HostIP
	}
	for _, id := range slices.Sorted(maps.Keys(p.ips)) {
		if ips := p.ips[id]; len(ips) > 0 {
			return ips[0]
		}
	}
	return ""
}

// fullName is the pod as the kubelet names it in messages (formatPod).
func (p *podRun) fullName() string { return formatPod(p.pod.Name, p.pod.Namespace, p.uid) }

// formatPod names a pod as the kubelet's format.Pod does in messages and
// events: NAME_NAMESPACE(UID).
func formatPod(name, namespace, uid string) string {
	return fmt.Sprintf("%s_%s(%s)", name, namespace, uid)
}

// runHandler runs a lifecycle handler in container id of the pod podName
// (the kubelet's NAME_NAMESPACE(UID), for messages): exec in the container
// through CRI ExecSync with no timeout (a non-zero exit fails it), httpGet
// from the host to podIP unless the handler names a host (the status code
// is not checked; only a transport error fails it), or sleep. It returns
// the kubelet's failure message with the error.
func runHandler(ctx context.Context, rt execer, id string, c *v1.Container, h *v1.LifecycleHandler, podName, podIP string) (string, error) {
	switch {
	case h.Exec != nil:
		out, err := execHook(ctx, rt, id, h.Exec.Command)
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, podName, err, out), err
		}
	case h.HTTPGet != nil:
		if err := httpHook(ctx, h.HTTPGet, c, podIP); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, podName, err), err
		}
	case h.Sleep != nil:
		if err := sleepHook(ctx, h.Sleep.Seconds); err != nil {
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, c.Name, podName, err), err
		}
	default:
		err := errors.New("invalid handler")
		return fmt.Sprintf("Lifecycle hook for Container %q in Pod %q failed - error: %v", c.Name, podName, err), err
	}
	return "", nil
}

// execHook runs cmd as is (no $(VAR) expansion), with no timeout. A
// non-zero exit is an error, as the kubelet's RunInContainer makes it.
func execHook(ctx context.Context, rt execer, id string, cmd []string) (string, error) {
	stdout, stderr, code, err := rt.ExecSync(ctx, id, cmd, 0)
	out := string(append(stdout, stderr...))
	if err != nil {
		return out, err
	}
	if code != 0 {
		return out, fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), code, stderr)
	}
	return out, nil
}

// httpHook sends the hook's GET like a probe request with User-Agent
// kube-lifecycle/<version>. An HTTPS request answered in plain HTTP is
// retried over HTTP without Authorization, as the kubelet does.
func httpHook(ctx context.Context, g *v1.HTTPGetAction, c *v1.Container, podIP string) error {
	req, err := newHTTPGetRequest(ctx, g, c, podIP, "lifecycle")
	if err != nil {
		return err
	}
	tr := httpTransport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: redirectChecker}
	do := func(r *http.Request) error {
		resp, err := client.Do(r)
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProbeOutput))
			resp.Body.Close()
		}
		return err
	}
	err = do(req)
	var uerr *url.Error
	if err != nil && errors.As(err, &uerr) && strings.Contains(uerr.Err.Error(), "server gave HTTP response to HTTPS client") {
		r2 := req.Clone(ctx)
		r2.URL.Scheme = "http"
		r2.Header.Del("Authorization")
		if err2 := do(r2); err2 == nil {
			err = nil
		}
	}
	return err
}

// sleepHook waits seconds, or fails when ctx ends first.
func sleepHook(ctx context.Context, seconds int64) error {
	t := time.NewTimer(graceDuration(seconds))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.New("container terminated before sleep hook finished")
	case <-t.C:
		return nil
	}
}
