package runner_test

// Run-level tests of -i's attach (Wiring.Attach) against the fake CRI: the
// run starts it once, for the first instance of the container it names,
// and with Output the run does not also print that instance's log.

import (
	"context"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

func TestRunAttachesOnceToTheNamedContainer(t *testing.T) {
	for _, output := range []bool{false, true} {
		name := map[bool]string{false: "stdin alone: output from the log", true: "a terminal: output through the attach"}[output]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			// The attached container fails once and runs again (OnFailure):
			// only its first instance is attached.
			e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
				b := fake.Behavior{Output: []fake.LogLine{{Text: cfg.GetMetadata().GetName() + " says hi"}}}
				if cfg.GetMetadata().GetName() == "in" && cfg.GetMetadata().GetAttempt() == 0 {
					b.ExitCode = 1
				}
				return b
			})
			pod := newPod("att", v1.RestartPolicyOnFailure, ctr("in"), ctr("other"))
			var mu sync.Mutex
			var attached []string
			e.opts.Attach = &runner.Attach{PodUID: pod.UID, Container: "in", Output: output, Start: func(id string) {
				st, err := e.rt.ContainerStatus(context.Background(), id)
				mu.Lock()
				defer mu.Unlock()
				attached = append(attached, st.GetMetadata().GetName()+"/"+string(rune('0'+st.GetMetadata().GetAttempt())))
				if err != nil {
					t.Errorf("ContainerStatus(%s): %v", id, err)
				}
			}}
			res := e.run(t, context.Background(), pod)
			if !res.Pods[0].Reached() {
				t.Fatalf("outcome %s: %v", res.Pods[0].Outcome, res.Pods[0].Err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(attached) != 1 || attached[0] != "in/0" {
				t.Errorf("attached to %v, want the first instance of in alone (in/0)", attached)
			}
			out := e.stdout.String()
			want := 2 // both instances' logs
			if output {
				want = 1 // the restarted one's: the first came through the attach
			}
			if n := strings.Count(out, "[pod/att/in] in says hi\n"); n != want {
				t.Errorf("in's line printed %d times, want %d:\n%s", n, want, out)
			}
			if n := strings.Count(out, "[pod/att/other] other says hi\n"); n != 1 {
				t.Errorf("other's line printed %d times, want once:\n%s", n, out)
			}
			e.assertTornDown(t)
		})
	}
}
