//go:build e2e

package e2e

// User namespaces end to end: hostUsers: false pods get their own ID
// ranges where the runtime supports them, and are refused where it does not.

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// usernsSupported: the runtime's default handler reports user namespace
// support. The testbed's v2 flavor (containerd 2 with runc 1.3) must: there
// the refusal is a failure, not the other branch of a test. Without
// support, refusal is what podrun's error gives as the reason: a default
// handler that says no, or none listed at all (containerd 1.6 reports no
// runtime handlers in CRI Status).
func usernsSupported(t *testing.T) (supported bool, refusal string) {
	t.Helper()
	refusal = "reports no default handler"
	for _, h := range statusHandlers(t) {
		if h.GetName() == "" {
			supported = h.GetFeatures().GetUserNamespaces()
			refusal = "does not support user namespaces"
		}
	}
	if !supported && os.Getenv("PODRUN_TESTBED_CONTAINERD") == "v2" {
		t.Fatalf("the v2 testbed's runtime reports no user namespace support (CRI Status features.user_namespaces): is its runc the one hack/testbed.sh builds?")
	}
	return supported, refusal
}

// TestE2EUsernsHostUsersFalse: a hostUsers:false pod maps 0 to its own
// 65536 host IDs (base >= 65536), and a concurrent pod gets another range;
// on a runtime without user namespace support podrun refuses the pod with
// 125 before creating anything.
func TestE2EUsernsHostUsersFalse(t *testing.T) {
	e := newEnv(t)
	if supported, refusal := usernsSupported(t); !supported {
		r := e.runPodrun([]string{"-f", fromTemplate(t, "userns/pod.yaml", "NAME", "userns-a")}, "")
		expectCode(t, r, 125)
		for _, w := range []string{"spec.hostUsers: false needs a user namespace", refusal} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr lacks %q\n%s", w, r)
			}
		}
		expectNothingCreated(t, e)
		if sbs := sandboxesOf(t, "userns-a"); len(sbs) > 0 {
			t.Errorf("sandboxes %v after a refused run", sbs)
		}
		t.Logf("runtime has no user namespace support: refused as expected")
		return
	}
	a := e.startPodrun([]string{"-f", fromTemplate(t, "userns/pod.yaml", "NAME", "userns-a")}, "")
	b := e.startPodrun([]string{"-f", fromTemplate(t, "userns/pod.yaml", "NAME", "userns-b")}, "")
	ra, rb := a.result(3*time.Minute), b.result(3*time.Minute)
	expectCode(t, ra, 0)
	expectCode(t, rb, 0)
	base := func(r result) string {
		f := strings.Fields(r.stdout)
		if len(f) < 3 || f[0] != "0" || f[2] != "65536" {
			t.Fatalf("uid_map %q: want 0 <base> 65536\n%s", r.stdout, r)
		}
		n, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil || n < 65536 {
			t.Fatalf("uid_map %q: base %s, want >= 65536", r.stdout, f[1])
		}
		return f[1]
	}
	if ba, bb := base(ra), base(rb); ba == bb {
		t.Errorf("both concurrent pods got base %s", ba)
	}
}
