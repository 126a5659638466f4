package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
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

// A dry run never calls the runtime, even one that answers; validate, run
// --dry-run and --dry-run print the same.
func TestCLIValidateNeverCallsTheRuntime(t *testing.T) {
	srv, ep := startFake(t)
	root := filepath.Join(t.TempDir(), "root")
	m := writeManifest(t, validatePods)
	var outs []string
	for _, args := range [][]string{
		{"validate", "--root-dir", root, "--node-name", "n1", "-f", m},
		{"run", "--dry-run", "--root-dir", root, "--node-name", "n1", "-f", m},
		{"--dry-run", "--root-dir", root, "--node-name", "n1", "-f", m},
	} {
		out, errOut, code := podrunAt(t, ep, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		outs = append(outs, out)
		if !strings.Contains(errOut, "podrun: note: images: not pulled or inspected") {
			t.Errorf("%v: stderr lacks the notes:\n%s", args, errOut)
		}
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("validate, run --dry-run and --dry-run differ:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Errorf("the dry runs called the runtime: %v", calls)
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
