package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/runner"
)

// `podrun logs`: kubectl logs for the pods podrun runs, read from the
// runtime's log files (runner.Logs).

func logsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "logs",
		Usage: "print the logs of a container of a pod, as kubectl logs does",
		UsageText: `podrun logs [flags] POD [-c CONTAINER]   (POD: NAME, NAMESPACE/NAME or UID)

# follow a detached pod's log, across restarts
podrun logs -f web
# every container of a pod, each line prefixed with its container
podrun logs --all-containers --prefix shop/web
# the log of the container's instance before its last restart
podrun logs -p web -c app`,
		UseShortOptionHandling: true,
		Flags: append(runtimeFlags(),
			containerFlag("else the only one"),
			&cli.BoolFlag{Name: "all-containers", Category: catInput, Usage: "the logs of every container of the pod, init containers first"},
			&cli.BoolFlag{Name: "follow", Category: catOutput, Aliases: []string{"f"},
				Usage: "go on printing the log as it grows, and the next instance's when the container restarts, until the container will not restart or the pod is gone"},
			&cli.BoolFlag{Name: "previous", Category: catInput, Aliases: []string{"p"}, Usage: "the log of the container's last terminated instance"},
			&cli.Int64Flag{Name: "tail", Category: catOutput, Value: -1, Usage: "only the last N lines; -1: all"},
			&cli.DurationFlag{Name: "since", Category: catOutput, Usage: "only lines newer than this, e.g. 10s, 5m or 2h"},
			&cli.BoolFlag{Name: "timestamps", Category: catOutput, Usage: "start each line with its RFC3339 time"},
			&cli.BoolFlag{Name: "prefix", Category: catOutput, Usage: "start each line with [pod/NAME/CONTAINER]"},
		),
		Action: func(c *cli.Context) error { return logsAction(c, stdout, stderr) },
	}
}

// logsOptions checks `podrun logs`' arguments and flags, before the
// runtime is dialled: POD and an optional CONTAINER (kubectl's legacy
// form), with kubectl's rules and messages.
func logsOptions(c *cli.Context, now time.Time) (pod string, opts runner.LogsOptions, err error) {
	args := c.Args().Slice()
	opts = runner.LogsOptions{
		Container: str(c, "container"), AllContainers: boolean(c, "all-containers"),
		Follow: boolean(c, "follow"), Previous: boolean(c, "previous"),
		TailLines: flagCtx(c, "tail").Int64("tail"), Timestamps: boolean(c, "timestamps"), Prefix: boolean(c, "prefix"),
	}
	switch len(args) {
	case 0:
		return "", opts, errors.New("name the pod whose logs to print (NAME, NAMESPACE/NAME or UID)")
	case 1:
	case 2:
		if opts.Container != "" {
			return "", opts, errors.New("only one of -c or an inline [CONTAINER] arg is allowed")
		}
		opts.Container = args[1]
	default:
		return "", opts, fmt.Errorf("unexpected arguments %q: podrun logs POD [-c CONTAINER]", strings.Join(args[2:], " "))
	}
	if opts.AllContainers && opts.Container != "" {
		return "", opts, fmt.Errorf("--all-containers=true should not be specified with container name %s", opts.Container)
	}
	if opts.TailLines < -1 {
		return "", opts, errors.New("--tail must be greater than or equal to -1")
	}
	if flagCtx(c, "since").IsSet("since") {
		d := duration(c, "since")
		if d <= 0 {
			return "", opts, errors.New("--since must be greater than 0")
		}
		opts.Since = now.Add(-d)
	}
	return args[0], opts, nil
}

func logsAction(c *cli.Context, stdout, stderr io.Writer) error {
	pod, opts, err := logsOptions(c, time.Now())
	if err != nil {
		return podrunError(err)
	}
	opts.Stdout, opts.Stderr = stdout, stderr
	opts.Warn = func(s string) { fmt.Fprintln(stderr, s) }
	return withRuntimeUntilSignal(c, func(ctx context.Context, rt runner.Runtime) error {
		return runner.Logs(ctx, rt, pod, opts)
	})
}
