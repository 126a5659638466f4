package runner

import (
	"encoding/json"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestExpand(t *testing.T) {
	vals := map[string]string{"A": "alpha", "B": "beta", "EMPTY": ""}
	cases := []struct {
		name, in, want string
	}{
		{"a reference is replaced by its value", "x-$(A)-y", "x-alpha-y"},
		{"several references", "$(A)$(B)", "alphabeta"},
		{"an empty value is still a value", "[$(EMPTY)]", "[]"},
		{"an unresolved reference stays as written", "$(NOPE) and $(A)", "$(NOPE) and alpha"},
		{"an empty reference stays as written", "$()", "$()"},
		{"$$ is an escaped $", "cost: $$5", "cost: $5"},
		{"$$(X) yields a literal $(X)", "$$(A)", "$(A)"},
		{"$$$(A) is a $ and a reference", "$$$(A)", "$alpha"},
		{"an unclosed $( is kept", "echo $(A", "echo $(A"},
		{"a $ followed by other text is kept", "$A ${A} $", "$A ${A} $"},
		{"a trailing $ is kept", "cost$", "cost$"},
		{"no references", "plain text", "plain text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := expand(tc.in, vals); got != tc.want {
				t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func envOf(kvs []*runtimeapi.KeyValue) [][2]string {
	var out [][2]string
	for _, kv := range kvs {
		out = append(out, [2]string{kv.Key, string(kv.Value)})
	}
	return out
}

func TestContainerEnv(t *testing.T) {
	cases := []struct {
		name string
		env  []v1.EnvVar
		want [][2]string
	}{
		{
			name: "order of definition is kept",
			env:  []v1.EnvVar{{Name: "Z", Value: "1"}, {Name: "A", Value: "2"}, {Name: "M", Value: "3"}},
			want: [][2]string{{"Z", "1"}, {"A", "2"}, {"M", "3"}},
		},
		{
			name: "a later duplicate wins but keeps the first position",
			env:  []v1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "A", Value: "3"}},
			want: [][2]string{{"A", "3"}, {"B", "2"}},
		},
		{
			name: "a value refers to variables defined before it",
			env:  []v1.EnvVar{{Name: "HOST", Value: "db"}, {Name: "URL", Value: "tcp://$(HOST):5432"}},
			want: [][2]string{{"HOST", "db"}, {"URL", "tcp://db:5432"}},
		},
		{
			name: "a reference to a variable defined later stays literal",
			env:  []v1.EnvVar{{Name: "URL", Value: "tcp://$(HOST)"}, {Name: "HOST", Value: "db"}},
			want: [][2]string{{"URL", "tcp://$(HOST)"}, {"HOST", "db"}},
		},
		{
			name: "a redefinition sees the earlier value",
			env:  []v1.EnvVar{{Name: "PATH", Value: "/bin"}, {Name: "PATH", Value: "/opt/bin:$(PATH)"}},
			want: [][2]string{{"PATH", "/opt/bin:/bin"}},
		},
		{
			name: "no env",
			want: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kvs, err := containerEnv(envInput{Pod: &v1.Pod{}, Container: &v1.Container{Name: "c", Env: tc.env}})
			if err != nil {
				t.Fatal(err)
			}
			if got := envOf(kvs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("env = %v, want %v", got, tc.want)
			}
		})
	}
}

func baseContainerPod() *v1.Pod {
	grace := int64(5)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "uid-7", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name:                     "app",
				Image:                    "nginx",
				Command:                  []string{"/bin/$(PROG)", "$$(PROG)"},
				Args:                     []string{"--port=$(PORT)", "--missing=$(NOPE)"},
				WorkingDir:               "/srv",
				Env:                      []v1.EnvVar{{Name: "PROG", Value: "server"}, {Name: "PORT", Value: "80"}, {Name: "PORT", Value: "8080"}},
				Ports:                    []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: v1.TerminationMessageReadFile,
				TTY:                      true,
				Stdin:                    true,
			}},
		},
	}
}

