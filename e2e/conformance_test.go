//go:build e2e

package e2e

// The conformance test: every manifest of the shared corpus
// (../shared/corpus/website, read in place, never copied into the project)
// is a row of TestE2EConformance with its verdict from the corpus README,
// its companion ConfigMaps and Secrets, podrun's flags and a check of the
// row's expected outcome. Rows the testbed cannot run (images it does not
// mirror, APIs only an API server has, data files) are skipped with their
// reason; no row is skipped because podrun lacks a feature: such a row runs
// and fails until the feature lands. Every NEG row, refused or failed, is
// then checked to have left nothing behind (expectNoTrace), and a refused
// one to have created nothing.
//
// How the long-running rows end, per row:
//   - ready: restartPolicy Always and nothing to read from the logs:
//     --wait=ready, podrun tears the pod down once Ready, exit 0 (a sh or
//     sleep as PID 1 ignores SIGTERM, so that teardown takes the pod's 30 s
//     grace period, as on a kubelet).
//   - timed out: the row's outcome is in its logs or status so far (counters,
//     Never pods that loop, restarts with back-off): --wait=complete with
//     --timeout, exit 124, and -o json for the status podrun observed.
//   - exec: the outcome is a file, an env var or a process inside the
//     container (stand-ins whose entrypoint cannot print it): podrun runs
//     the pod, the test execs into the container, then stops podrun with two
//     SIGTERMs (exit 143; the second one kills at once).
//   - detached: host-side cgroup values: -d -o json, the host's cgroup files,
//     then podrun down.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// conformanceRunTimeout bounds one podrun of a row (the liveness rows take
// the longest: 90 s of probing plus the 30 s grace of their teardown).
const conformanceRunTimeout = 4 * time.Minute

// conformanceConcurrency is how many rows run at once. Rows mostly wait
// (grace periods, back-off, timeouts), so far more than GOMAXPROCS: the
// rows are run from goroutines, not with t.Parallel, whose limit is
// -test.parallel (GOMAXPROCS, 2 on CI).
const conformanceConcurrency = 24

// conformanceRow is one corpus file.
type conformanceRow struct {
	path    string // under website/
	verdict string // the corpus README's verdict
	// skip, when set, is why the row does not run.
	skip string
	// why says why a STAND-IN, PARTIAL or NEG row runs and how it ends.
	why string
	// companions are corpus files passed with further -f flags; own is a
	// manifest of ConfigMaps/Secrets under testdata/e2e (the row's "not in
	// repo" objects).
	companions []string
	own        string
	flags      []string
	// project: path is relative to the repo, not the corpus (a row of the
	// kubelet comparison alone: projectRows).
	project bool
	slow    bool // started first
	// oom, when set, says why the row's runtime must lower an
	// oom_score_adj (requireLowerOOMScoreAdj).
	oom   string
	check func(c *conformanceCase)
}

// conformanceCase is a row being run.
type conformanceCase struct {
	t    *testing.T
	e    *env
	args []string // -f row -f companions... and the row's flags
}

func (c *conformanceCase) run() result {
	c.t.Helper()
	return c.e.startPodrun(c.args, "").result(conformanceRunTimeout)
}

func (c *conformanceCase) start() *proc {
	c.t.Helper()
	return c.e.startPodrun(c.args, "")
}

func TestE2EConformance(t *testing.T) {
	// Not t.Parallel: other e2e tests run some corpus rows too, and the same
	// file gives the same pod UID; this test runs in the sequential phase,
	// before any parallel test.
	root := corpusRoot(t)
	rows := conformanceRows()

	// Every file of the corpus has a row, and every row a file.
	listed := map[string]bool{}
	for _, r := range rows {
		if listed[r.path] {
			t.Errorf("row %s listed twice", r.path)
		}
		listed[r.path] = true
		if _, err := os.Stat(filepath.Join(root, r.path)); err != nil {
			t.Errorf("row %s: %v", r.path, err)
		}
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			if !listed[rel] {
				t.Errorf("corpus file %s has no row", rel)
			}
		}
		return nil
	})

	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rows[order[a]].slow && !rows[order[b]].slow })

	type outcome struct {
		ok      bool
		elapsed time.Duration
		// out: -run or -skip left the row out (t.Run reports such a
		// subtest as passed without running it).
		out bool
	}
	outcomes := make([]outcome, len(rows))
	concurrency := conformanceConcurrency
	if timeoutScale > 1 {
		// An emulated machine (hack/guest.sh): a row's pods are slow
		// enough to start that 24 at once would starve each other past
		// their timeouts; as many as it has CPUs.
		concurrency = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for _, i := range order {
		row := rows[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			started := false
			// Subtests started from goroutines run at once (t.Run may be
			// called concurrently); none calls t.Parallel.
			ok := t.Run(row.path, func(t *testing.T) {
				started = true
				if row.skip != "" {
					t.Skipf("%s: %s", row.verdict, row.skip)
				}
				if row.oom != "" {
					requireLowerOOMScoreAdj(t, row.oom)
				}
				c := &conformanceCase{t: t, e: newEnv(t), args: []string{"-f", filepath.Join(root, row.path)}}
				for _, comp := range row.companions {
					c.args = append(c.args, "-f", filepath.Join(root, comp))
				}
				if row.own != "" {
					c.args = append(c.args, "-f", testdata(row.own))
				}
				c.args = append(c.args, row.flags...)
				row.check(c)
				if strings.Contains(row.verdict, "NEG") {
					// A rejection or failure leaves nothing behind
					// (hostile_test.go).
					expectNoTrace(t, c.e, c.args)
				}
			})
			outcomes[i] = outcome{ok: ok, elapsed: time.Since(start), out: !started}
		}()
	}
	wg.Wait()

	var b strings.Builder
	var ran, passed, skipped, out int
	fmt.Fprintf(&b, "conformance summary (%d corpus files):\n", len(rows))
	fmt.Fprintf(&b, "%-72s %-10s %-5s %s\n", "row", "verdict", "", "reason / how it ends")
	for i, r := range rows {
		res, note := "FAIL", r.why
		switch {
		case outcomes[i].out:
			res, note = "OUT", "left out by -run or -skip"
			out++
		case r.skip != "":
			res, note = "SKIP", r.skip
			skipped++
		case outcomes[i].ok:
			res = "PASS"
			ran++
			passed++
		default:
			ran++
		}
		if r.skip == "" && !outcomes[i].out {
			note = fmt.Sprintf("[%s] %s", outcomes[i].elapsed.Round(time.Second), note)
		}
		fmt.Fprintf(&b, "%-72s %-10s %-5s %s\n", r.path, r.verdict, res, note)
	}
	fmt.Fprintf(&b, "ran %d (passed %d, failed %d), skipped %d, left out %d\n", ran, passed, ran-passed, skipped, out)
	t.Log(b.String())
}

// ---------------------------------------------------------------- checks --

// podCheck checks one pod of podrun's -o json output.
type podCheck func(t *testing.T, pod *v1.Pod)

