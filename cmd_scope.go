package main

// The scope of the commands that take podrun's pods by name or all at once
// (ps, down, handover): the pods of their --root-dir, as kubectl's are
// those of its namespace, or with --all-roots every podrun pod on the
// runtime (runner/podref.Scope, docs/ps.md#scope).

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/runner/podref"
)

// allRootsFlag widens a command from the pods of its --root-dir to every
// podrun pod on the runtime. Not -A: kubectl's -A is --all-namespaces, and
// podrun's commands already take every namespace; a root dir is which
// podrun (a CI job, a node's bootstrap) runs a pod, not a namespace.
func allRootsFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "all-roots", Category: catInput, Usage: usage}
}

// podScope is the scope of a command's pods: its --root-dir, made
// absolute as a run makes it (the pods' io.podrun.root-dir), or with
// --all-roots every root dir.
func podScope(c *cli.Context) (podref.Scope, error) {
	if boolean(c, "all-roots") {
		return podref.Scope{}, nil
	}
	root, err := filepath.Abs(str(c, "root-dir"))
	if err != nil {
		return podref.Scope{}, err
	}
	return podref.Scope{Root: root}, nil
}
