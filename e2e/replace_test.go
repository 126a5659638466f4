//go:build e2e

package e2e

// --replace end to end: a second `podrun -d` of a running detached pod is
// refused (125) naming --replace; `podrun --replace -d` stops the pod as
// `podrun down` does (its preStop hook runs) and runs it anew.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestE2EReplace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-replace"
	e.downOnCleanup(name)
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	uid := "e2e-replace-" + randomSuffix(t)
	run := func(mark string, args ...string) result {
		m := fromTemplate(t, "replace/replace.yaml", "UID", uid, "DIR", dir, "MARK", mark)
		return e.runPodrun(append(args, "--wait=ready", "-d", "-f", m), "")
	}
	readHooks := func() string {
		b, err := os.ReadFile(hooks)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}
	// The one sandbox of the pod in this test's root dir, ready.
	only := func(when string) *runtimeapi.PodSandbox {
		t.Helper()
		var mine []*runtimeapi.PodSandbox
		for _, sb := range sandboxesOf(t, name) {
			if sb.Labels["io.kubernetes.pod.uid"] == uid {
				mine = append(mine, sb)
			}
		}
		if len(mine) != 1 || mine[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Fatalf("%s: %d sandboxes of %s, want one ready", when, len(mine), name)
		}
		return mine[0]
	}

	expectCode(t, run("one"), 0)
	first := only("after -d")

	r := run("two")
	expectCode(t, r, 125)
	if want := "is already running (detached); stop it with `podrun down default/" + name + "`, or run with --replace"; !strings.Contains(r.stderr, want) {
		t.Errorf("second run: stderr lacks %q\n%s", want, r)
	}
	if only("after the refused run").Id != first.Id || readHooks() != "" {
		t.Errorf("the refused run disturbed the pod (hooks %q)", readHooks())
	}

	r = run("two", "--replace")
	expectCode(t, r, 0)
	for _, want := range []string{
		"pod/" + name + ": Replacing: stopping the detached pod default/" + name + " (uid " + uid + ", run ",
		"pod/" + name + ": Killing: Stopping container c",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--replace: stderr lacks %q\n%s", want, r)
		}
	}
	second := only("after --replace")
	if second.Id == first.Id || second.Labels["io.podrun.run"] == first.Labels["io.podrun.run"] {
		t.Errorf("the sandbox left (%s, run %s) is the first run's", short(second.Id), second.Labels["io.podrun.run"])
	}
	if got := readHooks(); got != "prestop-one\n" {
		t.Errorf("preStop hooks ran %q, want the first run's", got)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 1 || dirs[0] != uid {
		t.Errorf("pod dirs %v, want [%s]", dirs, uid)
	}

	r = e.runPodrun([]string{"down", name}, "")
	expectCode(t, r, 0)
	if got := readHooks(); got != "prestop-one\nprestop-two\n" {
		t.Errorf("preStop hooks ran %q, want both runs'", got)
	}
	if sbs := sandboxesOf(t, name); len(sbs) != 0 {
		t.Errorf("after down: %d sandboxes of %s remain", len(sbs), name)
	}
	if dirs := podDirs(t, e.root); len(dirs) != 0 {
		t.Errorf("after down: pod dirs %v remain", dirs)
	}
}
