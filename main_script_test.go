package main

// The CLI tier: golden scripts (go-internal testscript) of what podrun
// prints and how it exits when it needs no runtime: usage errors, --help,
// version, decode errors, bad flags, `podrun cni init`. Each file of
// testdata/script is one case, a txtar archive: commands, then the files
// they read and the golden output they compare with. Refresh the goldens
// after an intended change of podrun's output with
//
//	go test -run TestScripts . -update
//
// and read the diff. Scripts never reach a runtime: CONTAINER_RUNTIME_ENDPOINT
// names a socket in the script's work dir that nothing serves, so a script
// that got as far as dialing fails with that error instead of its golden.
// Cases that need a runtime use the fake CRI in Go tests (cmd_*_test.go,
// through main_test.go's podrunAt) or
// the real testbed (e2e/).

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("update", false, "rewrite the golden files of testdata/script/*.txtar with the output podrun gives now")

// statusFileEnv names the file where the script's podrun records its exit
// status for the status command.
const statusFileEnv = "PODRUN_SCRIPT_STATUS_FILE"

// TestMain makes the test binary also the `podrun` command of the scripts:
// testscript runs it as podrun (a copy in $PATH), which calls run as main does.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"podrun": scriptPodrun})
}

// scriptPodrun is podrun's main for scripts; it also records the exit status
// in $PODRUN_SCRIPT_STATUS_FILE, since testscript only tells zero from
// non-zero.
func scriptPodrun() {
	code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
	if f := os.Getenv(statusFileEnv); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(code)), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "podrun script: recording the exit status: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(code)
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                filepath.Join("testdata", "script"),
		UpdateScripts:      *updateScripts,
		RequireUniqueNames: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("CONTAINER_RUNTIME_ENDPOINT", "unix://"+filepath.Join(e.WorkDir, "no-runtime.sock"))
			e.Setenv(statusFileEnv, filepath.Join(e.WorkDir, ".podrun-status"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status": cmdStatus,
		},
	})
}

// cmdStatus is `status N`: the last podrun of the script exited with N.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: status N")
	}
	file := ts.Getenv(statusFileEnv)
	b, err := os.ReadFile(file)
	if err != nil {
		ts.Fatalf("no exit status of podrun recorded: %v", err)
	}
	ts.Check(os.Remove(file))
	if got := string(b); got != args[0] {
		ts.Fatalf("podrun exited %s, want %s", got, args[0])
	}
}
