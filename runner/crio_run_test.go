package runner_test

// Whole runs against the fake CRI answering as CRI-O does where CRI-O
// differs from containerd (docs/cri-o.md); crio_test.go has the facts,
// cgroups, handlers and logs.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
)

// crioEnv is newEnv with the fake reporting CRI-O's name and version,
// dialled again so that the client has them.
func crioEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.srv.SetVersion("cri-o", "1.34.0")
	rt, err := cri.Dial(context.Background(), e.srv.Endpoint(), cri.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e.rt = rt
	e.facts = runner.Facts{RuntimeName: rt.DialVersion().GetRuntimeName(), RuntimeVersion: rt.DialVersion().GetRuntimeVersion()}
	return e
}

// count is how many times method was called.
func count(srv *fake.Server, method string) int {
	n := 0
	for _, c := range srv.Calls() {
		if c == method {
			n++
		}
	}
	return n
}

// TestCRIORunContainerIDs: a container's ID in the status has the scheme
// of the runtime's name, as the kubelet writes it: "cri-o://<id>".
func TestCRIORunContainerIDs(t *testing.T) {
	e := crioEnv(t)
	res := e.run(t, context.Background(), newPod("ids", v1.RestartPolicyNever, sh("main", "exit 0")))
	cs := res.Pods[0].Status.ContainerStatuses
	if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "cri-o://") || len(cs[0].ContainerID) <= len("cri-o://") {
		t.Errorf("container statuses %+v, want an ID cri-o://…", cs)
	}
	e.assertTornDown(t)
}

// TestCRIORunWithoutEvents: CRI-O without enable_pod_events ends every
// GetContainerEvents stream at once, without an error; podrun then polls,
// sees the pod through, and does not subscribe again and again.
func TestCRIORunWithoutEvents(t *testing.T) {
	e := crioEnv(t)
	e.srv.EnableEvents(true)
	e.srv.ActLikeCRIO(fake.CRIOWays{EndEvents: true})
	start := time.Now()
	res := e.run(t, context.Background(), newPod("noevents", v1.RestartPolicyNever, sh("a", "sleep 5; exit 0"), sh("b", "sleep 10; exit 3")))
	if got := res.ExitCode(0); got != 3 {
		t.Errorf("ExitCode = %d, want 3 (b's exit, seen by polling)", got)
	}
	if n := count(e.srv, "GetContainerEvents"); n != 1 {
		t.Errorf("GetContainerEvents called %d times, want once", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %v", d)
	}
	e.assertTornDown(t)
}

// TestCRIORunWithSandboxEvents: with its events on, CRI-O (as containerd)
// also sends events about a sandbox's infra container, whose ID is the
// sandbox's: they neither confuse nor stall the pod's run.
func TestCRIORunWithSandboxEvents(t *testing.T) {
	e := crioEnv(t)
	e.srv.EnableEvents(true)
	e.srv.ActLikeCRIO(fake.CRIOWays{SandboxEvents: true})
	pod := newPod("sbevents", v1.RestartPolicyNever, sh("main", "sleep 3; exit 0"))
	pod.Spec.InitContainers = []v1.Container{sh("init", "sleep 1; exit 0")}
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() || r.Status.Phase != v1.PodSucceeded || len(r.Status.InitContainerStatuses) != 1 {
		t.Errorf("outcome %s, phase %s, init %+v (err %v)", r.Outcome, r.Status.Phase, r.Status.InitContainerStatuses, r.Err)
	}
	e.assertTornDown(t)
}

// TestCRIORunFailedStart: a container that fails to start is removed by
// CRI-O, where containerd keeps it exited (128, StartError, which the
// restart policy then judges). podrun does not create it again and again:
// the run ends as for a container the runtime refuses to create (125),
// once, with the runtime's reason, and everything is torn down, though
// CRI-O answers NotFound for the container it removed.
func TestCRIORunFailedStart(t *testing.T) {
	e := crioEnv(t)
	e.srv.ActLikeCRIO(fake.CRIOWays{RemoveFailedStarts: true, RemoveNotFound: true})
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		if cfg.GetMetadata().GetName() == "main" {
			return fake.Behavior{StartError: `exec: "nope": executable file not found in $PATH`}
		}
		return fake.CommandBehavior(cfg, second)
	})
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyAlways} {
		t.Run(string(policy), func(t *testing.T) {
			e.srv.ResetCalls()
			res := e.run(t, context.Background(), newPod("noexec", policy, ctr("main", "nope")))
			r := res.Pods[0]
			if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
				t.Errorf("outcome %s, exit %d; want error, 125", r.Outcome, res.ExitCode(0))
			}
			if r.Err == nil || !strings.Contains(r.Err.Error(), `RunContainerError: starting container "main" (the runtime removed it)`) ||
				!strings.Contains(r.Err.Error(), "executable file not found") {
				t.Errorf("err %v", r.Err)
			}
			if w := r.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "RunContainerError" {
				t.Errorf("state %+v, want waiting RunContainerError", r.Status.ContainerStatuses[0].State)
			}
			if n := count(e.srv, "CreateContainer"); n != 1 {
				t.Errorf("CreateContainer called %d times, want once", n)
			}
			e.assertTornDown(t)
		})
	}
}