// readyRow: --wait=ready, exit 0, every pod Running and Ready when the wait
// ended, then the row's checks.
func readyRow(checks ...podCheck) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		r := c.run()
		expectCode(t, r, 0)
		for _, pod := range podsOf(t, r.stdout) {
			if pod.Status.Phase != v1.PodRunning || condition(pod, v1.PodReady) != v1.ConditionTrue {
				t.Errorf("pod %s: phase %s, Ready %q; want Running and Ready\n%s", pod.Name, pod.Status.Phase, condition(pod, v1.PodReady), r)
			}
			for _, check := range checks {
				check(t, pod)
			}
		}
	}
}

var readyFlags = []string{"--wait=ready", "-q", "-o", "json", "--timeout", "90s"}

// qos checks the pod's QoS class.
func qos(class v1.PodQOSClass) podCheck {
	return func(t *testing.T, pod *v1.Pod) {
		if pod.Status.QOSClass != class {
			t.Errorf("pod %s: qosClass %q, want %q", pod.Name, pod.Status.QOSClass, class)
		}
	}
}

// succeededRow: restartPolicy Never or OnFailure pods that end by
// themselves: exit 0, Succeeded, every container Completed, and the
// container output (stderr under -q -o json) has each line of want.
func succeededRow(want ...string) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		r := c.run()
		expectCode(t, r, 0)
		pod := parsePod(t, r.stdout)
		if pod.Status.Phase != v1.PodSucceeded {
			t.Errorf("phase %s, want Succeeded\n%s", pod.Status.Phase, r)
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if term := cs.State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
				t.Errorf("container %s: state %+v, want terminated Completed 0", cs.Name, cs.State)
			}
		}
		expectHasLines(t, r.stderr, want...)
	}
}

var succeededFlags = []string{"-q", "-o", "json", "--timeout", "60s"}

// timedOutRow: the pod never ends by itself; the row's outcome is in its
// output and status so far. Exit 124; check gets the pod as podrun observed
// it when the timeout hit and the container output (-q -o json: stderr).
func timedOutRow(check func(t *testing.T, pod *v1.Pod, out string)) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		r := c.run()
		expectCode(t, r, 124)
		check(t, parsePod(t, r.stdout), r.stderr)
	}
}

// timedOutFlags: the row's pod never ends; podrun's --timeout ends it
// (exit 124). The rows that only need some output give it 30 s: the
// conformance rows start 24 pods at once on a 2-core machine, and making
// a sandbox then took up to 10 s, so 12 to 15 s left some containers
// started just as the time ran out (a cold CI machine, runc 1.3).
func timedOutFlags(timeout string) []string {
	return []string{"--wait=complete", "--timeout", timeout, "-q", "-o", "json"}
}

// execRow: run the pod, wait until container ctr started, run script in it
// with sh -c, check its output, stop podrun (exit 143).
func execRow(pod, ctr, script string, check func(t *testing.T, out string)) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		// --wait=complete: under Always, ready would end the run (and tear
		// the pod down) before the exec.
		c.args = append(c.args, "--wait=complete", "--timeout", "150s")
		p := c.start()
		p.waitStderr("Started container "+ctr, 90*time.Second)
		out, code, err := execOut(p, pod, ctr, "sh", "-c", script)
		stopNow(t, p)
		if err != nil {
			t.Fatalf("exec in %s/%s: %v\nstderr:\n%s", pod, ctr, err, p.stderr.String())
		}
		if code != 0 {
			t.Errorf("exec %q in %s/%s: exit %d\n%s", script, pod, ctr, code, out)
		}
		check(t, out)
	}
}

// rejectedRow: admission rejects the pod: exit 125, the kubelet's reason,
// nothing created.
func rejectedRow(reason, pod string) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		expectRejected(c.t, c.e, c.run(), reason, pod)
	}
}

// refusedRow: podrun refuses the manifest before anything is created
// (decode, validation, volumes, image name): exit 125, stderr has each of
// want.
func refusedRow(want ...string) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		r := c.run()
		expectCode(t, r, 125)
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr lacks %q\n%s", w, r)
			}
		}
		expectNothingCreated(t, c.e)
	}
}

// usernsRow: supported runs check; else the refusal of hostUsers false.
func usernsRow(check func(c *conformanceCase)) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		supported, refusal := usernsSupported(c.t)
		if supported {
			check(c)
			return
		}
		refusedRow("spec.hostUsers: false needs a user namespace", refusal)(c)
	}
}

// cgroupRow: run detached, check the pod's QoS class and the limits of its
// pod cgroup on the host (under /podrun, burstable/ or besteffort/, as the
// node's driver names them), podrun down, the cgroup is gone.
func cgroupRow(nsName string, class v1.PodQOSClass, limits ...cgroupLimit) func(c *conformanceCase) {
	return func(c *conformanceCase) {
		t := c.t
		c.e.downOnCleanup(nsName)
		r := c.run()
		expectCode(t, r, 0)
		pod := parsePod(t, r.stdout)
		if pod.Status.QOSClass != class {
			t.Errorf("qosClass %q, want %q", pod.Status.QOSClass, class)
		}
		rel := shape.podCgroup("/podrun", class, string(pod.UID))
		expectCgroup(t, rel, limits...)
		expectCode(t, c.e.runPodrun([]string{"down", nsName}, ""), 0)
		expectCgroupGone(t, rel)
	}
}

var detachFlags = []string{"-d", "-q", "-o", "json", "--timeout", "60s"}

// ------------------------------------------------------------------ rows --

const (
	skipData    = "a ConfigMap/Secret/profile file, not a Pod: used as a companion of other rows"
	skipRedis   = "needs the redis image, which the testbed does not mirror"
	skipPVC     = "needs a PersistentVolumeClaim, which only an API server binds"
	skipEcho    = "needs hashicorp/http-echo, which the testbed does not mirror"
	skipNoImage = "the testbed does not mirror "
)

