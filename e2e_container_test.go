//go:build e2e

// End-to-end tests of the container config (runner/env.go,
// runner/security.go, runner/oomscore.go) against the testbed: uid, gid
// and groups, a read-only root, no_new_privs, capabilities, runAsNonRoot
// refused and accepted, every env source with a ConfigMap and a Secret of
// the same run, oom_score_adj by QoS class, and a sysctl.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestE2EContainerSecurityContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-secctx}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    fsGroup: 2000
    supplementalGroups: [4000]
  containers:
  - name: user
    image: busybox:1.28
    command: ["sh", "-c", "id; touch /x 2>/dev/null && echo root-writable || echo root-readonly; grep NoNewPrivs /proc/self/status"]
    securityContext:
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
  - name: caps
    image: busybox:1.28
    command: ["sh", "-c", "grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; touch /x && echo root-writable"]
    securityContext:
      runAsUser: 0
      capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
`)
	r := e.runPodrun([]string{"-q", "-o", "json", "-f", m}, "")
	expectCode(t, r, 0)
	out := r.stderr
	for _, want := range []string{
		"[pod/e2e-secctx/user] uid=1000(user) gid=3000 groups=",
		"[pod/e2e-secctx/user] root-readonly",
		"[pod/e2e-secctx/user] NoNewPrivs:\t1",
		"[pod/e2e-secctx/caps] CapEff:\t0000000000000400",
		"[pod/e2e-secctx/caps] NoNewPrivs:\t0",
		"[pod/e2e-secctx/caps] root-writable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "[pod/e2e-secctx/user] uid=") {
			groups := l[strings.Index(l, "groups="):]
			for _, g := range []string{"2000", "4000"} {
				if !strings.Contains(groups, g) {
					t.Errorf("id: %q lacks supplemental group %s", l, g)
				}
			}
		}
	}
}

func TestE2EContainerRunAsNonRoot(t *testing.T) {
	t.Parallel()
	pod := func(runAsUser string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: e2e-nonroot}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  securityContext:
    runAsNonRoot: true` + runAsUser + `
  containers:
  - name: c
    image: busybox:1.28
    command: ["id", "-u"]
`
	}
	t.Run("a root image is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.runPodrun([]string{"-q", "-o", "json", "-f", manifest(t, "pod.yaml", pod(""))}, "")
		expectCode(t, r, 125)
		s := containerStatus(t, parsePod(t, r.stdout), "c")
		if s.State.Waiting == nil || s.State.Waiting.Reason != "CreateContainerConfigError" ||
			!strings.HasPrefix(s.State.Waiting.Message, "container has runAsNonRoot and image will run as root (pod: \"e2e-nonroot_default(") {
			t.Errorf("state = %+v, want waiting CreateContainerConfigError with the kubelet's message\n%s", s.State, r)
		}
	})
	t.Run("runAsUser 1000 is accepted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.runPodrun([]string{"-q", "-f", manifest(t, "pod.yaml", pod("\n    runAsUser: 1000"))}, "")
		expectCode(t, r, 0)
		if r.stdout != "1000\n" {
			t.Errorf("id -u = %q, want 1000\n%s", r.stdout, r)
		}
	})
}