// TestCRIORunMakesContainerLogDirs: CRI-O makes the sandbox's log dir but
// not a container's, and refuses to create a container whose log file's
// directory is missing (conmon exits 1): podrun makes <pod log dir>/<name>
// (0755, as the kubelet) before each CreateContainer, init containers and
// sidecars too. The output streams as the run goes; the dirs stay under
// --pod-logs-dir and go with podrun's own log dir at teardown.
func TestCRIORunMakesContainerLogDirs(t *testing.T) {
	side := sh("side", "echo side up; sleep infinity")
	always := v1.ContainerRestartPolicyAlways
	side.RestartPolicy = &always
	for _, outside := range []bool{true, false} {
		t.Run(fmt.Sprintf("pod-logs-dir %v", outside), func(t *testing.T) {
			e := crioEnv(t)
			e.srv.ActLikeCRIO(fake.CRIOWays{LogDirs: true})
			if outside {
				e.opts.PodLogsDir = t.TempDir()
			}
			pod := newPod("logdirs", v1.RestartPolicyNever, sh("main", "sleep 1; echo main done; exit 0"))
			pod.Spec.InitContainers = []v1.Container{sh("init", "echo init done"), side}
			res := e.run(t, context.Background(), pod)
			r := res.Pods[0]
			if !r.Reached() || r.Status.Phase != v1.PodSucceeded || res.ExitCode(0) != 0 {
				t.Fatalf("outcome %s, phase %s, exit %d (err %v)", r.Outcome, r.Status.Phase, res.ExitCode(0), r.Err)
			}
			out := e.stdout.String()
			for _, line := range []string{"[pod/logdirs/init] init done\n", "[pod/logdirs/side] side up\n", "[pod/logdirs/main] main done\n"} {
				if !strings.Contains(out, line) {
					t.Errorf("stdout %q lacks %q", out, line)
				}
			}
			if outside {
				// The pod's own log dir is podrun's, 0755 as the kubelet
				// makes it, not CRI-O's 0700.
				podDir := filepath.Join(e.opts.PodLogsDir, "default_logdirs_logdirs-uid")
				if fi, err := os.Stat(podDir); err != nil || fi.Mode().Perm() != 0o755 {
					t.Errorf("%s: %v, %v; want a dir 0755", podDir, fi, err)
				}
				for _, c := range []string{"init", "side", "main"} {
					dir := filepath.Join(e.opts.PodLogsDir, "default_logdirs_logdirs-uid", c)
					if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
						t.Errorf("%s: %v, %v; want a dir 0755", dir, fi, err)
					}
					if _, err := os.Stat(filepath.Join(dir, "0.log")); err != nil {
						t.Errorf("%s's log: %v", c, err)
					}
				}
			}
			e.assertTornDown(t)
		})
	}
}

// TestCRIORunPulls: CRI-O's pull errors are containers/image's: a missing
// image and refused credentials still end the run at once (125, the
// kubelet's ErrImagePull) instead of backing off until --timeout. CRI-O
// reads only a username and password (podrun sends them as such), not
// identity or registry tokens: a docker config with only a token pulls
// anonymously there, and is refused.
func TestCRIORunPulls(t *testing.T) {
	isolateNodeCredentials(t)
	secret := func(name, entry string) *v1.Secret {
		return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"registry.test:5000":` + entry + `}}`)}}
	}
	userPass, _ := json.Marshal(map[string]string{"username": privateUser, "password": privatePass})
	for _, tc := range []struct {
		name   string
		image  string
		secret *v1.Secret
		want   string // "" : the pull succeeds
	}{
		{name: "missing image", image: "registry.test:5000/nope:1", want: "manifest unknown (not found)"},
		{name: "no credentials", image: privateImage, want: "authentication required (unauthorized)"},
		{name: "username and password", image: privateImage, secret: secret("regcred", string(userPass))},
		{name: "only an identity token", image: privateImage, secret: secret("regcred", `{"identitytoken":"tok-1"}`),
			want: "authentication required (unauthorized)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := crioEnv(t)
			e.srv.ActLikeCRIO(fake.CRIOWays{PullWording: true})
			e.srv.SetMissing("registry.test:5000/nope:1")
			e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass, IdentityToken: "tok-1"})
			c := ctr("main", "true")
			c.Image = tc.image
			pod := newPod("pull", v1.RestartPolicyNever, c)
			if tc.secret != nil {
				e.opts.Secrets = []*v1.Secret{tc.secret}
				pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: tc.secret.Name}}
			}
			res := e.run(t, context.Background(), pod)
			r := res.Pods[0]
			pulls := e.srv.Pulls()
			if tc.want == "" {
				if !r.Reached() || len(pulls) != 1 || pulls[0].Auth.GetUsername() != privateUser || pulls[0].Auth.GetPassword() != privatePass {
					t.Errorf("outcome %s (err %v), pulls %+v", r.Outcome, r.Err, pulls)
				}
			} else {
				if res.ExitCode(0) != runner.ExitPodrunError || r.Err == nil || !strings.Contains(r.Err.Error(), "ErrImagePull") ||
					!strings.Contains(r.Err.Error(), tc.want) {
					t.Errorf("exit %d, err %v; want 125 and ErrImagePull ... %s", res.ExitCode(0), r.Err, tc.want)
				}
				if len(pulls) != 1 {
					t.Errorf("%d pulls, want one (no back-off and retry)", len(pulls))
				}
			}
			if slices.ContainsFunc(pulls, func(p fake.Pull) bool { return p.Auth.GetAuth() != "" }) {
				t.Errorf("podrun sent credentials in Auth only: %+v", pulls)
			}
			e.assertTornDown(t)
		})
	}
}
