//go:build e2e

package e2e

// The command line of the built binary: version, --help, usage errors and
// refused input, each exiting 125 before anything is created.

import (
	"strings"
	"testing"
)

func TestE2EVersion(t *testing.T) {
	t.Parallel()
	r := newEnv(t).runPodrun([]string{"version"}, "")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "podrun ") {
		t.Errorf("podrun version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestE2EHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrunRaw([]string{"--help"}, "")
	expectCode(t, r, 0)
	help := r.stdout + r.stderr
	for _, w := range []string{
		"--filename", "-f", "--runtime-endpoint", "-r", "CONTAINER_RUNTIME_ENDPOINT", "--root-dir",
		"--pod-logs-dir", "--wait", "auto", "complete", "ready", "none", "--timeout", "--detach", "-d",
		"--output", "-o", "json", "yaml", "--node-name", "--manifest-url-header", "--quiet", "-q",
		"version", "ps", "down", "124", "125", "130", "143",
	} {
		if !strings.Contains(help, w) {
			t.Errorf("--help does not mention %q", w)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

func TestE2EUsageErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := testdata("run/exit0.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-f"},
		{[]string{"run"}, "-f"},
		{[]string{"--wait", "bogus", "-f", m}, "bogus"},
		{[]string{"-o", "xml", "-f", m}, "xml"},
		{[]string{"--bogus", "-f", m}, "bogus"},
		{[]string{"run", "--bogus", "-f", m}, "bogus"},
		{[]string{"-f", m, "extra"}, "extra"},
		{[]string{"--timeout", "soon", "-f", m}, "soon"},
		{[]string{"--manifest-url-header", "novalue", "-f", m}, "novalue"},
		{[]string{"down"}, "--all"},
	} {
		r := e.runPodrun(c.args, "")
		if r.code != 125 {
			t.Errorf("podrun %v: exit %d, want 125\n%s", c.args, r.code, r)
		}
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("podrun %v: stderr lacks %q\n%s", c.args, c.want, r)
		}
		if strings.Contains(r.stdout, "all good") {
			t.Errorf("podrun %v ran the pod", c.args)
		}
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputUnknownField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("cli/bad-field.yaml")}, "")
	expectCode(t, r, 125)
	want := `bad-field.yaml: document 2 (Pod "web"): spec.containers[0].comand: unknown field`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	if strings.Contains(r.stdout+r.stderr, "must not run") {
		t.Errorf("a container ran\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputUnsupportedKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("cli/bad-kind.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "Deployment") || !strings.Contains(r.stderr, "bad-kind.yaml") {
		t.Errorf("the error does not name the file and the kind Deployment\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputDuplicatePod(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("cli/dup.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "e2e-dup") {
		t.Errorf("the error does not name the pod\n%s", r)
	}
	// The same pod twice through two -f.
	r = e.runPodrun([]string{"-f", testdata("run/exit0.yaml"), "-f", testdata("run/exit0.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "e2e-exit0") {
		t.Errorf("the error does not name the pod\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2EBadInputMissingFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	missing := testdata("cli/does-not-exist.yaml")
	r := e.runPodrun([]string{"-f", missing}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "does-not-exist.yaml") {
		t.Errorf("the error does not name the file\n%s", r)
	}
	expectNothingCreated(t, e)
}
