package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// eachCommand calls f with every command of app (hidden ones too) and its
// path, podrun itself first (cmd nil).
func eachCommand(app *cli.App, f func(path string, cmd *cli.Command, flags []cli.Flag)) {
	f("podrun", nil, app.Flags)
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			f(p, c, c.Flags)
			walk(p, c.Subcommands)
		}
	}
	walk("podrun", app.Commands)
}

// TestCLIConventions holds every command, a new one too, to what help.go
// says each has: flags in one of the categories, and a UsageText with
// examples that name only commands and flags that exist.
func TestCLIConventions(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	eachCommand(app, func(path string, cmd *cli.Command, flags []cli.Flag) {
		for _, f := range flags {
			if !slices.Contains(flagCategories, flagCategory(f)) {
				t.Errorf("%s: flag --%s has no category of %q: give it Category: cat... in its definition",
					path, f.Names()[0], flagCategories)
			}
			if uf, ok := f.(interface{ GetUsage() string }); !ok || uf.GetUsage() == "" {
				t.Errorf("%s: flag --%s has no usage", path, f.Names()[0])
			}
		}
		usageText := app.UsageText
		if cmd != nil {
			usageText = cmd.UsageText
			if cmd.Usage == "" {
				t.Errorf("%s: no Usage", path)
			}
		}
		synopsis, examples, _ := strings.Cut(usageText, "\n\n")
		if !strings.HasPrefix(synopsis, path) {
			t.Errorf("%s: UsageText does not start with its synopsis %q...: %q", path, path, usageText)
		}
		runs := 0
		for _, line := range nonEmptyLines(examples) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			runs++
			if err := checkExample(app, line); err != nil {
				t.Errorf("%s: example %q: %v", path, line, err)
			}
		}
		if runs == 0 {
			t.Errorf("%s: UsageText has no example: add a blank line and example command lines after the synopsis", path)
		}
	})
}

// checkExample checks that an example line's podrun command names
// commands and flags that exist.
func checkExample(app *cli.App, line string) error {
	words := strings.Fields(line)
	i := slices.IndexFunc(words, func(w string) bool { return w == "podrun" || strings.HasSuffix(w, "(podrun") })
	if i < 0 {
		return fmt.Errorf("no podrun command")
	}
	flags, subs := app.Flags, app.Commands
	path := "podrun"
	positional, shortOptions := false, false
	for _, w := range words[i+1:] {
		switch {
		case w == "--" || strings.ContainsAny(w[:1], "|><;)&"):
			return nil
		case strings.HasPrefix(w, "-") && w != "-":
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			names := []string{name}
			if shortOptions && !strings.HasPrefix(w, "--") && findFlag(flags, name) == nil {
				names = strings.Split(name, "") // -it: -i and -t
			}
			for _, n := range names {
				if findFlag(flags, n) == nil {
					return fmt.Errorf("%s has no flag %s", path, w)
				}
			}
		default:
			if positional {
				continue
			}
			if j := slices.IndexFunc(subs, func(c *cli.Command) bool { return c.HasName(w) }); j >= 0 {
				cmd := subs[j]
				flags, subs, path, shortOptions = cmd.Flags, cmd.Subcommands, path+" "+w, cmd.UseShortOptionHandling
				continue
			}
			if len(subs) > 0 && path != "podrun" {
				return fmt.Errorf("%s has no command %s", path, w)
			}
			positional = true
		}
	}
	return nil
}

func TestCheckExample(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"podrun -d --wait=ready -f /etc/kubernetes/manifests", true},
		{"podrun ps -o json", true},
		{"podrun cni init --subnet 10.42.0.0/16", true},
		{"source <(podrun completion bash)", true},
		{"podrun --bogus -f x", false},
		{"podrun ps --all", false},
		{"podrun exec -it web -- sh", true},
		{"podrun exec -ix web -- sh", false},
		{"podrun ps -ow", false},
		{"podrun cni bogus", false},
		{"echo hello", false},
	} {
		if err := checkExample(app, tc.line); (err == nil) != tc.ok {
			t.Errorf("checkExample(%q) = %v, want ok %v", tc.line, err, tc.ok)
		}
	}
}

func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		in            string
		indent, width int
		want          string
	}{
		{"a b c", 2, 80, "  a b c"},
		{"aaa bbb ccc", 0, 7, "aaa bbb\nccc"},
		{"aaaaaaaaaa b", 2, 6, "  aaaaaaaaaa\n  b"},
		{"one\ntwo", 1, 80, " one\n two"},
	} {
		if got := wrapText(tc.in, tc.indent, tc.width); got != tc.want {
			t.Errorf("wrapText(%q, %d, %d) = %q, want %q", tc.in, tc.indent, tc.width, got, tc.want)
		}
	}
}

func TestDescribeFlag(t *testing.T) {
	for _, tc := range []struct {
		flag cli.Flag
		want flagDoc
	}{
		{&cli.StringSliceFlag{Name: "filename", Aliases: []string{"f"}, Usage: "manifest `SOURCE`, repeatable"},
			flagDoc{Name: "--filename", Synopsis: "-f, --filename SOURCE", Usage: "manifest SOURCE, repeatable", Placeholder: "SOURCE"}},
		{&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "leave them"},
			flagDoc{Name: "--detach", Synopsis: "-d, --detach", Usage: "leave them"}},
		{&cli.DurationFlag{Name: "timeout", Usage: "limit"},
			flagDoc{Name: "--timeout", Synopsis: "--timeout DURATION", Usage: "limit", Placeholder: "DURATION"}},
		{&cli.StringFlag{Name: "wait", Value: "auto", Usage: "what"},
			flagDoc{Name: "--wait", Synopsis: "--wait VALUE", Usage: "what", Default: "auto", Placeholder: "VALUE"}},
		{&cli.StringFlag{Name: "r", EnvVars: []string{"E"}, Usage: "x"},
			flagDoc{Name: "--r", Synopsis: "-r VALUE", Usage: "x", Env: []string{"E"}, Placeholder: "VALUE"}},
	} {
		got := describeFlag(tc.flag)
		if got.Name != tc.want.Name || got.Synopsis != tc.want.Synopsis || got.Usage != tc.want.Usage ||
			got.Default != tc.want.Default || got.Placeholder != tc.want.Placeholder || !slices.Equal(got.Env, tc.want.Env) {
			t.Errorf("describeFlag(%s) = %+v, want %+v", tc.flag.Names()[0], got, tc.want)
		}
	}
}
