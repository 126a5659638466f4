package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/runner"
)

// TestRunRefusesSubPathExprsKnownBeforehand: a subPathExpr whose
// expansion from the container's environment (literal values, ConfigMap
// keys, the pod's own fields) is absolute, holds '..', misses a variable or
// leads out of a hostPath volume through a symlink is refused before
// anything is created, naming the field; one that depends on the pod's
// IP, unknown before the sandbox, is not judged then.
func TestRunRefusesSubPathExprsKnownBeforehand(t *testing.T) {
	vol := t.TempDir()
	if err := os.Symlink("/", filepath.Join(vol, "root")); err != nil {
		t.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "paths", Namespace: "default"}, Data: map[string]string{"up": "../.."}}
	for _, tc := range []struct {
		name string
		env  []v1.EnvVar
		expr string
		want string // "" when Run goes on to create the pod
	}{
		{name: "literal ..", env: []v1.EnvVar{{Name: "D", Value: "a/../../x"}}, expr: "$(D)",
			want: `pod default/p: spec.containers[0].volumeMounts[0].subPathExpr: "$(D)" expands to "a/../../x": unable to provision SubPath`},
		{name: "absolute from a ConfigMap through another variable", expr: "$(E)",
			env: []v1.EnvVar{{Name: "U", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "paths"}, Key: "up"}}},
				{Name: "E", Value: "$(U)/etc"}},
			want: `spec.containers[0].volumeMounts[0].subPathExpr: "$(E)" expands to "../../etc": unable to provision SubPath`},
		{name: "absolute", env: []v1.EnvVar{{Name: "A", Value: "/etc"}}, expr: "$(A)",
			want: "expands to \"/etc\": error SubPath `/etc` must not be an absolute path"},
		{name: "missing variable", expr: "logs/$(POD)",
			want: `spec.containers[0].volumeMounts[0].subPathExpr: "logs/$(POD)": missing value for POD`},
		{name: "through a symlink out of a hostPath", expr: "$(NS)/etc",
			env:  []v1.EnvVar{{Name: "NS", Value: "root"}},
			want: `spec.containers[0].volumeMounts[0].subPathExpr: subPath "root/etc" of volume "v" leads outside the volume (through a symlink)`},
		{name: "the pod's own name is known", expr: "$(NAME)/..",
			env:  []v1.EnvVar{{Name: "NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			want: `"$(NAME)/.." expands to "p/..": unable to provision SubPath`},
		{name: "the pod's IP is not known yet", expr: "$(IP)/..",
			env: []v1.EnvVar{{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.opts.ConfigMaps = []*v1.ConfigMap{cm}
			c := sh("c", "true")
			c.Env = tc.env
			c.VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v", SubPathExpr: tc.expr}}
			pod := newPod("p", v1.RestartPolicyNever, c)
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: vol}}}}
			res, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{pod}, e.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Run refused it before the pod existed: %v", err)
				}
				// Its creation refuses it, once the IP is known.
				if perr := res.Err(); perr == nil || !strings.Contains(perr.Error(), "CreateContainerConfigError") {
					t.Errorf("run error %v, want CreateContainerConfigError", perr)
				}
				e.assertTornDown(t)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v\nwant %s", err, tc.want)
			}
			if calls := e.srv.Calls(); strings.Contains(strings.Join(calls, " "), "RunPodSandbox") {
				t.Errorf("the runtime was asked %v", calls)
			}
			if _, err := os.Stat(filepath.Join(e.opts.RootDir, "pods")); !os.IsNotExist(err) {
				t.Errorf("the run made its pods dir: %v", err)
			}
		})
	}
}

