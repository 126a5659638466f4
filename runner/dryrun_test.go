package runner_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/admission"
)

// secretValue is the Secret value of the dry-run tests; no output may hold
// it, nor its base64.
const secretValue = "s3cret-hunter2"

func testSecret() *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Data: map[string][]byte{"password": []byte(secretValue), "user": []byte("admin")}}
}

func testConfigMap() *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"},
		Data: map[string]string{"mode": "fast", "app.conf": "x=1\n"}}
}

// testNode is a node of 2 CPUs and 4 GiB named node1.
func testNode() admission.Node {
	return admission.Node{
		Name:   "node1",
		Labels: map[string]string{v1.LabelHostname: "node1", v1.LabelOSStable: "linux"},
		Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"),
			v1.ResourceEphemeralStorage: resource.MustParse("10Gi"), v1.ResourcePods: resource.MustParse("110"),
		},
		MemoryCapacity: 4 << 30,
	}
}

// appPod is a pod with an init container, a sidecar and a regular
// container that takes env from a Secret and a ConfigMap, expands it in its
// args and mounts an emptyDir and a configMap volume.
func appPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	pod := newPod("app", v1.RestartPolicyAlways, sh("web", "sleep infinity"))
	pod.Spec.InitContainers = []v1.Container{sh("setup", "true"), sh("logger", "sleep infinity")}
	pod.Spec.InitContainers[1].RestartPolicy = &always
	web := &pod.Spec.Containers[0]
	web.Env = []v1.EnvVar{
		{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "db"}, Key: "password"}}},
		{Name: "AUTH", Value: "Bearer $(PASSWORD)"},
		{Name: "MODE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}},
	}
	web.EnvFrom = []v1.EnvFromSource{{Prefix: "DB_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}}
	web.Args = []string{"--auth=$(PASSWORD)", "--mode=$(MODE)"}
	web.Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	web.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "conf", MountPath: "/etc/app", ReadOnly: true}}
	pod.Spec.Volumes = []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
	}
	return pod
}

// dryRunEnv is newEnv set up for both a run and a dry run of the same
// pods: the node admits them, the run has the Secret and the ConfigMap.
func dryRunEnv(t *testing.T) *env {
	e := newEnv(t)
	e.facts.Node = testNode()
	e.opts.Secrets = []*v1.Secret{testSecret()}
	e.opts.ConfigMaps = []*v1.ConfigMap{testConfigMap()}
	return e
}

// dryFacts are the env's facts as a dry run has them: no runtime.
func (e *env) dryFacts() runner.Facts {
	f := e.facts
	f.NoRuntime, f.RuntimeName, f.RuntimeHandlers = true, "", nil
	return f
}

// normalize blanks in a config what only the running run knows: its
// owner's labels, the runtime's image ID, the image's user, the random
// name of the termination message file, and the Secret's values (masked
// in a dry run).
func normalize(m proto.Message) proto.Message {
	m = proto.Clone(m)
	owner := func(l map[string]string) {
		for _, k := range []string{"io.podrun.run", runner.LabelPID, "io.podrun.pid-start"} {
			if _, ok := l[k]; ok {
				l[k] = "X"
			}
		}
	}
	switch c := m.(type) {
	case *runtimeapi.PodSandboxConfig:
		owner(c.Labels)
	case *runtimeapi.ContainerConfig:
		owner(c.Labels)
		c.Image.Image = "X"
		c.Linux.SecurityContext.RunAsUser, c.Linux.SecurityContext.RunAsUsername = nil, ""
		for _, mt := range c.Mounts {
			if mt.ContainerPath == "/dev/termination-log" {
				mt.HostPath = filepath.Dir(mt.HostPath)
			}
		}
		for _, v := range testSecret().Data {
			for _, e := range c.Envs {
				e.Value = []byte(strings.ReplaceAll(string(e.Value), string(v), runner.MaskedValue))
			}
			for i, a := range c.Args {
				c.Args[i] = strings.ReplaceAll(a, string(v), runner.MaskedValue)
			}
		}
	}
	return m
}

