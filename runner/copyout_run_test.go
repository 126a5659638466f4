package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri/fake"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/artifacts"
)

// volumeWrites scripts the fake containers: at its creation each container
// writes files (by container path, "->" making a symlink) on its volumes'
// host side, as it would while it runs; mounts records each container's
// mounts by container path.
type volumeWrites struct {
	mu     sync.Mutex
	files  map[string]map[string]string // container → container path → content
	mounts map[string]map[string]string // container → container path → host path
	onStop map[string]func()
}

func writeOnVolumes(t *testing.T, srv *fake.Server, files map[string]map[string]string) *volumeWrites {
	w := &volumeWrites{files: files, mounts: map[string]map[string]string{}, onStop: map[string]func(){}}
	srv.SetBehavior(func(cfg *runtimeapi.ContainerConfig) fake.Behavior {
		name := cfg.GetMetadata().GetName()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.mounts[name] = map[string]string{}
		for _, m := range cfg.GetMounts() {
			w.mounts[name][m.ContainerPath] = m.HostPath
		}
		for p, content := range w.files[name] {
			host := w.hostPath(name, p)
			if host == "" {
				t.Errorf("container %s writes %s, on none of its volumes", name, p)
				continue
			}
			os.MkdirAll(filepath.Dir(host), 0o755)
			if target, ok := strings.CutPrefix(content, "->"); ok {
				os.Symlink(target, host)
			} else if err := os.WriteFile(host, []byte(content), 0o644); err != nil {
				t.Error(err)
			}
		}
		b := fake.CommandBehavior(cfg, second)
		if f := w.onStop[name]; f != nil {
			b.OnStop = func(int64) { f() }
		}
		return b
	})
	return w
}

// hostPath is where the container's path p lies on the host (the mount
// with the longest path).
func (w *volumeWrites) hostPath(container, p string) string {
	best := ""
	for cp := range w.mounts[container] {
		if (p == cp || strings.HasPrefix(p, cp+"/")) && len(cp) > len(best) {
			best = cp
		}
	}
	if best == "" {
		return ""
	}
	return filepath.Join(w.mounts[container][best], strings.TrimPrefix(p, best))
}

func copyOutSpec(t *testing.T, s string) artifacts.Spec {
	t.Helper()
	sp, err := artifacts.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func emptyDir(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
}

// TestRunCopiesOutWhatAnExitedContainerWrote: the report a job's container
// wrote to its emptyDir is in the host dir after the run, and the symlink
// it wrote to /etc/shadow is not followed; nothing of the pod is left.
func TestRunCopiesOutWhatAnExitedContainerWrote(t *testing.T) {
	e := newEnv(t)
	host := filepath.Join(t.TempDir(), "artifacts")
	writeOnVolumes(t, e.srv, map[string]map[string]string{"tests": {
		"/out/report.xml": "<testsuites/>", "/out/logs/a.log": "a", "/out/shadow": "->/etc/shadow", "/out/up": "->../../../../../../etc",
	}})
	c := sh("tests", "exit 0")
	c.VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
	pod := newPod("job", v1.RestartPolicyNever, c)
	pod.Spec.Volumes = []v1.Volume{emptyDir("out")}
	e.opts.CopyOuts = []artifacts.Spec{copyOutSpec(t, "tests:/out="+host)}
	res := e.run(t, context.Background(), pod)
	r := res.Pods[0]
	if !r.Reached() || res.ExitCode(0) != 0 {
		t.Fatalf("outcome %s, err %v", r.Outcome, r.Err)
	}
	if b, err := os.ReadFile(filepath.Join(host, "report.xml")); err != nil || string(b) != "<testsuites/>" {
		t.Errorf("report.xml: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(host, "logs", "a.log")); err != nil || string(b) != "a" {
		t.Errorf("logs/a.log: %q, %v", b, err)
	}
	for _, link := range []string{"shadow", "up"} {
		if _, err := os.Lstat(filepath.Join(host, link)); !os.IsNotExist(err) {
			t.Errorf("%s was copied: %v", link, err)
		}
	}
	if len(r.CopyOuts) != 1 || r.CopyOuts[0].Err != nil || r.CopyOuts[0].Files != 2 || len(r.CopyOuts[0].Skipped) != 2 {
		t.Errorf("copy-outs %+v", r.CopyOuts)
	}
	want := "pod/job: CopiedOut: /out of container tests into " + host + ": 2 files, 14 bytes"
	if p := e.progress.String(); !strings.Contains(p, want+"; skipped 2: shadow (a symlink to /etc/shadow, not followed), up (a symlink to ../../../../../../etc, not followed)\n") {
		t.Errorf("progress:\n%s\nwant %s", p, want)
	}
	e.assertTornDown(t)
}

// A container that ended for good is copied when it ends, not at
// teardown: what a sidecar writes afterwards is not in its copy. The
// sidecar's own copy is made at teardown, once it is stopped.
func TestRunCopiesOutWhenTheContainerEnds(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	w := writeOnVolumes(t, e.srv, map[string]map[string]string{
		"tests": {"/out/report.xml": "from tests"},
		"proxy": {"/side/access.log": "GET /"},
	})
	var stoppedSeen string
	w.onStop["proxy"] = func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		b, _ := os.ReadFile(filepath.Join(dir, "tests", "report.xml"))
		stoppedSeen = string(b)
		os.WriteFile(w.hostPath("proxy", "/out/report.xml"), []byte("rewritten by the sidecar"), 0o644)
	}
	always := v1.ContainerRestartPolicyAlways
	side := ctr("proxy", "sleep", "infinity")
	side.RestartPolicy = &always
	side.VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}, {Name: "side", MountPath: "/side"}}
	c := sh("tests", "sleep 3; exit 0")
	c.VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
	pod := newPod("job", v1.RestartPolicyNever, c)
	pod.Spec.InitContainers = []v1.Container{side}
	pod.Spec.Volumes = []v1.Volume{emptyDir("out"), emptyDir("side")}
	e.opts.CopyOuts = []artifacts.Spec{
		copyOutSpec(t, "tests:/out/report.xml="+filepath.Join(dir, "tests")),
		copyOutSpec(t, "proxy:/side="+filepath.Join(dir, "proxy")),
	}
	res := e.run(t, context.Background(), pod)
	if r := res.Pods[0]; !r.Reached() || len(r.CopyOuts) != 2 || r.CopyOuts[0].Err != nil || r.CopyOuts[1].Err != nil {
		t.Fatalf("outcome %s, err %v, copy-outs %+v", r.Outcome, r.Err, r.CopyOuts)
	}
	if stoppedSeen != "from tests" {
		t.Errorf("when the sidecar was stopped the host dir held %q: tests was not copied when it ended", stoppedSeen)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tests", "report.xml")); string(b) != "from tests" {
		t.Errorf("tests' report: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "proxy", "access.log")); string(b) != "GET /" {
		t.Errorf("the sidecar's log: %q", b)
	}
	p := e.progress.String()
	if i, j := strings.Index(p, "CopiedOut: /out/report.xml"), strings.Index(p, "CopiedOut: /side"); i < 0 || j < i {
		t.Errorf("progress:\n%s", p)
	}
	e.assertTornDown(t)
}

