package runner

import (
	"context"
	"fmt"
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
//   - its healthz answers "ok" (kubeletHealthy; the kubelet's
//     healthzBindAddress and healthzPort, DefaultKubeletHealthz by
//     default; --kubelet-healthz);
//   - the runtime holds ready pod sandboxes with the kubelet's labels
//     (io.kubernetes.pod.*) and not podrun's (io.podrun.managed): pods a
//     kubelet runs, or ran and comes back to.

// kubeletHealthzTimeout bounds the healthz request: a kubelet answers it
// in milliseconds, and nothing listening is refused at once.
const kubeletHealthzTimeout = 2 * time.Second

// kubeletSigns says what shows a kubelet at work on the node: healthy,
// whether its healthz at healthzURL answers ok, and sbs, the runtime's pod
// sandboxes. Empty: no sign.
func kubeletSigns(healthzURL string, healthy bool, sbs []*runtimeapi.PodSandbox) []string {
	var signs []string
	if healthy {
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
	healthy := healthzURL != "" && kubeletHealthy(ctx, &http.Client{Timeout: kubeletHealthzTimeout}, healthzURL)
	signs := kubeletSigns(healthzURL, healthy, sbs)
	if len(signs) == 0 {
		return nil
	}
	return fmt.Errorf("a kubelet is at work on this node: %s. It would kill pods with static pod names as orphans: "+
		"give the manifests to the kubelet (its staticPodPath), stop it first, or pass --ignore-running-kubelet to run them anyway (docs/bootstrap.md)",
		strings.Join(signs, "; "))
}
