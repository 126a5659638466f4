package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/podref"
)

// Shell completion: `podrun completion bash|zsh|fish` prints a script that
// asks podrun itself what completes, through the hidden command
// `podrun __complete -- WORD... CURRENT`. That prints one candidate a line,
// "VALUE" or "VALUE<TAB>DESCRIPTION", and the line ":files" when the shell
// should complete file names. The candidates come from the CLI definition
// (commands, flags, the values of a few flags) and, for the commands that
// take pods, from the runtime: podrun's pods, as NAME and NAMESPACE/NAME.

var (
	//go:embed completion/podrun.bash
	bashCompletion string
	//go:embed completion/podrun.zsh
	zshCompletion string
	//go:embed completion/podrun.fish
	fishCompletion string
)

var completionScripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

// completeFiles is the line that asks the shell for file names.
const completeFiles = ":files"

// completionTimeout bounds the runtime calls of a completion: a shell waits
// for them, so a runtime that does not answer gives no pod names rather than
// a hung prompt.
const completionTimeout = 3 * time.Second

// podQuery is what a command line says of the pods to complete with: the
// runtime (Endpoint, "" for the default ones) and the scope.
type podQuery struct {
	Endpoint string
	Scope    podref.Scope
}

// flagValues are the values a flag completes with, by "COMMAND/FLAG", or by
// "FLAG" for every command that has it ("" is podrun itself).
var flagValues = map[string][]string{
	"wait":              {string(runner.WaitAuto), string(runner.WaitComplete), string(runner.WaitReady), string(runner.WaitNone)},
	"/output":           {"text", "json", "yaml"},
	"run/output":        {"text", "json", "yaml"},
	"ps/output":         {"table", "wide", "json", "yaml"},
	"cgroup-driver":     {"cgroupfs", "systemd"},
	"restart":           {"Never", "OnFailure", "Always"},
	"image-pull-policy": {"Always", "IfNotPresent", "Never"},
}

func completionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "completion",
		Usage: "print the shell completion script for bash, zsh or fish",
		UsageText: `podrun completion bash|zsh|fish

# bash, in this shell (or write it to /etc/bash_completion.d/podrun)
source <(podrun completion bash)
# zsh, for every new shell (a directory of $fpath, before compinit)
podrun completion zsh > /usr/local/share/zsh/site-functions/_podrun
# fish, for every new shell
podrun completion fish > ~/.config/fish/completions/podrun.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return podrunError(errors.New("name one shell: bash, zsh or fish (see podrun completion --help)"))
			}
			script, ok := completionScripts[c.Args().First()]
			if !ok {
				return podrunError(fmt.Errorf("unsupported shell %q: want bash, zsh or fish", c.Args().First()))
			}
			_, err := io.WriteString(stdout, script)
			return err
		},
	}
}

// completeCommand is the hidden command the completion scripts call.
func completeCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Usage:           "print what completes the last word of a podrun command line (for the completion scripts)",
		UsageText: `podrun __complete [--] WORD... CURRENT

