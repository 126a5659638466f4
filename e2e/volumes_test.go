//go:build e2e

package e2e

// Pod volumes end to end (volumes/, runner/volumes.go): configMap, secret,
// downwardAPI and projected volumes as the container sees them, emptyDir on
// disk and in memory, hostPath, subPath, readOnly and fsGroup, the
// refusals, and the corpus rows that need volumes.

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestE2EVolumeConfigMapSecretDownwardAPIProjected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("volumes/atomic.yaml")}, "")
	expectCode(t, r, 0)
	expectLines(t, r.stdout,
		"cfg ..data ok", "sec ..data ok", "info ..data ok", "all ..data ok",
		"cfg ls=conf type ",
		"cfg conf -> ..data/conf",
		"cfg level=very mode=400",
		"cfg type=charm mode=644",
		"sec username=admin mode=440",
		"sec links=2",
		`info labels=app="web" tier="front"`,
		"info mem_limit=64",
		"all user=admin mode=600",
		"all game mode=444 name=e2e-vol-atomic",
		"sec tmpfs ro", "info tmpfs ro", "all tmpfs ro",
		"cfg disk ro",
		"cfg read-only",
	)
}

func TestE2EVolumeEmptyDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("volumes/emptydir.yaml")}, "")
	expectCode(t, r, 0)
	// A memory emptyDir is a tmpfs of sizeLimit, its root tmpfs's own 1777
	// as on a kubelet; on disk 0777; mode as given.
	expectLines(t, r.stdout, "mem tmpfs size=16384k mode=1777", "plain disk mode=777", "private mode=750", "mem writable")
}

// An image volume (ImageVolume, GA in v1.36): the runtime mounts the
// image read-only, whole and by a subPath; podrun pulls it first (IfNotPresent,
// with the pod's pull secrets), as the kubelet does. containerd 1.6 has no
// image volumes: it drops the mount's image, and podrun's error says so
// (exit 125, nothing left).
func TestE2EVolumeImage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("volumes/image-volume.yaml")}, "")
	if onContainerd1() {
		expectCode(t, r, 125)
		if !strings.Contains(r.stderr, `container "c" mounts the image volume "art": the runtime must support image volumes`) {
			t.Errorf("no hint that the runtime lacks image volumes\n%s", r)
		}
		return
	}
	expectCode(t, r, 0)
	expectLines(t, r.stdout, "volume 1 2", "sub file 2", "read-only")
	if !strings.Contains(r.stderr, `pod/e2e-vol-image: Pulled: Container image "quay.io/crio/artifact:v2" already present on machine`) &&
		!strings.Contains(r.stderr, `pod/e2e-vol-image: Pulled: Successfully pulled image "quay.io/crio/artifact:v2"`) {
		t.Errorf("no Pulled event of the image volume's image\n%s", r)
	}
	if i, j := strings.Index(r.stderr, `image "quay.io/crio/artifact:v2"`), strings.Index(r.stderr, `image "busybox:1.28"`); i < 0 || j < i {
		t.Errorf("the container's image came before the image volume's\n%s", r)
	}
}

// An image volume whose image is not in the registry: the pull fails for
// good, at the turn of the container that mounts it, with the kubelet's
// ErrImagePull words, and the run ends (125) with nothing left.
func TestE2EVolumeImageNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	manifest := strings.ReplaceAll(strings.ReplaceAll(readTestdata(t, "volumes/image-volume.yaml"),
		"quay.io/crio/artifact:v2", "quay.io/crio/missing:v9"), "name: e2e-vol-image", "name: e2e-vol-image-missing")
	r := e.runPodrun([]string{"-f", "-"}, manifest)
	expectCode(t, r, 125)
	for _, want := range []string{
		`pod/e2e-vol-image-missing: Pulling: Pulling image "quay.io/crio/missing:v9"`,
		`ErrImagePull: Failed to pull image "quay.io/crio/missing:v9"`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("output lacks %q\n%s", want, r)
		}
	}
	if strings.Contains(r.stderr, "Created container") {
		t.Errorf("a container was created without its image volume\n%s", r)
	}
}