func TestDryRunSendsWhatARunSends(t *testing.T) {
	e := dryRunEnv(t)
	var mu sync.Mutex
	sent := map[string]*runtimeapi.ContainerConfig{}
	e.srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		mu.Lock()
		defer mu.Unlock()
		sent[cfg.Metadata.Name] = proto.Clone(cfg).(*runtimeapi.ContainerConfig)
		return fake.CommandBehavior(cfg, second)
	})
	pod := appPod()
	// The run is left running, so that its sandbox's config can be read.
	e.opts.Detach, e.opts.Wait = true, runner.WaitReady

	dry, err := runner.DryRun(e.dryFacts(), []*v1.Pod{pod}, e.opts)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	if entries, err := os.ReadDir(e.opts.RootDir); err != nil || len(entries) != 0 {
		t.Errorf("the dry run made %v in the root dir (%v); want nothing", names(entries), err)
	}

	res := e.run(t, context.Background(), pod)
	t.Cleanup(func() {
		if err := runner.Down(context.Background(), e.rt, nil, true, func(string, ...any) {}); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	if !res.Pods[0].Reached() {
		t.Fatalf("run: %s %v", res.Pods[0].Outcome, res.Pods[0].Err)
	}
	sbs := podSandboxes(t, e.rt, string(pod.UID))
	if len(sbs) != 1 {
		t.Fatalf("%d sandboxes, want 1", len(sbs))
	}

	dp := dry.Pods[0]
	diff := func(what string, run, dry proto.Message) {
		t.Helper()
		if run, dry := normalize(run), normalize(dry); !proto.Equal(run, dry) {
			t.Errorf("%s: the dry run's config differs from the run's:\nrun: %s\ndry: %s", what,
				protojson.Format(run), protojson.Format(dry))
		}
	}
	diff("sandbox", e.srv.SandboxConfig(sbs[0].Id), dp.Sandbox)
	var kinds []string
	for _, c := range dp.Containers {
		kinds = append(kinds, c.Name+"="+string(c.Kind))
		mu.Lock()
		got := sent[c.Name]
		mu.Unlock()
		if got == nil {
			t.Errorf("the run sent no config of %s", c.Name)
			continue
		}
		diff("container "+c.Name, got, c.Config)
	}
	if got, want := strings.Join(kinds, " "), "setup=init logger=sidecar web=container"; got != want {
		t.Errorf("containers %s, want %s", got, want)
	}
	if dp.QOSClass != v1.PodQOSBurstable {
		t.Errorf("QoS class %s, want Burstable", dp.QOSClass)
	}
}

func TestDryRunMasksSecrets(t *testing.T) {
	e := dryRunEnv(t)
	pod := appPod()
	pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "creds",
		VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}})
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, v1.VolumeMount{Name: "creds", MountPath: "/creds"})
	res, err := runner.DryRun(e.dryFacts(), []*v1.Pod{pod}, e.opts)
	if err != nil {
		t.Fatalf("DryRun: %v", err)
	}
	var all strings.Builder
	fmt.Fprintf(&all, "%v\n", res.Notes)
	for _, p := range res.Pods {
		all.WriteString(protojson.Format(p.Sandbox))
		for _, c := range p.Containers {
			all.WriteString(protojson.Format(c.Config))
			fmt.Fprintf(&all, "%s %s\n", c.Config.Args, c.Config.Command)
			for _, kv := range c.Config.Envs {
				fmt.Fprintf(&all, "%s=%s\n", kv.Key, kv.Value)
			}
		}
	}
	out := all.String()
	for _, leak := range []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))} {
		if strings.Contains(out, leak) {
			t.Errorf("the dry run's output holds %q:\n%s", leak, out)
		}
	}
	env := map[string]string{}
	for _, kv := range res.Pods[0].Containers[2].Config.Envs {
		env[kv.Key] = string(kv.Value)
	}
	want := map[string]string{"PASSWORD": "<masked>", "AUTH": "Bearer <masked>", "MODE": "fast", "DB_password": "<masked>", "DB_user": "<masked>"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q (all: %v)", k, env[k], v, env)
		}
	}
	if got := strings.Join(res.Pods[0].Containers[2].Config.Args, " "); got != "--auth=<masked> --mode=fast" {
		t.Errorf("args %q", got)
	}
	if string(e.opts.Secrets[0].Data["password"]) != secretValue {
		t.Errorf("DryRun changed the caller's Secret")
	}
}

// runErrors is what a run prints for pods it cannot run: Run's error, or
// the pods' errors once it ran them.
func runErrors(t *testing.T, e *env, pods ...*v1.Pod) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	res, err := runner.Run(ctx, e.rt, e.facts, pods, e.opts)
	if err != nil {
		return err.Error()
	}
	if err := res.Err(); err != nil {
		return err.Error()
	}
	return ""
}

