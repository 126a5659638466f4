package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
)

// validatePods is a Secret, a ConfigMap and two pods: one whose env and
// args take the Secret's value, one on the host network.
const validatePods = `apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: "s3cret-hunter2"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {mode: fast}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - {name: setup, image: busybox:1.28, command: [sh, -c, "true"]}
  - {name: logger, image: busybox:1.28, restartPolicy: Always, command: [sleep, inf]}
  containers:
  - name: app
    image: busybox:1.28
    args: ["--password=$(PASSWORD)"]
    env:
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
    - {name: MODE, valueFrom: {configMapKeyRef: {name: cfg, key: mode}}}
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]
---
apiVersion: v1
kind: Pod
metadata: {name: host, namespace: kube-system}
spec:
  hostNetwork: true
  containers:
  - {name: c, image: busybox:1.28, resources: {limits: {cpu: 100m, memory: 64Mi}}}
`

const validateSecret = "s3cret-hunter2"

// A dry run asks a runtime that answers for its cgroup driver and for
// nothing else (the dial's Version, one Status, RuntimeConfig), creates
// nothing; validate, run --dry-run and --dry-run print the same. With
// --cgroup-driver it does not call the runtime at all.
func TestCLIValidateAsksTheRuntimeOnlyForTheCgroupDriver(t *testing.T) {
	srv, ep := startFake(t)
	srv.SetStatusInfo(statusInfoFile(t, "status-containerd-1.6-systemd.json"))
	root := filepath.Join(t.TempDir(), "root")
	m := writeManifest(t, validatePods)
	var outs []string
	for _, args := range [][]string{
		{"validate", "--root-dir", root, "--node-name", "n1", "-f", m},
		{"run", "--dry-run", "--root-dir", root, "--node-name", "n1", "-f", m},
		{"--dry-run", "--root-dir", root, "--node-name", "n1", "-f", m},
	} {
		srv.ResetCalls()
		out, errOut, code := podrunAt(t, ep, append([]string{"--cgroup-root=/podrun"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		outs = append(outs, out)
		if !strings.Contains(errOut, "podrun: note: images: not pulled or inspected") {
			t.Errorf("%v: stderr lacks the notes:\n%s", args, errOut)
		}
		if calls := srv.Calls(); !slices.Equal(calls, []string{"Version", "Status", "RuntimeConfig"}) {
			t.Errorf("%v: the dry run called the runtime: %v, want the dial's Version, Status and RuntimeConfig alone", args, calls)
		}
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("validate, run --dry-run and --dry-run differ:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the dry runs made the root dir: %v", err)
	}
	for _, want := range []string{
		"pod default/web: admitted, QoS class BestEffort",
		"  init       setup   busybox:1.28",
		"  sidecar    logger  busybox:1.28",
		"  container  app     busybox:1.28",
		"  volume     data    emptyDir",
		"pod kube-system/host: admitted, QoS class Guaranteed",
	} {
		if !strings.Contains(outs[0], want+"\n") {
			t.Errorf("summary lacks %q:\n%s", want, outs[0])
		}
	}

	srv.ResetCalls()
	_, errOut, code := podrunAt(t, ep, "validate", "--cgroup-driver=cgroupfs", "--root-dir", root, "--node-name", "n1", "-f", m)
	if code != 0 || !strings.Contains(errOut, "podrun: note: cgroup driver: cgroupfs (from --cgroup-driver)\n") {
		t.Errorf("with --cgroup-driver: exit %d\n%s", code, errOut)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Errorf("with --cgroup-driver the dry run called the runtime: %v", calls)
	}
}

// The pod cgroups of a dry run's configs are named for the driver a run
// would take from the runtime, and the notes say which and where from
// (issue 14): a containerd 1.6 with SystemdCgroup = true in its status
// info gets the slices a run hands it (before: /podrun/besteffort/pod<uid>,
// the driver unknown); a containerd 2.x answers RuntimeConfig; without a
// runtime the driver is unknown, cgroupfs assumed, and the note names the
// endpoint tried and why it did not answer.
func TestCLIValidateCgroupDriverFromTheRuntime(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none.sock")
	for _, tc := range []struct {
		name     string
		setup    func(*fake.Server)
		endpoint string // "" for the fake's
		systemd  bool
		note     string
	}{
		{"containerd 1.6 with SystemdCgroup = true",
			func(s *fake.Server) { s.SetStatusInfo(statusInfoFile(t, "status-containerd-1.6-systemd.json")) }, "", true,
			`podrun: note: cgroup driver: systemd (from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true)`},
		{"containerd 2.x",
			func(s *fake.Server) {
				s.SetStatusInfo(statusInfoFile(t, "status-containerd-2.4.json"))
				s.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD)
			}, "", true,
			"podrun: note: cgroup driver: systemd (from the runtime's CRI RuntimeConfig)"},
		{"no runtime",
			func(s *fake.Server) {}, "unix://" + none, false,
			"podrun: note: cgroup driver: assumed cgroupfs for the pod cgroups in these configs; the runtime's driver is unknown: " +
				"no runtime answered (connecting to unix://" + none + ": stat " + none + ": no such file or directory); " +
				"a run takes --cgroup-driver, else asks the runtime (CRI RuntimeConfig, else the config in its status info), else uses cgroupfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, ep := startFake(t)
			tc.setup(srv)
			if tc.endpoint != "" {
				ep = tc.endpoint
			}
			out, errOut, code := podrunAt(t, ep, "validate", "--cgroup-root=/podrun", "-o", "json",
				"--root-dir", filepath.Join(t.TempDir(), "root"), "--node-name", "n1", "-f", writeManifest(t, validatePods))
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			if !strings.Contains(errOut, tc.note+"\n") {
				t.Errorf("stderr lacks\n%s\n%s", tc.note, errOut)
			}
			var doc struct {
				Pods []struct {
					UID           string
					SandboxConfig struct{ Linux struct{ CgroupParent string } }
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Pods) != 2 {
				t.Fatalf("-o json: %v\n%s", err, out)
			}
			web, host := doc.Pods[0], doc.Pods[1]
			want := []string{"/podrun/besteffort/pod" + web.UID, "/podrun/pod" + host.UID}
			if tc.systemd {
				slice := func(uid string) string { return strings.ReplaceAll(uid, "-", "_") }
				want = []string{"/podrun.slice/podrun-besteffort.slice/podrun-besteffort-pod" + slice(web.UID) + ".slice",
					"/podrun.slice/podrun-pod" + slice(host.UID) + ".slice"}
			}
			if got := []string{web.SandboxConfig.Linux.CgroupParent, host.SandboxConfig.Linux.CgroupParent}; !slices.Equal(got, want) {
				t.Errorf("cgroup parents %q, want %q", got, want)
			}
		})
	}
}

// SIGINT while a dry run waits for a runtime that does not answer ends it
// at once with 130, as it ends a run, rather than going on to exit 0 when
// DryRunRuntimeTimeout has passed.
func TestCLIValidateInterruptedWhileAskingTheRuntime(t *testing.T) {
	bin := buildPodrun(t)
	srv, ep := startFake(t)
	srv.Delay("Status", time.Minute)
	cmd := exec.Command(bin, "validate", "-r", ep, "--root-dir", filepath.Join(t.TempDir(), "root"), "--node-name", "n1",
		"-f", writeManifest(t, validatePods))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	for !slices.Contains(srv.Calls(), "Status") {
		select {
		case <-exited:
			t.Fatalf("podrun ended before asking Status: %v\n%s", cmd.ProcessState, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("podrun still running 10 s after SIGINT; stderr:\n%s", stderr.String())
	}
	const want = "podrun: interrupted: asking the runtime for its cgroup driver: context canceled\n"
	if code := cmd.ProcessState.ExitCode(); code != 130 || stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("exit status %d, stdout %q, stderr %q; want 130, nothing, %q", code, stdout.String(), stderr.String(), want)
	}
}

// statusInfoFile is the Info of a runtime's verbose Status recorded in
// runner/testdata.
func statusInfoFile(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("runner", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Info map[string]string }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Info
}

// The -o json document: one entry per pod with its sandbox config and its
// containers' configs, env values as text, the Secret's value masked.
func TestCLIValidateJSON(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	out, errOut, code := podrunAt(t, "unix://"+filepath.Join(t.TempDir(), "none.sock"),
		"validate", "-o", "json", "--root-dir", root, "--node-name", "n1", "-f", writeManifest(t, validatePods))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, leak := range []string{validateSecret, base64.StdEncoding.EncodeToString([]byte(validateSecret))} {
		if strings.Contains(out+errOut, leak) {
			t.Errorf("the output holds %q", leak)
		}
	}
	var doc struct {
		Pods []struct {
			Pod, UID, QOSClass string
			SandboxConfig      struct {
				Metadata     struct{ Name, Namespace, UID string }
				LogDirectory string
				Linux        struct {
					SecurityContext struct {
						NamespaceOptions struct{ Network string }
					}
				}
			}
			Containers []struct {
				Name, Kind string
				Config     struct {
					Args   []string
					Envs   []struct{ Key, Value string }
					Mounts []struct{ ContainerPath, HostPath string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if len(doc.Pods) != 2 {
		t.Fatalf("%d pods, want 2", len(doc.Pods))
	}
	web, host := doc.Pods[0], doc.Pods[1]
	if web.Pod != "default/web" || web.UID == "" || web.SandboxConfig.Metadata.UID != web.UID || web.QOSClass != string(v1.PodQOSBestEffort) {
		t.Errorf("pod entry %+v", web)
	}
	if want := filepath.Join(root, "logs", "default_web_"+web.UID); web.SandboxConfig.LogDirectory != want {
		t.Errorf("log directory %s, want %s", web.SandboxConfig.LogDirectory, want)
	}
	if web.SandboxConfig.Linux.SecurityContext.NamespaceOptions.Network != "POD" ||
		host.SandboxConfig.Linux.SecurityContext.NamespaceOptions.Network != "NODE" {
		t.Errorf("network namespaces %+v, %+v", web.SandboxConfig.Linux, host.SandboxConfig.Linux)
	}
	var kinds []string
	for _, c := range web.Containers {
		kinds = append(kinds, c.Kind+":"+c.Name)
	}
	if got := strings.Join(kinds, " "); got != "init:setup sidecar:logger container:app" {
		t.Errorf("containers %s", got)
	}
	app := web.Containers[2].Config
	env := map[string]string{}
	for _, e := range app.Envs {
		env[e.Key] = e.Value
	}
	if env["PASSWORD"] != "<masked>" || env["MODE"] != "fast" || strings.Join(app.Args, " ") != "--password=<masked>" {
		t.Errorf("env %v, args %v", env, app.Args)
	}
	if len(app.Mounts) == 0 || app.Mounts[0].HostPath != filepath.Join(root, "pods", web.UID, "volumes", "kubernetes.io~empty-dir", "data") {
		t.Errorf("mounts %+v", app.Mounts)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the dry run made the root dir: %v", err)
	}
}

func TestVolumeSummary(t *testing.T) {
	dirOrCreate := v1.HostPathDirectoryOrCreate
	for _, tc := range []struct {
		src  v1.VolumeSource
		want string
	}{
		{v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}, "emptyDir"},
		{v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}, "emptyDir (Memory)"},
		{v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/lib/etcd", Type: &dirOrCreate}}, "hostPath /var/lib/etcd (DirectoryOrCreate)"},
		{v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc"}}, "hostPath /etc"},
		{v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}, "configMap cfg"},
		{v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db"}}, "secret db"},
		{v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}, "downwardAPI"},
		{v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "a"}}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "b"}}},
			{DownwardAPI: &v1.DownwardAPIProjection{}},
		}}}, "projected (secret a, configMap b, downwardAPI)"},
	} {
		if got := volumeSummary(tc.src); got != tc.want {
			t.Errorf("volumeSummary = %q, want %q", got, tc.want)
		}
	}
}
