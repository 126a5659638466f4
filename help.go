package main

// podrun's help: what `podrun --help` and `podrun COMMAND --help` print, and
// the CLI reference docs/cli.md, both rendered from the CLI definition.
//
// Conventions every command follows (TestCLIConventions checks them, so a
// new command or flag gets them too):
//
//   - Every visible flag has a Category, one of flagCategories; help lists
//     the flags by category in that order, each category in definition
//     order.
//   - A command's UsageText is its synopsis, a blank line, then examples:
//     lines that run podrun, each after an optional "# comment" line,
//     written as a raw string, as help prints it. The examples name only
//     flags the command has.
//
// finishCommands gives every command the same usage-error handling.
//
// docs/cli.md is generated from the same descriptions (TestCLIReference):
//
//go:generate go test -run TestCLIReference . -update

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// The flag categories, in the order help lists them.
const (
	catInput    = "Input"
	catPod      = "Pod"
	catRuntime  = "Runtime"
	catOutput   = "Wait and output"
	catNode     = "Node"
	catNetwork  = "Network"
	catSecurity = "Security"
)

var flagCategories = []string{catInput, catPod, catRuntime, catOutput, catNode, catNetwork, catSecurity}

// helpWidth is the width help text is wrapped to.
const helpWidth = 80

// exitStatusHelp is the exit status summary at the end of podrun --help
// (docs/exit-status.md has the whole table).
const exitStatusHelp = `Exit status:
  0        every pod reached the wait condition (Succeeded, or Ready)
  1-255    a pod failed: the exit code of its first failed container
           (spec order, init containers first)
  123      a pod's activeDeadlineSeconds passed (reason DeadlineExceeded)
  124      --timeout expired
  125      podrun could not run the pods (usage, manifest, runtime, node,
           admission, image pull, volumes, teardown, container output lost)
  129      interrupted by SIGHUP (the terminal closed), after teardown
  130/143  interrupted by SIGINT/SIGTERM, after teardown
  141      stdout or stderr closed (a broken pipe), after teardown`

// appUsageText is podrun's synopsis and its examples: the three uses (a CI
// step, a node's static pods before its kubelet, a one-off pod). The CI
// step writes a JUnit report when podrun has --junit.
func appUsageText(flags []cli.Flag) string {
	junit := ""
	if slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "junit") }) {
		junit = " --junit report.xml"
	}
	return "podrun [flags] -f SOURCE...   (the same as: podrun run [flags] -f SOURCE...)\n" +
		"podrun COMMAND [flags] [ARGS...]\n" +
		"\n" +
		"# A CI step: run a job pod with its init containers and sidecars, stream its\n" +
		"# logs, give up after 10 minutes (exit 124), print the final pod as JSON and\n" +
		"# exit with the job's status\n" +
		"podrun --timeout 10m -o json" + junit + " -f job.yaml > pod.json\n" +
		"# A node's static pods before its kubelet exists: start them, leave them\n" +
		"# running once Ready, look at them, and tear them down\n" +
		"podrun -d --wait=ready -f /etc/kubernetes/manifests\n" +
		"podrun ps\n" +
		"podrun down --all\n" +
		"# A one-off pod, as kubectl run --rm would: run it, stream its output,\n" +
		"# remove it, exit with its status\n" +
		"podrun -f pod.yaml"
}

func init() {
	// urfave/cli prints every help through HelpPrinter: podrun's renders the
	// categories in its order, the examples and wrapped flag usages.
	cli.HelpPrinter = printHelp
}

// printHelp is cli.HelpPrinter: it ignores urfave's templates.
func printHelp(w io.Writer, _ string, data any) {
	switch d := data.(type) {
	case *cli.App:
		writeHelp(w, describeApp(d))
	case *cli.Command:
		path := d.HelpName
		if path == "" {
			path = "podrun " + d.Name
		}
		writeHelp(w, describeCommand(path, d))
	}
}