func TestDryRunRefusesAsARunDoes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(p *v1.Pod)
		want   string // in the error
	}{
		{"node too small", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("64")}
		}, "(reason OutOfcpu)"},
		{"node selector", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disktype": "ssd"} }, "(reason NodeAffinity)"},
		{"persistentVolumeClaim", func(p *v1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "claim", VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}})
		}, `volume "claim": persistentVolumeClaim volumes are not supported`},
		{"missing ConfigMap key in env", func(p *v1.Pod) {
			p.Spec.Containers[0].Env[2].ValueFrom.ConfigMapKeyRef.Key = "absent"
		}, "CreateContainerConfigError: couldn't find key absent in ConfigMap default/cfg"},
		{"runAsNonRoot with runAsUser 0", func(p *v1.Pod) {
			yes, root := true, int64(0)
			p.Spec.InitContainers[0].SecurityContext = &v1.SecurityContext{RunAsNonRoot: &yes, RunAsUser: &root}
		}, "CreateContainerConfigError: container's runAsUser breaks non-root policy"},
		{"invalid image name", func(p *v1.Pod) { p.Spec.Containers[0].Image = "Not/Valid:" }, "InvalidImageName: Failed to apply default image tag"},
		{"log dir name too long", func(p *v1.Pod) {
			// A 63-byte namespace would do with a shorter name; the test
			// names pod default/app.
			p.Name, p.UID = "app"+strings.Repeat("x", 250), "0123456789abcdef0123456789abcdef"
		}, "metadata.name: the pod's log dir <namespace>_<name>_<uid> would be a file name of 294 bytes, longer than the 255 bytes a file name may have (NAME_MAX)"},
		{"FQDN too long", func(p *v1.Pod) {
			yes := true
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("h", 40), strings.Repeat("s", 40), &yes
		}, "generating the pod sandbox config: failed to construct FQDN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := dryRunEnv(t)
			e.opts.ClusterDomain = "cluster.local"
			pod := appPod()
			tc.mutate(pod)
			ok := newPod("fine", v1.RestartPolicyNever, sh("c", "true"))
			_, dryErr := runner.DryRun(e.dryFacts(), []*v1.Pod{ok, pod}, e.opts)
			if dryErr == nil {
				t.Fatalf("DryRun accepted the pod")
			}
			if !strings.Contains(dryErr.Error(), tc.want) || !strings.Contains(dryErr.Error(), "pod default/app") {
				t.Errorf("DryRun: %v\nwant it to name pod default/app and hold %q", dryErr, tc.want)
			}
			if entries, _ := os.ReadDir(e.opts.RootDir); len(entries) != 0 {
				t.Errorf("the dry run made %v", names(entries))
			}
			if got := runErrors(t, e, ok, pod); got != dryErr.Error() {
				t.Errorf("a run says:\n%s\nthe dry run:\n%s", got, dryErr)
			}
			e.assertTornDown(t)
		})
	}
}

