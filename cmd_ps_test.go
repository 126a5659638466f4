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
	t.Cleanup(func() { podrunAt(t, ep, "--root-dir", root, "down", "--all") })

	out, errOut, code := podrunAt(t, ep, "--root-dir", root, "ps")
	if code != 0 || errOut != "" {
		t.Fatalf("ps: exit %d\n%s", code, errOut)
	}
	// Two namespaces: NAMESPACE first; sorted by namespace, then name.
	expectPsLines(t, out,
		`^NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE   IP$`,
		`^default     job    1/1     Running   0          \d+s +10\.99\.\d+\.\d+$`,
		`^shop        web    1/1     Running   0          \d+s +10\.99\.\d+\.\d+$`)

	// --no-headers: the rows alone, aligned among themselves.
	out, _, code = podrunAt(t, ep, "--root-dir", root, "ps", "--no-headers")
	if code != 0 {
		t.Fatalf("ps --no-headers: exit %d", code)
	}
	expectPsLines(t, out,
		`^default   job   1/1   Running   0     \d+s +10\.99\.\d+\.\d+$`,
		`^shop      web   1/1   Running   0     \d+s +10\.99\.\d+\.\d+$`)

	out, _, code = podrunAt(t, ep, "--root-dir", root, "ps", "-o", "wide", "shop/web")
	if code != 0 {
		t.Fatalf("ps -o wide: exit %d", code)
	}
	host, _ := os.Hostname()
	expectPsLines(t, out,
		`^NAME   READY   STATUS    RESTARTS   AGE   IP +NODE +RUN +OWNER$`,
		fmt.Sprintf(`^web    1/1     Running   0          \d+s +10\.99\.\d+\.\d+ +%s +[0-9a-f]{12} +pid %d$`, regexp.QuoteMeta(host), os.Getpid()))

	out, _, code = podrunAt(t, ep, "--root-dir", root, "ps", "-o", "json")
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
	out, _, code = podrunAt(t, ep, "--root-dir", root, "ps", "-o", "yaml", "job")
	var pod v1.Pod
	if err := yaml.Unmarshal([]byte(out), &pod); code != 0 || err != nil || pod.Kind != "Pod" || pod.Name != "job" || pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		t.Errorf("ps -o yaml job: exit %d, %v:\n%s", code, err, out)
	}
	out, _, _ = podrunAt(t, ep, "--root-dir", root, "ps", "-o", "json", string(pod.UID))
	if !strings.Contains(out, `"kind": "Pod"`) || !strings.Contains(out, `"name": "job"`) {
		t.Errorf("ps -o json UID:\n%s", out)
	}

	// A name that names nothing: the others are printed, then 125.
	out, errOut, code = podrunAt(t, ep, "--root-dir", root, "ps", "web", "nosuch", "other/web")
	if code != 125 || errOut != "podrun: no podrun pod \"nosuch\"\nno podrun pod \"other/web\"\n" {
		t.Errorf("ps with unknown names: exit %d, stderr %q; want 125 naming both", code, errOut)
	}
	expectPsLines(t, out, `^NAME   READY   STATUS    RESTARTS   AGE   IP$`, `^web    1/1 `)

	if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "down", "--all", "-q"); code != 0 {
		t.Fatalf("down --all: exit %d\n%s", code, errOut)
	}
	out, errOut, code = podrunAt(t, ep, "--root-dir", root, "ps")
	if code != 0 || out != "" || errOut != "No resources found in --root-dir "+root+"\n" {
		t.Errorf("ps of no pods: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, _ = podrunAt(t, ep, "--root-dir", root, "ps", "-o", "json")
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
	t.Cleanup(func() { podrunAt(t, ep, "down", "--all", "--all-roots") })

	t.Setenv("CONTAINER_RUNTIME_ENDPOINT", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	for _, args := range [][]string{
		{"--runtime-endpoint", ep, "ps", "--all-roots"},
		{"-r", ep, "ps", "--all-roots"},
		{"ps", "--all-roots", "--runtime-endpoint", ep},
	} {
		out, errOut, code := podrunAt(t, "", args...)
		if code != 0 || !strings.Contains(out, "web") {
			t.Errorf("podrun %s with CONTAINER_RUNTIME_ENDPOINT set elsewhere: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}

	t.Setenv("CONTAINER_RUNTIME_ENDPOINT", ep)
	if out, errOut, code := podrunAt(t, "", "ps", "--all-roots"); code != 0 || !strings.Contains(out, "web") {
		t.Errorf("podrun ps with CONTAINER_RUNTIME_ENDPOINT: exit %d\n%s%s", code, out, errOut)
	}
}

// The scope of ps and down: the pods of --root-dir, every podrun pod on
// the runtime with --all-roots. Two jobs with their own root dirs on one
// runtime: one's `down --all` leaves the other's pods, `down NAME` and
// `ps NAME` of the other's pod are refused naming its --root-dir, and
// `ps --all-roots -o wide` lists both with their ROOT.
func TestCLIPsDownScope(t *testing.T) {
	_, ep := startFake(t)
	job1, job2 := t.TempDir(), t.TempDir()
	for _, root := range []string{job1, job2} {
		m := strings.ReplaceAll(psPods, "name: web", "name: web-"+filepath.Base(root))
		m = strings.ReplaceAll(m, "name: job", "name: job-"+filepath.Base(root))
		if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "-d", "-q", "--wait=none", "-f", writeManifest(t, m)); code != 0 {
			t.Fatalf("podrun -d: exit %d\n%s", code, errOut)
		}
	}
	t.Cleanup(func() { podrunAt(t, ep, "down", "--all", "--all-roots") })
	web1, web2 := "web-"+filepath.Base(job1), "web-"+filepath.Base(job2)

	out, _, code := podrunAt(t, ep, "--root-dir", job1, "ps", "--no-headers")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, web1) || strings.Contains(out, web2) {
		t.Errorf("ps of job1's root dir: exit %d\n%s", code, out)
	}
	out, _, code = podrunAt(t, ep, "ps", "--all-roots", "-o", "wide")
	expectPsLines(t, out,
		`^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +RUN +OWNER +ROOT$`,
		`^default +job-.* `+regexp.QuoteMeta(job1)+`$|^default +job-.* `+regexp.QuoteMeta(job2)+`$`,
		`^default +job-.* `+regexp.QuoteMeta(job1)+`$|^default +job-.* `+regexp.QuoteMeta(job2)+`$`,
		`^shop +web-.* `+regexp.QuoteMeta(job1)+`$|^shop +web-.* `+regexp.QuoteMeta(job2)+`$`,
		`^shop +web-.* `+regexp.QuoteMeta(job1)+`$|^shop +web-.* `+regexp.QuoteMeta(job2)+`$`)
	if code != 0 {
		t.Errorf("ps --all-roots: exit %d", code)
	}
	_, errOut, code := podrunAt(t, ep, "--root-dir", job1, "ps", web2)
	if want := fmt.Sprintf("podrun: no podrun pod %q in --root-dir %s: shop/%s (uid ", web2, job1, web2); code != 125 || !strings.HasPrefix(errOut, want) ||
		!strings.HasSuffix(errOut, fmt.Sprintf(") is of --root-dir %s; give --root-dir %s, or --all-roots\n", job2, job2)) {
		t.Errorf("ps of another root dir's pod: exit %d, stderr %q", code, errOut)
	}

	// down NAME of the other job's pod: refused, nothing stopped.
	_, errOut, code = podrunAt(t, ep, "--root-dir", job1, "down", web2)
	if code != 125 || !strings.Contains(errOut, "give --root-dir "+job2+", or --all-roots") {
		t.Errorf("down of another root dir's pod: exit %d, stderr %q", code, errOut)
	}
	// down --all of job1: its pods, not job2's.
	_, errOut, code = podrunAt(t, ep, "--root-dir", job1, "down", "--all")
	if code != 0 || !strings.Contains(errOut, "podrun: 2 podrun pods of other root dirs left running (--all-roots takes them too)") {
		t.Errorf("down --all of job1: exit %d, stderr:\n%s", code, errOut)
	}
	out, errOut, _ = podrunAt(t, ep, "--root-dir", job1, "ps")
	if out != "" || errOut != "No resources found in --root-dir "+job1+" (2 podrun pods of other root dirs: --all-roots lists them)\n" {
		t.Errorf("ps of job1 after its down --all: stdout %q, stderr %q", out, errOut)
	}
	out, _, _ = podrunAt(t, ep, "--root-dir", job2, "ps", "--no-headers")
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, web2) {
		t.Errorf("job2's pods after job1's down --all:\n%s", out)
	}
	// down NAME --all-roots reaches it.
	if _, errOut, code := podrunAt(t, ep, "down", "--all-roots", "-q", web2); code != 0 {
		t.Errorf("down --all-roots %s: exit %d\n%s", web2, code, errOut)
	}
}
