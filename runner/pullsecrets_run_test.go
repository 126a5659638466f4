package runner_test

// Run-level tests of image pull credentials against the fake CRI; the
// pure stages are tested in pullsecrets_test.go.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/credentials"
)

const (
	privateImage = "registry.test:5000/private/app:1"
	privateUser  = "puller"
	privatePass  = "pw-7f3a9c1e"
)

// isolateNodeCredentials points the node's docker config search at empty
// dirs, so that the machine's own ~/.docker does not count.
func isolateNodeCredentials(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
}

func dockerConfigJSON(t *testing.T, registry, user, pass string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"auths": map[string]any{
		registry: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func privatePod(secrets ...string) *v1.Pod {
	c := ctr("main", "true")
	c.Image = privateImage
	p := newPod("private", v1.RestartPolicyNever, c)
	for _, s := range secrets {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
	}
	return p
}

// assertNoPassword fails the test if the password, or user:password in
// base64, is anywhere podrun wrote or reported.
func assertNoPassword(t *testing.T, e *env, res *runner.Result, pass string) {
	t.Helper()
	status, _ := json.Marshal(res.Pods[0].Status)
	all := e.progress.String() + e.stdout.String() + e.stderr.String() + string(status)
	if err := res.Err(); err != nil {
		all += err.Error()
	}
	for _, s := range []string{pass, base64.StdEncoding.EncodeToString([]byte(privateUser + ":" + pass))} {
		if strings.Contains(all, s) {
			t.Errorf("a credential (%q) appears in podrun's output:\n%s", s, all)
		}
	}
}

func TestPullRunWithImagePullSecret(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass})
	e.opts.Secrets = []*v1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": dockerConfigJSON(t, "registry.test:5000", privateUser, "not-it")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": dockerConfigJSON(t, "registry.test:5000", privateUser, privatePass)}},
	}
	res := e.run(t, context.Background(), privatePod("wrong", "regcred"))
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	pulls := e.srv.Pulls()
	if len(pulls) != 2 || pulls[0].Auth.GetPassword() != "not-it" || pulls[1].Auth.GetPassword() != privatePass {
		t.Errorf("pulls %+v, want the wrong secret's credentials, then regcred's", pulls)
	}
	assertNoPassword(t, e, res, privatePass)
	e.assertTornDown(t)
}

func TestPullRunRefusedWithoutCredentials(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass})
	res := e.run(t, context.Background(), privatePod("", "regcred"))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
		t.Fatalf("outcome %s, exit %d; want error, 125", r.Outcome, res.ExitCode(0))
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "ErrImagePull") || !strings.Contains(r.Err.Error(), "authorization failed") {
		t.Errorf("err = %v, want ErrImagePull with the registry's reason", r.Err)
	}
	want := "pod/private: Warning: FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (regcred); attempting to pull the image may not succeed."
	if !strings.Contains(e.progress.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, e.progress.String())
	}
	if p := e.srv.Pulls(); len(p) != 1 || p[0].Auth != nil {
		t.Errorf("pulls %+v, want one anonymous pull", p)
	}
	e.assertTornDown(t)
}

func TestPullRunNodeCredentials(t *testing.T) {
	for _, via := range []string{"root dir", "--image-credentials", "$DOCKER_CONFIG"} {
		t.Run(via, func(t *testing.T) {
			e := newEnv(t)
			isolateNodeCredentials(t)
			e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass})
			cfg := dockerConfigJSON(t, "registry.test:5000", privateUser, privatePass)
			var path string
			switch via {
			case "root dir":
				path = filepath.Join(e.opts.RootDir, "config.json")
			case "--image-credentials":
				path = filepath.Join(t.TempDir(), "creds.json")
			case "$DOCKER_CONFIG":
				path = filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json")
			}
			if err := os.WriteFile(path, cfg, 0o600); err != nil {
				t.Fatal(err)
			}
			if via == "--image-credentials" {
				ring, err := credentials.LoadFile(path, os.ReadFile)
				if err != nil {
					t.Fatal(err)
				}
				e.opts.ImageCredentials = ring
			}
			res := e.run(t, context.Background(), privatePod())
			if !res.Pods[0].Reached() {
				t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
			}
			assertNoPassword(t, e, res, privatePass)
			e.assertTornDown(t)
		})
	}
}

// TestPullRunInvalidImageName: an image that is not a reference is
// refused before anything is created (the kubelet finds it after the
// sandbox and keeps the pod waiting with InvalidImageName).
func TestPullRunInvalidImageName(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	c := ctr("private-reg-container")
	c.Image = "<your-private-image>"
	p := newPod("private-reg", v1.RestartPolicyAlways, c)
	p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "regcred"}}
	res, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{p}, e.opts)
	want := `pod default/private-reg: spec.containers[0].image: InvalidImageName: Failed to apply default image tag "<your-private-image>": couldn't parse image name "<your-private-image>": invalid reference format`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	// The pod as the kubelet shows it (podrun -o json prints it).
	if res == nil || res.ExitCode(0) != runner.ExitPodrunError || res.Pods[0].Status.Phase != v1.PodPending {
		t.Fatalf("result %+v, want the pod Pending, exit 125", res)
	}
	if w := res.Pods[0].Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "InvalidImageName" ||
		!strings.Contains(w.Message, "<your-private-image>") {
		t.Errorf("state %+v, want waiting InvalidImageName", res.Pods[0].Status.ContainerStatuses[0].State)
	}
	for _, call := range e.srv.Calls() {
		if call == "RunPodSandbox" || call == "PullImage" {
			t.Errorf("the runtime was asked to %s", call)
		}
	}
	e.assertTornDown(t)
}

// An image volume's image is pulled with the pod's imagePullSecrets, as a
// container's image is.
func TestPullRunImageVolumeWithImagePullSecret(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.RequireAuth(privateImage, &runtimeapi.AuthConfig{Username: privateUser, Password: privatePass})
	e.opts.Secrets = []*v1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": dockerConfigJSON(t, "registry.test:5000", privateUser, privatePass)}},
	}
	c := ctr("main", "true")
	c.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	pod := newPod("private-volume", v1.RestartPolicyNever, c)
	pod.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "regcred"}}
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{
		Reference: privateImage, PullPolicy: v1.PullIfNotPresent}}}}
	res := e.run(t, context.Background(), pod)
	if !res.Pods[0].Reached() {
		t.Fatalf("outcome %s, err %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	pulls := e.srv.Pulls()
	if len(pulls) != 1 || pulls[0].Image != privateImage || pulls[0].Auth.GetPassword() != privatePass {
		t.Errorf("pulls %+v, want one of %s with regcred's credentials", pulls, privateImage)
	}
	assertNoPassword(t, e, res, privatePass)
	e.assertTornDown(t)
}