// TestSubPathFromASecretIsNeverShown: a subPathExpr that takes anything
// from a Secret is judged on the Secret's value, by a run and a dry run
// alike, and no message shows the value or the expansion: before the
// pod exists (the run's and the dry run's refusal), and at the
// container's creation (the run's error, the container's waiting
// message, the progress and output).
func TestSubPathFromASecretIsNeverShown(t *testing.T) {
	const mark = "S3CRET-MARK-7f3a"
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "default"},
		Data: map[string][]byte{"abs": []byte("/" + mark), "up": []byte("../" + mark)}}
	fromSecret := func(name, key string) v1.EnvVar {
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "pw"}, Key: key}}}
	}
	podIP := v1.EnvVar{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}
	for _, tc := range []struct {
		name string
		env  []v1.EnvVar
		expr string
		want string // the refusal; "" when only the container's creation sees it
	}{
		{name: "absolute", env: []v1.EnvVar{fromSecret("PW", "abs")}, expr: "$(PW)",
			want: "pod default/p: spec.containers[0].volumeMounts[0].subPathExpr: \"$(PW)\" expands to \"<masked>\": error SubPath `<masked>` must not be an absolute path"},
		{name: "partly from the Secret, through another variable", env: []v1.EnvVar{fromSecret("PW", "up"), {Name: "D", Value: "$(PW)-suffix"}}, expr: "$(D)",
			want: "pod default/p: spec.containers[0].volumeMounts[0].subPathExpr: \"$(D)\" expands to \"<masked>\": unable to provision SubPath `<masked>`: must not contain '..'"},
		{name: "with the pod's IP: at the container's creation", env: []v1.EnvVar{podIP, fromSecret("PW", "up")}, expr: "$(IP)/$(PW)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.facts.Node = testNode()
			e.opts.Secrets = []*v1.Secret{secret}
			c := sh("c", "true")
			c.Env = tc.env
			c.VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v", SubPathExpr: tc.expr}}
			pod := newPod("p", v1.RestartPolicyNever, c)
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: t.TempDir()}}}}

			_, dryErr := runner.DryRun(e.dryFacts(), []*v1.Pod{pod}, e.opts)
			res, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{pod}, e.opts)
			shown := fmt.Sprint(err, dryErr, e.stdout, e.stderr, e.progress)
			if tc.want != "" {
				if err == nil || err.Error() != tc.want {
					t.Errorf("Run: %v\nwant %s", err, tc.want)
				}
				// The dry run refuses it as the run does.
				if dryErr == nil || dryErr.Error() != tc.want {
					t.Errorf("DryRun: %v\nwant %s", dryErr, tc.want)
				}
			} else {
				if err != nil {
					t.Fatalf("Run refused it before the pod existed: %v", err)
				}
				// The dry run does not know the pod's IP: it admits the pod.
				if dryErr != nil {
					t.Errorf("DryRun: %v", dryErr)
				}
				want := "CreateContainerConfigError: volumeMount \"v\" of container \"c\": subPathExpr \"$(IP)/$(PW)\" expands to \"<masked>\": unable to provision SubPath `<masked>`: must not contain '..'"
				if perr := res.Err(); perr == nil || !strings.Contains(perr.Error(), want) {
					t.Errorf("run error %v, want %s", perr, want)
				}
				st := res.Pods[0].Status
				if len(st.ContainerStatuses) == 0 || st.ContainerStatuses[0].State.Waiting == nil ||
					!strings.Contains(st.ContainerStatuses[0].State.Waiting.Message, `expands to "<masked>"`) {
					t.Errorf("container status %+v, want waiting with the masked subpath", st.ContainerStatuses)
				}
				shown += fmt.Sprint(res.Err(), st)
				e.assertTornDown(t)
			}
			if strings.Contains(shown, mark) {
				t.Errorf("the Secret's value was shown:\n%s", shown)
			}
		})
	}
}

// TestDryRunLeavesSubPathExprsOfThePodIPToTheRun: a subPathExpr of the
// pod's IP, which a dry run does not know, is judged at the container's
// creation: the dry run admits the pod, as the run does before its
// sandbox exists.
func TestDryRunLeavesSubPathExprsOfThePodIPToTheRun(t *testing.T) {
	e := newEnv(t)
	e.facts.Node = testNode()
	c := sh("c", "true")
	c.Env = []v1.EnvVar{{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	c.VolumeMounts = []v1.VolumeMount{{Name: "v", MountPath: "/v", SubPathExpr: "ips/$(IP)"}}
	pod := newPod("p", v1.RestartPolicyNever, c)
	pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	if _, err := runner.DryRun(e.dryFacts(), []*v1.Pod{pod}, e.opts); err != nil {
		t.Errorf("DryRun: %v", err)
	}
}
