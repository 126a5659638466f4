//go:build e2e

// End-to-end tests of pod volumes (volumes/, runner/volumes.go) against the
// testbed: configMap, secret, downwardAPI and projected volumes as the
// container sees them, emptyDir on disk and in memory, hostPath, subPath,
// readOnly and fsGroup, the refusals, and the corpus rows that need volumes.
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner"
)

// expectLines fails the test unless out holds each line of want, in order
// (other lines may come between).
func expectLines(t *testing.T, out string, want ...string) {
	t.Helper()
	got := lines(out)
	i := 0
	for _, l := range got {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("output lacks the line %q (or it is out of order):\n%s", want[i], out)
	}
}

func TestE2EVolumeConfigMapSecretDownwardAPIProjected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: app-config}
data: {level: very, type: charm, game.properties: "lives=3\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret}
stringData: {username: admin, password: s3cret}
---
apiVersion: v1
kind: Pod
metadata:
  name: e2e-vol-atomic
  labels: {app: web, tier: front}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes:
  - name: cfg
    configMap:
      name: app-config
      items:
      - {key: level, path: conf/level, mode: 0400}
      - {key: type, path: type}
  - name: sec
    secret: {secretName: app-secret, defaultMode: 0440}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: mem_limit, resourceFieldRef: {containerName: c, resource: limits.memory, divisor: 1Mi}}
  - name: all
    projected:
      defaultMode: 0600
      sources:
      - secret: {name: app-secret, items: [{key: username, path: creds/user}]}
      - configMap: {name: app-config, items: [{key: game.properties, path: game.properties, mode: 0444}]}
      - downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}
  containers:
  - name: c
    image: busybox:1.28
    resources: {limits: {memory: 64Mi}}
    volumeMounts:
    - {name: cfg, mountPath: /cfg}
    - {name: sec, mountPath: /sec}
    - {name: info, mountPath: /info}
    - {name: all, mountPath: /all}
    command:
    - sh
    - -c
    - |
      for d in cfg sec info all; do
        readlink /$d/..data | grep -Eq '^\.\.[0-9]{4}(_[0-9]{2}){5}\.[0-9]+$' && echo "$d ..data ok"
      done
      echo "cfg ls=$(ls /cfg | tr '\n' ' ')"
      echo "cfg conf -> $(readlink /cfg/conf)"
      echo "cfg level=$(cat /cfg/conf/level) mode=$(stat -L -c %a /cfg/conf/level)"
      echo "cfg type=$(cat /cfg/type) mode=$(stat -L -c %a /cfg/type)"
      echo "sec username=$(cat /sec/username) mode=$(stat -L -c %a /sec/username)"
      echo "sec links=$(ls -la /sec | grep -c -e '-> \.\.data/')"
      echo "info labels=$(cat /info/labels | tr '\n' ' ')"
      echo "info mem_limit=$(cat /info/mem_limit)"
      echo "all user=$(cat /all/creds/user) mode=$(stat -L -c %a /all/creds/user)"
      echo "all game mode=$(stat -L -c %a /all/game.properties) name=$(cat /all/name)"
      for d in sec info all; do echo "$d $(awk -v m=/$d '$2==m {print $3, substr($4,1,2)}' /proc/mounts)"; done
      echo "cfg $(awk '$2=="/cfg" {print ($3=="tmpfs" ? "tmpfs" : "disk"), substr($4,1,2)}' /proc/mounts)"
      touch /cfg/x 2>/dev/null && echo "cfg writable" || echo "cfg read-only"
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
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
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-emptydir}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: mem, emptyDir: {medium: Memory, sizeLimit: 16Mi}}
  - {name: plain, emptyDir: {}}
  - {name: private, emptyDir: {mode: 0750}}
  containers:
  - name: c
    image: busybox:1.28
    volumeMounts:
    - {name: mem, mountPath: /mem}
    - {name: plain, mountPath: /plain}
    - {name: private, mountPath: /private}
    command:
    - sh
    - -c
    - |
      echo "mem $(awk '$2=="/mem" {print $3}' /proc/mounts) $(grep ' /mem ' /proc/mounts | grep -o 'size=[0-9]*k') mode=$(stat -c %a /mem)"
      echo "plain $(awk '$2=="/plain" {print ($3=="tmpfs" ? "tmpfs" : "disk")}' /proc/mounts) mode=$(stat -c %a /plain)"
      echo "private mode=$(stat -c %a /private)"
      echo data > /mem/f && echo "mem writable"
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	// A memory emptyDir is a tmpfs of sizeLimit, its root tmpfs's own 1777
	// as on a kubelet; on disk 0777; mode as given.
	expectLines(t, r.stdout, "mem tmpfs size=16384k mode=1777", "plain disk mode=777", "private mode=750", "mem writable")
}

