package sources

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

const overridePods = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - {name: setup, image: busybox:1.36}
  - {name: logger, image: busybox:1.36, restartPolicy: Always}
  containers:
  - name: main
    image: busybox:1.36
    env:
    - {name: MODE, value: dev}
    - name: FROM
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - {name: main, image: postgres:16}
  - {name: db, image: postgres:16}
`

// images is each pod's images, init containers first: "web: a b c".
func images(set *Set) []string {
	var out []string
	for _, p := range set.Pods {
		s := p.Name + ":"
		for _, c := range append(append([]v1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			s += " " + c.Image
		}
		out = append(out, s)
	}
	return out
}

func TestImageOverrides(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		want   []string
		errMsg string
	}{
		{"a container of every pod that has it", []string{"main=busybox:1.28"},
			[]string{"web: busybox:1.36 busybox:1.36 busybox:1.28", "db: busybox:1.28 postgres:16"}, ""},
		{"an init container and a sidecar", []string{"setup=a:1", "logger=b:1"},
			[]string{"web: a:1 b:1 busybox:1.36", "db: postgres:16 postgres:16"}, ""},
		{"one pod's", []string{"db/main=c:1"},
			[]string{"web: busybox:1.36 busybox:1.36 busybox:1.36", "db: c:1 postgres:16"}, ""},
		{"every container, then one: the later wins", []string{"*=x:1", "web/main=y:1"},
			[]string{"web: x:1 x:1 y:1", "db: x:1 x:1"}, ""},
		{"a container no pod has", []string{"nope=x:1"}, nil,
			`--image nope=x:1: no pod has a container "nope" (web: setup, logger, main; db: main, db)`},
		{"a container the pod named has not", []string{"web/db=x:1"}, nil,
			`--image web/db=x:1: pod web has no container "db" (its containers: setup, logger, main)`},
		{"a pod there is not", []string{"api/main=x:1"}, nil,
			`--image api/main=x:1: no pod named "api" (pods: web, db)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ov Overrides
			for _, a := range tc.args {
				o, err := ParseImageOverride(a)
				if err != nil {
					t.Fatal(err)
				}
				ov.Images = append(ov.Images, o)
			}
			set, err := Decode("pods.yaml", []byte(overridePods), Options{NodeName: "node1", Overrides: ov})
			if tc.errMsg != "" {
				if err == nil || err.Error() != tc.errMsg {
					t.Fatalf("error %v, want %q", err, tc.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := images(set); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("images %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	set, err := Decode("pods.yaml", []byte(overridePods), Options{NodeName: "node1", Overrides: Overrides{
		Env: []v1.EnvVar{{Name: "FROM", Value: "ci"}, {Name: "NEW", Value: "a,b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	main := set.Pods[0].Spec.Containers[0]
	// Replaced where it stood (its valueFrom gone), the new one appended.
	if len(main.Env) != 3 || main.Env[0].Value != "dev" || main.Env[1] != (v1.EnvVar{Name: "FROM", Value: "ci"}) || main.Env[2].Value != "a,b" {
		t.Errorf("main's env %+v", main.Env)
	}
	for _, p := range set.Pods {
		for _, c := range append(append([]v1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			if n := len(c.Env); n < 2 || c.Env[n-1].Name != "NEW" {
				t.Errorf("pod %s container %s: env %+v, want NEW last", p.Name, c.Name, c.Env)
			}
		}
	}
}

// A pod the overrides change gets another UID; one they leave as it is
// keeps its own, and the manifest kept is the pod before its defaults.
func TestOverridesAndUID(t *testing.T) {
	plain, err := Decode("pods.yaml", []byte(overridePods), Options{NodeName: "node1"})
	if err != nil {
		t.Fatal(err)
	}
	same, err := Decode("pods.yaml", []byte(overridePods), Options{NodeName: "node1", KeepManifests: true,
		Overrides: Overrides{Images: []ImageOverride{{Container: "db", Image: "postgres:16"}}}})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := Decode("pods.yaml", []byte(overridePods), Options{NodeName: "node1",
		Overrides: Overrides{Images: []ImageOverride{{Container: "db", Image: "postgres:17"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if same.Pods[1].UID != plain.Pods[1].UID {
		t.Errorf("an override that changes nothing changed the UID")
	}
	if changed.Pods[1].UID == plain.Pods[1].UID {
		t.Errorf("a changed pod kept its UID")
	}
	if changed.Pods[0].UID != plain.Pods[0].UID {
		t.Errorf("a pod the override left alone got another UID")
	}
	if m := same.Pods[0].Manifest; m == nil || m.Spec.RestartPolicy != "" || m.Namespace != "" {
		t.Errorf("the manifest kept is not the pod before its defaults: %+v", m)
	}
}

func TestParseOverrides(t *testing.T) {
	for _, s := range []string{"", "main", "=x", "main=", "/main=x", "web/=x", "a/b/c=x"} {
		if _, err := ParseImageOverride(s); err == nil {
			t.Errorf("ParseImageOverride(%q): no error", s)
		}
	}
	if o, err := ParseImageOverride("web/main=reg:5000/a/b:1"); err != nil || o != (ImageOverride{Pod: "web", Container: "main", Image: "reg:5000/a/b:1"}) {
		t.Errorf("ParseImageOverride: %+v, %v", o, err)
	}
	for _, s := range []string{"", "A", "=x"} {
		if _, err := ParseEnvOverride(s); err == nil {
			t.Errorf("ParseEnvOverride(%q): no error", s)
		}
	}
	if e, err := ParseEnvOverride("A=b=c"); err != nil || e.Value != "b=c" {
		t.Errorf("ParseEnvOverride: %+v, %v", e, err)
	}
}

func TestRunPodUIDIsTheCommandLines(t *testing.T) {
	r := RunPod{Name: "t", Image: "busybox", Args: []string{"wc", "-c"}, Stdin: true, RestartPolicy: v1.RestartPolicyNever}
	a, err := DecodeRunPod(r, Options{NodeName: "node1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DecodeRunPod(r, Options{NodeName: "node1"})
	r.Image = "busybox:1.28"
	c, _ := DecodeRunPod(r, Options{NodeName: "node1"})
	if a.Pods[0].UID != b.Pods[0].UID || a.Pods[0].UID == c.Pods[0].UID {
		t.Errorf("UIDs %s %s %s: want the same command line to give the same, another image another", a.Pods[0].UID, b.Pods[0].UID, c.Pods[0].UID)
	}
	p := a.Pods[0]
	if p.Annotations[ConfigSourceAnnotationKey] != "cli" || !p.Spec.Containers[0].Stdin || !p.Spec.Containers[0].StdinOnce || p.Labels["run"] != "t" {
		t.Errorf("pod %+v", p.Pod)
	}
}