func TestE2EVolumeHostPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	host := t.TempDir()
	dir, file := filepath.Join(host, "new", "dir"), filepath.Join(host, "app.log")
	m := fromTemplate(t, "volumes/hostpath.yaml", "DIR", dir, "FILE", file)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	expectLines(t, r.stdout, "ro refused")
	if b, err := os.ReadFile(filepath.Join(dir, "greeting")); err != nil || string(b) != "hello\n" {
		t.Errorf("host %s/greeting: %q, %v", dir, b, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("DirectoryOrCreate made %v, %v; want 0755", fi, err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "line\n" {
		t.Errorf("host %s: %q, %v", file, b, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("FileOrCreate made %v, %v; want 0644", fi, err)
	}
}

func TestE2EVolumeSubPathFSGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("volumes/subpath-fsgroup.yaml")}, "")
	expectCode(t, r, 0)
	r.stdout = strings.ReplaceAll(r.stdout, "[pod/e2e-vol-subpath/c] ", "")
	// fsGroup: the emptyDir gets the group, setgid and g+rw (02777); a
	// missing subPath is made with the volume root's mode; the secret's
	// 0400 gains group read.
	expectLines(t, r.stdout, "srv page", "all 2777 2000", "logs 2777 2000", "x 2000", "sec 440 2000", "token abc")
}

func TestE2EVolumeSubPathSymlinkEscapeRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-f", testdata("volumes/subpath-escape.yaml")}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, `CreateContainerConfigError: subPath "escape" of volume "data" leads outside the volume`) {
		t.Errorf("stderr lacks the refusal\n%s", r)
	}
}

