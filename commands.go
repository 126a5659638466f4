package main

// What every command uses: exit statuses (exitError, podrunError,
// interrupted), flags read wherever on the command line they were set
// (flagCtx), the flags of the commands that talk to the runtime, the
// runtime dialled under a context a signal cancels (withRuntime,
// withRuntimeUntilSignal; signals.go), the one serializer of -o json|yaml
// (writeObject), and the parsing that lets the flags of the commands that
// take pods follow POD (interspersed).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
)

// exitError carries an exit status out of an action.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func podrunError(err error) error { return &exitError{code: runner.ExitPodrunError, err: err} }

// interrupted turns an error that a signal caused before any pod was
// created (a runtime call cut short) into the signal's exit status.
func interrupted(err error, sigCode func() int) error {
	if code := sigCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("interrupted: %w", err)}
	}
	return podrunError(err)
}

// flagCtx returns the context that set the flag: `podrun -r X run -f Y`
// sets -r on the app and -f on the run command, and both count. A flag
// with an environment variable is set from it in every command that has
// the flag, so a value from the command line, which differs from the
// variable's, wins wherever it was given: `CONTAINER_RUNTIME_ENDPOINT=Y
// podrun -r X ps` talks to X, as crictl would.
func flagCtx(c *cli.Context, name string) *cli.Context {
	var set []*cli.Context
	for _, ctx := range c.Lineage() {
		if isSet(ctx, name) {
			set = append(set, ctx)
		}
	}
	if len(set) == 0 {
		return c
	}
	for _, env := range flagEnvVars(set[0], name) {
		if v, ok := os.LookupEnv(env); ok {
			for _, ctx := range set {
				if ctx.String(name) != v {
					return ctx
				}
			}
		}
	}
	return set[0]
}

// isSet is ctx.IsSet(name) without its cost. urfave's IsSet, for a flag
// not given, looks for it by calling Names on every flag before it, and
// Names runs a regexp over each name: with the run command's 45 flags,
// the flags read once each cost a millisecond of a run's start. Here the
// names are worked out once per flag (flagNames), and the answer is
// IsSet's: the first context of the lineage that has the flag decides;
// the flag is set there when it was given under any of its names, or from
// its environment variable.
func isSet(ctx *cli.Context, name string) bool {
	for _, c := range ctx.Lineage() {
		f := ownFlag(c, name)
		if f == nil {
			continue
		}
		if f.IsSet() {
			return true
		}
		given := c.LocalFlagNames()
		return slices.ContainsFunc(flagNames(f), func(n string) bool { return slices.Contains(given, n) })
	}
	return false
}

// ownFlag is the flag called name among the flags of ctx's command (or
// app), or nil.
func ownFlag(ctx *cli.Context, name string) cli.Flag {
	var flags []cli.Flag
	switch {
	case ctx.Command != nil && ctx.Command.Name != "":
		flags = ctx.Command.Flags
	case ctx.App != nil:
		flags = ctx.App.Flags
	}
	for _, f := range flags {
		if slices.Contains(flagNames(f), name) {
			return f
		}
	}
	return nil
}

// flagNames is f.Names(), worked out once per flag.
func flagNames(f cli.Flag) []string {
	namesMu.Lock()
	defer namesMu.Unlock()
	names, ok := namesOf[f]
	if !ok {
		names = f.Names()
		namesOf[f] = names
	}
	return names
}

var (
	namesMu sync.Mutex
	namesOf = map[cli.Flag][]string{}
)

// flagEnvVars is the environment variables of the flag name of ctx's
// command (or app).
func flagEnvVars(ctx *cli.Context, name string) []string {
	if ef, ok := ownFlag(ctx, name).(interface{ GetEnvVars() []string }); ok {
		return ef.GetEnvVars()
	}
	return nil
}

func str(c *cli.Context, name string) string             { return flagCtx(c, name).String(name) }
func boolean(c *cli.Context, name string) bool           { return flagCtx(c, name).Bool(name) }
func strs(c *cli.Context, name string) []string          { return flagCtx(c, name).StringSlice(name) }
func duration(c *cli.Context, name string) time.Duration { return flagCtx(c, name).Duration(name) }

// stringList is a repeatable flag's values (a cli.GenericFlag's), each as
// given: unlike a StringSliceFlag's, not split at commas nor trimmed, for
// values that hold paths.
type stringList []string

func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
func (l *stringList) String() string     { return strings.Join(*l, " ") }

// stringListOf is the values of the stringList flag name.
func stringListOf(c *cli.Context, name string) []string {
	if l, ok := flagCtx(c, name).Generic(name).(*stringList); ok && l != nil {
		return *l
	}
	return nil
}