# what completes after 'podrun logs '
podrun __complete -- logs ''`,
		Action: func(c *cli.Context) error {
			words := c.Args().Slice()
			if len(words) > 0 && words[0] == "--" {
				words = words[1:]
			}
			pods := func(q podQuery) []candidate {
				if q.Endpoint == "" {
					q.Endpoint = str(c, "runtime-endpoint")
				}
				return podCandidates(q)
			}
			for _, cand := range completions(c.App, words, pods) {
				fmt.Fprintln(stdout, cand)
			}
			return nil
		},
	}
}

// candidate is one completion: a value and what it is.
type candidate struct{ Value, Description string }

func (c candidate) String() string {
	if c.Description == "" {
		return c.Value
	}
	return c.Value + "\t" + c.Description
}

// completions are the candidates for the last of words, the words after
// "podrun" on a command line (the last one possibly empty). pods lists the
// runtime's podrun pods, given the endpoint the words name ("" if none)
// and, for a command with a scope, the --root-dir they name (else its
// default) or every root dir with --all-roots.
func completions(app *cli.App, words []string, pods func(podQuery) []candidate) []candidate {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var matching []candidate
	for _, c := range parseCommandLine(app, words[:len(words)-1]).candidates(cur, pods) {
		if c.Value == completeFiles || strings.HasPrefix(c.Value, cur) {
			matching = append(matching, c)
		}
	}
	return matching
}

// commandLine is what the words before the one to complete say.
type commandLine struct {
	path       string // the command's names below podrun, "" for podrun
	flags      []cli.Flag
	subs       []*cli.Command
	expect     cli.Flag // a flag whose value is the next word
	positional []string
	dashDash   bool
	endpoint   string
	rootDir    string
	allRoots   bool
}

// parseCommandLine reads the words before the one to complete: the
// command they name, its arguments, a flag waiting for its value, and the
// runtime and scope of the pods they name.
func parseCommandLine(app *cli.App, prev []string) commandLine {
	l := commandLine{flags: app.Flags, subs: app.Commands, rootDir: rootDirDefault(app)}
	for _, w := range prev {
		switch {
		case l.expect != nil:
			l.flagValue(l.expect, w)
			l.expect = nil
		case l.dashDash:
			l.positional = append(l.positional, w)
		case w == "--":
			l.dashDash = true
		case strings.HasPrefix(w, "-") && w != "-":
			l.flagWord(w)
		default:
			l.word(w)
		}
	}
	return l
}

// flagWord reads a flag: -x, --name, or --name=value.
func (l *commandLine) flagWord(w string) {
	name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
	f := findFlag(l.flags, name)
	if f == nil {
		return
	}
	if takesValue(f) && !hasValue {
		l.expect = f
	}
	if hasValue {
		l.flagValue(f, value)
	}
	if slices.Contains(f.Names(), "all-roots") {
		l.allRoots = !hasValue || value == "true"
	}
}

// flagValue reads the value of flag f where it names the pods' runtime or
// root dir.
func (l *commandLine) flagValue(f cli.Flag, value string) {
	if slices.Contains(f.Names(), "runtime-endpoint") {
		l.endpoint = value
	}
	if slices.Contains(f.Names(), "root-dir") {
		l.rootDir = value
	}
}

// word reads a word that is not a flag: a command below the one so far,
// or else an argument.
func (l *commandLine) word(w string) {
	if len(l.positional) == 0 {
		if i := slices.IndexFunc(l.subs, func(c *cli.Command) bool { return !c.Hidden && c.HasName(w) }); i >= 0 {
			cmd := l.subs[i]
			l.path = strings.TrimPrefix(l.path+" "+cmd.Name, " ")
			l.flags, l.subs = cmd.Flags, cmd.Subcommands
			return
		}
	}
	l.positional = append(l.positional, w)
}

// candidates are what may come as the word cur after the command line:
// a flag's value, a flag, a command, or a pod.
func (l commandLine) candidates(cur string, pods func(podQuery) []candidate) []candidate {
	switch {
	case l.expect != nil:
		return valueCandidates(l.path, l.expect, "")
	case l.dashDash:
		return nil
	case strings.HasPrefix(cur, "-"):
		return flagCandidates(l.path, l.flags, cur)
	case len(l.positional) == 0 && len(l.subs) > 0:
		var out []candidate
		for _, c := range l.subs {
			if !c.Hidden {
				out = append(out, candidate{c.Name, c.Usage})
			}
		}
		return out
	}
	return l.podArgCandidates(pods)
}

// flagCandidates complete cur, a word that starts with '-': a flag's
// value after its '=', else the command's flags, each with the first
// clause of its usage, and --help.
func flagCandidates(path string, flags []cli.Flag, cur string) []candidate {
	if name, _, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
		if f := findFlag(flags, name); f != nil {
			prefix := cur[:strings.Index(cur, "=")+1]
			return valueCandidates(path, f, prefix)
		}
		return nil
	}
	var out []candidate
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		usage, _ := f.(interface{ GetUsage() string })
		desc := ""
		if usage != nil {
			_, desc = unquoteUsage(usage.GetUsage())
			desc = firstClause(desc)
		}
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			out = append(out, candidate{dash + n, desc})
		}
	}
	return append(out, candidate{"--help", "show help"})
}

// podArgCandidates are the pods a command that takes PODs may take next
// (podArgCommands), of its scope, less those already given.
func (l commandLine) podArgCandidates(pods func(podQuery) []candidate) []candidate {
	takes, ok := podArgCommands[l.path]
	if !ok || (takes.max >= 0 && len(l.positional) >= takes.max) {
		return nil
	}
	q := podQuery{Endpoint: l.endpoint}
	if takes.scoped && !l.allRoots {
		if abs, err := filepath.Abs(l.rootDir); err == nil {
			q.Scope.Root = abs
		}
	}
	var out []candidate
	for _, p := range pods(q) {
		if !slices.Contains(l.positional, p.Value) {
			out = append(out, p)
		}
	}
	return out
}

// valueCandidates are the values of flag f of the command at path, each
// after prefix ("--wait=" when the value is in the same word).
func valueCandidates(path string, f cli.Flag, prefix string) []candidate {
	name := f.Names()[0]
	vals, ok := flagValues[path+"/"+name]
	if !ok {
		vals, ok = flagValues[name]
	}
	if ok {
		out := make([]candidate, len(vals))
		for i, v := range vals {
			out[i] = candidate{Value: prefix + v}
		}
		return out
	}
	if takesFile(f) && prefix == "" {
		return []candidate{{Value: completeFiles}}
	}
	return nil
}

func takesFile(f cli.Flag) bool {
	switch f := unwrapFlag(f).(type) {
	case *cli.StringFlag:
		return f.TakesFile
	case *cli.StringSliceFlag:
		return f.TakesFile || f.Name == "filename"
	case *cli.PathFlag:
		return true
	}
	return false
}

// firstClause is a flag usage cut for a completion menu: up to its first
// ';' or '(', or 60 characters.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// rootDirDefault is the default of the app's --root-dir.
func rootDirDefault(app *cli.App) string {
	if f, ok := unwrapFlag(findFlag(app.Flags, "root-dir")).(*cli.StringFlag); ok {
		return f.Value
	}
	return ""
}

// podCandidates lists podrun's pods of the query's scope on the runtime at
// its endpoint (the default endpoints when ""), as NAMESPACE/NAME and,
// when no other namespace has a pod of that name, NAME. Any failure lists
// none: a completion must not print errors into the command line.
func podCandidates(q podQuery) []candidate {
	endpoint := q.Endpoint
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	var rt *cri.Client
	var err error
	if endpoint != "" {
		rt, err = cri.Dial(ctx, endpoint, cri.WithCallTimeout(completionTimeout))
	} else {
		rt, err = cri.DialFirst(ctx, nil, cri.WithCallTimeout(completionTimeout))
	}
	if err != nil {
		return nil
	}
	defer rt.Close()
	pods, err := runner.List(ctx, rt)
	if err != nil {
		return nil
	}
	inScope := pods[:0]
	for _, p := range pods {
		if q.Scope.Has(p.Root) {
			inScope = append(inScope, p)
		}
	}
	return podNameCandidates(inScope)
}

// podNameCandidates are the names pods can be given by: NAMESPACE/NAME
// always, NAME when it names one pod only, sorted, each once.
func podNameCandidates(pods []podref.Ref) []candidate {
	namespaces := map[string][]string{}
	for _, p := range pods {
		if !slices.Contains(namespaces[p.Name], p.Namespace) {
			namespaces[p.Name] = append(namespaces[p.Name], p.Namespace)
		}
	}
	var out []candidate
	for name, nss := range namespaces {
		if len(nss) == 1 {
			out = append(out, candidate{name, "pod in namespace " + nss[0]})
		}
		for _, ns := range nss {
			out = append(out, candidate{ns + "/" + name, "pod"})
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return strings.Compare(a.Value, b.Value) })
	return out
}
