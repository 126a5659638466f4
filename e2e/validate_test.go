//go:build e2e

package e2e

// podrun validate and run --dry-run end to end (cmd_validate.go,
// runner/dryrun.go): they need neither root nor a runtime, so every one of
// them here runs as nobody (setpriv) with CONTAINER_RUNTIME_ENDPOINT naming
// a socket nothing serves; they print what a run would send with every
// Secret value masked, create nothing, refuse what a run against the real
// testbed refuses with the same words, and read every corpus manifest.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// nobody is the user the dry runs run as.
const nobody = "65534"

// noRuntime is a CRI endpoint nothing serves.
const noRuntime = "unix:///nonexistent/podrun-e2e/no-runtime.sock"

// nobodyPodrun is a copy of the podrun under test that nobody may run (the
// harness may have built it in a dir only root can enter), removed after
// the test.
func nobodyPodrun(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(podrunBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(publicDir(t), "bin", "podrun")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// publicDir is a temp dir anyone may read and write: a dry run there could
// create anything, so that it creates nothing means something.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "podrun-e2e-validate-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dryRun runs the podrun at bin (nobodyPodrun) as nobody without a
// runtime: args exactly, stdin as given.
func dryRun(t *testing.T, bin, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command("setpriv", append([]string{"--reuid=" + nobody, "--regid=" + nobody, "--clear-groups", "--", bin}, args...)...)
	cmd.Env = commandEnv([]string{"CONTAINER_RUNTIME_ENDPOINT=" + noRuntime, "HOME=/nonexistent"})
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running podrun as nobody: %v", err)
	}
	return result{args: append([]string{"(as nobody)"}, args...), stdout: stdout.String(), stderr: stderr.String(), code: code, elapsed: time.Since(start)}
}

// expectNoSecret fails the test if the output holds a Secret's value or its
// base64.
func expectNoSecret(t *testing.T, r result, values ...string) {
	t.Helper()
	for _, v := range values {
		for _, leak := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(r.stdout, leak) || strings.Contains(r.stderr, leak) {
				t.Errorf("the output holds the Secret value %q (as %q)\n%s", v, leak, r)
			}
		}
	}
}