func TestE2EVolumeHostPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	host := t.TempDir()
	dir, file := filepath.Join(host, "new", "dir"), filepath.Join(host, "app.log")
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-hostpath}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: dir, hostPath: {path: `+dir+`, type: DirectoryOrCreate}}
  - {name: log, hostPath: {path: `+file+`, type: FileOrCreate}}
  containers:
  - name: c
    image: busybox:1.28
    volumeMounts:
    - {name: dir, mountPath: /out}
    - {name: log, mountPath: /var/log/app.log}
    - {name: dir, mountPath: /ro, readOnly: true}
    command:
    - sh
    - -c
    - |
      echo hello > /out/greeting
      echo line >> /var/log/app.log
      touch /ro/x 2>/dev/null && echo "ro writable" || echo "ro refused"
`)
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
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-subpath}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  securityContext: {fsGroup: 2000}
  volumes:
  - {name: data, emptyDir: {}}
  - name: sec
    secret: {secretName: s, defaultMode: 0400}
  initContainers:
  - name: init
    image: busybox:1.28
    command: [sh, -c, "mkdir -p /data/site/html && echo page > /data/site/html/index.html"]
    volumeMounts: [{name: data, mountPath: /data}]
  containers:
  - name: c
    image: busybox:1.28
    env: [{name: SITE, value: site}]
    volumeMounts:
    - {name: data, mountPath: /srv, subPathExpr: "$(SITE)/html"}
    - {name: data, mountPath: /logs, subPath: logs/c}
    - {name: data, mountPath: /all}
    - {name: sec, mountPath: /sec}
    - {name: sec, mountPath: /token, subPath: token}
    command:
    - sh
    - -c
    - |
      echo "srv $(cat /srv/index.html)"
      echo "all $(stat -c '%a %g' /all)"
      echo "logs $(stat -c '%a %g' /all/logs/c)"
      touch /logs/x && echo "x $(stat -c %g /all/logs/c/x)"
      echo "sec $(stat -L -c '%a %g' /sec/token)"
      echo "token $(cat /token)"
---
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData: {token: abc}
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
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
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-escape}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: data, emptyDir: {}}
  initContainers:
  - name: init
    image: busybox:1.28
    command: [sh, -c, "ln -s /etc /data/escape"]
    volumeMounts: [{name: data, mountPath: /data}]
  containers:
  - name: c
    image: busybox:1.28
    command: [sh, -c, "cat /x/hostname"]
    volumeMounts: [{name: data, mountPath: /x, subPath: escape}]
`)
	r := e.runPodrun([]string{"-f", m}, "")
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
	pod := func(vol string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-refused}
spec:
  restartPolicy: Never
  volumes:
  - ` + vol + `
  containers:
  - {name: c, image: busybox:1.28, command: [sh, -c, "echo started"], volumeMounts: [{name: v, mountPath: /v}]}