func TestContainerConfig(t *testing.T) {
	pod := baseContainerPod()
	owner := Owner{RunID: "run1", PID: 42, PIDStart: 4242}
	cfg, err := containerConfig(containerInput{Pod: pod, Container: &pod.Spec.Containers[0], RestartCount: 3, ImageRef: "sha256:abc", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Metadata, (&runtimeapi.ContainerMetadata{Name: "app", Attempt: 3}); got.Name != want.Name || got.Attempt != want.Attempt {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	if cfg.Image.Image != "sha256:abc" || cfg.Image.UserSpecifiedImage != "nginx" {
		t.Errorf("image = %v, want sha256:abc specified as nginx", cfg.Image)
	}
	if want := "app/3.log"; cfg.LogPath != want {
		t.Errorf("logPath = %q, want %q", cfg.LogPath, want)
	}
	if want := []string{"/bin/server", "$(PROG)"}; !reflect.DeepEqual(cfg.Command, want) {
		t.Errorf("command = %q, want %q", cfg.Command, want)
	}
	if want := []string{"--port=8080", "--missing=$(NOPE)"}; !reflect.DeepEqual(cfg.Args, want) {
		t.Errorf("args = %q, want %q (expanded against the final env)", cfg.Args, want)
	}
	if want := [][2]string{{"PROG", "server"}, {"PORT", "8080"}}; !reflect.DeepEqual(envOf(cfg.Envs), want) {
		t.Errorf("envs = %v, want %v", envOf(cfg.Envs), want)
	}
	if cfg.WorkingDir != "/srv" || !cfg.Tty || !cfg.Stdin || cfg.StdinOnce {
		t.Errorf("workingDir=%q tty=%v stdin=%v stdinOnce=%v", cfg.WorkingDir, cfg.Tty, cfg.Stdin, cfg.StdinOnce)
	}
	wantLabels := map[string]string{
		"io.kubernetes.pod.name":       "web",
		"io.kubernetes.pod.namespace":  "prod",
		"io.kubernetes.pod.uid":        "uid-7",
		"io.kubernetes.container.name": "app",
		LabelManaged:                   "true",
		labelRun:                       "run1",
		LabelPID:                       "42",
		labelPIDStart:                  "4242",
	}
	if !reflect.DeepEqual(cfg.Labels, wantLabels) {
		t.Errorf("labels =\n%v\nwant\n%v", cfg.Labels, wantLabels)
	}
	if _, ok := cfg.Labels["app"]; ok {
		t.Errorf("container labels carry the pod's own labels; the kubelet puts only its own")
	}
	a := cfg.Annotations
	for k, want := range map[string]string{
		"io.kubernetes.container.restartCount":             "3",
		"io.kubernetes.container.terminationMessagePath":   "/dev/termination-log",
		"io.kubernetes.container.terminationMessagePolicy": "File",
		"io.kubernetes.pod.terminationGracePeriod":         "5",
	} {
		if a[k] != want {
			t.Errorf("annotation %s = %q, want %q", k, a[k], want)
		}
	}
	var ports []v1.ContainerPort
	if err := json.Unmarshal([]byte(a["io.kubernetes.container.ports"]), &ports); err != nil {
		t.Fatalf("ports annotation %q: %v", a["io.kubernetes.container.ports"], err)
	}
	if !reflect.DeepEqual(ports, pod.Spec.Containers[0].Ports) {
		t.Errorf("ports annotation = %+v, want %+v", ports, pod.Spec.Containers[0].Ports)
	}
	if a["io.kubernetes.container.hash"] == "" {
		t.Errorf("no container hash annotation")
	}
	ns := cfg.Linux.GetSecurityContext().GetNamespaceOptions()
	if ns.Network != runtimeapi.NamespaceMode_POD || ns.Pid != runtimeapi.NamespaceMode_CONTAINER {
		t.Errorf("namespace options = %v", ns)
	}
}

// containerLogDir is where the runtime puts a container's log file, the
// directory podrun makes before CreateContainer.
func TestContainerLogDir(t *testing.T) {
	sb := &runtimeapi.PodSandboxConfig{LogDirectory: "/var/log/pods/prod_web_uid-7"}
	for _, tc := range []struct {
		name    string
		sandbox *runtimeapi.PodSandboxConfig
		logPath string
		want    string
	}{
		{"the sandbox's log dir and the container's name, from LogPath", sb, "app/3.log", "/var/log/pods/prod_web_uid-7/app"},
		{"no LogPath: no log", sb, "", ""},
		{"no LogDirectory: no log", &runtimeapi.PodSandboxConfig{}, "app/0.log", ""},
		{"no sandbox config: no log", nil, "app/0.log", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := containerLogDir(tc.sandbox, &runtimeapi.ContainerConfig{LogPath: tc.logPath}); got != tc.want {
				t.Errorf("containerLogDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestContainerConfigVariants(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.Pod, *containerInput)
		check  func(*testing.T, *runtimeapi.ContainerConfig)
	}{
		{
			name:   "the first instance logs to 0.log with attempt 0",
			mutate: func(_ *v1.Pod, in *containerInput) { in.RestartCount = 0 },
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				if cfg.LogPath != "app/0.log" || cfg.Metadata.Attempt != 0 {
					t.Errorf("logPath=%q attempt=%d", cfg.LogPath, cfg.Metadata.Attempt)
				}
			},
		},
		{
			name:   "a container without ports has no ports annotation",
			mutate: func(p *v1.Pod, _ *containerInput) { p.Spec.Containers[0].Ports = nil },
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				if v, ok := cfg.Annotations["io.kubernetes.container.ports"]; ok {
					t.Errorf("ports annotation = %q, want none", v)
				}
			},
		},
		{
			name:   "a detached owner marks the container detached",
			mutate: func(_ *v1.Pod, in *containerInput) { in.Owner.Detached = true },
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				if cfg.Labels[labelDetached] != "true" {
					t.Errorf("labels = %v, want %s=true", cfg.Labels, labelDetached)
				}
			},
		},
		{
			name:   "no command and no args stay nil (the image's entrypoint)",
			mutate: func(p *v1.Pod, _ *containerInput) { p.Spec.Containers[0].Command, p.Spec.Containers[0].Args = nil, nil },
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				if cfg.Command != nil || cfg.Args != nil {
					t.Errorf("command=%q args=%q, want nil", cfg.Command, cfg.Args)
				}
			},
		},
		{
			name: "the hash changes with the image",
			mutate: func(p *v1.Pod, _ *containerInput) {
				p.Spec.Containers[0].Image = "nginx:2"
			},
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				base := baseContainerPod()
				if cfg.Annotations["io.kubernetes.container.hash"] == containerHash(&base.Spec.Containers[0]) {
					t.Errorf("hash did not change with the image")
				}
			},
		},
		{
			name: "hostPID and hostIPC reach the container's namespace options",
			mutate: func(p *v1.Pod, _ *containerInput) {
				p.Spec.HostPID, p.Spec.HostIPC = true, true
			},
			check: func(t *testing.T, cfg *runtimeapi.ContainerConfig) {
				ns := cfg.Linux.SecurityContext.NamespaceOptions
				if ns.Pid != runtimeapi.NamespaceMode_NODE || ns.Ipc != runtimeapi.NamespaceMode_NODE {
					t.Errorf("namespace options = %v", ns)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := baseContainerPod()
			in := containerInput{Pod: pod, RestartCount: 3, ImageRef: "sha256:abc", Owner: Owner{RunID: "r", PID: 1}}
			tc.mutate(pod, &in)
			in.Container = &pod.Spec.Containers[0]
			cfg, err := containerConfig(in)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
}

func TestExpandUnclosedReferenceKeepsExpandingAfterIt(t *testing.T) {
	got := expand("$(A $$ $B", map[string]string{"B": "b"})
	if want := "$(A $ $B"; got != want {
		t.Errorf("expand = %q, want %q", got, want)
	}
}

// TestContainerHash: the kubelet's HashContainer values, as kubelet v1.37.2
// wrote them on its containers (io.kubernetes.container.hash), so that a
// kubelet adopting podrun's containers finds their definition unchanged.
func TestContainerHash(t *testing.T) {
	for _, tc := range []struct {
		name, image, want string
	}{
		{"httpd", "busybox:1.36", "18a7283"},
	} {
		if got := containerHash(&v1.Container{Name: tc.name, Image: tc.image, Command: []string{"ignored"}}); got != tc.want {
			t.Errorf("containerHash(%s, %s) = %s, want %s", tc.name, tc.image, got, tc.want)
		}
	}
}
