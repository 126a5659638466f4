package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestPodArgCommands: the commands whose synopsis names POD are those of
// podArgCommands, each with the number of PODs its synopsis gives (POD...:
// any) and scoped when it has --all-roots, so that a command that takes
// pods has its flags after POD, pod-name completion and its place in
// docs/cli.md.
func TestPodArgCommands(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	namesPOD := regexp.MustCompile(`\bPOD\b`)
	commands := map[string]bool{}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := strings.TrimPrefix(path+" "+c.Name, " ")
			commands[p] = true
			walk(p, c.Subcommands)
			synopsis, _, _ := strings.Cut(c.UsageText, "\n\n")
			got, listed := podArgCommands[p]
			if !namesPOD.MatchString(synopsis) {
				if listed {
					t.Errorf("podArgCommands has %q, whose synopsis names no POD: %q", p, synopsis)
				}
				continue
			}
			want := podArgs{max: 1, scoped: slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "all-roots") })}
			if strings.Contains(synopsis, "POD...") {
				want.max = -1
			}
			switch {
			case !listed:
				t.Errorf("podrun %s takes PODs (%q) but is not in podArgCommands: add %q: %+v", p, synopsis, p, want)
			case strings.Contains(p, " "):
				t.Errorf("podArgCommands has %q: interspersed takes the flags after POD of a command of podrun itself only", p)
			case got != want:
				t.Errorf("podArgCommands[%q] = %+v, want %+v from its synopsis %q and its flags", p, got, want, synopsis)
			}
		}
	}
	walk("", app.Commands)
	for name := range podArgCommands {
		if !commands[name] {
			t.Errorf("podArgCommands has %q, which is no command", name)
		}
	}
}
