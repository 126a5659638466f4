//go:build e2e

package e2e

// Shell completion end to end: bash, zsh and fish load the script podrun
// completion prints and complete a podrun command line with the real shell,
// which calls back into podrun; the name of a detached pod on the testbed
// must appear after the commands that take pods: those of the command
// line's --root-dir for ps and down, any for logs.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// shellEnv puts the podrun under test on $PATH as "podrun", as the scripts
// call it, and returns the environment for a shell.
func shellEnv(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(podrunBin, filepath.Join(dir, "podrun")); err != nil {
		t.Fatal(err)
	}
	return commandEnv([]string{"PATH=" + dir + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir()})
}

// needShell is the path of a shell, failing the test when it is missing.
func needShell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (hack/testbed.sh up installs it from Debian's package %s): %v", name, name, err)
	}
	return p
}

func runShell(t *testing.T, env []string, name string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needShell(t, name), args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return lines(string(out))
}

func TestE2ECompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-complete-" + randomSuffix(t)
	e.downOnCleanup(name)
	expectCode(t, e.runPodrun([]string{"-d", "-f", fromTemplate(t, "completion/pod.yaml", "NAME", name)}, ""), 0)
	env := shellEnv(t)

	expect := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("completions lack %q; got %q", w, got)
			}
		}
	}

	t.Run("bash", func(t *testing.T) {
		// As bash calls it: COMP_WORDS and COMP_CWORD only, then with
		// COMP_LINE and COMP_POINT as readline sets them.
		got := runShell(t, env, "bash", "-c", `source <(podrun completion bash)
COMP_WORDS=(podrun down --root-dir `+e.root+` ""); COMP_CWORD=4; _podrun; printf '%s\n' "${COMPREPLY[@]}"`)
		expect(t, got, name, "default/"+name)
		got = runShell(t, env, "bash", "-c", `source <(podrun completion bash)
COMP_LINE="podrun ps --root-dir `+e.root+` e2e-complete-"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(podrun ps --root-dir `+e.root+` e2e-complete-); COMP_CWORD=4
_podrun; printf '%s\n' "${COMPREPLY[@]}"`)
		expect(t, got, name)
		if slices.Contains(got, "default/"+name) {
			t.Errorf("a prefix without / completed to namespace/name too: %q", got)
		}
		// logs takes a pod of any root dir; down, of the default root dir,
		// not this one.
		got = runShell(t, env, "bash", "-c", `source <(podrun completion bash)
COMP_WORDS=(podrun logs ""); COMP_CWORD=2; _podrun; printf '%s\n' "${COMPREPLY[@]}"`)
		expect(t, got, name)
		got = runShell(t, env, "bash", "-c", `source <(podrun completion bash)
COMP_WORDS=(podrun down ""); COMP_CWORD=2; _podrun; printf '%s\n' "${COMPREPLY[@]}"`)
		if slices.Contains(got, name) {
			t.Errorf("down without --root-dir completed a pod of another root dir: %q", got)
		}
		got = runShell(t, env, "bash", "-c", `source <(podrun completion bash)
COMP_WORDS=(podrun ""); COMP_CWORD=1; _podrun; printf '%s\n' "${COMPREPLY[@]}"`)
		expect(t, got, "run", "ps", "down", "completion")
	})

	t.Run("zsh", func(t *testing.T) {
		matches := filepath.Join(t.TempDir(), "matches")
		runShell(t, env, "zsh", "-f", testdata("completion/complete.zsh"), "podrun down --root-dir "+e.root+" ", matches)
		b, err := os.ReadFile(matches)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, lines(string(b)), name, "default/"+name)
		os.Remove(matches)
		runShell(t, env, "zsh", "-f", testdata("completion/complete.zsh"), "podrun --wait=", matches)
		b, _ = os.ReadFile(matches)
		expect(t, lines(string(b)), "--wait=ready", "--wait=complete")
	})

	t.Run("fish", func(t *testing.T) {
		got := runShell(t, env, "fish", "--no-config", "-c", `podrun completion fish | source; complete -C "podrun down --root-dir `+e.root+` "`)
		var values []string
		for _, l := range got {
			v, _, _ := strings.Cut(l, "\t")
			values = append(values, v)
		}
		expect(t, values, name, "default/"+name)
		got = runShell(t, env, "fish", "--no-config", "-c", `podrun completion fish | source; complete -C "podrun ps --out"`)
		expect(t, got, "--output\tFORMAT: table, wide, json or yaml")
	})
}
