// Command podrun runs Kubernetes Pod manifests once on the node's own CRI
// runtime, with the kubelet's semantics and no API server:
//
//	podrun -f pod.yaml
//
// main.go wires the command line (urfave/cli, as crictl): newApp lists the
// commands, each in a cmd_<name>.go of its own; commands.go holds what every
// command uses (exit statuses, flags, the runtime under a signal's context)
// and signals.go the signals. config.go resolves `podrun run`'s flags once
// into a checked runConfig; the work is in sources (manifests), cri (the
// runtime client) and runner (the pipeline). docs/architecture.md says
// which package does what.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/runner"
)

func main() {
	tuneGC()
	limitProcs()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args and returns podrun's exit status; an
// error goes to stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.Run(interspersed(app, args))
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "podrun: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "podrun: %v\n", err)
	return runner.ExitPodrunError
}

// newApp is podrun's command line: `podrun run` is also podrun itself
// (its flags and action), and every command is one line here.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	runCmd := runCommand(stdin, stdout, stderr)
	appFlags := runFlags()
	app := &cli.App{
		Name:        "podrun",
		Usage:       "run Kubernetes Pod manifests once on the node's CRI runtime, as a kubelet would",
		UsageText:   appUsageText(appFlags),
		Description: exitStatusHelp,
		Writer:      stdout,
		ErrWriter:   stderr,
		Reader:      stdin,
		Flags:       appFlags,
		// -it, as kubectl and exec take it.
		UseShortOptionHandling: true,
		Action:                 func(c *cli.Context) error { return runAction(c, false, stdin, stdout, stderr) },
		Commands: []*cli.Command{
			runCmd,
			psCommand(stdout, stderr),
			downCommand(stderr),
			validateCommand(stdin, stdout, stderr),
			handoverCommand(stdout, stderr),
			logsCommand(stdout, stderr),
			execCommand(stdin, stdout, stderr),
			cpCommand(stderr),
			cniCommand(stdout, stderr),
			completionCommand(stdout),
			versionCommand(stdout),
			manCommand(stdout),
			completeCommand(stdout),
		},
	}
	finishCommands(app)
	return app
}