// A copy that fails is an event; with CopyOutRequired it fails the run
// (exit 125), after the pod ran and was torn down as usual.
func TestRunCopyOutFailure(t *testing.T) {
	for _, required := range []bool{false, true} {
		e := newEnv(t)
		writeOnVolumes(t, e.srv, map[string]map[string]string{"tests": {"/out/other": "x"}})
		host := filepath.Join(t.TempDir(), "artifacts")
		c := sh("tests", "exit 0")
		c.VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
		pod := newPod("job", v1.RestartPolicyNever, c)
		pod.Spec.Volumes = []v1.Volume{emptyDir("out")}
		e.opts.CopyOuts = []artifacts.Spec{copyOutSpec(t, "tests:/out/report.xml="+host)}
		e.opts.CopyOutRequired = required
		res := e.run(t, context.Background(), pod)
		r := res.Pods[0]
		wantErr := "copying /out/report.xml of container tests into " + host + ": no such file or directory on the volume"
		if len(r.CopyOuts) != 1 || r.CopyOuts[0].Err == nil || r.CopyOuts[0].Err.Error() != wantErr {
			t.Fatalf("copy-outs %+v, want %s", r.CopyOuts, wantErr)
		}
		if _, err := os.Lstat(host); !os.IsNotExist(err) {
			t.Errorf("a failed copy made the host dir: %v", err)
		}
		if !strings.Contains(e.progress.String(), "pod/job: CopyOutFailed: "+wantErr+"\n") {
			t.Errorf("progress:\n%s", e.progress.String())
		}
		switch code := res.ExitCode(0); {
		case !required && (code != 0 || !r.Reached()):
			t.Errorf("not required: exit %d, outcome %s, want 0", code, r.Outcome)
		case required && code != runner.ExitPodrunError:
			t.Errorf("required: exit %d, want 125", code)
		case required && !strings.Contains(res.Err().Error(), "pod default/job: --copy-out tests:/out/report.xml="+host+": "+wantErr):
			t.Errorf("required: error %v", res.Err())
		}
		e.assertTornDown(t)
	}
}

// A spec that names no container of the run, or a path on no volume, is
// refused before anything is created.
func TestRunRefusesCopyOutsBeforehand(t *testing.T) {
	e := newEnv(t)
	c := sh("tests", "exit 0")
	c.VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
	pod := newPod("job", v1.RestartPolicyNever, c)
	pod.Spec.Volumes = []v1.Volume{emptyDir("out")}
	e.opts.CopyOuts = []artifacts.Spec{copyOutSpec(t, "test:/out=a"), copyOutSpec(t, "tests:/results=a")}
	_, err := runner.Run(context.Background(), e.rt, e.facts, []*v1.Pod{pod}, e.opts)
	want := `--copy-out test:/out=a: pod default/job has no container "test" (its containers: tests)` + "\n" +
		`--copy-out tests:/results=a: /results is not on a volume of container "tests" of pod default/job: podrun cannot read an exited container's own filesystem (CRI offers no way in), only its volumes; mount an emptyDir at /results (or a parent directory)`
	if err == nil || err.Error() != want {
		t.Fatalf("Run: %v\nwant %s", err, want)
	}
	if calls := e.srv.Calls(); strings.Contains(strings.Join(calls, " "), "RunPodSandbox") {
		t.Errorf("the runtime was asked %v", calls)
	}
}
