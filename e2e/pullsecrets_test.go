//go:build e2e

package e2e

// Image pull credentials end to end, against the testbed's private
// registry (basic auth, trusted by containerd, which has no credentials for
// it): imagePullSecrets of both docker config types, node credentials in
// --root-dir/config.json and --image-credentials, refusals without or with
// wrong credentials, and no credential in any output.
//
// These tests are not parallel: each removes the private image from the
// runtime before and after it, so that every run really pulls it (and so
// that TestE2EImagePrivateWithoutAuth, which runs with the parallel tests,
// finds it absent).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// privateRegistry is the testbed's auth registry, from `hack/testbed.sh env`.
type privateRegistry struct {
	image, host, user, password string
}

// privateTestbed reads the private registry's facts and removes its image
// from the runtime now and after the test.
func privateTestbed(t *testing.T) privateRegistry {
	t.Helper()
	p := privateRegistry{
		image:    os.Getenv("PODRUN_TESTBED_PRIVATE_IMAGE"),
		host:     os.Getenv("PODRUN_TESTBED_PRIVATE"),
		user:     os.Getenv("PODRUN_TESTBED_PRIVATE_USER"),
		password: os.Getenv("PODRUN_TESTBED_PRIVATE_PASSWORD"),
	}
	if p.image == "" || p.host == "" || p.user == "" || p.password == "" {
		t.Fatalf("PODRUN_TESTBED_PRIVATE{,_IMAGE,_USER,_PASSWORD} are not set: export `bash hack/testbed.sh env`")
	}
	removeImage(t, p.image)
	t.Cleanup(func() { removeImage(t, p.image) })
	return p
}

func removeImage(t *testing.T, image string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rtClient.RemoveImage(ctx, image); err != nil {
		t.Fatalf("removing %s from the runtime: %v", image, err)
	}
	if img, err := rtClient.ImageStatus(ctx, image); err != nil || img != nil {
		t.Fatalf("%s is still in the runtime after RemoveImage (%v)", image, err)
	}
}

// dockerConfig is a docker config with one registry's credentials as an
// "auth" field: {"auths": {...}}, or the legacy bare map.
func (p privateRegistry) dockerConfig(password string, legacy bool) string {
	entry := map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(p.user + ":" + password))}
	var v any = map[string]any{p.host: entry}
	if !legacy {
		v = map[string]any{"auths": v}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// secretDoc is a docker config Secret; dockercfg selects the legacy type.
func (p privateRegistry) secretDoc(t *testing.T, name, password string, dockercfg bool) string {
	t.Helper()
	file := "pullsecrets/secret-dockerconfigjson.yaml"
	if dockercfg {
		file = "pullsecrets/secret-dockercfg.yaml"
	}
	data := base64.StdEncoding.EncodeToString([]byte(p.dockerConfig(password, dockercfg)))
	return fillTemplate(t, file, "NAME", name, "CONFIG", data)
}

// podDoc is a pod running the private image, which prints its marker file,
// with the credentials of Secret pullSecret when it is not "".
func (p privateRegistry) podDoc(t *testing.T, name, pullSecret string) string {
	t.Helper()
	if pullSecret == "" {
		return fillTemplate(t, "pullsecrets/pod.yaml", "NAME", name, "IMAGE", p.image)
	}
	return fillTemplate(t, "pullsecrets/pod-secret.yaml", "NAME", name, "IMAGE", p.image, "SECRET", pullSecret)
}

const privateMarker = "podrun testbed private image"

// expectNoCredential fails the test if any form of a credential is in
// podrun's stdout or stderr: the password, base64 of "user:password" (with
// and without padding, standard and URL alphabets), base64 of the password,
// and the docker config JSON and its base64 (a Secret's data). The user
// name is checked only in "user:password": the testbed's user is "podrun",
// which every progress line names.
func (p privateRegistry) expectNoCredential(t *testing.T, r result, passwords ...string) {
	t.Helper()
	out := r.stdout + "\n" + r.stderr
	for _, pw := range append([]string{p.password}, passwords...) {
		forms := []string{pw, p.user + ":" + pw, p.dockerConfig(pw, false), p.dockerConfig(pw, true)}
		for _, s := range []string{p.user + ":" + pw, pw, p.dockerConfig(pw, false), p.dockerConfig(pw, true)} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				forms = append(forms, enc.EncodeToString([]byte(s)))
			}
		}
		for _, f := range forms {
			if strings.Contains(out, f) {
				t.Errorf("a credential (%q) appears in podrun's output\n%s", f, r)
			}
		}
	}
	for _, field := range []string{`"auths"`, `"auth":`, `"password"`, "dockerconfigjson:", "dockercfg:"} {
		if strings.Contains(r.stdout, field) {
			t.Errorf("stdout holds %s: a docker config or Secret was printed\n%s", field, r)
		}
	}
}

// nodeEnv isolates a run from this machine's own docker config: $HOME is
// an empty dir and $DOCKER_CONFIG is unset.
func nodeEnv(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir(), "DOCKER_CONFIG"}
}

func TestE2EPullSecretDockerConfigJSON(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	m := manifest(t, "pod.yaml", p.secretDoc(t, "regcred", p.password, false)+"---\n"+p.podDoc(t, "e2e-pull-json", "regcred"))
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, privateMarker) || !strings.Contains(r.stderr, "Successfully pulled image") {
		t.Errorf("the private image was not pulled and run\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if pod.Status.Phase != "Succeeded" {
		t.Errorf("phase %s, want Succeeded", pod.Status.Phase)
	}
	p.expectNoCredential(t, r)
}

