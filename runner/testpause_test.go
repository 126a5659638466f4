package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
)

// TestRunInterruptedBeforeTheSandboxCreatesNothingMore: a run interrupted
// before its pod's sandbox exists (held at a pause point, then its context
// cancelled as a signal does) makes no sandbox and no container, and
// removes what it made (data dir, volumes).
func TestRunInterruptedBeforeTheSandboxCreatesNothingMore(t *testing.T) {
	for _, stage := range []string{runner.PauseAdmitted, runner.PauseCgroup, runner.PauseVolumes} {
		t.Run(stage, func(t *testing.T) {
			e := newEnv(t)
			file := filepath.Join(t.TempDir(), "paused")
			t.Setenv(runner.EnvTestPauseAt, stage)
			t.Setenv(runner.EnvTestPauseFile, file)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				defer cancel()
				deadline := time.Now().Add(runLimit)
				for time.Now().Before(deadline) {
					if b, _ := os.ReadFile(file); strings.Contains(string(b), stage+"\n") {
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			res, err := runner.Run(ctx, e.rt, e.facts, []*v1.Pod{newPod("early", v1.RestartPolicyNever, sh("main", "exit 0"))}, e.opts)
			if b, _ := os.ReadFile(file); string(b) != stage+"\n" {
				t.Fatalf("pause file %q, want the stage %q once", b, stage)
			}
			if err == nil && res.Pods[0].Outcome != runner.OutcomeInterrupted {
				t.Errorf("outcome %s, want interrupted", res.Pods[0].Outcome)
			}
			for _, call := range []string{"RunPodSandbox", "CreateContainer"} {
				if slices.Contains(e.srv.Calls(), call) {
					t.Errorf("interrupted at stage %s, podrun still called %s", stage, call)
				}
			}
			e.assertTornDown(t)
		})
	}
}
