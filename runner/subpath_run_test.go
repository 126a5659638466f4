package runner_test

import (
	"context"
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