func TestE2EPullSecretDockercfg(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	m := manifest(t, "pod.yaml", p.secretDoc(t, "legacy", p.password, true)+"---\n"+p.podDoc(t, "e2e-pull-dockercfg", "legacy"))
	r := e.runPodrun([]string{"-o", "yaml", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, privateMarker) {
		t.Errorf("the private image did not run\n%s", r)
	}
	if pod := parsePod(t, r.stdout); pod.Status.Phase != "Succeeded" {
		t.Errorf("phase %s, want Succeeded", pod.Status.Phase)
	}
	p.expectNoCredential(t, r)
}

// crioUnauthorized is how CRI-O (containers/image) says the private
// registry refused the image with a 401, with no credentials or wrong
// ones: "reading manifest 1.0 in 127.0.0.1:PORT/private/busybox:
// authentication required" (containerd: "authorization failed", "401
// Unauthorized").
func (p *privateRegistry) crioUnauthorized() string {
	i := strings.LastIndex(p.image, ":")
	return "reading manifest " + p.image[i+1:] + " in " + p.image[:i] + ": authentication required"
}

func TestE2EPullSecretRefusedWithout(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	m := manifest(t, "pod.yaml", p.podDoc(t, "e2e-pull-nosecret", ""))
	r := e.runPodrun([]string{"-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImagePull") || !strings.Contains(r.stderr, p.image) ||
		!byRuntime(t, strings.Contains(r.stderr, "authorization failed") || strings.Contains(r.stderr, "401 Unauthorized"),
			strings.Contains(r.stderr, p.crioUnauthorized())) {
		t.Errorf("stderr lacks ErrImagePull with the registry's reason (unauthorized)\n%s", r)
	}
	if strings.Contains(r.stderr, privateMarker) {
		t.Errorf("the private image ran without credentials\n%s", r)
	}
	p.expectNoCredential(t, r)
}

func TestE2EPullSecretWrongPassword(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	const wrong = "not-the-password-42"
	m := manifest(t, "pod.yaml", p.secretDoc(t, "regcred", wrong, false)+"---\n"+p.podDoc(t, "e2e-pull-wrongpw", "regcred"))
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "ErrImagePull") || !strings.Contains(r.stderr, byRuntime(t, "401 Unauthorized", p.crioUnauthorized())) ||
		!strings.Contains(r.stderr, "with credentials from secret default/regcred") {
		t.Errorf("stderr lacks ErrImagePull naming the secret tried and the registry's 401\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
		t.Errorf("container state %+v, want waiting ErrImagePull", pod.Status.ContainerStatuses[0].State)
	}
	p.expectNoCredential(t, r, wrong)
}

func TestE2EPullSecretMissingIsReported(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	m := fromTemplate(t, "pullsecrets/pod-missing-secret.yaml", "IMAGE", p.image)
	r := e.runPodrun([]string{"-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 125)
	want := "Warning: FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (regcred); attempting to pull the image may not succeed."
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
}

func TestE2EPullNodeCredentialsInRootDir(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	if err := os.MkdirAll(e.root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "config.json"), []byte(p.dockerConfig(p.password, false)), 0o600); err != nil {
		t.Fatal(err)
	}
	m := manifest(t, "pod.yaml", p.podDoc(t, "e2e-pull-rootdir", ""))
	r := e.runPodrun([]string{"-o", "json", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, privateMarker) {
		t.Errorf("the private image did not run\n%s", r)
	}
	p.expectNoCredential(t, r)
}

func TestE2EPullImageCredentialsFlag(t *testing.T) {
	p := privateTestbed(t)
	e := newEnv(t)
	creds := manifest(t, "creds.json", p.dockerConfig(p.password, false))
	m := manifest(t, "pod.yaml", p.podDoc(t, "e2e-pull-flag", ""))
	r := e.runPodrun([]string{"--image-credentials", creds, "-o", "yaml", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 0)
	if !strings.Contains(r.stderr, privateMarker) {
		t.Errorf("the private image did not run\n%s", r)
	}
	p.expectNoCredential(t, r)

	// A file that is not there is an error before anything starts.
	r = e.runPodrun([]string{"--image-credentials", creds + ".absent", "-f", m}, "", nodeEnv(t)...)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "--image-credentials") || strings.Contains(r.stderr, "Pulling") {
		t.Errorf("want a --image-credentials error before any pull\n%s", r)
	}
}

// TestE2EPullCorpusPrivateRegPod runs the corpus row pods/private-reg-pod.yaml:
// its image "<your-private-image>" is not a valid reference, so the pod
// ends with InvalidImageName (exit 125) before any pull.
func TestE2EPullCorpusPrivateRegPod(t *testing.T) {
	path := corpusPod(t, "pods/private-reg-pod.yaml")
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", path}, "", nodeEnv(t)...)
	expectCode(t, r, 125)
	want := `InvalidImageName: Failed to apply default image tag "<your-private-image>": couldn't parse image name "<your-private-image>": invalid reference format`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	if strings.Contains(r.stderr, "Pulling") {
		t.Errorf("podrun tried to pull an invalid image name\n%s", r)
	}
	pod := parsePod(t, r.stdout)
	if len(pod.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", pod.Status.ContainerStatuses)
	}
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "InvalidImageName" {
		t.Errorf("container state %+v, want waiting InvalidImageName", pod.Status.ContainerStatuses[0].State)
	}
}