// commandDoc is what help and the CLI reference show of one command (or of
// podrun itself).
type commandDoc struct {
	Path        string // "podrun", "podrun cni init"
	Usage       string // one line
	Synopsis    []string
	Examples    []string // "# comment" and command lines
	Description string
	Commands    []commandDoc // podrun's: every visible command, nested ones by their path
	Flags       []flagGroup
}

type flagGroup struct {
	Category string
	Flags    []flagDoc
}

type flagDoc struct {
	Name        string // "--filename"
	Synopsis    string // "-f, --filename SOURCE"
	Usage       string
	Default     string // "" for none
	Env         []string
	Placeholder string // "SOURCE"; "" for a flag that takes no value
}

func describeApp(app *cli.App) commandDoc {
	d := describe("podrun", app.Usage, app.UsageText, "", app.VisibleFlags())
	d.Description = app.Description
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := path + " " + c.Name
			if len(c.Subcommands) == 0 {
				d.Commands = append(d.Commands, describeCommand(p, c))
			}
			walk(p, c.Subcommands)
		}
	}
	walk("podrun", app.Commands)
	return d
}

func describeCommand(path string, c *cli.Command) commandDoc {
	d := describe(path, c.Usage, c.UsageText, c.Description, c.VisibleFlags())
	for _, s := range c.Subcommands {
		if !s.Hidden {
			d.Commands = append(d.Commands, describeCommand(path+" "+s.Name, s))
		}
	}
	return d
}

func describe(path, usage, usageText, description string, flags []cli.Flag) commandDoc {
	d := commandDoc{Path: path, Usage: usage, Description: description}
	synopsis, examples, _ := strings.Cut(usageText, "\n\n")
	d.Synopsis = nonEmptyLines(synopsis)
	if len(d.Synopsis) == 0 {
		d.Synopsis = []string{path + " [flags]"}
	}
	d.Examples = nonEmptyLines(examples)
	byCategory := map[string][]flagDoc{}
	for _, f := range flags {
		if slices.Contains(f.Names(), "help") {
			continue
		}
		cat := flagCategory(f)
		if !slices.Contains(flagCategories, cat) {
			cat = "Other"
		}
		byCategory[cat] = append(byCategory[cat], describeFlag(f))
	}
	for _, cat := range append(slices.Clone(flagCategories), "Other") {
		if fs := byCategory[cat]; len(fs) > 0 {
			d.Flags = append(d.Flags, flagGroup{Category: cat, Flags: fs})
		}
	}
	return d
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// describeFlag is one flag's names, placeholder, usage, default and
// environment variables. The placeholder is the usage's `QUOTED` word (the
// urfave/cli convention), else VALUE or DURATION.
func describeFlag(f cli.Flag) flagDoc {
	d := flagDoc{Name: "--" + f.Names()[0]}
	var names []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			names = append([]string{"-" + n}, names...)
		} else {
			names = append(names, "--"+n)
		}
	}
	usage := ""
	if uf, ok := f.(interface{ GetUsage() string }); ok {
		usage = uf.GetUsage()
	}
	placeholder, usage := unquoteUsage(usage)
	d.Usage = usage
	takesValue := false
	if df, ok := f.(cli.DocGenerationFlag); ok {
		takesValue = df.TakesValue()
		d.Env = df.GetEnvVars()
		if takesValue {
			d.Default = defaultText(df.GetDefaultText())
		}
	}
	if takesValue {
		if placeholder == "" {
			placeholder = "VALUE"
			if _, ok := unwrapFlag(f).(*cli.DurationFlag); ok {
				placeholder = "DURATION"
			}
		}
		d.Placeholder = placeholder
	}
	d.Synopsis = strings.Join(names, ", ")
	if d.Placeholder != "" {
		d.Synopsis += " " + d.Placeholder
	}
	return d
}

// unquoteUsage splits a flag usage into its `QUOTED` placeholder, if any,
// and the usage without the quotes.
func unquoteUsage(usage string) (placeholder, text string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	name, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return name, before + name + after
}

// defaultText is a flag's default as help shows it: unquoted, and none
// for an empty or zero value.
func defaultText(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	switch s {
	case "", "0", "0s", "false", "[]":
		return ""
	}
	return s
}

