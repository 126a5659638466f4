package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/admission"
)

// networkFacts gives the env a pod network whose bridge plugin speaks the
// given versions, its facts gathered as a run gathers them, with the CNI
// record in the run's root dir. It returns that record's path.
func networkFacts(t *testing.T, e *env, bridgeVersions string) string {
	t.Helper()
	_, bin := e.srv.FakeCNI(t)
	script := "#!/bin/sh\n" +
		`if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.0.0","supportedVersions":[` + bridgeVersions + `]}'; exit 0; fi` + "\n" +
		`echo '{"code":4,"msg":"fake plugin"}'; exit 1` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "bridge"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(e.opts.RootDir, "cni-validated")
	facts, err := runner.GatherFacts(context.Background(), e.rt, []*v1.Pod{newPod("p", v1.RestartPolicyNever)},
		runner.FactsConfig{Node: admission.HostOptions{NodeName: "node1", RootDir: e.opts.RootDir}, CgroupDriver: "cgroupfs",
			CNI: cni.Flags{StateFile: state}})
	if err != nil {
		t.Fatalf("GatherFacts: %v", err)
	}
	if facts.Network == nil {
		t.Fatal("GatherFacts left nothing pending of a fresh root dir's network")
	}
	facts.RuntimeName = "containerd"
	e.facts = facts
	return state
}

// The plugins' versions are asked only when the runtime fails to make a
// sandbox off the host network, and then name what is wrong beside the
// runtime's error; a sandbox made records the network as validated.
func TestRunSandboxFailureExplainedByThePlugins(t *testing.T) {
	t.Run("failed", func(t *testing.T) {
		e := newEnv(t)
		state := networkFacts(t, e, `"0.3.1"`)
		e.srv.FailNext("RunPodSandbox", fmt.Errorf(`failed to setup network for sandbox: plugin type="bridge" failed (add): incompatible CNI versions`))
		res := e.run(t, context.Background(), newPod("nonet", v1.RestartPolicyNever, sh("main", "exit 0")))
		r := res.Pods[0]
		if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
			t.Errorf("outcome = %s, ExitCode = %d; want error, 125", r.Outcome, res.ExitCode(0))
		}
		for _, want := range []string{`incompatible CNI versions`, `CNI network "fake" (`, `plugin "bridge" (`, `does not support cniVersion "1.0.0" (it supports 0.3.1)`} {
			if r.Err == nil || !strings.Contains(r.Err.Error(), want) {
				t.Errorf("err = %v, want %q in it", r.Err, want)
			}
		}
		if _, err := os.Stat(state); err == nil {
			t.Error("the network was recorded as validated")
		}
		e.assertTornDown(t)
	})
	t.Run("made", func(t *testing.T) {
		e := newEnv(t)
		state := networkFacts(t, e, `"1.0.0"`)
		res := e.run(t, context.Background(), newPod("net", v1.RestartPolicyNever, sh("main", "exit 0")))
		if r := res.Pods[0]; r.Outcome != runner.OutcomeReached {
			t.Errorf("outcome = %s, err = %v; want reached", r.Outcome, r.Err)
		}
		if _, err := os.Stat(state); err != nil {
			t.Errorf("the network made a sandbox but is not recorded: %v", err)
		}
	})
}