func TestE2EContainerEnv(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {mode: fast, color: blue}
---
apiVersion: v1
kind: Secret
metadata: {name: sec}
stringData: {token: s3cret}
---
apiVersion: v1
kind: Pod
metadata:
  name: e2e-env
  labels: {app: web}
  annotations: {team: a}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  serviceAccountName: builder
  containers:
  - name: c
    image: busybox:1.28
    command: ["sh", "-c", "printenv | grep -E '^(X_|CM_|S_)' | sort; echo \"args: $0 $1\"", "$(X_MODE)", "$$(X_MODE)"]
    resources:
      requests: {cpu: 250m, memory: 64Mi}
      limits: {memory: 128Mi}
    envFrom:
    - {prefix: CM_, configMapRef: {name: cfg}}
    - {prefix: S_, secretRef: {name: sec}}
    - {configMapRef: {name: missing, optional: true}}
    env:
    - {name: X_MODE, valueFrom: {configMapKeyRef: {name: cfg, key: mode}}}
    - {name: X_TOKEN, valueFrom: {secretKeyRef: {name: sec, key: token}}}
    - {name: X_NONE, valueFrom: {secretKeyRef: {name: sec, key: nope, optional: true}}}
    - {name: X_URL, value: "https://$(X_MODE).example/$(X_LATER)?$$(X_MODE)"}
    - {name: X_LATER, value: later}
    - {name: X_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: X_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: X_UID, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}
    - {name: X_APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}
    - {name: X_TEAM, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['team']"}}}
    - {name: X_NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: X_SA, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}
    - {name: X_POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: X_POD_IPS, valueFrom: {fieldRef: {fieldPath: status.podIPs}}}
    - {name: X_HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
    - {name: X_CPU_REQ_M, valueFrom: {resourceFieldRef: {resource: requests.cpu, divisor: 1m}}}
    - {name: X_MEM_LIM_MI, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
    - {name: X_CPU_LIM, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
`)
	r := e.runPodrun([]string{"-q", "-o", "json", "--node-name", "e2e-node", "-f", m}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if p.Status.PodIP == "" || p.Status.HostIP == "" {
		t.Fatalf("no pod or host IP in the status:\n%s", r.stdout)
	}
	want := []string{
		"CM_color=blue", "CM_mode=fast", "S_token=s3cret",
		"X_APP=web",
		"X_CPU_LIM=" + strconv.Itoa(nodeCPUs(t)),
		"X_CPU_REQ_M=250",
		"X_HOST_IP=" + p.Status.HostIP,
		"X_LATER=later",
		"X_MEM_LIM_MI=128",
		"X_MODE=fast",
		"X_NAME=e2e-env",
		"X_NODE=e2e-node",
		"X_NS=default",
		"X_POD_IP=" + p.Status.PodIP,
		"X_POD_IPS=" + p.Status.PodIP,
		"X_SA=builder",
		"X_TEAM=a",
		"X_TOKEN=s3cret",
		"X_UID=" + string(p.UID),
		"X_URL=https://fast.example/$(X_LATER)?$(X_MODE)",
		"args: fast $(X_MODE)",
	}
	if got := lines(r.stderr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env is\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestE2EContainerOOMScoreAdj(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-oom-besteffort}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - {name: c, image: busybox:1.28, command: ["cat", "/proc/self/oom_score_adj"]}
---
apiVersion: v1
kind: Pod
metadata: {name: e2e-oom-burstable}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: busybox:1.28
    command: ["cat", "/proc/self/oom_score_adj"]
    resources: {requests: {memory: 256Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: e2e-oom-guaranteed}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: busybox:1.28
    command: ["cat", "/proc/self/oom_score_adj"]
    resources: {limits: {cpu: 100m, memory: 64Mi}}
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	got := map[string]int{}
	for _, l := range lines(r.stdout) {
		name, v, ok := strings.Cut(strings.TrimPrefix(l, "[pod/"), "/c] ")
		if !ok {
			continue
		}
		got[name], _ = strconv.Atoi(v)
	}
	memTotal := memTotalBytes(t)
	burstable := 1000 - 1000*(256<<20)/memTotal
	burstable = min(max(burstable, 3), 999)
	// The testbed's containerd runs with restrict_oom_score_adj: no
	// container goes below containerd's own score.
	guaranteed := max(-997, ownOOMScoreAdj(t, "containerd"))
	for name, want := range map[string]int64{"e2e-oom-besteffort": 1000, "e2e-oom-burstable": burstable, "e2e-oom-guaranteed": int64(guaranteed)} {
		if v, ok := got[name]; !ok || int64(v) != want {
			t.Errorf("%s: oom_score_adj = %d (seen %v), want %d\n%s", name, v, ok, want, r)
		}
	}
}

func memTotalBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines(string(b)) {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

// ownOOMScoreAdj is the oom_score_adj of the first process named comm.
func ownOOMScoreAdj(t *testing.T, comm string) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, "comm")); err == nil && strings.TrimSpace(string(b)) == comm {
			if b, err := os.ReadFile(filepath.Join(d, "oom_score_adj")); err == nil {
				v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return v
			}
		}
	}
	t.Fatalf("no %s process", comm)
	return 0
}

func TestE2EContainerSysctl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := manifest(t, "pod.yaml", `apiVersion: v1
kind: Pod
metadata: {name: e2e-sysctl}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  securityContext:
    sysctls: [{name: kernel.shm_rmid_forced, value: "1"}, {name: net.ipv4.ip_unprivileged_port_start, value: "80"}]
  containers:
  - {name: c, image: busybox:1.28, command: ["cat", "/proc/sys/kernel/shm_rmid_forced", "/proc/sys/net/ipv4/ip_unprivileged_port_start"]}
`)
	r := e.runPodrun([]string{"-q", "-f", m}, "")
	expectCode(t, r, 0)
	if r.stdout != "1\n80\n" {
		t.Errorf("sysctls = %q, want 1 and 80\n%s", r.stdout, r)
	}
}
