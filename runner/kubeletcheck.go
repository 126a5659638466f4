package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Looking before running static-named pods (--static-pod-names,
// docs/bootstrap.md): a kubelet that is up on the node kills such pods as
// orphans within seconds of its next housekeeping
// (docs/handover-research.md), and host-network pods clash on their ports
// in between. So before anything starts, a run with --static-pod-names
// looks for a kubelet and refuses when it finds one, unless told to go
// ahead (--ignore-running-kubelet). Two signs count, either enough:
//   - its healthz answers "ok" (the kubelet's healthzBindAddress and
//     healthzPort, 127.0.0.1:10248 by default; --kubelet-healthz-url);
//   - the runtime holds ready pod sandboxes with the kubelet's labels
//     (io.kubernetes.pod.*) and not podrun's (io.podrun.managed): pods a
//     kubelet runs, or ran and comes back to.

// DefaultKubeletHealthzURL is where a kubelet answers its health by
// default (KubeletConfiguration healthzBindAddress, healthzPort).
const DefaultKubeletHealthzURL = "http://127.0.0.1:10248/healthz"

// kubeletHealthzTimeout bounds the healthz request: a kubelet answers it
// in milliseconds, and nothing listening is refused at once.
const kubeletHealthzTimeout = 2 * time.Second

// kubeletSigns says what shows a kubelet at work on the node: healthz is
// the body of a 200 answer from its healthz ("" for none, or no answer),
// sbs the runtime's pod sandboxes. Empty: no sign.
func kubeletSigns(healthzURL, healthz string, sbs []*runtimeapi.PodSandbox) []string {
	var signs []string
	if strings.TrimSpace(healthz) == "ok" {
		signs = append(signs, fmt.Sprintf("its healthz (%s) answers ok", healthzURL))
	}
	var pods []string
	for _, sb := range sbs {
		l := sb.GetLabels()
		if sb.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || l[labelPodUID] == "" || l[LabelManaged] != "" {
			continue
		}
		pods = append(pods, l[labelPodNamespace]+"/"+l[labelPodName])
	}
	if len(pods) > 0 {
		sort.Strings(pods)
		more := ""
		if len(pods) > 3 {
			more = fmt.Sprintf(" and %d more", len(pods)-3)
			pods = pods[:3]
		}
		signs = append(signs, fmt.Sprintf("the runtime runs pods a kubelet made (%s%s)", strings.Join(pods, ", "), more))
	}
	return signs
}

// CheckNoKubelet refuses to run static-named pods where a kubelet is at
// work (kubeletSigns): its healthz at healthzURL ("" to not ask) and the
// pods on rt.
func CheckNoKubelet(ctx context.Context, rt Runtime, healthzURL string) error {
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{
		State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
	if err != nil {
		return fmt.Errorf("looking for a kubelet's pods on the runtime: %w", err)
	}
	healthz := ""
	if healthzURL != "" {
		healthz = getHealthz(ctx, healthzURL)
	}
	signs := kubeletSigns(healthzURL, healthz, sbs)
	if len(signs) == 0 {
		return nil
	}
	return fmt.Errorf("a kubelet is at work on this node: %s. It would kill pods with static pod names as orphans: "+
		"give the manifests to the kubelet (its staticPodPath), stop it first, or pass --ignore-running-kubelet to run them anyway (docs/bootstrap.md)",
		strings.Join(signs, "; "))
}

// getHealthz is the body of a 200 answer from url, "" for anything else.
func getHealthz(ctx context.Context, url string) string {
	ctx, cancel := context.WithTimeout(ctx, kubeletHealthzTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}
