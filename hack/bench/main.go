// Command bench measures podrun against the bare CRI call sequence and
// against podman, for N one-container pods that run /bin/true at once:
//
//   - bare:   hack/cribare -n N (per pod ImageStatus, RunPodSandbox,
//     CreateContainer, StartContainer, poll until exit, StopPodSandbox,
//     RemovePodSandbox; nothing else), all N concurrently;
//   - podrun: podrun -q --root-dir FRESH -f MANIFEST, the same N pods as
//     one manifest (busybox, imagePullPolicy IfNotPresent, restartPolicy
//     Never), on the same runtime; FRESH is a new root dir every round,
//     as on a CI machine's first run, unless -keep-root keeps one per
//     testbed across rounds, as a node's later runs do;
//   - podman: podman kube play of the same manifest, podman wait of its
//     containers, podman kube down (Debian's podman as hack/testbed.sh
//     podman configures it, pulling from the testbed's mirror; "absent"
//     when it is not there). Not a CRI runtime: one column for every
//     runtime row, its ratio over that row's bare time.
//
// Sizes (-sizes, default 1,10,20,50,100) each get -rounds rounds after -warmup
// unmeasured ones. Every round runs every side once: bare and podrun on
// each testbed (-testbed DIR, repeatable: the default v2 testbed and the
// Debian containerd 1.6 instance, say), then podman; the order reverses
// every other round, so that drift (other load on shared cores, a runtime
// warming up) hits every side alike. Each side is a child process: wall
// time from start to exit, CPU (user+sys) and peak RSS from its rusage.
//
// The table gives medians with min-max, podrun's ratio over bare with its
// goal (1.05 on containerd 2.x, 1.10 on 1.x), podman's ratio, podrun's CPU
// per pod (goal 20ms at every size) and peak RSS (goals 40 MiB at 50 pods,
// 60 MiB at 100), each goal beside its figure, under a header with the
// machine and the runtime versions.
//
// The cold-start table (issue 18, cold.go; -tables cold) runs one pod with
// an init container, a sidecar and a main container on three images the
// runtime must pull from the slow registry of hack/testbed.sh
// slow-registry (a network namespace behind a delayed, rate-limited
// link): podrun, the bare sequential CRI floor (hack/cribare -seq) and
// the bare sequence with every pull sent at once (-seq -at-once, whose
// last pull's end plus the main container's second is the runtime's
// floor, printed under the table and beside each goal) on each testbed,
// the testbed's kubelet v1.37.2 as a static pod, and podman kube play;
// the images are removed before every side. Once per link
// model of -cold-links, each brought up before and down after by the
// bench: per-connection (8 MB/s per connection) and shared (100 Mbit/s
// for all). Goals, judged on the per-connection link: podrun's time to
// the main container's end at most 0.6 of the kubelet's and 0.5 of
// podman's; the shared link's ratios are printed, not judged.
//
// The log throughput table (issue 19) measures one pod whose container
// prints -log-bytes bytes of 2-byte lines (yes | head -c N), on each
// testbed:
//
//   - bare:   hack/cribare -sh 'yes | head -c N': the runtime writes the
//     log and nobody reads it;
//   - podrun: podrun -q of the same pod, its output streamed to a file
//     (checked to hold the N bytes).
//
// -log-rounds rounds, no warm-up, the two sides alternating. It gives
// median wall times with min-max, podrun's ratio over bare (goal 1.20),
// podrun's CPU, and the runtime's own CPU (containerd's, from its pid file
// in the testbed dir) during each side: what following the log costs the
// runtime. -tables picks the tables (cold, pods, logs; all three by
// default).
//
// The verdicts are printed, not enforced: the command exits non-zero only
// when a side failed to run.
//
//	go run ./hack/bench -podrun ./bin/podrun -testbed /var/lib/podrun-testbed   (or: make bench)
//	go run ./hack/bench -podrun ./bin/podrun -testbed /var/lib/podrun-testbed -tables cold -cold-rounds 5
//	go run ./hack/bench -podrun ./bin/podrun -testbed /var/lib/podrun-testbed -tables logs -log-rounds 5
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Goals of issues 10 and 18: wall ratio over bare per containerd line,
// CPU per pod at every size, peak RSS at the sizes rssGoalMiB names.
const (
	goalV2  = 1.05
	goalV1  = 1.10
	cpuGoal = 20 * time.Millisecond
	logGoal = 1.20
)