func TestDryRunAssumesWhatOnlyTheRuntimeKnows(t *testing.T) {
	e := dryRunEnv(t)
	e.opts.CgroupRoot = "/podrun"
	pod := appPod()
	no := false
	pod.Spec.HostUsers = &no
	pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, v1.EnvVar{Name: "FROM_FILE", ValueFrom: &v1.EnvVarSource{
		FileKeyRef: &v1.FileKeySelector{VolumeName: "data", Path: "config.env", Key: "DB"}}})
	res, err := runner.DryRun(e.dryFacts(), []*v1.Pod{pod}, e.opts)
	if err != nil {
		t.Fatalf("DryRun refused a pod whose only unknowns are the runtime's: %v", err)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{
		"images: not pulled or inspected",
		"runtime: not asked: its readiness and version",
		"cgroup driver: assumed cgroupfs for the pod cgroups in these configs; the runtime's driver is unknown: the runtime was not asked; " +
			"a run takes --cgroup-driver, else asks the runtime (CRI RuntimeConfig, else the config in its status info), else uses cgroupfs",
		"pod network: the CNI configuration and plugins are not checked",
		"pod default/app: hostUsers: false: the runtime's user namespace support is not checked",
		"pod default/app: env read from files when the container starts (fileKeyRef), shown as a placeholder: web: FROM_FILE",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	p := res.Pods[0]
	if u := p.Sandbox.Linux.SecurityContext.NamespaceOptions.UsernsOptions; u == nil || u.Mode != runtimeapi.NamespaceMode_POD {
		t.Errorf("sandbox user namespace %v, want mode POD", u)
	}
	if got := p.Sandbox.Linux.CgroupParent; got != "/podrun/burstable/pod"+string(pod.UID) {
		t.Errorf("cgroup parent %q", got)
	}
	for _, kv := range p.Containers[2].Config.Envs {
		if kv.Key == "FROM_FILE" && !strings.HasPrefix(string(kv.Value), "<") {
			t.Errorf("FROM_FILE = %q, want the placeholder", kv.Value)
		}
	}
	if pod.Spec.Containers[0].Env[3].ValueFrom == nil {
		t.Errorf("DryRun changed the caller's pod")
	}

	// With the driver known, from --cgroup-driver or from the runtime a
	// dry run asked (DryRunFacts), the note says which and where from,
	// and the pod cgroups are named for it.
	statusInfo := runner.CgroupDriverSource{From: runner.DriverFromStatusInfo, Said: `containerd's default runtime "runc": SystemdCgroup = true`}
	slice := "/podrun.slice/podrun-burstable.slice/podrun-burstable-pod" + strings.ReplaceAll(string(pod.UID), "-", "_") + ".slice"
	for _, tc := range []struct {
		source         runner.CgroupDriverSource
		endpoint       string
		driver, parent string
		notes          []string
	}{
		{runner.CgroupDriverSource{From: runner.DriverFromFlag}, "", "systemd", slice,
			[]string{"runtime: not asked: its readiness and version", "cgroup driver: systemd (from --cgroup-driver)"}},
		{statusInfo, "unix:///run/containerd/containerd.sock", "systemd", slice,
			[]string{"runtime: asked only for its cgroup driver, at unix:///run/containerd/containerd.sock: its readiness, and whether a live podrun already runs one of the pods (a run refuses it), are not checked",
				`cgroup driver: systemd (from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true)`}},
		{runner.CgroupDriverSource{From: runner.DriverFromRuntimeConfig}, "unix:///run/containerd/containerd.sock", "cgroupfs",
			"/podrun/burstable/pod" + string(pod.UID),
			[]string{"cgroup driver: cgroupfs (from the runtime's CRI RuntimeConfig)"}},
	} {
		f := e.dryFacts()
		f.CgroupDriver, f.CgroupDriverSource, f.DryRunEndpoint = tc.driver, tc.source, tc.endpoint
		res, err = runner.DryRun(f, []*v1.Pod{appPod()}, e.opts)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(res.Notes, "\n")
		for _, want := range tc.notes {
			if !strings.Contains(notes, want) {
				t.Errorf("%s: notes lack %q:\n%s", tc.source, want, notes)
			}
		}
		if strings.Count(notes, "cgroup driver:") != 1 || strings.Contains(notes, "assumed cgroupfs") {
			t.Errorf("%s: one note on the known driver wanted:\n%s", tc.source, notes)
		}
		if got := res.Pods[0].Sandbox.Linux.CgroupParent; got != tc.parent {
			t.Errorf("%s: cgroup parent %q, want %q", tc.source, got, tc.parent)
		}
	}
}

func TestDryRunFactsWithoutTheRootDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "not", "yet")
	f, err := runner.DryRunFacts(context.Background(), runner.FactsConfig{Node: admission.HostOptions{NodeName: "n1", RootDir: root}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.NoRuntime || f.Node.Name != "n1" || f.Node.Allocatable.StorageEphemeral().Sign() <= 0 || f.CgroupDriver != "" ||
		f.CgroupDriverSource.From != runner.DriverFromUnknown || f.CgroupDriverSource.String() != "unknown: the runtime was not asked" {
		t.Errorf("facts %+v", f)
	}
	f, err = runner.DryRunFacts(context.Background(), runner.FactsConfig{Node: admission.HostOptions{NodeName: "n1", RootDir: root}, CgroupDriver: "systemd"}, nil)
	if err != nil || f.CgroupDriver != "systemd" || f.CgroupDriverSource.String() != "from --cgroup-driver" {
		t.Errorf("with --cgroup-driver: facts %+v, %v", f, err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("DryRunFacts made the root dir: %v", err)
	}
}

func TestPodContainers(t *testing.T) {
	var got []string
	for _, c := range runner.PodContainers(appPod()) {
		got = append(got, string(c.Kind)+":"+c.Name)
	}
	if s := strings.Join(got, " "); s != "init:setup sidecar:logger container:web" {
		t.Errorf("PodContainers = %s", s)
	}
}