`
	}
	for _, tc := range []struct {
		name, manifest, corpus string
		want                   []string
	}{
		{name: "persistentVolumeClaim", manifest: pod(`{name: v, persistentVolumeClaim: {claimName: task-pv-claim}}`),
			want: []string{`volume "v": persistentVolumeClaim volumes are not supported: a PersistentVolumeClaim is bound to a volume by the API server`}},
		{name: "hostPath Directory missing", manifest: pod(`{name: v, hostPath: {path: ` + missing + `, type: Directory}}`),
			want: []string{`volume "v": hostPath type check failed: ` + missing + ` is not a directory`}},
		{name: "missing ConfigMap", manifest: pod(`{name: v, configMap: {name: nowhere}}`),
			want: []string{`volume "v": configmap "nowhere" not found in namespace "default"`}},
		{name: "missing Secret key", manifest: pod(`{name: v, secret: {secretName: s, items: [{key: nope, path: p}]}}`) +
			"---\n{apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {k: v}}\n",
			want: []string{`volume "v": references non-existent secret key: nope`}},
		{name: "csi", manifest: pod(`{name: v, csi: {driver: example.com/csi}}`), want: []string{`volume "v": csi volumes are not supported`}},
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
			src := tc.manifest
			path := ""
			if tc.corpus != "" {
				path = corpusPod(t, tc.corpus)
			} else {
				path = manifest(t, "pod.yaml", src)
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
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the refused hostPath was created")
	}
}

// TestE2EVolumeReclaimUnmounts: a podrun killed with SIGKILL leaves its
// pod's tmpfs volumes mounted; the next run reclaims the pod dir,
// unmounting them first.
func TestE2EVolumeReclaimUnmounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.startPodrun([]string{"-f", manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-vol-orphan}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: mem, emptyDir: {medium: Memory}}
  - {name: info, downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}}
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    volumeMounts: [{name: mem, mountPath: /mem}, {name: info, mountPath: /info, subPath: name}]
`)}, "")
	p.waitStderr("Started container c", 60*time.Second)
	if n := len(mountsIn(t, e.root)); n != 3 {
		t.Errorf("%d mounts under the root dir while running, want 3 (two tmpfs, one subpath)", n)
	}
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	r := e.runPodrun([]string{"-q", "-f", manifest(t, "next.yaml", podManifest("e2e-vol-next", "Never", "busybox:1.28", 2, "true"))}, "")
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

// execIn runs cmd in the container ctr of the pod that podrun process p
// runs.
func execIn(t *testing.T, p *proc, pod, ctr string, cmd ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := rtClient.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{
			runner.LabelPID: strconv.Itoa(p.cmd.Process.Pid), "io.kubernetes.pod.name": pod, "io.kubernetes.container.name": ctr,
		}})
	if err != nil || len(cs) != 1 {
		t.Fatalf("finding container %s/%s: %d found, %v", pod, ctr, len(cs), err)
	}
	out, errOut, code, err := rtClient.ExecSync(ctx, cs[0].Id, cmd, 15*time.Second)
	if err != nil || code != 0 {
		t.Fatalf("exec %v in %s/%s: exit %d, %v\n%s", cmd, pod, ctr, code, err, errOut)
	}
	return string(out)
}

// stopNow ends a podrun that runs long-running corpus pods: a SIGTERM, then
// a second one so that containers that ignore SIGTERM (sh or sleep as PID
// 1) are killed at once; podrun still tears everything down.
func stopNow(t *testing.T, p *proc) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	// The second signal forces; a teardown that already finished (a
	// container that exits at once on SIGTERM) needs none.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signalling podrun: %v", err)
	}
	if code := p.wait(60 * time.Second); code != 143 {
		t.Errorf("podrun exit %d after SIGTERM, want 143\nstderr:\n%s", code, p.stderr.String())
	}
}

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
	secrets := manifest(t, "secrets.yaml", `apiVersion: v1
kind: Secret
metadata: {name: user}
stringData: {username.txt: admin}
---
apiVersion: v1
kind: Secret
metadata: {name: pass}
stringData: {password.txt: 1f2d1e2e67df}
`)
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
	objs := manifest(t, "objs.yaml", `apiVersion: v1
kind: Secret
metadata: {name: mysecret}
stringData: {username: my-app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: myconfigmap}
data: {config: my-config-value}
`)
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

// nodeCPUs is the number of CPUs podrun reports as the node's allocatable.
func nodeCPUs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/fs/cgroup/cpuset/cpuset.effective_cpus")
	if err != nil {
		b, _ = os.ReadFile("/sys/devices/system/cpu/online")
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		z := a
		if ok {
			z, _ = strconv.Atoi(hi)
		}
		n += z - a + 1
	}
	return n
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