func conformanceRows() []conformanceRow {
	aaRow := func(path, pod string) conformanceRow {
		r := conformanceRow{path: path, verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "a Localhost AppArmor profile: rejected at admission (AppArmor) on a host without AppArmor; with AppArmor the profile is not loaded and the container cannot start"}
		if hostHasAppArmor() {
			r.flags = timedOutFlags("15s")
			r.check = func(c *conformanceCase) {
				t := c.t
				r := c.run()
				if r.code == 0 || strings.Contains(r.stderr, "Hello AppArmor!") {
					t.Errorf("the container ran without its AppArmor profile loaded\n%s", r)
				}
			}
		} else {
			r.check = rejectedRow("AppArmor", pod)
		}
		return r
	}
	limitRange := func(path, pod string) conformanceRow {
		return conformanceRow{path: path, verdict: "YES", flags: timedOutFlags("30s"),
			why: "never exits: --timeout 30s (124); each container logged its line once; cnt03's requests defaulted to its limits; Burstable",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				for i := 1; i <= 4; i++ {
					expectHasLines(t, out, fmt.Sprintf("[pod/%s/busybox-cnt0%d] hello from cnt0%d", pod, i, i))
				}
				if p.Status.QOSClass != v1.PodQOSBurstable {
					t.Errorf("qosClass %q, want Burstable", p.Status.QOSClass)
				}
				if c := p.Spec.Containers[2].Resources; c.Requests.Cpu().Cmp(*c.Limits.Cpu()) != 0 || c.Requests.Memory().Cmp(*c.Limits.Memory()) != 0 {
					t.Errorf("busybox-cnt03: requests %v, want its limits %v", c.Requests, c.Limits)
				}
			})}
	}
	nginxReady := func(path, verdict string, class v1.PodQOSClass) conformanceRow {
		return conformanceRow{path: path, verdict: verdict, flags: readyFlags, why: "Ready, then torn down (exit 0)", check: readyRow(qos(class))}
	}
	idleReady := func(path, why string) conformanceRow {
		return conformanceRow{path: path, verdict: "STAND-IN", flags: readyFlags,
			why: "idle stand-in (exits 0 on SIGTERM): " + why + "; Ready, then torn down (exit 0)", check: readyRow()}
	}
	lowersOOM := func(why string, row conformanceRow) conformanceRow {
		row.oom = why
		return row
	}

	return []conformanceRow{
		// ------------------------------------------------------- admin/
		{path: "admin/dns/busybox.yaml", verdict: "YES", flags: readyFlags,
			why: "sleep 3600 under Always: Ready, then torn down (exit 0; sleep ignores SIGTERM, so the 30 s grace)", check: readyRow(qos(v1.PodQOSBestEffort))},
		idleReady("admin/dns/dnsutils.yaml", "agnhost:2.39"),
		{path: "admin/logging/fluentd-sidecar-config.yaml", verdict: "n/a", skip: skipData},
		{path: "admin/logging/two-files-counter-pod-agent-sidecar.yaml", verdict: "NO", skip: skipNoImage + "registry.k8s.io/fluentd-gcp; it ships logs to Google Cloud"},
		{path: "admin/logging/two-files-counter-pod-streaming-sidecar.yaml", verdict: "YES", flags: timedOutFlags("30s"),
			why: "never exits: --timeout 30s (124); count-log-1 and count-log-2 stream the two files of the shared emptyDir, each line prefixed with its container",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				expectMatch(t, out, `^\[pod/counter/count-log-1\] 0: \w`, `^\[pod/counter/count-log-2\] .* INFO 0$`)
				for _, l := range lines(out) {
					if strings.Contains(l, " INFO ") && !strings.HasPrefix(l, "[pod/counter/count-log-2] ") {
						t.Errorf("an INFO line from another container than count-log-2: %q", l)
					}
				}
			})},
		{path: "admin/logging/two-files-counter-pod.yaml", verdict: "YES",
			why: "exec: the KYAML multi-line args run as a shell script writing both files",
			check: execRow("counter", "count", "sleep 2; head -n1 /var/log/1.log /var/log/2.log", func(t *testing.T, out string) {
				expectMatch(t, out, `^0: \w+ \w+`, `^\w.* INFO 0$`)
			})},
		{path: "admin/resource/cpu-constraints-pod.yaml", verdict: "YES", flags: detachFlags,
			why:   "detached: Burstable pod cgroup with cpu quota 80000/100000 (limit 800m) on the host, then podrun down",
			check: cgroupRow("constraints-cpu-demo", v1.PodQOSBurstable, cpuQuota(80000, 100000))},
		limitRange("admin/resource/limit-range-pod-1.yaml", "busybox1"),
		limitRange("admin/resource/limit-range-pod-2.yaml", "busybox2"),
		nginxReady("admin/resource/limit-range-pod-3.yaml", "YES", v1.PodQOSBurstable),
		nginxReady("admin/resource/memory-defaults-pod.yaml", "YES", v1.PodQOSBestEffort),
		nginxReady("admin/resource/quota-mem-cpu-pod.yaml", "YES", v1.PodQOSBurstable),
		idleReady("admin/sched/pod1.yaml", "pause:3.8"),

		// ------------------------------------------------- application/
		{path: "application/job/redis/redis-pod.yaml", verdict: "NO", skip: skipRedis},
		{path: "application/shell-demo.yaml", verdict: "YES",
			why: "exec: GET / is 404 over the empty emptyDir docroot, then serves an index.html written with exec",
			check: execRow("shell-demo", "nginx",
				`wget -qO- http://localhost/ && exit 1; echo hello shell-demo > /usr/share/nginx/html/index.html && wget -qO- http://localhost/`,
				func(t *testing.T, out string) { expectHasLines(t, out, "hello shell-demo") })},

		// ---------------------------------------------------- configmap/
		{path: "configmap/configmap-multikeys.yaml", verdict: "n/a", skip: skipData},
		{path: "configmap/configmaps.yaml", verdict: "n/a", skip: skipData},
		{path: "configmap/configure-pod.yaml", verdict: "YES+CM", own: "corpus/game-demo.yaml",
			why: "exec: env from configMapKeyRef and the two items of the ConfigMap volume (game-demo written by the test)",
			check: execRow("configmap-demo-pod", "demo", `env; ls /config; cat /config/game.properties`, func(t *testing.T, out string) {
				expectHasLines(t, out, "PLAYER_INITIAL_LIVES=3", "UI_PROPERTIES_FILE_NAME=user-interface.properties",
					"game.properties", "user-interface.properties", "enemy.types=aliens,monsters")
			})},
		{path: "configmap/env-configmap.yaml", verdict: "PARTIAL", own: "corpus/myconfigmap.yaml", flags: []string{"--wait=complete", "-q", "-o", "json", "--timeout", "60s"},
			why: "runs: the testbed's busybox has a printenv and the test writes myconfigmap; printenv prints the envFrom keys and exits 0; under Always --wait=complete ends at that first exit (exit 0), so the restart itself is checked by commands.yaml",
			check: func(c *conformanceCase) {
				t := c.t
				r := c.run()
				expectCode(t, r, 0)
				expectHasLines(t, r.stderr, "username=k8s-admin", "access_level=1", "HOSTNAME=env-configmap")
				if cs := containerStatus(t, parsePod(t, r.stdout), "app"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
					t.Errorf("container %+v, want terminated 0", cs.State)
				}
			}},

		// -------------------------------------------------------- debug/
		{path: "debug/counter-pod-err.yaml", verdict: "YES", flags: []string{"--wait=complete", "--timeout", "30s", "-q"},
			why: "never exits: --timeout 30s (124); N: <date> on stdout and N: err on stderr, separated",
			check: func(c *conformanceCase) {
				t := c.t
				r := c.run()
				expectCode(t, r, 124)
				expectMatch(t, r.stdout, `^0: \w+ \w+ +\d+ \d\d:\d\d:\d\d`)
				expectMatch(t, r.stderr, `^0: err$`, `^1: err$`)
				if strings.Contains(r.stdout, "err") || strings.Contains(r.stderr, "UTC") {
					t.Errorf("the streams are mixed\n%s", r)
				}
			}},
		{path: "debug/counter-pod.yaml", verdict: "YES", flags: []string{"--wait=complete", "--timeout", "30s", "-q"},
			why: "never exits: --timeout 30s (124); stdout 0: <date>, 1: <date>, ...",
			check: func(c *conformanceCase) {
				t := c.t
				r := c.run()
				expectCode(t, r, 124)
				expectMatch(t, r.stdout, `^0: \w+ \w+ +\d+ \d\d:\d\d:\d\d`, `^1: \w`)
			}},

		// --------------------------------------------------------- pods/
		{path: "pods/assigning-pods-to-nodes-affinity.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "required node affinity on an unlabelled node: rejected (NodeAffinity, 125)", check: rejectedRow("NodeAffinity", "with-node-affinity")},
		{path: "pods/commands.yaml", verdict: "PARTIAL", flags: timedOutFlags("45s"), slow: true,
			why: "runs: the testbed's printenv prints HOSTNAME (the pod name) and exits 1 (no KUBERNETES_PORT offline); OnFailure restarts it at once, then after back-offs of 10 and 20 s (the kubelet's doBackOff): --timeout 45s (124; the last start at about 30 s, the next not before 70: a loaded machine may take seconds to start it), restartCount ≥ 1, last exit 1",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				if n := strings.Count(out, "command-demo\n"); n < 2 {
					t.Errorf("command-demo printed %d times, want at least 2 (a restart)\n%s", n, out)
				}
				cs := containerStatus(t, p, "command-demo-container")
				if cs.RestartCount < 1 {
					t.Errorf("restartCount %d, want >= 1", cs.RestartCount)
				}
				last := cs.LastTerminationState.Terminated
				if cur := cs.State.Terminated; cur != nil {
					last = cur
				}
				if last == nil || last.ExitCode != 1 || last.Reason != "Error" {
					t.Errorf("last termination %+v, want exit 1 Error", last)
				}
				if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
					t.Errorf("phase %s under OnFailure, want Running or Pending", p.Status.Phase)
				}
			})},
		{path: "pods/config/example-redis-config.yaml", verdict: "n/a", skip: skipData},
		{path: "pods/config/redis-pod.yaml", verdict: "NO", skip: skipRedis + " (redis:5)"},
		{path: "pods/emptydir-volume-mode.yaml", verdict: "YES",
			why: "exec: /tmp is an emptyDir of mode 01777",
			check: execRow("emptydir-mode-demo", "test-container", "stat -c '%a %A' /tmp", func(t *testing.T, out string) {
				expectHasLines(t, out, "1777 drwxrwxrwt")
			})},
		// The testbed mirrors a stand-in of quay.io/crio/artifact:v2 (/file
		// holding 1, /dir/file 2, as the docs show it); on containerd 1.6,
		// which has no image volumes, the rows fail with podrun's hint.
		{path: "pods/image-volumes-subpath.yaml", verdict: "STAND-IN",
			why: "image volume (the artifact's stand-in) mounted by its subPath dir at /volume: exec shows /volume/file with 2; torn down by two SIGTERMs (143)",
			check: execRow("image-volume", "shell", "ls /volume; cat /volume/file", func(t *testing.T, out string) {
				expectLines(t, out, "file", "2")
			})},
		{path: "pods/image-volumes.yaml", verdict: "STAND-IN",
			why: "image volume (the artifact's stand-in) at /volume: exec shows dir, file and /volume/file with 1; torn down by two SIGTERMs (143)",
			check: execRow("image-volume", "shell", "ls /volume; cat /volume/file", func(t *testing.T, out string) {
				expectLines(t, out, "dir", "file", "1")
			})},
		{path: "pods/init-containers.yaml", verdict: "NEG", flags: timedOutFlags("45s"), slow: true,
			why: "offline the init container's wget fails; Always retries it (with back-off) and nginx never starts: --timeout 45s (124; wget waits for DNS first), Pending, init restartCount ≥ 1, nginx waiting PodInitializing",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				if p.Status.Phase != v1.PodPending {
					t.Errorf("phase %s, want Pending", p.Status.Phase)
				}
				ics := containerStatus(t, p, "install")
				if ics.RestartCount < 1 {
					t.Errorf("init restartCount %d, want >= 1", ics.RestartCount)
				}
				if lt := ics.LastTerminationState.Terminated; lt == nil || lt.ExitCode == 0 {
					if cur := ics.State.Terminated; cur == nil || cur.ExitCode == 0 {
						t.Errorf("init container %+v, want a failed termination", ics)
					}
				}
				cs := containerStatus(t, p, "nginx")
				if w := cs.State.Waiting; w == nil || w.Reason != "PodInitializing" || cs.RestartCount != 0 {
					t.Errorf("nginx %+v, want waiting PodInitializing, never started", cs)
				}
				if condition(p, v1.PodInitialized) != v1.ConditionFalse {
					t.Errorf("Initialized %q, want False", condition(p, v1.PodInitialized))
				}
			})},
		{path: "pods/inject/configmap-envFrom.yaml", verdict: "n/a", skip: skipData},
		{path: "pods/inject/dapi-envars-container.yaml", verdict: "YES", flags: timedOutFlags("30s"),
			why: "YES (needs printenv): the testbed's printenv; loops under Never: --timeout 30s (124); cpu 125m/250m → 1 1, memory 32Mi/64Mi in bytes",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				if !strings.Contains(out, "1\n1\n33554432\n67108864\n") {
					t.Errorf("output lacks 1 1 33554432 67108864:\n%s", out)
				}
			})},
		{path: "pods/inject/dapi-envars-pod.yaml", verdict: "YES", flags: append(timedOutFlags("30s"), "--node-name", "conformance-node"),
			why: "YES (needs printenv): the testbed's printenv; loops under Never: --timeout 30s (124); node name, pod name, namespace, pod IP and an empty serviceAccountName",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				if p.Status.PodIP == "" {
					t.Fatalf("no podIP in the status")
				}
				want := "conformance-node\ndapi-envars-fieldref\ndefault\n" + p.Status.PodIP + "\n\n"
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			})},
		{path: "pods/inject/dapi-volume.yaml", verdict: "YES", flags: timedOutFlags("30s"),
			why: "loops: --timeout 30s (124); the downwardAPI files print labels and annotations, key=\"value\" sorted",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				want := "cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\"\n\nbuild=\"two\"\nbuilder=\"john-doe\""
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			})},
		{path: "pods/inject/envFrom.yaml", verdict: "STAND-IN", companions: []string{"pods/inject/configmap-envFrom.yaml"},
			why: "STAND-IN + CM: node-hello's idle stand-in; exec: env has the envFrom ConfigMap's keys",
			check: execRow("envfrom-demo", "envar-demo-container", "env", func(t *testing.T, out string) {
				expectHasLines(t, out, "DEMO_GREETING=Hello from the environment", "DEMO_FAREWELL=Such a sweet sorrow")
			})},
		{path: "pods/inject/envars-file-container.yaml", verdict: "YES", flags: succeededFlags,
			why:   "YES if fileKeyRef is implemented (env valueFrom): the init container writes config.env, the main container's env shows DB_ADDRESS=address; Never: Succeeded, exit 0",
			check: succeededRow("[pod/envfile-test-pod/use-envfile] DB_ADDRESS=address")},
		idleReady("pods/inject/envars.yaml", "hello-app:2.0"),
		{path: "pods/inject/pod-multiple-secret-env-variable.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "a TAB before a duplicate env key: a YAML error naming the file, 125", check: refusedRow("pod-multiple-secret-env-variable.yaml")},
		{path: "pods/inject/pod-secret-envFrom.yaml", verdict: "YES+SEC", companions: []string{"pods/inject/secret.yaml"},
			why: "exec: envFrom secretRef gives username and password",
			check: execRow("envfrom-secret", "envars-test-container", "env", func(t *testing.T, out string) {
				expectHasLines(t, out, "username=my-app", "password=39528$vdg7Jb")
			})},
		{path: "pods/inject/pod-single-secret-env-variable.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "no apiVersion: a decode error naming the file, 125", check: refusedRow("pod-single-secret-env-variable.yaml", "apiVersion")},
		{path: "pods/inject/secret-envars-pod.yaml", verdict: "YES+SEC", companions: []string{"pods/inject/secret.yaml"},
			why: "exec: secretKeyRef env, base64-decoded",
			check: execRow("secret-envars-test-pod", "envars-test-container", "env", func(t *testing.T, out string) {
				expectHasLines(t, out, "SECRET_USERNAME=my-app", "SECRET_PASSWORD=39528$vdg7Jb")
			})},
		{path: "pods/inject/secret-pod.yaml", verdict: "YES+SEC", companions: []string{"pods/inject/secret.yaml"},
			why: "exec: the Secret volume's files, mounted read-only",
			check: execRow("secret-test-pod", "test-container",
				`cat /etc/secret-volume/username; echo; cat /etc/secret-volume/password; echo; touch /etc/secret-volume/x 2>/dev/null && echo writable; true`,
				func(t *testing.T, out string) {
					expectHasLines(t, out, "my-app", "39528$vdg7Jb")
					if strings.Contains(out, "writable") {
						t.Errorf("the secret volume is writable")
					}
				})},
		{path: "pods/inject/secret.yaml", verdict: "n/a", skip: skipData},
		{path: "pods/multi-container/adapter.yaml", verdict: "YES", flags: timedOutFlags("30s"),
			why: "never exits: --timeout 30s (124); the adapter sidecar (started before main-app) logs adapted: <date> raw event",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
				expectMatch(t, out, `^\[pod/adapter-pattern-example/adapter\] adapted: .* raw event`)
				if cs := containerStatus(t, p, "adapter"); cs.State.Running == nil {
					t.Errorf("sidecar adapter %+v, want running", cs.State)
				}
			})},
		{path: "pods/multi-container/ambassador.yaml", verdict: "NO", skip: skipNoImage + "docker.io/alpine/socat; it forwards to external-db.example.com"},
		{path: "pods/multi-container/localhost.yaml", verdict: "YES", flags: []string{"--wait=complete", "--timeout", "30s"},
			// The sidecar's first fetch comes before web has started;
			// 13 s leave room for two more on a loaded machine.
			why: "the sidecar starts first and fetches http://localhost:80 from the nginx stand-in in the shared network namespace every 5 s: --timeout 30s (124), its output holds the page's first lines",
			check: func(c *conformanceCase) {
				t := c.t
				r := c.run()
				expectCode(t, r, 124)
				if !strings.Contains(r.stdout, "[pod/localhost-example/client] <!DOCTYPE html>") {
					t.Errorf("the sidecar did not log the page from localhost:80\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				}
			}},
		{path: "pods/pod-configmap-env-var-valueFrom.yaml", verdict: "YES+CM", companions: []string{"configmap/configmap-multikeys.yaml"}, flags: succeededFlags,
			why: "Never: prints very charm ($(VAR) expansion in the command), Succeeded, exit 0", check: succeededRow("very charm")},
		{path: "pods/pod-configmap-envFrom.yaml", verdict: "YES+CM", companions: []string{"configmap/configmap-multikeys.yaml"}, flags: succeededFlags,
			why: "Never: env has SPECIAL_LEVEL and SPECIAL_TYPE, Succeeded, exit 0", check: succeededRow("SPECIAL_LEVEL=very", "SPECIAL_TYPE=charm")},
		{path: "pods/pod-configmap-volume.yaml", verdict: "YES+CM", companions: []string{"configmap/configmap-multikeys.yaml"}, flags: succeededFlags,
			why: "Never: ls /etc/config lists both keys, Succeeded, exit 0", check: succeededRow("SPECIAL_LEVEL", "SPECIAL_TYPE")},
		{path: "pods/pod-multiple-configmap-env-variable.yaml", verdict: "YES+CM", companions: []string{"configmap/configmaps.yaml"}, flags: succeededFlags,
			why: "Never: env from two ConfigMaps of one stream (key special.how), Succeeded, exit 0", check: succeededRow("SPECIAL_LEVEL_KEY=very", "LOG_LEVEL=INFO")},
		nginxReady("pods/pod-nginx-preferred-affinity.yaml", "YES", v1.PodQOSBestEffort),
		{path: "pods/pod-nginx-required-affinity.yaml", verdict: "NEG/YES", flags: []string{"--timeout", "60s"},
			why: "policy: podrun admits as the kubelet does: required affinity disktype=ssd on an unlabelled node is rejected (NodeAffinity, 125)", check: rejectedRow("NodeAffinity", "nginx")},
		{path: "pods/pod-nginx-specific-node.yaml", verdict: "NEG/YES", flags: []string{"--timeout", "60s"},
			why: "policy: spec.nodeName foo-node is not this node: rejected (NodeName, 125)", check: rejectedRow("NodeName", "nginx")},
		{path: "pods/pod-nginx.yaml", verdict: "NEG/YES", flags: []string{"--timeout", "60s"},
			why: "policy: nodeSelector disktype=ssd on an unlabelled node: rejected (NodeAffinity, 125)", check: rejectedRow("NodeAffinity", "nginx")},
		{path: "pods/pod-projected-svc-token.yaml", verdict: "NO/NEG", flags: []string{"--timeout", "60s"},
			why:   "NEG: a serviceAccountToken projection needs an API server: refused before anything starts (125)",
			check: refusedRow(`volume "vault-token": sources[0]: serviceAccountToken projections are not supported`)},
		{path: "pods/pod-rs.yaml", verdict: "STAND-IN", flags: readyFlags,
			why:   "idle hello-app 1.0/2.0 stand-ins; two Pods of one stream: both Ready (a v1.List), then torn down (exit 0)",
			check: readyRow()},
		{path: "pods/pod-single-configmap-env-variable.yaml", verdict: "YES+CM", companions: []string{"configmap/configmaps.yaml"}, flags: succeededFlags,
			why: "Never: env has SPECIAL_LEVEL_KEY=very, Succeeded, exit 0", check: succeededRow("SPECIAL_LEVEL_KEY=very")},
		idleReady("pods/pod-with-affinity-anti-affinity.yaml", "k8s.gcr.io/pause:2.0; kubernetes.io/os In [linux, macOs] matches"),
		{path: "pods/pod-with-node-affinity.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "schema-invalid affinity: a strict decode error naming the file, 125", check: refusedRow("pod-with-node-affinity.yaml", "requiredDuringSchedulingIgnoredDuringExecution")},
		{path: "pods/pod-with-numeric-toleration.yaml", verdict: "YES", flags: []string{"--timeout", "60s"},
			why:   "policy: the Gt operator is the alpha TaintTolerationComparisonOperators, refused with the API's default gates (as kubelet v1.37 refuses it): 125",
			check: refusedRow(`spec.tolerations[0].operator: Unsupported value: "Gt"`)},
		idleReady("pods/pod-with-pod-affinity.yaml", "pause:3.8; inter-pod affinity is the scheduler's"),
		{path: "pods/pod-with-scheduling-gates.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "schedulingGates: rejected (SchedulingGated, 125)", check: rejectedRow("SchedulingGated", "test-pod")},
		nginxReady("pods/pod-with-toleration.yaml", "YES", v1.PodQOSBestEffort),
		idleReady("pods/pod-without-scheduling-gates.yaml", "pause:3.6"),
		{path: "pods/private-reg-pod.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why:   "<your-private-image> is not an image reference: InvalidImageName before any pull (125)",
			check: refusedRow(`InvalidImageName: Failed to apply default image tag "<your-private-image>"`)},
		{path: "pods/probe/exec-liveness.yaml", verdict: "YES", flags: timedOutFlags("110s"), slow: true,
			why: "healthy 30 s, then 3 failed exec probes kill it (sh ignores SIGTERM: 30 s grace, exit 137, about 76 s after the start) and Always restarts it: --timeout 110s (124; room for a loaded machine, the next kill not before 150 s), restartCount 1, last exit 137, an Unhealthy event",
			check: func(c *conformanceCase) {
				t := c.t
				c.args = withoutFlag(c.args, "-q") // the events are checked
				r := c.run()
				expectCode(t, r, 124)
				p := parsePod(t, r.stdout)
				cs := containerStatus(t, p, "liveness")
				if cs.RestartCount < 1 {
					t.Errorf("restartCount %d, want >= 1", cs.RestartCount)
				}
				if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 137 {
					t.Errorf("lastState %+v, want terminated 137", cs.LastTerminationState)
				}
				if !strings.Contains(r.stderr, "Unhealthy") || !strings.Contains(r.stderr, "Liveness probe failed") {
					t.Errorf("stderr lacks the Unhealthy event\n%s", r.stderr)
				}
			}},
		{path: "pods/probe/grpc-liveness.yaml", verdict: "PARTIAL", skip: skipNoImage + "registry.k8s.io/etcd:3.5.1-0 (a real etcd serving gRPC health)"},
		{path: "pods/probe/http-liveness.yaml", verdict: "NO", skip: "needs the real agnhost liveness server (/healthz 200 then 500); the testbed's agnhost is an idle stand-in"},
		{path: "pods/probe/pod-with-http-healthcheck.yaml", verdict: "YES", flags: timedOutFlags("100s"), slow: true,
			why: "GET /_status/healthz is 404: after the 30 s delay and 3 failures (period 10 s) the nginx stand-in is killed (exits 0 on SIGTERM) and restarted: --timeout 100s (124), restartCount >= 1, an Unhealthy event",
			check: func(c *conformanceCase) {
				t := c.t
				c.args = withoutFlag(c.args, "-q")
				r := c.run()
				expectCode(t, r, 124)
				cs := containerStatus(t, parsePod(t, r.stdout), "nginx")
				if cs.RestartCount < 1 {
					t.Errorf("restartCount %d, want >= 1", cs.RestartCount)
				}
				if !strings.Contains(r.stderr, "Liveness probe failed") {
					t.Errorf("stderr lacks the Unhealthy event\n%s", r.stderr)
				}
			}},
		{path: "pods/probe/pod-with-tcp-socket-healthcheck.yaml", verdict: "NO", skip: skipRedis},
		{path: "pods/probe/tcp-liveness-readiness.yaml", verdict: "NO", skip: skipNoImage + "registry.k8s.io/goproxy (a listener on 8080 for the TCP probes)"},
		nginxReady("pods/qos/qos-pod-2.yaml", "YES", v1.PodQOSBurstable),
		nginxReady("pods/qos/qos-pod-3.yaml", "YES", v1.PodQOSBestEffort),
		{path: "pods/qos/qos-pod-4.yaml", verdict: "PARTIAL", skip: skipRedis + " (its second container)"},
		{path: "pods/qos/qos-pod-5.yaml", verdict: "YES", flags: detachFlags, oom: oomGuaranteed,
			why:   "detached: Guaranteed, pod cgroup cpu quota 70000/100000 and memory 209715200 on the host, then podrun down",
			check: cgroupRow("qos-example/qos-demo-5", v1.PodQOSGuaranteed, cpuQuota(70000, 100000), memoryLimit(200<<20))},
		{path: "pods/qos/qos-pod.yaml", verdict: "YES", flags: detachFlags, oom: oomGuaranteed,
			why:   "detached: Guaranteed, pod cgroup cpu quota 70000/100000 and memory 209715200 on the host, then podrun down",
			check: cgroupRow("qos-example/qos-demo", v1.PodQOSGuaranteed, cpuQuota(70000, 100000), memoryLimit(200<<20))},
		{path: "pods/resource/cpu-request-limit-2.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "cpu request 100 exceeds the node: rejected (OutOfcpu, 125)", check: rejectedRow("OutOfcpu", "cpu-demo-2")},
		{path: "pods/resource/cpu-request-limit.yaml", verdict: "NO", skip: skipNoImage + "vish/stress"},
		{path: "pods/resource/extended-resource-pod-2.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "example.com/dongle the node lacks: rejected (125)", check: rejectedRow("OutOfexample.com/dongle", "extended-resource-demo-2")},
		{path: "pods/resource/extended-resource-pod.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "example.com/dongle the node lacks: rejected (125)", check: rejectedRow("OutOfexample.com/dongle", "extended-resource-demo")},
		{path: "pods/resource/memory-request-limit-2.yaml", verdict: "NO", skip: skipNoImage + "polinux/stress"},
		{path: "pods/resource/memory-request-limit.yaml", verdict: "NO", skip: skipNoImage + "polinux/stress"},
		{path: "pods/resource/pod-level-cpu-request-limit.yaml", verdict: "NO", skip: skipNoImage + "vish/stress"},
		{path: "pods/resource/pod-level-memory-request-limit.yaml", verdict: "NEG", flags: timedOutFlags("15s"), slow: true,
			why: "the nginx image has no stress: on containerd the container cannot start and Always retries with back-off: --timeout 15s (124), never Running, the start error names stress; " +
				"on CRI-O runc create already fails: CreateContainerError naming stress, 125 (docs/cri-o.md)",
			check: func(c *conformanceCase) {
				notRun := func(t *testing.T, p *v1.Pod, reasons ...string) {
					cs := containerStatus(t, p, "memory-demo-ctr")
					if cs.State.Running != nil || cs.Ready {
						t.Errorf("container %+v, want it never running", cs.State)
					}
					if w := cs.State.Waiting; w == nil || !slices.Contains(reasons, w.Reason) {
						t.Errorf("container state %+v, want waiting %s", cs.State, strings.Join(reasons, " or "))
					}
					if !strings.Contains(fmt.Sprintf("%+v %+v", cs.State, cs.LastTerminationState), "stress") {
						t.Errorf("the status does not name stress: %+v %+v", cs.State, cs.LastTerminationState)
					}
				}
				byRuntime(c.t,
					timedOutRow(func(t *testing.T, p *v1.Pod, out string) {
						notRun(t, p, "RunContainerError", "CrashLoopBackOff")
					}),
					func(c *conformanceCase) {
						r := c.run()
						expectCode(c.t, r, 125)
						notRun(c.t, parsePod(c.t, r.stdout), "CreateContainerError")
					})(c)
			}},
		{path: "pods/resource/pod-level-pid-limit.yaml", verdict: "STAND-IN", flags: []string{"--timeout", "60s"},
			why:   "a pod-level pids limit: not a resource name the API knows (kubelet v1.37 refuses it): 125",
			check: refusedRow(`spec.resources.limits[pids]: Invalid value: "pids": must be a standard resource type or fully qualified`)},
		lowersOOM(oomGuaranteed, idleReady("pods/resource/pod-level-resize.yaml", "pause:3.9 and registry.k8s.io/nginx; resizePolicy is for the API server")),
		nodeSizedRow("pods/resource/pod-level-resource-managers-container-scope-mixed.yaml", "STAND-IN", "container-scope-mixed"),
		nodeSizedRow("pods/resource/pod-level-resource-managers-empty-shared-pool.yaml", "NEG", "empty-shared-pool"),
		nodeSizedRow("pods/resource/pod-level-resource-managers-pod-scope-mixed.yaml", "STAND-IN", "pod-scope-mixed"),
		{path: "pods/resource/pod-level-resources.yaml", verdict: "YES", flags: readyFlags, skip: crioAliasSkip("fedora"),
			why: "nginx and fedora (busybox) sleep inf with pod-level resources: Ready, then torn down (exit 0)", check: readyRow()},
		lowersOOM(oomGuaranteed, idleReady("pods/resource/pod-resize.yaml", "pause:3.8, Guaranteed in qos-example")),
		{path: "pods/restart-policy/restart-all-containers.yaml", verdict: "YES", flags: timedOutFlags("100s"),
			why: "feature-dependent (on by default since v1.36): the sidecar's exit 88 after 60 s matches its RestartAllContainers rule, so the pod restarts in place (the init container runs again); --timeout ends the run (124) with every container restarted once",
			check: timedOutRow(func(t *testing.T, p *v1.Pod, _ string) {
				for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
					if s.RestartCount != 1 {
						t.Errorf("%s: restartCount %d, want 1 (one restart of the whole pod)", s.Name, s.RestartCount)
					}
					if lt := s.LastTerminationState.Terminated; lt == nil || lt.Reason != "RestartingAllContainers" {
						t.Errorf("%s: lastState %+v, want RestartingAllContainers", s.Name, s.LastTerminationState)
					}
					running := s.State.Running != nil
					if running == (s.Name == "setup-environment") {
						t.Errorf("%s: state %+v: want setup-environment completed again, the others running", s.Name, s.State)
					}
				}
			})},
		defaultAppArmorRow(),
		aaRow("pods/security/apparmor/hello-apparmor.yaml", "hello-apparmor-container"),
		aaRow("pods/security/hello-apparmor-2.yaml", "hello-apparmor-2"),
		aaRow("pods/security/hello-apparmor.yaml", "hello-apparmor"),
		{path: "pods/security/seccomp/alpha/audit-pod.yaml", verdict: "NO", skip: skipEcho},
		{path: "pods/security/seccomp/alpha/default-pod.yaml", verdict: "NO", skip: skipEcho},
		{path: "pods/security/seccomp/alpha/violation-pod.yaml", verdict: "NO", skip: skipEcho},
		{path: "pods/security/seccomp/fields.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "ephemeralContainers cannot be set at create time: refused before anything starts (125)", check: refusedRow("ephemeralContainers")},
		{path: "pods/security/seccomp/ga/audit-pod.yaml", verdict: "NO", skip: skipEcho},
		{path: "pods/security/seccomp/ga/default-pod.yaml", verdict: "NO", skip: skipEcho},
		{path: "pods/security/seccomp/ga/fine-pod.yaml", verdict: "NO", skip: skipEcho + "; profiles/fine-grained.json is not in the corpus"},
		{path: "pods/security/seccomp/ga/violation-pod.yaml", verdict: "NEG", skip: skipEcho + ": the pull would fail before the violation profile matters, so the row would pass for the wrong reason"},
		{path: "pods/security/seccomp/profiles/violation.json", verdict: "n/a", skip: skipData},
		{path: "pods/security/security-context-2.yaml", verdict: "STAND-IN",
			why: "hello-app's idle stand-in; exec: the container's runAsUser 2000 overrides the pod's 1000, no_new_privs",
			check: execRow("security-context-demo-2", "sec-ctx-demo-2", "id -u; grep NoNewPrivs /proc/1/status", func(t *testing.T, out string) {
				expectMatch(t, out, `^2000$`, `^NoNewPrivs:\s+1$`)
			})},
		idleReady("pods/security/security-context-3.yaml", "hello-app:2.0 with no securityContext"),
		{path: "pods/security/security-context-4.yaml", verdict: "STAND-IN",
			why: "hello-app's idle stand-in; exec: CapEff has NET_ADMIN (12) and SYS_TIME (25)",
			check: execRow("security-context-demo-4", "sec-ctx-4", "grep CapEff /proc/1/status", func(t *testing.T, out string) {
				f := strings.Fields(out)
				if len(f) != 2 {
					t.Fatalf("CapEff line %q", out)
				}
				capEff, err := strconv.ParseUint(f[1], 16, 64)
				if err != nil {
					t.Fatal(err)
				}
				for name, bit := range map[string]uint{"NET_ADMIN": 12, "SYS_TIME": 25} {
					if capEff&(1<<bit) == 0 {
						t.Errorf("CapEff %s lacks %s", f[1], name)
					}
				}
			})},
		{path: "pods/security/security-context-5.yaml", verdict: "YES",
			why: "agnhost:2.45's stand-in has busybox; exec: uid 1000, gid 3000, groups 3000 and 4000, no_new_privs",
			check: execRow("security-context-demo", "sec-ctx-demo", "id -u; id -g; id -G; grep NoNewPrivs /proc/1/status", func(t *testing.T, out string) {
				expectMatch(t, out, `^1000\n3000\n3000 4000\n`, `^NoNewPrivs:\s+1$`)
			})},
		{path: "pods/security/security-context-6.yaml", verdict: "YES",
			why: "supplementalGroupsPolicy Strict (containerd 2 supports it); exec: groups exactly 3000 and 4000",
			check: execRow("security-context-demo", "sec-ctx-demo", "id -u; id -g; id -G", func(t *testing.T, out string) {
				if out != "1000\n3000\n3000 4000\n" {
					t.Errorf("id: %q, want uid 1000, gid 3000, groups exactly 3000 4000", out)
				}
			})},
		{path: "pods/security/security-context-7.yaml", verdict: "NEG", flags: []string{"--timeout", "60s"},
			why: "cgroupOptions is not in k8s.io/api v0.37: a strict decode error naming the field, 125", check: refusedRow("cgroupOptions: unknown field")},
		{path: "pods/security/security-context.yaml", verdict: "STAND-IN",
			why: "node-hello's idle stand-in; exec: uid 1000 with fsGroup 2000 among its groups, the emptyDir /data/demo group 2000",
			check: execRow("security-context-demo", "sec-ctx-demo", "id -u; id -G; stat -c %g /data/demo", func(t *testing.T, out string) {
				l := lines(out)
				if len(l) != 3 || l[0] != "1000" || !strings.Contains(" "+l[1]+" ", " 2000 ") || l[2] != "2000" {
					t.Errorf("in the container: %q, want uid 1000, groups with 2000, /data/demo group 2000", out)
				}
			})},
		{path: "pods/share-process-namespace.yaml", verdict: "YES", oom: oomInfra,
			why: "exec: from the shell container ps shows the sandbox's pause as PID 1 and nginx's processes",
			check: execRow("nginx", "shell", "ps -o pid,args", func(t *testing.T, out string) {
				expectMatch(t, out, `^\s*1\s+.*(pause|idle)`, `nginx`, `httpd`)
			})},
		nginxReady("pods/simple-pod.yaml", "YES", v1.PodQOSBestEffort),
		{path: "pods/storage/expandable-pvc-pod.yaml", verdict: "NO", skip: skipPVC},
		{path: "pods/storage/projected-clustertrustbundle.yaml", verdict: "NO", skip: "clusterTrustBundle projections need the API server"},
		{path: "pods/storage/projected-podcertificate.yaml", verdict: "NO", skip: "podCertificate projections need the API server and a signer"},
		{path: "pods/storage/projected-secret-downwardapi-configmap.yaml", verdict: "YES+SEC+CM", own: "corpus/projected-objects.yaml",
			why: "exec: the projected volume holds the Secret's and ConfigMap's items and the downward API files (mysecret, myconfigmap written by the test)",
			check: execRow("volume-test", "container-test", `cd /projected-volume; ls; cat my-group/my-username; echo; cat my-group/my-config; echo`, func(t *testing.T, out string) {
				expectHasLines(t, out, "cpu_limit", "labels", "my-group", "my-app", "my-config-value")
			})},
		{path: "pods/storage/projected-service-account-token.yaml", verdict: "NO/NEG", flags: []string{"--timeout", "60s"},
			why:   "NEG: a serviceAccountToken projection needs an API server: refused before anything starts (125)",
			check: refusedRow("serviceAccountToken projections are not supported")},
		{path: "pods/storage/projected.yaml", verdict: "YES+SEC", own: "corpus/projected-secrets.yaml",
			why: "exec: the projected volume holds both Secrets' files, read-only (user, pass written by the test)",
			check: execRow("test-projected-volume", "test-projected-volume", `ls /projected-volume; cat /projected-volume/username.txt; echo; cat /projected-volume/password.txt; echo`, func(t *testing.T, out string) {
				expectHasLines(t, out, "password.txt", "username.txt", "admin", "1f2d1e2e67df")
			})},
		{path: "pods/storage/pv-duplicate.yaml", verdict: "NO", skip: skipPVC},
		{path: "pods/storage/pv-pod-backup.yaml", verdict: "NO", skip: skipPVC + "; httpd:2.4 is not mirrored"},
		{path: "pods/storage/pv-pod.yaml", verdict: "NO", skip: skipPVC},
		{path: "pods/storage/redis.yaml", verdict: "NO", skip: skipRedis},
		{path: "pods/user-namespaces-stateless.yaml", verdict: "YES",
			why: "YES if userns is supported (containerd 2, runc >= 1.2, kernel with idmapped mounts); exec: /proc/self/uid_map is not the identity map; else (runc 1.1, the debian flavor of the testbed) refused: 125, nothing created",
			check: usernsRow(execRow("userns", "shell", "cat /proc/self/uid_map", func(t *testing.T, out string) {
				f := strings.Fields(out)
				if len(f) < 3 || (f[0] == "0" && f[1] == "0") {
					t.Errorf("uid_map %q is the host's: no user namespace", out)
				}
			}))},

		// ----------------------------------------------------- security/
		nginxReady("security/example-baseline-pod.yaml", "YES", v1.PodQOSBestEffort),

		// ------------------------------------------------------ service/
		{path: "service/networking/custom-dns.yaml", verdict: "YES",
			why: "exec: dnsPolicy None with dnsConfig gives exactly that resolv.conf",
			check: execRow("dns-example", "test", "cat /etc/resolv.conf", func(t *testing.T, out string) {
				// The lines in any order: containerd writes search first.
				want := []string{"nameserver 192.0.2.1", "options ndots:2 edns0", "search ns1.svc.cluster-domain.example my.dns.search.suffix"}
				got := lines(out)
				sort.Strings(got)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("/etc/resolv.conf:\n%s\nwant:\n%s", out, want)
				}
			})},
	}
}

// defaultAppArmorRow is pods/security/apparmor/default-pod.yaml. The corpus
// calls RuntimeDefault a no-op on a host without AppArmor; the kubelet (and
// podrun, see the README's Admission) rejects any profile but Unconfined
// there, so on such a host the row expects the AppArmor rejection.
func defaultAppArmorRow() conformanceRow {
	r := conformanceRow{path: "pods/security/apparmor/default-pod.yaml", verdict: "YES"}
	if hostHasAppArmor() {
		r.flags = readyFlags
		r.why = "AppArmor host: RuntimeDefault; logs Hello AppArmor!, Ready, then torn down (exit 0)"
		r.check = func(c *conformanceCase) {
			readyRow()(c)
		}
		return r
	}
	r.flags = []string{"--timeout", "60s"}
	r.why = "host without AppArmor: the kubelet rejects RuntimeDefault too (AppArmor, 125), unlike the corpus's 'no-op'"
	r.check = rejectedRow("AppArmor", "default-pod")
	return r
}

// nodeSizedRow is a pod-level-resource-managers row: pod-level 4 CPU /
// 4 GiB. On a node with fewer CPUs admission rejects it (OutOfcpu, 125);
// on a larger one it runs (the pause stand-ins) until Ready. The static CPU
// manager the empty-shared-pool row is about is not podrun's.
func nodeSizedRow(path, verdict, pod string) conformanceRow {
	return conformanceRow{path: path, verdict: verdict, flags: []string{"--timeout", "90s", "--wait=ready"},
		why: "pod-level cpu 4 / 4Gi: rejected (OutOfcpu, 125) on a node with < 4 CPUs, else Ready",
		check: func(c *conformanceCase) {
			t := c.t
			r := c.run()
			if nodeCPUs(t) < 4 {
				expectRejected(t, c.e, r, "OutOfcpu", pod)
				return
			}
			if r.code != 0 && !strings.Contains(r.stderr, "(reason OutOfmemory)") {
				t.Errorf("exit %d, want Ready (0) or OutOfmemory\n%s", r.code, r)
			}
		}}
}

// withoutFlag drops flag from args.
func withoutFlag(args []string, flag string) []string {
	var out []string
	for _, a := range args {
		if a != flag {
			out = append(out, a)
		}
	}
	return out
}
