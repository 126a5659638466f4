//go:build e2e

package e2e

// podrun's progress on a terminal end to end: run under a pty (script(1)
// from util-linux), stdout and stderr the same terminal, podrun draws its
// live status and every container output line still arrives whole; with CI
// set, the same terminal gets the plain progress lines.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// underPty runs podrun with args on a pty with TERM=xterm and the given
// extra environment, and returns everything written to the terminal.
func underPty(t *testing.T, e *env, args []string, envChanges ...string) string {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script (util-linux) is not installed: %v", err)
	}
	quoted := []string{shellQuote(podrunBin)}
	for _, a := range withRoot(e.root, args) {
		quoted = append(quoted, shellQuote(a))
	}
	typescript := filepath.Join(t.TempDir(), "typescript")
	ctx, cancel := context.WithTimeout(context.Background(), defaultRunTimeout)
	defer cancel()
	// -e: script exits with podrun's status; -f: flush as it comes; -q: no
	// start and done lines around the output.
	cmd := exec.CommandContext(ctx, script, "-qefc", strings.Join(quoted, " "), typescript)
	cmd.Env = commandEnv(append([]string{"TERM=xterm"}, envChanges...))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script -c podrun %q: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(typescript)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// statusClear is what the live status writes to erase itself.
var statusClear = regexp.MustCompile(`\r(\x1b\[\d+A)?\x1b\[J`)

func TestE2EProgressOnTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-progress-" + randomSuffix(t)
	m := fromTemplate(t, "progress/pod.yaml", "NAME", name)
	want := []string{
		"[pod/" + name + "/setup] setup done",
		"[pod/" + name + "/app] line 1 of stdout",
		"[pod/" + name + "/app] line 2 of stdout",
		"[pod/" + name + "/app] line 3 of stdout",
		"[pod/" + name + "/app] a line of stderr",
	}

	start := time.Now()
	tty := underPty(t, e, []string{"-f", m}, "CI")
	if !strings.Contains(tty, "\x1b[J") || !regexp.MustCompile(`pod/`+name+`  Running +app: |pod/`+name+`  Pending +setup: `).MatchString(tty) {
		t.Fatalf("no live status drawn on the terminal (%s):\n%q", time.Since(start), tty)
	}
	// What a reader sees of each terminal line: what follows the last
	// erase of the status on it. Each output line must be there whole,
	// in order, on a line of its own.
	var seen []string
	for _, line := range strings.Split(strings.ReplaceAll(tty, "\r\n", "\n"), "\n") {
		parts := statusClear.Split(line, -1)
		seen = append(seen, parts[len(parts)-1])
	}
	next := 0
	for _, l := range seen {
		if next < len(want) && l == want[next] {
			next++
		}
	}
	if next < len(want) {
		t.Errorf("output line %q not found whole, in order, on a line of its own; terminal lines:\n%s", want[next], strings.Join(seen, "\n"))
	}
	if !slices.Contains(seen, "pod/"+name+": reached (phase Succeeded)") {
		t.Errorf("the outcome line is missing; terminal lines:\n%s", strings.Join(seen, "\n"))
	}

	// In CI, the same terminal gets plain lines: no escape sequence, the
	// events as lines.
	plain := underPty(t, e, []string{"-f", m}, "CI=true")
	if strings.Contains(plain, "\x1b") {
		t.Errorf("escape sequences with CI=true:\n%q", plain)
	}
	lines := strings.Split(strings.ReplaceAll(plain, "\r\n", "\n"), "\n")
	for _, w := range append(want, "pod/"+name+": Started: Started container app", "pod/"+name+": reached (phase Succeeded)") {
		if !slices.Contains(lines, w) {
			t.Errorf("plain output lacks the line %q:\n%s", w, plain)
		}
	}
}
