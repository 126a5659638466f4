package main

// `podrun down`: podrun's pods torn down fully, by name or all of its
// --root-dir (runner.DownWith), as a run's teardown does them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/runner"
)

func downCommand(stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name: "down", Usage: "tear podrun pods down fully: containers, sandboxes, data and log dirs",
		UsageText: `podrun down [flags] POD... | --all   (POD: NAME, NAMESPACE/NAME or UID, of --root-dir)

# one pod, by name
podrun down web
# every podrun pod of this root dir (--root-dir), and what pods of it left
# without a sandbox (a killed run's data dirs and cgroups): a CI job's cleanup
podrun down --all
# every podrun pod on this node, whatever its root dir
podrun down --all --all-roots`,
		Flags: append(runtimeFlags(),
			&cli.BoolFlag{Name: "all", Category: catInput, Usage: "every podrun pod of --root-dir, and the data dirs, log dirs and cgroups that pods of --root-dir whose podrun is gone left without a sandbox (with --all-roots: every pod on this node too)"},
			allRootsFlag("take pods of every --root-dir, not only of this one: POD names any podrun pod, --all takes every one on the runtime")),
		Action: func(c *cli.Context) error { return downAction(c, stderr) },
	}
}

func downAction(c *cli.Context, stderr io.Writer) error {
	if c.NArg() == 0 && !boolean(c, "all") {
		return podrunError(errors.New("name the pods to tear down (NAME, NAMESPACE/NAME or UID) or use --all"))
	}
	progress := func(format string, args ...any) {
		if !boolean(c, "quiet") {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}
	scope, err := podScope(c)
	if err != nil {
		return podrunError(err)
	}
	// A signal once down has the runtime does not abandon the stop half
	// way (a pod with its containers still running and its data dir gone):
	// as a run's teardown after its first signal, down carries on, and a
	// second signal kills the containers at once and still removes
	// everything. The exit status is then the first signal's (130, 143,
	// 129), once down is done; an error of down's own wins (125).
	in := newInterrupts()
	defer in.stop()
	rt, err := dial(in.ctx, str(c, "runtime-endpoint"))
	if err != nil {
		return interrupted(err, in.exitCode)
	}
	defer rt.Close()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-in.ctx.Done():
			progress("podrun: interrupted: finishing the stop (a second signal kills the containers at once)")
		case <-finished:
		}
	}()
	root, err := filepath.Abs(str(c, "root-dir"))
	if err != nil {
		return podrunError(err)
	}
	err = runner.DownWith(context.WithoutCancel(in.ctx), rt, runner.DownOptions{
		Args: c.Args().Slice(), All: boolean(c, "all"), Scope: scope, Force: in.force, Progressf: progress,
		RootDir: root,
	})
	if err != nil {
		return podrunError(err)
	}
	if code := in.exitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}