func TestE2EValidateAsNobodyWithoutARuntime(t *testing.T) {
	t.Parallel()
	// The dry runs really are nobody's.
	out, err := exec.Command("setpriv", "--reuid="+nobody, "--regid="+nobody, "--clear-groups", "--", "id", "-u").Output()
	if err != nil || strings.TrimSpace(string(out)) != nobody {
		t.Fatalf("setpriv id -u: %q, %v", out, err)
	}
	const secret = "e2e-validate-s3cret-7731"
	bin := nobodyPodrun(t)
	dir := publicDir(t)
	root := filepath.Join(dir, "root")
	m := testdata("validate/app.yaml")

	// The summary.
	r := dryRun(t, bin, "", "validate", "--root-dir", root, "-f", m)
	expectCode(t, r, 0)
	expectLines(t, r.stdout,
		"pod default/e2e-validate-app: admitted, QoS class Burstable",
		"  init       migrate  busybox:1.28",
		"  sidecar    shipper  busybox:1.28",
		"  container  app      busybox:1.28",
		"  volume     work     emptyDir",
		"  volume     creds    secret e2e-validate-db",
		"  volume     config   configMap e2e-validate-cfg",
	)
	for _, note := range []string{"podrun: note: runtime: not asked", "podrun: note: images: not pulled", "podrun: note: cgroup driver: assumed cgroupfs", "podrun: note: pod network:"} {
		if !strings.Contains(r.stderr, note) {
			t.Errorf("stderr lacks %q\n%s", note, r)
		}
	}
	expectNoSecret(t, r, secret)

	// The configs, as YAML (run --dry-run) and as JSON (--dry-run alone).
	for _, args := range [][]string{
		{"run", "--dry-run", "-o", "yaml", "--root-dir", root, "-f", m},
		{"--dry-run", "-o", "json", "--root-dir", root, "-f", m},
	} {
		r := dryRun(t, bin, "", args...)
		expectCode(t, r, 0)
		expectNoSecret(t, r, secret)
		var doc struct {
			Pods []struct {
				Pod, UID      string
				SandboxConfig struct {
					LogDirectory string
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
		if err := yaml.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Pods) != 1 || len(doc.Pods[0].Containers) != 3 {
			t.Fatalf("%v: the document: %v\n%s", args, err, r)
		}
		p := doc.Pods[0]
		if p.Pod != "default/e2e-validate-app" || p.SandboxConfig.LogDirectory != filepath.Join(root, "logs", "default_e2e-validate-app_"+p.UID) {
			t.Errorf("pod %s, log directory %s", p.Pod, p.SandboxConfig.LogDirectory)
		}
		app := p.Containers[2].Config
		env := map[string]string{}
		for _, e := range app.Envs {
			env[e.Key] = e.Value
		}
		if env["PASSWORD"] != "<masked>" || env["DB_password"] != "<masked>" || env["DSN"] != "postgres://app:<masked>@db/app" ||
			env["MODE"] != "fast" || strings.Join(app.Args, " ") != "--password=<masked>" {
			t.Errorf("env %v, args %v", env, app.Args)
		}
		podDir := filepath.Join(root, "pods", p.UID)
		mounts := map[string]string{}
		for _, mt := range app.Mounts {
			mounts[mt.ContainerPath] = mt.HostPath
		}
		for path, host := range map[string]string{
			"/work":    filepath.Join(podDir, "volume-subpaths", "work", "app", "0"),
			"/creds":   filepath.Join(podDir, "volumes", "kubernetes.io~secret", "creds"),
			"/etc/app": filepath.Join(podDir, "volumes", "kubernetes.io~configmap", "config"),
		} {
			if mounts[path] != host {
				t.Errorf("mount %s from %q, want %q", path, mounts[path], host)
			}
		}
	}

	// A root dir under a dir nobody may not enter (its filesystem is read
	// from the nearest parent nobody can reach), and the default one.
	r = dryRun(t, bin, "", "validate", "--root-dir", "/root/podrun-e2e-validate/root", "-f", m)
	expectCode(t, r, 0)
	r = dryRun(t, bin, "", "validate", "-f", m)
	expectCode(t, r, 0)

	// Nothing was made: not the root dir, nor anything beside it.
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the dry runs left %v in %s (%v)", entries, dir, err)
	}
	if _, err := os.Stat("/root/podrun-e2e-validate"); !os.IsNotExist(err) {
		t.Errorf("a dry run made /root/podrun-e2e-validate: %v", err)
	}
}

// A dry run on the testbed asks its runtime for the cgroup driver (issue
// 14): the pod cgroup of its sandbox config is the one a run of the same
// manifest hands the runtime (ps's io.podrun.cgroup-parent), and its note
// names the driver and where it came from as ps does. Before, a dry run
// never asked, and on a runtime with systemd cgroups showed a cgroupfs
// parent no run would send.
func TestE2EValidateCgroupDriverOfTheRuntime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const name = "e2e-validate-cgroup"
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: `+name+`}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: registry.k8s.io/pause:3.10}
`)
	dry := e.runPodrunRaw([]string{"validate", "--root-dir", e.root, "-o", "json", "-f", m}, "")
	expectCode(t, dry, 0)
	var doc struct {
		Pods []struct {
			SandboxConfig struct{ Linux struct{ CgroupParent string } }
		}
	}
	if err := yaml.Unmarshal([]byte(dry.stdout), &doc); err != nil || len(doc.Pods) != 1 {
		t.Fatalf("the document: %v\n%s", err, dry)
	}
	if !strings.Contains(dry.stderr, "podrun: note: runtime: asked only for its cgroup driver, at ") {
		t.Errorf("the dry run did not ask the runtime:\n%s", dry)
	}

	e.downOnCleanup(name)
	expectCode(t, e.runPodrun([]string{"-d", "--wait=ready", "-f", m}, ""), 0)
	p := findPS(e.ps(t), name)
	if p == nil {
		t.Fatalf("ps lists no %s", name)
	}
	a := p.Pod.Annotations
	if got, want := doc.Pods[0].SandboxConfig.Linux.CgroupParent, a["io.podrun.cgroup-parent"]; got != want || want == "" {
		t.Errorf("the dry run's cgroup parent %q, the run's %q", got, want)
	}
	note := "podrun: note: cgroup driver: " + a["io.podrun.cgroup-driver"] + " (" + a["io.podrun.cgroup-driver-source"] + ")\n"
	if !strings.Contains(dry.stderr, note) {
		t.Errorf("the dry run's notes lack %q, the run's driver\n%s", note, dry)
	}
	t.Logf("%s", note)
}

// A run against the real runtime and a dry run as nobody without one print
// the same errors for what the node, the volumes or a container's config
// refuse, and exit 125 alike.
func TestE2EValidateSameErrorsAsARun(t *testing.T) {
	t.Parallel()
	bin := nobodyPodrun(t)
	for _, tc := range []struct {
		file, want string
	}{
		{"cpu.yaml", "(reason OutOfcpu)"},
		{"node-selector.yaml", "(reason NodeAffinity)"},
		{"pvc.yaml", `volume "data": persistentVolumeClaim volumes are not supported`},
		{"env-key.yaml", "CreateContainerConfigError: couldn't find key absent in ConfigMap default/e2e-validate-envcfg"},
		{"run-as-root.yaml", "CreateContainerConfigError: container's runAsUser breaks non-root policy"},
		{"image-name.yaml", "InvalidImageName: Failed to apply default image tag"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := testdata("validate/" + tc.file)
			run := e.runPodrun([]string{"-q", "--timeout", "60s", "-f", m}, "")
			expectCode(t, run, 125)
			dry := dryRun(t, bin, "", "validate", "-q", "--root-dir", e.root, "-f", m)
			expectCode(t, dry, 125)
			if !strings.Contains(run.stderr, tc.want) {
				t.Errorf("the run's error lacks %q\n%s", tc.want, run)
			}
			t.Logf("run: %s", run.stderr)
			if dry.stderr != run.stderr || dry.stdout != "" {
				t.Errorf("the dry run's output differs from the run's:\nrun:\n%s\ndry run:\n%s", run, dry)
			}
		})
	}
}

// Every corpus manifest, read in place with its companions and flags from
// the conformance rows, validates as nobody without a runtime: exit 0 with
// a summary, or 125 with an error and nothing on stdout; nothing is made;
// no value of a Secret of the run reaches the -o yaml configs. Some rows
// are checked for their verdict.
func TestE2EValidateCorpus(t *testing.T) {
	t.Parallel()
	root := corpusRoot(t)
	bin := nobodyPodrun(t)
	dir := publicDir(t)
	verdicts := map[string]struct {
		code int
		want string // in stdout (0) or stderr (125)
	}{
		"pods/inject/secret-envars-pod.yaml":                {0, "pod default/secret-envars-test-pod: admitted, QoS class BestEffort"},
		"pods/qos/qos-pod.yaml":                             {0, "QoS class Guaranteed"},
		"pods/storage/projected.yaml":                       {0, "projected (secret user, secret pass)"},
		"pods/assigning-pods-to-nodes-affinity.yaml":        {125, "(reason NodeAffinity)"},
		"pods/resource/cpu-request-limit-2.yaml":            {125, "(reason OutOfcpu)"},
		"pods/pod-with-scheduling-gates.yaml":               {125, "(reason SchedulingGated)"},
		"pods/inject/pod-multiple-secret-env-variable.yaml": {125, "pod-multiple-secret-env-variable.yaml: document 1"},
		"pods/pod-projected-svc-token.yaml":                 {125, "serviceAccountToken"},
	}
	seen := map[string]bool{}
	rows := conformanceRows()
	var mu sync.Mutex
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, row := range rows {
		args := []string{"validate", "-o", "yaml", "--root-dir", filepath.Join(dir, "root"), "-f", filepath.Join(root, row.path)}
		files := []string{filepath.Join(root, row.path)}
		for _, c := range row.companions {
			args = append(args, "-f", filepath.Join(root, c))
			files = append(files, filepath.Join(root, c))
		}
		if row.own != "" {
			args = append(args, "-f", testdata(row.own))
			files = append(files, testdata(row.own))
		}
		args = append(args, validateFlags(row.flags)...)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := dryRun(t, bin, "", args...)
			summary := dryRun(t, bin, "", append(args, "-o", "text")...)
			mu.Lock()
			defer mu.Unlock()
			switch r.code {
			case 0:
				if r.stdout == "" || !strings.Contains(summary.stdout, ": admitted, QoS class ") {
					t.Errorf("%s: exit 0 without a document or a summary\n%s\n%s", row.path, r, summary)
				}
			case 125:
				if r.stdout != "" || !strings.HasPrefix(r.stderr, "podrun: ") {
					t.Errorf("%s: exit 125 without an error, or with output\n%s", row.path, r)
				}
			default:
				t.Errorf("%s: exit %d, want 0 or 125\n%s", row.path, r.code, r)
			}
			if summary.code != r.code {
				t.Errorf("%s: -o text exits %d, -o yaml %d", row.path, summary.code, r.code)
			}
			expectNoSecret(t, r, secretValues(t, files...)...)
			if v, ok := verdicts[row.path]; ok {
				seen[row.path] = true
				out := summary.stdout
				if v.code != 0 {
					out = summary.stderr
				}
				if summary.code != v.code || !strings.Contains(out, v.want) {
					t.Errorf("%s: exit %d, want %d with %q\n%s", row.path, summary.code, v.code, v.want, summary)
				}
			}
		}()
	}
	wg.Wait()
	for path := range verdicts {
		if !seen[path] {
			t.Errorf("no conformance row %s", path)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the dry runs left %v (%v)", entries, err)
	}
}

// validateFlags are a conformance row's flags that a dry run takes: the
// node's (labels, sysctls, reserved) and the pods' own; -o, -q and the
// wait are a run's matter and are left out.
func validateFlags(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		name, _, hasValue := strings.Cut(f, "=")
		switch name {
		case "-o", "--output", "--timeout", "--wait":
			if !hasValue {
				i++
			}
			continue
		case "-q", "-d", "--detach":
			continue
		}
		out = append(out, f)
	}
	return out
}

// secretValues are the values of every Secret in the files (data decoded,
// stringData as is).
func secretValues(t *testing.T, files ...string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var s v1.Secret
			if yaml.Unmarshal([]byte(doc), &s) != nil || s.Kind != "Secret" {
				continue
			}
			for _, v := range s.Data {
				out = append(out, string(v))
			}
			for _, v := range s.StringData {
				out = append(out, v)
			}
		}
	}
	return out
}