// rssGoalMiB is podrun's peak RSS goal by pod count.
var rssGoalMiB = map[int]float64{50: 40, 100: 60}

var (
	podrunPath      = flag.String("podrun", "", "podrun binary to measure (required)")
	cribarePath     = flag.String("cribare", "", "cribare binary; default: build ./hack/cribare into a temp dir once")
	sizesFlag       = flag.String("sizes", "1,10,20,50,100", "pod counts, comma-separated")
	roundsFlag      = flag.String("rounds", "11,7,5,3,2", "measured rounds per size: one number for every size, or one per size")
	warmup          = flag.Int("warmup", 1, "rounds run first and not counted, per size")
	podmanMode      = flag.String("podman", "auto", "auto: measure podman if it and the first testbed's $DIR/podman/env are there, else show it absent; off: never")
	tablesFlag      = flag.String("tables", "cold,pods,logs", "tables to measure, comma-separated: cold (the cold-start pod on the slow registry), pods (N /bin/true pods), logs (log throughput)")
	coldRounds      = flag.Int("cold-rounds", 3, "cold start: measured rounds per link model (no warm-up)")
	coldLinksFlag   = flag.String("cold-links", "per-connection,shared", "cold start: the slow registry's link models, in this order, comma-separated: per-connection (8 MB/s per connection, the goals judged here), shared (100 Mbit/s for all); the bench brings each up (hack/testbed.sh slow-registry up MODEL) and down after")
	kubeletMode     = flag.String("kubelet", "auto", "cold start: auto: measure the first testbed's kubelet, holding /tmp/podrun-kubelet.lock for the table and bringing it up (kubelet-up) if needed (and down again after), or show it absent if it cannot be; off: never")
	kubeletLockWait = flag.Duration("kubelet-lock-wait", 30*time.Minute, "cold start: how long to wait for /tmp/podrun-kubelet.lock, the shared kubelet's users' lock")
	testbedScript   = flag.String("testbed-script", "hack/testbed.sh", "cold start: the testbed script whose slow-registry up|down|env brings the slow registry up and down and names its images")
	logBytes        = flag.Int("log-bytes", 20000000, "log throughput: the bytes the container prints, in 2-byte lines")
	logRounds       = flag.Int("log-rounds", 3, "log throughput: measured rounds per testbed (no warm-up)")
	keepRoot        = flag.Bool("keep-root", false, "pods table: podrun keeps one --root-dir per testbed across rounds and sizes, as a node's later runs do (the pod network's cni-validated record reused); default a fresh one every round, as on a CI machine's first run")
	testbeds        multiFlag
)

