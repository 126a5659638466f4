//go:build e2e

package e2e

// spec.activeDeadlineSeconds end to end (runner/deadline.go): a pod over
// its deadline ends as on kubelet v1.37.2 (Failed, DeadlineExceeded, its
// containers killed with their grace period and preStop hooks, init
// containers too), podrun exits 123 and leaves nothing behind.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

const deadlineMessage = "Pod was active on the node longer than the specified deadline"

// expectDeadlineExceeded checks a pod's status as the kubelet's active
// deadline handler leaves it.
func expectDeadlineExceeded(t *testing.T, p *v1.Pod, r result) {
	t.Helper()
	if p.Status.Phase != v1.PodFailed || p.Status.Reason != "DeadlineExceeded" || p.Status.Message != deadlineMessage {
		t.Errorf("phase %s, reason %q, message %q; want Failed, DeadlineExceeded, %q\n%s", p.Status.Phase, p.Status.Reason, p.Status.Message, deadlineMessage, r)
	}
	for _, want := range []string{"DeadlineExceeded: " + deadlineMessage, "failed (phase Failed, reason DeadlineExceeded)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q\n%s", want, r)
		}
	}
}

// activeDeadlineSeconds: 3 on sleep 60: the pod fails at 3 s, its container
// is killed after its 2 s grace period (137), podrun exits 123, the JUnit
// report says why.
func TestE2EDeadlineExceeded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	report := filepath.Join(t.TempDir(), "report.xml")
	r := e.runPodrun([]string{"-o", "json", "--junit", report, "--timeout", "60s", "-f", testdata("deadline/deadline.yaml")}, "")
	expectCode(t, r, 123)
	if r.elapsed < 3*time.Second || r.elapsed > scaled(30*time.Second) {
		t.Errorf("the run took %s; the deadline is 3 s, the grace period 2 s", r.elapsed.Round(time.Millisecond))
	}
	p := parsePod(t, r.stdout)
	expectDeadlineExceeded(t, p, r)
	cs := containerStatus(t, p, "c")
	if term := cs.State.Terminated; term == nil || term.ExitCode != 137 || term.Reason != "Error" {
		t.Errorf("container c %+v, want terminated 137 (Error)\n%s", cs.State, r)
	}
	for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
		if got := condition(p, ct); got != v1.ConditionFalse {
			t.Errorf("condition %s = %s, want False", ct, got)
		}
	}
	doc := readJUnit(t, report)
	expectCases(t, doc.Suites[0].Cases, "default/e2e-deadline", "c=failure DeadlineExceeded")
	xml, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<property name="reason" value="DeadlineExceeded">`, `<property name="message" value="` + deadlineMessage + `">`} {
		if !strings.Contains(string(xml), want) {
			t.Errorf("the report lacks %s:\n%s", want, xml)
		}
	}
}

// The deadline passes during initialisation: the running init container
// and the sidecar are killed (the sidecar after its preStop hook, then its
// SIGTERM trap), the regular container never starts.
func TestE2EDeadlineKillsInitContainersWithTheirHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := t.TempDir()
	name := "e2e-deadline-init-" + randomSuffix(t)
	m := fromTemplate(t, "deadline/init-prestop.yaml", "NAME", name, "OUT", out)
	r := e.runPodrun([]string{"-o", "json", "--timeout", "60s", "-f", m}, "")
	expectCode(t, r, 123)
	p := parsePod(t, r.stdout)
	expectDeadlineExceeded(t, p, r)
	setup := containerStatus(t, p, "setup")
	if term := setup.State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("init container setup %+v, want terminated 137\n%s", setup.State, r)
	}
	if main := containerStatus(t, p, "main"); main.State.Terminated != nil || main.State.Running != nil {
		t.Errorf("main %+v, want never started\n%s", main.State, r)
	}
	if strings.Contains(r.stderr, "main-ran") || strings.Contains(r.stderr, "Started container main") {
		t.Errorf("main ran after the deadline\n%s", r)
	}
	b, err := os.ReadFile(filepath.Join(out, "log"))
	if err != nil {
		t.Fatalf("the sidecar wrote nothing: %v\n%s", err, r)
	}
	if log := string(b); log != "prestop-side\nterm-side\n" {
		t.Errorf("the sidecar's log %q, want its preStop hook, then SIGTERM", log)
	}
}
