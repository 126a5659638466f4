//go:build e2e

package e2e

// Teardown end to end: a pod's stop takes one grace period, sidecars
// included, as on a kubelet.

import (
	"strings"
	"testing"
	"time"
)

// TestE2ETeardownSidecarsShareTheGracePeriod: the main container ignores
// SIGTERM and uses the pod's whole 6 s grace period; the sidecar is then
// stopped with what is left (the kubelet's 2 s minimum), and exits at once:
// the teardown takes about 6 s, not 6 s per turn (12 s).
func TestE2ETeardownSidecarsShareTheGracePeriod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"--wait=ready", "-f", testdata("teardown/sidecar-grace.yaml")}, "")
	p.waitStderr("Killing", 90*time.Second) // ready: the teardown has begun
	begun := time.Now()
	r := p.result(60 * time.Second)
	took := time.Since(begun)
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, "side-stopped") {
		t.Errorf("the sidecar did not get its SIGTERM\n%s", r)
	}
	if took < 5*time.Second || took > 10*time.Second {
		t.Errorf("teardown took %s, want about 6 s (one grace period for the pod)\n%s", took.Round(time.Millisecond), r)
	}
}
