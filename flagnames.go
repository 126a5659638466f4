package main

// Flags whose names are worked out once (withNamesOnce, from finishCommands).

import "github.com/urfave/cli/v2"

// urfave/cli's flags work out their names on every Names call (cli.FlagNames:
// a regexp over the name and each alias), and the library calls Names about
// n² times on each run for a command of n flags: after parsing, it asks
// IsSet of every name of every flag (runFlagActions), and IsSet of a flag
// not given walks the command's flags calling Names until it finds it. For
// the 48 flags of a pod run that was 0.4 ms of CPU, 2 % of a one-pod run
// (docs/benchmark.md, Where the CPU goes). Each flag of podrun's commands
// is therefore wrapped in a type of the same kind that keeps its names;
// everything else is the library's own flag's, embedded behind a pointer (a
// flag is a map key) (Apply, String,
// the help text, actions, IsSet), so parsing and help are unchanged.
//
// podrun's own code that asks a flag's concrete type looks through the
// wrapper with unwrapFlag.
//
// The wrappers also hide each flag's category from the library
// (GetCategory is ""; flagCategory gives it): App.Setup sorts every
// command's categorized flags by their help lines on each run, rendering
// each (fl.String()), about 0.25 ms, for help templates podrun does not
// use; podrun's help (help.go) groups the flags by flagCategory.

type namedBoolFlag struct {
	*cli.BoolFlag
	names []string
}

func (f *namedBoolFlag) Names() []string     { return f.names }
func (f *namedBoolFlag) Unwrap() cli.Flag    { return f.BoolFlag }
func (f *namedBoolFlag) GetCategory() string { return "" }

type namedStringFlag struct {
	*cli.StringFlag
	names []string
}

func (f *namedStringFlag) Names() []string     { return f.names }
func (f *namedStringFlag) Unwrap() cli.Flag    { return f.StringFlag }
func (f *namedStringFlag) GetCategory() string { return "" }

type namedStringSliceFlag struct {
	*cli.StringSliceFlag
	names []string
}

func (f *namedStringSliceFlag) Names() []string     { return f.names }
func (f *namedStringSliceFlag) Unwrap() cli.Flag    { return f.StringSliceFlag }
func (f *namedStringSliceFlag) GetCategory() string { return "" }

type namedDurationFlag struct {
	*cli.DurationFlag
	names []string
}

func (f *namedDurationFlag) Names() []string     { return f.names }
func (f *namedDurationFlag) Unwrap() cli.Flag    { return f.DurationFlag }
func (f *namedDurationFlag) GetCategory() string { return "" }

type namedInt64Flag struct {
	*cli.Int64Flag
	names []string
}

func (f *namedInt64Flag) Names() []string     { return f.names }
func (f *namedInt64Flag) Unwrap() cli.Flag    { return f.Int64Flag }
func (f *namedInt64Flag) GetCategory() string { return "" }

type namedGenericFlag struct {
	*cli.GenericFlag
	names []string
}

func (f *namedGenericFlag) Names() []string     { return f.names }
func (f *namedGenericFlag) Unwrap() cli.Flag    { return f.GenericFlag }
func (f *namedGenericFlag) GetCategory() string { return "" }

type namedBoolOrValueFlag struct {
	boolOrValueFlag
	names []string
}

func (f *namedBoolOrValueFlag) Names() []string     { return f.names }
func (f *namedBoolOrValueFlag) Unwrap() cli.Flag    { return f.boolOrValueFlag }
func (f *namedBoolOrValueFlag) GetCategory() string { return "" }

// withNamesOnce returns flags with each flag of a kind above wrapped so that
// its names are worked out once; a flag of another kind, or one wrapped
// already, is left as it is.
func withNamesOnce(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			out[i] = &namedBoolFlag{f, f.Names()}
		case *cli.StringFlag:
			out[i] = &namedStringFlag{f, f.Names()}
		case *cli.StringSliceFlag:
			out[i] = &namedStringSliceFlag{f, f.Names()}
		case *cli.DurationFlag:
			out[i] = &namedDurationFlag{f, f.Names()}
		case *cli.Int64Flag:
			out[i] = &namedInt64Flag{f, f.Names()}
		case *cli.GenericFlag:
			out[i] = &namedGenericFlag{f, f.Names()}
		case boolOrValueFlag:
			out[i] = &namedBoolOrValueFlag{f, f.Names()}
		default:
			out[i] = f
		}
	}
	return out
}

// unwrapFlag is the library's flag inside a flag of withNamesOnce, or f.
func unwrapFlag(f cli.Flag) cli.Flag {
	if w, ok := f.(interface{ Unwrap() cli.Flag }); ok {
		return w.Unwrap()
	}
	return f
}

// flagCategory is a flag's help category (Category in its definition),
// which the wrappers of withNamesOnce hide from the library.
func flagCategory(f cli.Flag) string {
	if cf, ok := unwrapFlag(f).(cli.CategorizableFlag); ok {
		return cf.GetCategory()
	}
	return ""
}
