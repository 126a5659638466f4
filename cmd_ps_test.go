package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const psPods = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.28
    command: [sleep, infinity]
---
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.28
    command: [sleep, infinity]
`

// ps against the fake runtime: the table, -o wide, json and yaml, names,
// an unknown name.
func TestCLIPs(t *testing.T) {
	_, ep := startFake(t)
	root := t.TempDir()
	if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "-d", "-q", "--wait=none", "-f", writeManifest(t, psPods)); code != 0 {
		t.Fatalf("podrun -d: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() { podrunAt(t, ep, "down", "--all") })

	out, errOut, code := podrunAt(t, ep, "ps")
	if code != 0 || errOut != "" {
		t.Fatalf("ps: exit %d\n%s", code, errOut)
	}
	// Two namespaces: NAMESPACE first; sorted by namespace, then name.
	expectPsLines(t, out,
		`^NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE   IP$`,
		`^default     job    1/1     Running   0          \d+s +10\.99\.\d+\.\d+$`,
		`^shop        web    1/1     Running   0          \d+s +10\.99\.\d+\.\d+$`)

	// --no-headers: the rows alone, aligned among themselves.
	out, _, code = podrunAt(t, ep, "ps", "--no-headers")
	if code != 0 {
		t.Fatalf("ps --no-headers: exit %d", code)
	}
	expectPsLines(t, out,
		`^default   job   1/1   Running   0     \d+s +10\.99\.\d+\.\d+$`,
		`^shop      web   1/1   Running   0     \d+s +10\.99\.\d+\.\d+$`)

	out, _, code = podrunAt(t, ep, "ps", "-o", "wide", "shop/web")
	if code != 0 {
		t.Fatalf("ps -o wide: exit %d", code)
	}
	host, _ := os.Hostname()
	expectPsLines(t, out,
		`^NAME   READY   STATUS    RESTARTS   AGE   IP +NODE +RUN +OWNER$`,
		fmt.Sprintf(`^web    1/1     Running   0          \d+s +10\.99\.\d+\.\d+ +%s +[0-9a-f]{12} +pid %d$`, regexp.QuoteMeta(host), os.Getpid()))

	out, _, code = podrunAt(t, ep, "ps", "-o", "json")
	if code != 0 {
		t.Fatalf("ps -o json: exit %d", code)
	}
	var list struct {
		APIVersion, Kind string
		Items            []v1.Pod
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || list.APIVersion != "v1" || len(list.Items) != 2 {
		t.Fatalf("ps -o json is not a v1.List of 2 pods (%v):\n%s", err, out)
	}
	for _, p := range list.Items {
		if p.Kind != "Pod" || p.Status.Phase != v1.PodRunning || !strings.HasPrefix(p.Status.PodIP, "10.99.") ||
			len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil || p.Spec.NodeName != host {
			t.Errorf("pod %s/%s: kind %q, status %+v", p.Namespace, p.Name, p.Kind, p.Status)
		}
	}

	// One name, one pod: the v1.Pod itself, as kubectl get pod NAME.
	out, _, code = podrunAt(t, ep, "ps", "-o", "yaml", "job")
	var pod v1.Pod
	if err := yaml.Unmarshal([]byte(out), &pod); code != 0 || err != nil || pod.Kind != "Pod" || pod.Name != "job" || pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		t.Errorf("ps -o yaml job: exit %d, %v:\n%s", code, err, out)
	}
	out, _, _ = podrunAt(t, ep, "ps", "-o", "json", string(pod.UID))
	if !strings.Contains(out, `"kind": "Pod"`) || !strings.Contains(out, `"name": "job"`) {
		t.Errorf("ps -o json UID:\n%s", out)
	}

	// A name that names nothing: the others are printed, then 125.
	out, errOut, code = podrunAt(t, ep, "ps", "web", "nosuch", "other/web")
	if code != 125 || errOut != "podrun: no podrun pod \"nosuch\"\nno podrun pod \"other/web\"\n" {
		t.Errorf("ps with unknown names: exit %d, stderr %q; want 125 naming both", code, errOut)
	}
	expectPsLines(t, out, `^NAME   READY   STATUS    RESTARTS   AGE   IP$`, `^web    1/1 `)

	if _, errOut, code := podrunAt(t, ep, "down", "--all", "-q"); code != 0 {
		t.Fatalf("down --all: exit %d\n%s", code, errOut)
	}
	out, errOut, code = podrunAt(t, ep, "ps")
	if code != 0 || out != "" || errOut != "No resources found\n" {
		t.Errorf("ps of no pods: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, _ = podrunAt(t, ep, "ps", "-o", "json")
	if !strings.Contains(out, `"items": []`) {
		t.Errorf("ps -o json of no pods:\n%s", out)
	}
}

// expectPsLines fails unless out's lines match the regexps, one each.
func expectPsLines(t *testing.T, out string, res ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(res) {
		t.Errorf("%d lines, want %d:\n%s", len(lines), len(res), out)
		return
	}
	for i, re := range res {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i+1, lines[i], re)
		}
	}
}

// The runtime endpoint given on the command line wins over
// CONTAINER_RUNTIME_ENDPOINT, before the command or after it, and the
// variable serves when no flag is given.
func TestRuntimeEndpointFlagBeatsEnv(t *testing.T) {
	_, ep := startFake(t)
	if _, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "-d", "-q", "--wait=none", "-f", writeManifest(t, psPods)); code != 0 {
		t.Fatalf("podrun -d: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() { podrunAt(t, ep, "down", "--all") })

	t.Setenv("CONTAINER_RUNTIME_ENDPOINT", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	for _, args := range [][]string{
		{"--runtime-endpoint", ep, "ps"},
		{"-r", ep, "ps"},
		{"ps", "--runtime-endpoint", ep},
	} {
		out, errOut, code := podrunAt(t, "", args...)
		if code != 0 || !strings.Contains(out, "web") {
			t.Errorf("podrun %s with CONTAINER_RUNTIME_ENDPOINT set elsewhere: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}

	t.Setenv("CONTAINER_RUNTIME_ENDPOINT", ep)
	if out, errOut, code := podrunAt(t, "", "ps"); code != 0 || !strings.Contains(out, "web") {
		t.Errorf("podrun ps with CONTAINER_RUNTIME_ENDPOINT: exit %d\n%s%s", code, out, errOut)
	}
}