// TestE2EVolumeRefused: volumes podrun cannot set up stop the run before
// anything is created, with exit 125 and a message naming the volume.
func TestE2EVolumeRefused(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name, file, corpus string
		vars               []string // of the template file
		want               []string
	}{
		{name: "persistentVolumeClaim", file: "volumes/refused-pvc.yaml",
			want: []string{`volume "v": persistentVolumeClaim volumes are not supported: a PersistentVolumeClaim is bound to a volume by the API server`}},
		{name: "hostPath Directory missing", file: "volumes/refused-hostpath.yaml", vars: []string{"MISSING", missing},
			want: []string{`volume "v": hostPath type check failed: ` + missing + ` is not a directory`}},
		{name: "missing ConfigMap", file: "volumes/refused-configmap.yaml",
			want: []string{`volume "v": configmap "nowhere" not found in namespace "default"`}},
		{name: "missing Secret key", file: "volumes/refused-secret-key.yaml",
			want: []string{`volume "v": references non-existent secret key: nope`}},
		{name: "csi", file: "volumes/refused-csi.yaml", want: []string{`volume "v": csi volumes are not supported`}},
		{name: "corpus pods/storage/pv-pod.yaml", corpus: "pods/storage/pv-pod.yaml",
			want: []string{`pod default/task-pv-pod: volume "task-pv-storage": persistentVolumeClaim volumes are not supported`}},
		{name: "corpus pods/pod-projected-svc-token.yaml", corpus: "pods/pod-projected-svc-token.yaml",
			want: []string{`volume "vault-token": sources[0]: serviceAccountToken projections are not supported`}},
		{name: "corpus configmap/configure-pod.yaml without its ConfigMap", corpus: "configmap/configure-pod.yaml",
			want: []string{`volume "config": configmap "game-demo" not found in namespace "default"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var path string
			switch {
			case tc.corpus != "":
				path = corpusPod(t, tc.corpus)
			case tc.vars != nil:
				path = fromTemplate(t, tc.file, tc.vars...)
			default:
				path = testdata(tc.file)
			}
			r := e.runPodrun([]string{"-f", path}, "")
			expectCode(t, r, 125)
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q\n%s", w, r)
				}
			}
			if strings.Contains(r.stdout, "started") {
				t.Errorf("a container ran\n%s", r)
			}
			// Nothing of the pods: no data dir, no sandbox (the root dir may
			// hold podrun's own state, like the CNI validation cache).
			if dirs := podDirs(t, e.root); len(dirs) > 0 {
				t.Errorf("pod data dirs %v after a refused run", dirs)
			}
			for _, name := range []string{"e2e-vol-refused", "task-pv-pod", "nginx", "configmap-demo-pod"} {
				if n := sandboxesIn(t, e, name); n != 0 {
					t.Errorf("pod %s has %d sandboxes, want none", name, n)
				}
			}
			// Checked here, after the run: the parallel subtests run once
			// the parent test's function has returned.
			if tc.vars != nil {
				if _, err := os.Stat(missing); !os.IsNotExist(err) {
					t.Errorf("the refused hostPath was created")
				}
			}
		})
	}
}

// TestE2EVolumeReclaimUnmounts: a podrun killed with SIGKILL leaves its
// pod's tmpfs volumes mounted; the next run reclaims the pod dir,
// unmounting them first.
func TestE2EVolumeReclaimUnmounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", testdata("volumes/orphan.yaml")}, "")
	p.waitStderr("Started container c", 60*time.Second)
	if n := len(mountsIn(t, e.root)); n != 3 {
		t.Errorf("%d mounts under the root dir while running, want 3 (two tmpfs, one subpath)", n)
	}
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	r := e.runPodrun([]string{"-q", "-f", testdata("volumes/next.yaml")}, "")
	expectCode(t, r, 0)
	if ms := mountsIn(t, e.root); len(ms) > 0 {
		t.Errorf("still mounted after the reclaiming run: %v", ms)
	}
}

// mountsIn lists the mount points under dir.
func mountsIn(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

// ------------------------------------------------------------ the corpus --

func TestE2EVolumeCorpusConfigMapVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", corpusPod(t, "pods/pod-configmap-volume.yaml"), "-f", corpusPod(t, "configmap/configmap-multikeys.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "SPECIAL_LEVEL\nSPECIAL_TYPE\n" {
		t.Errorf("stdout %q, want the two keys\n%s", r.stdout, r)
	}
}

func TestE2EVolumeCorpusProjectedSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The docs create the Secrets from files username.txt and password.txt.
	secrets := testdata("corpus/projected-secrets.yaml")
	p := e.startPodrun([]string{"-f", corpusPod(t, "pods/storage/projected.yaml"), "-f", secrets}, "")
	p.waitStderr("Started container test-projected-volume", 60*time.Second)
	out := execIn(t, p, "test-projected-volume", "test-projected-volume", "sh", "-c",
		`ls /projected-volume; cat /projected-volume/username.txt; echo; cat /projected-volume/password.txt; echo; awk '$2=="/projected-volume" {print $3, substr($4,1,2)}' /proc/mounts`)
	stopNow(t, p)
	if want := "password.txt\nusername.txt\nadmin\n1f2d1e2e67df\ntmpfs ro\n"; out != want {
		t.Errorf("in the container:\n%s\nwant:\n%s", out, want)
	}
}

func TestE2EVolumeCorpusProjectedSecretDownwardAPIConfigMap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	objs := testdata("corpus/projected-objects.yaml")
	p := e.startPodrun([]string{"-f", corpusPod(t, "pods/storage/projected-secret-downwardapi-configmap.yaml"), "-f", objs}, "")
	p.waitStderr("Started container container-test", 60*time.Second)
	out := execIn(t, p, "volume-test", "container-test", "sh", "-c",
		`cd /projected-volume; ls; cat my-group/my-username; echo; cat my-group/my-config; echo; echo "labels=[$(cat labels)]"; cat cpu_limit; echo`)
	stopNow(t, p)
	// No labels: an empty file. No cpu limit: the node's allocatable cpus.
	want := "cpu_limit\nlabels\nmy-group\nmy-app\nmy-config-value\nlabels=[]\n" + strconv.Itoa(nodeCPUs(t)) + "\n"
	if out != want {
		t.Errorf("in the container:\n%s\nwant:\n%s", out, want)
	}
}

func TestE2EVolumeCorpusEmptyDirMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", corpusPod(t, "pods/emptydir-volume-mode.yaml")}, "")
	p.waitStderr("Started container test-container", 60*time.Second)
	out := execIn(t, p, "emptydir-mode-demo", "test-container", "sh", "-c", "stat -c '%a %A' /tmp")
	stopNow(t, p)
	if out != "1777 drwxrwxrwt\n" {
		t.Errorf("/tmp is %q, want 1777 drwxrwxrwt", out)
	}
}

func TestE2EVolumeCorpusDownwardAPIVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", corpusPod(t, "pods/inject/dapi-volume.yaml")}, "")
	want := "cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\"\n\nbuild=\"two\"\nbuilder=\"john-doe\""
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.stdout.String(), want) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stopNow(t, p)
	if !strings.Contains(p.stdout.String(), want) {
		t.Errorf("stdout lacks the labels and annotations:\n%q\nwant it to contain %q", p.stdout.String(), want)
	}
}

func TestE2EVolumeCorpusStreamingSidecars(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", corpusPod(t, "admin/logging/two-files-counter-pod-streaming-sidecar.yaml")}, "")
	// The count container writes both files into the shared emptyDir; the
	// two sidecars stream them.
	has := func() bool {
		out := p.stdout.String()
		return strings.Contains(out, "[pod/counter/count-log-1] 0: ") && strings.Contains(out, "[pod/counter/count-log-1] 1: ") &&
			strings.Contains(out, " INFO 0\n") && strings.Contains(out, " INFO 1\n")
	}
	deadline := time.Now().Add(60 * time.Second)
	for !has() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stopNow(t, p)
	if !has() {
		t.Errorf("stdout lacks the streamed files:\n%s", p.stdout.String())
	}
	for _, l := range lines(p.stdout.String()) {
		if strings.Contains(l, " INFO ") && !strings.HasPrefix(l, "[pod/counter/count-log-2] ") {
			t.Errorf("an INFO line from another container than count-log-2: %q", l)
		}
	}
}

// TestE2ESubPathFromASecretIsNeverShown: a subPathExpr that expands a
// Secret's value to a path a run refuses, before the pod exists (an
// absolute path) or at the container's creation (with the pod's IP, known
// only then), is refused with the expansion shown as <masked>; the value,
// a unique marker, appears in no output: podrun's stdout (-o json) and
// stderr (errors, progress), the JUnit report, podrun ps -o json and
// podrun logs after the run, and podrun validate's text and -o json,
// which refuses the first pod as the run does.
func TestE2ESubPathFromASecretIsNeverShown(t *testing.T) {
	t.Parallel()
	const doc = `apiVersion: v1
kind: Secret
metadata: {name: NAME}
stringData: {pw: VALUE}
---
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  restartPolicy: Never
  volumes: [{name: v, emptyDir: {}}]
  containers:
  - name: c
    image: busybox:1.28
    command: [echo, ran-secret-subpath]
    env:
    - {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: PW, valueFrom: {secretKeyRef: {name: NAME, key: pw}}}
    volumeMounts: [{name: v, mountPath: /x, subPathExpr: "EXPR"}]
`
	for _, tc := range []struct {
		name, value, expr string
		want              string // in the run's error
		validateRefuses   bool
	}{
		{"absolute: before the pod exists", "/MARK", "$(PW)",
			"spec.containers[0].volumeMounts[0].subPathExpr: \"$(PW)\" expands to \"<masked>\": error SubPath `<masked>` must not be an absolute path", true},
		{"with the pod IP: at the container creation", "../MARK", "$(IP)/$(PW)",
			"CreateContainerConfigError: volumeMount \"v\" of container \"c\": subPathExpr \"$(IP)/$(PW)\" expands to \"<masked>\": unable to provision SubPath `<masked>`: must not contain '..'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			suffix := randomSuffix(t)
			mark := "podrun-secret-mark-" + suffix
			name := "secret-subpath-" + suffix
			m := manifest(t, "pod.yaml", strings.NewReplacer("NAME", name, "VALUE", strings.ReplaceAll(tc.value, "MARK", mark), "EXPR", tc.expr).Replace(doc))
			junit := filepath.Join(t.TempDir(), "junit.xml")

			r := e.runPodrun([]string{"--junit", junit, "-o", "json", "-f", m}, "")
			expectCode(t, r, 125)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %s\n%s", tc.want, r)
			}
			report, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			channels := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "junit": string(report)}
			ps := e.runPodrun([]string{"ps", "-o", "json"}, "")
			logs := e.runPodrun([]string{"logs", name}, "")
			channels["ps"], channels["logs"] = ps.stdout+ps.stderr, logs.stdout+logs.stderr

			v := e.runPodrun([]string{"validate", "-f", m}, "")
			vj := e.runPodrun([]string{"validate", "-o", "json", "-f", m}, "")
			channels["validate"], channels["validate -o json"] = v.stdout+v.stderr, vj.stdout+vj.stderr
			b64 := base64.StdEncoding.EncodeToString([]byte(mark))
			for ch, out := range channels {
				if strings.Contains(out, mark) || strings.Contains(out, b64) {
					t.Errorf("%s shows the Secret's value %s:\n%s", ch, mark, out)
				}
			}
			switch {
			case tc.validateRefuses && (v.code != 125 || !strings.Contains(v.stderr, tc.want)):
				t.Errorf("validate: want 125 and %s\n%s", tc.want, v)
			case !tc.validateRefuses && v.code != 0:
				// The pod's IP is not known before the sandbox exists.
				t.Errorf("validate: want 0\n%s", v)
			}
			if strings.Contains(r.stdout+r.stderr, "] ran-secret-subpath") { // a log line; -o json shows the command
				t.Errorf("the container ran\n%s", r)
			}
			expectNoTrace(t, e, r.args)
		})
	}
}