// writeHelp renders a command's help as text.
func writeHelp(w io.Writer, d commandDoc) {
	var b strings.Builder
	b.WriteString(wrapText(d.Path+" - "+d.Usage, 0, helpWidth) + "\n\nUsage:\n")
	for _, l := range d.Synopsis {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if d.Description != "" && d.Path != "podrun" {
		b.WriteString("\n" + wrapText(d.Description, 0, helpWidth) + "\n")
	}
	if len(d.Examples) > 0 {
		b.WriteString("\nExamples:\n")
		for i, l := range d.Examples {
			if i > 0 && strings.HasPrefix(l, "#") && !strings.HasPrefix(d.Examples[i-1], "#") {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(d.Commands) > 0 {
		b.WriteString("\nCommands:\n")
		width := 0
		for _, c := range d.Commands {
			width = max(width, len(commandName(d, c)))
		}
		for _, c := range d.Commands {
			name := commandName(d, c)
			fmt.Fprintf(&b, "  %-*s  %s\n", width, name, wrapText(c.Usage, width+4, helpWidth)[width+4:])
		}
	}
	for _, g := range d.Flags {
		fmt.Fprintf(&b, "\n%s flags:\n", g.Category)
		for _, f := range g.Flags {
			fmt.Fprintf(&b, "  %s\n%s\n", f.Synopsis, wrapText(flagUsage(f), 8, helpWidth))
		}
	}
	if d.Path == "podrun" {
		if d.Description != "" {
			b.WriteString("\n" + d.Description + "\n")
		}
		b.WriteString("\nRun 'podrun COMMAND --help' for a command's flags and examples.\n")
	}
	io.WriteString(w, b.String())
}

// commandName is a command's path below the command whose help lists it.
func commandName(parent, c commandDoc) string {
	return strings.TrimPrefix(c.Path, parent.Path+" ")
}

// flagUsage is a flag's usage with its default and environment variables.
func flagUsage(f flagDoc) string {
	s := f.Usage
	if f.Default != "" {
		s += " (default: " + f.Default + ")"
	}
	if len(f.Env) > 0 {
		s += " (env: $" + strings.Join(f.Env, ", $") + ")"
	}
	return s
}

// wrapText breaks s into lines of at most width columns (a longer word
// stays whole), each indented by indent spaces.
func wrapText(s string, indent, width int) string {
	pad := strings.Repeat(" ", indent)
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := pad
		for _, word := range strings.Fields(para) {
			if len(line) > indent && len(line)+1+len(word) > width {
				lines = append(lines, line)
				line = pad
			}
			if len(line) > indent {
				line += " "
			}
			line += word
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// finishCommands gives every command of app what podrun's CLI expects of
// each, so that a command added later has it too: a usage error (unknown
// flag, bad value) exits 125 with one line on stderr that points to the
// command's --help, rather than urfave/cli's "Incorrect Usage" and the whole
// help on stdout; no "help" subcommand; a command with subcommands shows its
// help without arguments and refuses an unknown one (urfave/cli would exit 3
// with "No help topic").
func finishCommands(app *cli.App) {
	app.HideHelpCommand = true
	app.OnUsageError = usageError("podrun")
	app.Flags = withNamesOnce(app.Flags)
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			c.HideHelpCommand = true
			c.OnUsageError = usageError(p)
			c.Flags = withNamesOnce(c.Flags)
			if len(c.Subcommands) > 0 && c.Action == nil {
				c.Action = parentAction(p)
			}
			walk(p, c.Subcommands)
		}
	}
	walk("podrun", app.Commands)
}

func usageError(path string) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return podrunError(fmt.Errorf("%w (see %s --help)", err, path))
	}
}

// parentAction is the action of a command that only groups subcommands.
func parentAction(path string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return cli.ShowSubcommandHelp(c)
		}
		return podrunError(fmt.Errorf("unknown command %q for %q (see %s --help)", c.Args().First(), path, path))
	}
}
