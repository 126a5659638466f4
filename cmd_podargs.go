package main

// The commands that take pods as arguments (POD: NAME, NAMESPACE/NAME or
// UID), in one table. Flag parsing lets their flags follow a POD, as
// kubectl's do (interspersed); completion completes their PODs with the
// names of podrun's pods (completions); the CLI reference lists them
// (docs/cli.md). TestPodArgCommands fails while a command whose synopsis
// names POD is missing from the table, or the table says otherwise than
// its synopsis and flags.

// podArgs is how a command takes pods.
type podArgs struct {
	// max is how many PODs it takes; -1: any number.
	max int
	// scoped: its pods are those of --root-dir unless --all-roots
	// (cmd_scope.go), and their names complete from that scope. The
	// others take a pod of any root dir.
	scoped bool
}

// podArgCommands are the commands that take PODs, by name.
var podArgCommands = map[string]podArgs{
	"ps":       {max: -1, scoped: true},
	"down":     {max: -1, scoped: true},
	"handover": {max: -1, scoped: true},
	"logs":     {max: 1},
	"exec":     {max: 1},
	"cp":       {max: 1},
}
