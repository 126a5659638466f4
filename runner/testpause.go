package runner

import (
	"context"
	"os"
)

// Test-only pause points, for the fault tests (e2e/faults_test.go) that
// stop podrun at a stage of a run which leaves nothing a test could wait
// for: with PODRUN_TEST_PAUSE_AT=<stage> podrun appends "<stage>\n" to the
// file PODRUN_TEST_PAUSE_FILE when a pod reaches that stage and then blocks
// there until the run is interrupted (a signal cancels ctx; SIGKILL ends
// it). Users never set these; unset, a pause point is one environment
// lookup.
const (
	EnvTestPauseAt   = "PODRUN_TEST_PAUSE_AT"
	EnvTestPauseFile = "PODRUN_TEST_PAUSE_FILE"
)

// The stages a test can pause podrun at, in run order.
const (
	PauseAdmitted = "admitted" // every pod admitted; nothing listed, reclaimed or created yet
	PauseCgroup   = "cgroup"   // the pod's data dir and cgroup exist; no volume yet
	PauseVolumes  = "volumes"  // the pod's volumes are set up; no sandbox yet
	PauseSandbox  = "sandbox"  // the pod's sandbox runs; no container yet
	PauseTeardown = "teardown" // teardown has stopped the pod's containers and sandboxes; nothing removed yet
)

// testPause is a pause point (see EnvTestPauseAt). ctx is the run's
// context, which a signal cancels.
func testPause(ctx context.Context, stage string) {
	if os.Getenv(EnvTestPauseAt) != stage {
		return
	}
	if path := os.Getenv(EnvTestPauseFile); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			f.WriteString(stage + "\n")
			f.Close()
		}
	}
	<-ctx.Done()
}
