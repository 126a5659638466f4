package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
)

// `podrun handover`: podrun's pods given over to a kubelet that starts on
// the same runtime (runner.Handover, docs/handover.md).

func handoverCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "handover",
		Usage: "hand podrun's pods over to a kubelet starting on the same runtime: each is adopted or makes way for the kubelet's copy",
		UsageText: `podrun handover [flags] POD... | --all   (POD: NAME, NAMESPACE/NAME or UID, of --root-dir)

# before starting the kubelet on /etc/kubernetes/manifests: wait for it, at most 5 minutes
podrun handover --all --timeout 5m
# one pod, the kubelet's healthz on another port
podrun handover --kubelet-healthz http://127.0.0.1:10258/healthz etcd-node1`,
		Flags: append(runtimeFlags(),
			&cli.BoolFlag{Name: "all", Category: catInput, Usage: "every podrun pod of --root-dir not handed over yet (with --all-roots: on this node)"},
			allRootsFlag("take pods of every --root-dir, not only of this one: POD names any podrun pod, --all takes every one on the runtime"),
			&cli.DurationFlag{Name: "timeout", Category: catOutput, Usage: "`DURATION` to wait for the kubelet; 0 means none (exit 124 when it expires)"},
			&cli.StringFlag{Name: "kubelet-healthz", Value: runner.DefaultKubeletHealthz, Category: catRuntime,
				Usage: "the kubelet's healthz `URL`: a pod it leaves running for a few seconds after answering is adopted"},
		),
		Action: func(c *cli.Context) error { return handoverAction(c, stdout, stderr) },
	}
}

func handoverAction(c *cli.Context, stdout, stderr io.Writer) error {
	if c.NArg() == 0 && !boolean(c, "all") {
		return podrunError(errors.New("name the pods to hand over (NAME, NAMESPACE/NAME or UID) or use --all"))
	}
	progress := func(format string, args ...any) {
		if !boolean(c, "quiet") {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}
	timeout := flagCtx(c, "timeout").Duration("timeout")
	scope, err := podScope(c)
	if err != nil {
		return podrunError(err)
	}
	return withRuntime(c, func(ctx context.Context, rt *cri.Client, sigCode func() int) error {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		start := time.Now()
		res, err := runner.Handover(ctx, rt, runner.HandoverOptions{
			Args: c.Args().Slice(), All: boolean(c, "all"), Scope: scope, RootDir: str(c, "root-dir"), Healthz: str(c, "kubelet-healthz"), Progressf: progress,
		})
		for _, r := range res {
			fmt.Fprintf(stdout, "%s/%s\t%s\t%s\n", r.Namespace, r.Name, r.Outcome, r.At.Sub(start).Round(time.Millisecond))
		}
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && sigCode() == 0 {
			return &exitError{code: runner.ExitTimeout, err: err}
		}
		if err != nil {
			return interrupted(err, sigCode)
		}
		return nil
	})
}