// Flags shared by every command that talks to the runtime.
func runtimeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "runtime-endpoint", Aliases: []string{"r"}, EnvVars: []string{"CONTAINER_RUNTIME_ENDPOINT"}, Category: catRuntime,
			Usage: "CRI `ENDPOINT` (unix:///path or /path); default: the first that answers of " + strings.Join(cri.DefaultEndpoints, ", ")},
		&cli.StringFlag{Name: "root-dir", Value: "/var/lib/podrun", Category: catRuntime,
			Usage: "podrun's state and per-pod data `DIR`s (<root-dir>/pods/<uid>); pod logs go under <root-dir>/logs unless --pod-logs-dir is set"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catOutput, Usage: "do not print podrun's own progress on stderr"},
	}
}

// containerFlag is -c/--container of logs and exec: the container to
// use, by default the one the pod's default-container annotation names,
// else the fallback kubectl's command takes.
func containerFlag(fallback string) cli.Flag {
	return &cli.StringFlag{Name: "container", Category: catInput, Aliases: []string{"c"},
		Usage: "the container; default: the one the pod's kubectl.kubernetes.io/default-container annotation names, " + fallback}
}

func dial(ctx context.Context, endpoint string) (*cri.Client, error) {
	if endpoint != "" {
		return cri.Dial(ctx, endpoint)
	}
	return cri.DialFirst(ctx, cri.DefaultEndpoints)
}

// withRuntime dials the runtime the command's flags name and runs f with
// it, under a context a signal cancels (sigCode: the exit status of the
// signal that came, 0 for none); f's errors exit 125 unless they carry
// their exit status.
func withRuntime(c *cli.Context, f func(ctx context.Context, rt *cri.Client, sigCode func() int) error) error {
	ctx, _, sigCode, stop := signals()
	defer stop()
	rt, err := dial(ctx, str(c, "runtime-endpoint"))
	if err != nil {
		return podrunError(err)
	}
	defer rt.Close()
	if err := f(ctx, rt, sigCode); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return podrunError(err)
	}
	return nil
}

// withRuntimeUntilSignal is withRuntime for a command that runs until
// interrupted (logs -f, exec): a SIGINT or SIGTERM ends it with 130 or
// 143 and no message.
func withRuntimeUntilSignal(c *cli.Context, f func(ctx context.Context, rt runner.Runtime) error) error {
	ctx, _, sigCode, stop := signals()
	defer stop()
	rt, err := dial(ctx, str(c, "runtime-endpoint"))
	if err != nil {
		return interrupted(err, sigCode)
	}
	defer rt.Close()
	err = f(ctx, rt)
	if code := sigCode(); code != 0 {
		return &exitError{code: code}
	}
	var ee *exitError
	if err != nil && !errors.As(err, &ee) {
		return podrunError(err)
	}
	return err
}

// writeObject prints obj as indented JSON, or as YAML for format "yaml":
// the one serializer of -o json|yaml.
func writeObject(w io.Writer, format string, obj any) error {
	b, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

// interspersed lets the flags of the commands that take PODs
// (podArgCommands) come after POD, as kubectl takes them (`podrun logs
// web -f`, `podrun exec web -c app -- sh`, `podrun ps web -o wide`,
// `podrun down web -q`), and those of podrun run after NAME (`podrun run
// t -i --image busybox -- wc -c`, nameArgCommands): it moves them in front of the command's
// arguments, up to a "--", after which everything is the command to run.
// The flags of podrun itself before the command name are skipped over.
func interspersed(app *cli.App, args []string) []string {
	i := 1
	for i < len(args) && isFlag(args[i]) {
		if argTakesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		return args
	}
	if _, takesPods := podArgCommands[cmd.Name]; !takesPods && !nameArgCommands[cmd.Name] {
		return args
	}
	var flags, rest []string
	tail := args[i+1:]
	for j := 0; j < len(tail); j++ {
		a := tail[j]
		if a == "--" {
			rest = append(rest, tail[j:]...)
			break
		}
		if !isFlag(a) {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if argTakesValue(cmd.Flags, a) && j+1 < len(tail) {
			flags = append(flags, tail[j+1])
			j++
		}
	}
	out := append(append([]string{}, args[:i+1]...), flags...)
	return append(out, rest...)
}

func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' && a != "--" }

// argTakesValue reports whether the flag argument a (-x, --name) is one of
// flags that takes its value from the next argument: not a boolean, and
// not given as --name=value.
func argTakesValue(flags []cli.Flag, a string) bool {
	name := strings.TrimLeft(a, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := findFlag(flags, name)
	return f != nil && takesValue(f)
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	df, ok := f.(cli.DocGenerationFlag)
	return ok && df.TakesValue()
}