func init() {
	flag.Var(&testbeds, "testbed", "testbed dir whose testbed.env names the runtime (repeatable); default $PODRUN_TESTBED_DIR, else $CONTAINER_RUNTIME_ENDPOINT alone")
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// tmp holds cribare, the manifests and the podrun root dirs; fail removes it.
var tmp string

// sample is one run of one side.
type sample struct {
	wall, cpu time.Duration
	maxRSSKiB int64
	ioStall   time.Duration // IO full-stall time during the run; -1 unknown
}

// target is one CRI runtime to measure bare and podrun on.
type target struct {
	dir      string // testbed dir, "" if only an endpoint is known
	endpoint string
	name     string // "containerd 2.4.2"
	runc     string // "runc 1.3.6", or "" if unknown
	goal     float64
}

// podman is the podman side, or nil when absent.
type podman struct {
	env     []string // the private configuration's variables
	certDir string
	version string // "podman 4.3.1 (runc 1.1.5+ds1)"
}

func main() {
	flag.Parse()
	sizes, err := ints(*sizesFlag)
	if err != nil || len(sizes) == 0 {
		fail(fmt.Sprintf("-sizes %q: want comma-separated pod counts", *sizesFlag))
	}
	rounds, err := ints(*roundsFlag)
	if err == nil && len(rounds) == 1 {
		rounds = slices.Repeat(rounds, len(sizes))
	}
	if err != nil || len(rounds) != len(sizes) {
		fail(fmt.Sprintf("-rounds %q: want one count, or one per size (%d)", *roundsFlag, len(sizes)))
	}
	tables := map[string]bool{}
	for _, t := range strings.Split(*tablesFlag, ",") {
		if t = strings.TrimSpace(t); t != "pods" && t != "logs" && t != "cold" {
			fail(fmt.Sprintf("-tables %q: want some of cold, pods, logs", *tablesFlag))
		}
		tables[t] = true
	}
	links, err := coldLinks(*coldLinksFlag)
	if err != nil {
		fail(err.Error())
	}
	if *podrunPath == "" || *warmup < 0 || slices.Min(sizes) < 1 || slices.Min(rounds) < 1 ||
		(*podmanMode != "auto" && *podmanMode != "off") || *logBytes < 1 || *logRounds < 1 ||
		*coldRounds < 1 || (*kubeletMode != "auto" && *kubeletMode != "off") {
		fail("usage: bench -podrun PATH [-testbed DIR]... [-tables cold,pods,logs] [-sizes 1,10,20,50,100] [-rounds 11,7,5,3,2] [-warmup N] [-podman auto|off] [-cold-rounds N] [-cold-links per-connection,shared] [-kubelet auto|off] [-kubelet-lock-wait D] [-testbed-script PATH] [-log-bytes N] [-log-rounds N] [-cribare PATH]")
	}
	if tmp, err = os.MkdirTemp("", "podrun-bench-"); err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(tmp)
	if *cribarePath == "" {
		*cribarePath = filepath.Join(tmp, "cribare")
		if out, err := exec.Command("go", "build", "-o", *cribarePath, "./hack/cribare").CombinedOutput(); err != nil {
			fail(fmt.Sprintf("building cribare: %v\n%s", err, out))
		}
	}
	if abs, err := filepath.Abs(*podrunPath); err == nil {
		*podrunPath = abs
	}
	// Both binaries run from copies, as an installed binary is written
	// (installedCopy).
	for _, p := range []*string{podrunPath, cribarePath} {
		c, err := installedCopy(*p, tmp)
		if err != nil {
			fail(err.Error())
		}
		*p = c
	}

	targets := findTargets()
	var pm *podman
	if tables["pods"] || tables["cold"] {
		pm = findPodman(targets[0].dir)
	}
	header(targets, pm, tables["pods"] || tables["cold"])
	var verdicts []string
	if tables["cold"] {
		verdicts = append(verdicts, coldTables(targets, pm, links)...)
	}
	if tables["pods"] {
		verdicts = append(verdicts, podsTable(targets, pm, sizes, rounds)...)
	}
	if tables["logs"] {
		verdicts = append(verdicts, logsTable(targets)...)
	}
	fmt.Printf("loadavg after: %s; 1-minute load during the run: %s\n", loadavg(), loadSeen)
	for _, v := range verdicts {
		fmt.Println(v)
	}
}

// podsTable measures N /bin/true pods per size on every side, prints its
// table and returns its verdicts.
func podsTable(targets []target, pm *podman, sizes, rounds []int) []string {
	roots := "a fresh podrun --root-dir every round"
	if *keepRoot {
		roots = "podrun's --root-dir kept across rounds (-keep-root)"
	}
	fmt.Printf("pods run /bin/true (busybox); rounds %s after %d warm-up per size, sides alternating, %s; loadavg before: %s\n",
		*roundsFlag, *warmup, roots, loadavg())
	type row struct {
		t          *target
		ti         int // t's index, for its kept root dir
		pods       int
		bare, prun []sample
		pman       []sample
	}
	var rows []*row
	for si, n := range sizes {
		manifest := filepath.Join(tmp, fmt.Sprintf("pods-%d.yaml", n))
		if err := os.WriteFile(manifest, []byte(manifestOf(n)), 0o644); err != nil {
			fail(err.Error())
		}
		var sizeRows []*row
		for i := range targets {
			sizeRows = append(sizeRows, &row{t: &targets[i], ti: i, pods: n})
		}
		var pman []sample
		for r := 0; r < *warmup+rounds[si]; r++ {
			measured := r >= *warmup
			var sides []func()
			for _, rw := range sizeRows {
				sides = append(sides,
					func() {
						s := measure(bareCmd(rw.t, n))
						if measured {
							rw.bare = append(rw.bare, s)
						}
					},
					func() {
						root := filepath.Join(tmp, "root")
						if *keepRoot {
							root = filepath.Join(tmp, fmt.Sprintf("root-%d", rw.ti))
						}
						s := measure(podrunCmd(rw.t, root, manifest))
						if !*keepRoot {
							os.RemoveAll(root)
						}
						if measured {
							rw.prun = append(rw.prun, s)
						}
					})
			}
			if pm != nil {
				sides = append(sides, func() {
					s := pm.run(manifest, n)
					if measured {
						pman = append(pman, s)
					}
				})
			}
			if r%2 == 1 {
				slices.Reverse(sides)
			}
			for _, side := range sides {
				side()
			}
			fmt.Fprintf(os.Stderr, "bench: %s: round %d/%d done (loadavg %s)\n", podsString(n), r+1, *warmup+rounds[si], loadavg())
		}
		for _, rw := range sizeRows {
			rw.pman = pman
		}
		rows = append(rows, sizeRows...)
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "runtime\tpods\tbare ms (min-max)\tpodrun ms (min-max)\tpodrun/bare\tgoal\tpodman ms (min-max)\tpodman/bare\tpodrun CPU/pod\tgoal\tpodrun peak RSS\tgoal\t")
	var verdicts, notes []string
	for _, rw := range rows {
		for _, n := range []string{stallNote("podrun", rw.prun), stallNote("bare", rw.bare)} {
			if n != "" {
				notes = append(notes, fmt.Sprintf("%s, %s: %s", rw.t.name, podsString(rw.pods), n))
			}
		}
		bw, pw := walls(rw.bare), walls(rw.prun)
		ratio := float64(median(pw)) / float64(median(bw))
		cpuPerPod := median(cpus(rw.prun)) / time.Duration(rw.pods)
		var rss int64
		for _, s := range rw.prun {
			rss = max(rss, s.maxRSSKiB)
		}
		rssMiB := float64(rss) / 1024
		pmCol, pmRatio := "absent", "-"
		if len(rw.pman) > 0 {
			mw := walls(rw.pman)
			pmCol = spread(mw)
			pmRatio = fmt.Sprintf("%.2f", float64(median(mw))/float64(median(bw)))
		}
		rssGoal, hasRSSGoal := rssGoalMiB[rw.pods]
		rssGoalCol := "-"
		if hasRSSGoal {
			rssGoalCol = fmt.Sprintf("%.0f MiB", rssGoal)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.3f\t%.2f\t%s\t%s\t%.1fms\t%v\t%.1f MiB\t%s\t\n", rw.t.name, rw.pods,
			spread(bw), spread(pw), ratio, rw.t.goal, pmCol, pmRatio, msf(cpuPerPod), cpuGoal, rssMiB, rssGoalCol)
		var miss []string
		if ratio > rw.t.goal {
			miss = append(miss, fmt.Sprintf("ratio %.3f > %.2f", ratio, rw.t.goal))
		}
		if cpuPerPod > cpuGoal {
			miss = append(miss, fmt.Sprintf("CPU/pod %.1fms > %v", msf(cpuPerPod), cpuGoal))
		}
		if hasRSSGoal && rssMiB > rssGoal {
			miss = append(miss, fmt.Sprintf("peak RSS %.1f MiB > %.0f MiB", rssMiB, rssGoal))
		}
		v := "meets the goals"
		if len(miss) > 0 {
			v = "MISSES: " + strings.Join(miss, ", ")
		}
		verdicts = append(verdicts, fmt.Sprintf("%s, %s: %s", rw.t.name, podsString(rw.pods), v))
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Println("note: " + n)
	}
	return verdicts
}

// findTargets reads each -testbed's testbed.env; without -testbed, the
// environment's.
func findTargets() []target {
	dirs := testbeds
	if len(dirs) == 0 && os.Getenv("PODRUN_TESTBED_DIR") != "" {
		dirs = []string{os.Getenv("PODRUN_TESTBED_DIR")}
	}
	var ts []target
	for _, d := range dirs {
		env, err := readEnv(filepath.Join(d, "testbed.env"))
		if err != nil {
			fail(fmt.Sprintf("testbed %s: %v (bash hack/testbed.sh up?)", d, err))
		}
		runc := env["PODRUN_TESTBED_RUNC"]
		if runc == "" {
			// A testbed brought up before testbed.env named it: its
			// containerd config does (BinaryName), or it runs the one in PATH.
			runc = "runc"
			for _, l := range strings.Split(readFile(filepath.Join(d, "containerd.toml")), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "BinaryName" {
					runc = strings.Trim(strings.TrimSpace(v), `"`)
				}
			}
		}
		ts = append(ts, target{dir: d, endpoint: env["CONTAINER_RUNTIME_ENDPOINT"], runc: runcVersion(runc)})
	}
	if len(ts) == 0 {
		e := os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
		if e == "" {
			fail("no -testbed, PODRUN_TESTBED_DIR or CONTAINER_RUNTIME_ENDPOINT: which runtime?")
		}
		ts = append(ts, target{endpoint: e})
	}
	for i := range ts {
		t := &ts[i]
		if t.endpoint == "" {
			fail(fmt.Sprintf("testbed %s: its testbed.env has no CONTAINER_RUNTIME_ENDPOINT", t.dir))
		}
		// "containerd 1.6.20~ds1 (CRI v1): ready"
		out, err := exec.Command(*cribarePath, "-endpoint", t.endpoint, "-ping", "-v").CombinedOutput()
		f := strings.Fields(string(out))
		if err != nil || len(f) < 2 {
			fail(fmt.Sprintf("the runtime at %s does not answer: %v\n%s", t.endpoint, err, out))
		}
		t.name = f[0] + " " + strings.TrimPrefix(f[1], "v")
		t.goal = goalV2
		if strings.HasPrefix(t.name, "containerd 1.") {
			t.goal = goalV1
		}
	}
	return ts
}

// findPodman: podman and the private configuration hack/testbed.sh podman
// writes under dir, or nil (absent, or -podman off).
func findPodman(dir string) *podman {
	if *podmanMode == "off" || dir == "" {
		return nil
	}
	bin, err := exec.LookPath("podman")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: podman absent (not in PATH; bash hack/testbed.sh podman installs it)")
		return nil
	}
	conf := filepath.Join(dir, "podman")
	env, err := readEnv(filepath.Join(conf, "env"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: podman absent: %v (bash hack/testbed.sh podman writes it)\n", err)
		return nil
	}
	pm := &podman{env: os.Environ(), certDir: filepath.Join(conf, "certs")}
	for k, v := range env {
		pm.env = append(pm.env, k+"="+v)
	}
	out, _ := exec.Command(bin, "--version").Output()
	pm.version = strings.TrimSpace(strings.Replace(string(out), " version ", " ", 1))
	c := exec.Command(bin, "info", "--format", "{{.Host.OCIRuntime.Version}}")
	c.Env = pm.env
	if out, err := c.Output(); err == nil {
		pm.version += " (" + strings.Replace(firstLine(string(out)), " version ", " ", 1) + ")"
	}
	return pm
}

// header names the machine, the runtimes, podman (when the pods table
// measures it) and podrun.
func header(ts []target, pm *podman, withPodman bool) {
	fmt.Printf("machine: %s, %d cores, kernel %s\n", cpuModel(), runtime.NumCPU(), strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")))
	for _, t := range ts {
		fmt.Printf("runtime: %s, %s (%s)\n", t.name, orDefault(t.runc, "runc unknown"), t.endpoint)
	}
	switch {
	case pm != nil:
		fmt.Printf("podman:  %s\n", pm.version)
	case withPodman:
		fmt.Println("podman:  absent")
	}
	out, _ := exec.Command(*podrunPath, "version").Output()
	rev, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	fmt.Printf("podrun:  %s, commit %s\n", strings.TrimSpace(string(out)), orDefault(strings.TrimSpace(string(rev)), "unknown"))
}

// manifestOf is n one-container /bin/true pods as one multi-document manifest.
func manifestOf(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata:
  name: bench-%d
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["/bin/true"]
`, i)
	}
	return b.String()
}

func bareCmd(t *target, pods int) *exec.Cmd {
	return exec.Command(*cribarePath, "-endpoint", t.endpoint, "-n", strconv.Itoa(pods), "-image", "busybox", "-cmd", "/bin/true")
}

func podrunCmd(t *target, root, manifest string) *exec.Cmd {
	return exec.Command(*podrunPath, "-q", "--runtime-endpoint", t.endpoint, "--root-dir", root, "-f", manifest)
}

// run is one podman sample: kube play, wait for every container (each
// must exit 0), kube down. Its wall time spans the three; its CPU and RSS
// are podman's own (conmon and the runtime are not its waited children).
// A failure takes the pods down and aborts the benchmark.
func (pm *podman) run(manifest string, pods int) sample {
	names := make([]string, pods)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%d-c", i)
	}
	var total sample
	before := cgroupDirs(podmanUnified)
	defer removeNewEmpty(podmanUnified, before)
	for _, args := range [][]string{
		{"kube", "play", "--cert-dir", pm.certDir, manifest},
		append([]string{"wait"}, names...),
		{"kube", "down", manifest},
	} {
		cmd := exec.Command("podman", args...)
		cmd.Env = pm.env
		s, out, err := run(cmd)
		if err == nil && args[0] == "wait" {
			for _, code := range strings.Fields(string(out)) {
				if code != "0" {
					err = fmt.Errorf("a container exited %s", code)
				}
			}
		}
		if err != nil {
			down := exec.Command("podman", "kube", "down", manifest)
			down.Env = pm.env
			downOut, _ := down.CombinedOutput()
			fail(fmt.Sprintf("podman %s: %v\n%s\n(kube down: %s)", strings.Join(args, " "), err, out, downOut))
		}
		total.wall += s.wall
		total.cpu += s.cpu
		total.maxRSSKiB = max(total.maxRSSKiB, s.maxRSSKiB)
	}
	return total
}

// measure runs cmd to completion and aborts the benchmark if it fails.
func measure(cmd *exec.Cmd) sample {
	s, out, err := run(cmd)
	if err != nil {
		fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out))
	}
	return s
}

func run(cmd *exec.Cmd) (sample, []byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stalled := ioStalled()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, out.Bytes(), err
	}
	stall := time.Duration(-1)
	if after := ioStalled(); stalled >= 0 && after >= 0 {
		stall = after - stalled
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{
		wall:      wall,
		cpu:       time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		maxRSSKiB: ru.Maxrss, // KiB on Linux
		ioStall:   stall,
	}, out.Bytes(), nil
}

func walls(s []sample) []time.Duration {
	return sorted(s, func(x sample) time.Duration { return x.wall })
}
func cpus(s []sample) []time.Duration {
	return sorted(s, func(x sample) time.Duration { return x.cpu })
}

// sorted is f of each sample, sorted.
func sorted[S any](s []S, f func(S) time.Duration) []time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = f(x)
	}
	slices.Sort(d)
	return d
}

// median of a sorted slice.
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

// spread is "median (min-max)" in ms of a sorted slice.
func spread(d []time.Duration) string {
	return fmt.Sprintf("%.0f (%.0f-%.0f)", msf(median(d)), msf(d[0]), msf(d[len(d)-1]))
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ints(s string) ([]int, error) {
	var n []int
	for _, f := range strings.Split(s, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		n = append(n, i)
	}
	return n, nil
}

// readEnv parses KEY=VALUE lines (testbed.env, podman/env).
func readEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	if len(env) == 0 {
		return nil, errors.New(path + " has no settings")
	}
	return env, nil
}

// runcVersion is "runc 1.3.6" from `runc --version` of bin, or "".
func runcVersion(bin string) string {
	if bin == "" {
		return ""
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.Replace(firstLine(string(out)), " version ", " ", 1)
}

func cpuModel() string {
	for _, l := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// loadSeen is the range of the 1-minute load average loadavg has read.
var loadSeen loadRange

type loadRange struct{ lo, hi float64 }

func (l loadRange) String() string { return fmt.Sprintf("%.2f-%.2f", l.lo, l.hi) }

// loadavg is the three load averages, and notes the 1-minute one in loadSeen.
func loadavg() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	if l, err := strconv.ParseFloat(f[0], 64); err == nil {
		if loadSeen == (loadRange{}) || l < loadSeen.lo {
			loadSeen.lo = l
		}
		loadSeen.hi = max(loadSeen.hi, l)
	}
	return strings.Join(f[:3], " ")
}

func podsString(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}

// atFail is what fail undoes first, last in first: what the bench changed
// outside its temp dir (the kubelet it brought up).
var atFail []func()

func fail(msg string) {
	for i := len(atFail) - 1; i >= 0; i-- {
		atFail[i]()
	}
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	fmt.Fprintln(os.Stderr, "bench:", msg)
	os.Exit(1)
}
