package main

// The cold-start table (issue 18): one pod with an init container, a
// sidecar (an init container with restartPolicy Always) and a main
// container, on three images that no side has before its run, served by
// the slow registry of hack/testbed.sh slow-registry (a network namespace
// behind a veth pair with a delay and a rate limit):
//
//   - podrun: podrun -q -f of the pod on each testbed; its wall time to
//     its exit (the pod torn down too);
//   - bare:   hack/cribare -seq on each testbed: RunPodSandbox, then per
//     container PullImage, CreateContainer, StartContainer, one after the
//     other (the sequential floor), and its exit;
//   - bare, pulls at once: hack/cribare -seq -at-once: the same, with
//     every PullImage sent at the start beside RunPodSandbox. When the
//     last of its pulls ended, plus the main container's 1 s, is the
//     runtime's floor: the main container needs all three images before
//     it starts, whatever a client does through CRI;
//   - kubelet: the testbed's kubelet (its own containerd) runs the pod as
//     a static pod: from the manifest's arrival in its static pod dir to
//     the Ready condition, as its read-only /pods shows it (polled every
//     50 ms); then the manifest is removed and the pod waited for gone;
//   - podman: podman kube play + podman wait of the main container; kube
//     down after, not timed. Podman 4.3 has no sidecars (it runs every
//     init container to its end, so kube play would wait for the sidecar
//     forever): its manifest has the sidecar as the first regular
//     container, the same pulls and starts in the same order.
//
// Every side's time to the main container's end is the same measure: the
// exit time the runtime recorded for it (CRI finishedAt; podman inspect's
// State.FinishedAt), less the side's start, on this machine's clock; for
// podrun, which removes its pod at once, hack/cribare -exit-of watches the
// runtime for it meanwhile.
//
// Before every side the three images are removed from the runtime it
// uses (CRI RemoveImage through cribare -rmi; podman rmi), so each run
// pulls them through the slow link. -cold-rounds rounds, the order of the
// sides reversing every other round.
//
// The table is measured once per link model of -cold-links (hack/testbed.sh
// slow-registry up MODEL before, down after, so that nothing of one model
// is left when the next comes up, nor after the bench): per-connection
// (each connection 8 MB/s, the machine's link 1 Gbit/s: the issue's own
// model of a remote registry, on which the goals are judged) and shared
// (100 Mbit/s for all connections together: printed with the ratios, not
// judged, since no parallel pulls can beat the link's bandwidth there).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Goals of issue 18: podrun's cold time to the main container's end over
// the kubelet's and over podman's.
const (
	coldKubeletGoal = 0.6
	coldPodmanGoal  = 0.5
)

// slowRegistry is what hack/testbed.sh slow-registry env says.
type slowRegistry struct {
	images []string // init, sidecar, main
	model  string   // the link model: per-connection or shared
	link   string   // "20ms each way (...), 100mbit each way (...)"
}

// coldJudged is the link model the cold-start goals are judged on.
const coldJudged = "per-connection"

// coldLinks reads -cold-links: link models, each at most once.
func coldLinks(s string) ([]string, error) {
	var links []string
	for _, l := range strings.Split(s, ",") {
		l = strings.TrimSpace(l)
		if l != "per-connection" && l != "shared" {
			return nil, fmt.Errorf("-cold-links %q: want per-connection and/or shared, comma-separated", s)
		}
		if slices.Contains(links, l) {
			return nil, fmt.Errorf("-cold-links %q: %s twice", s, l)
		}
		links = append(links, l)
	}
	return links, nil
}

// slowLink runs hack/testbed.sh slow-registry ARGS for the testbed dir.
func slowLink(dir string, args ...string) error {
	cmd := exec.Command("bash", append([]string{*testbedScript, "slow-registry"}, args...)...)
	cmd.Env = append(os.Environ(), "PODRUN_TESTBED_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s slow-registry %s: %v\n%s", *testbedScript, strings.Join(args, " "), err, out)
	}
	return nil
}

// coldTables measures the cold-start table on each link model of links,
// bringing the slow registry up with that model before and down after,
// and returns the verdicts: judged on coldJudged, the others' ratios
// printed as such.
func coldTables(targets []target, pm *podman, links []string) []string {
	kl, done := useKubelet(targets[0].dir)
	defer done()
	if kl != nil {
		fmt.Printf("kubelet: %s, static pods on its own containerd (%s)\n", kl.version, kl.endpoint)
	} else {
		fmt.Println("kubelet: absent")
	}
	var verdicts []string
	for _, link := range links {
		dir := targets[0].dir
		down := func() {
			if err := slowLink(dir, "down"); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
		}
		atFail = append(atFail, down)
		if err := slowLink(dir, "up", link); err != nil {
			fail(err.Error())
		}
		verdicts = append(verdicts, coldTable(targets, pm, kl, link)...)
		down()
		atFail = atFail[:len(atFail)-1]
	}
	return verdicts
}

// kubelet is the testbed's kubelet, from its kubelet.env, or nil.
type kubelet struct {
	version, endpoint, staticDir, podsURL string
}

// findSlowRegistry asks the testbed script for the slow registry's
// settings; the cold table cannot run without it.
func findSlowRegistry(dir string) slowRegistry {
	cmd := exec.Command("bash", *testbedScript, "slow-registry", "env")
	cmd.Env = append(os.Environ(), "PODRUN_TESTBED_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Sprintf("the cold-start table needs the slow registry (bash %s slow-registry up): %v\n%s", *testbedScript, err, out))
	}
	var s slowRegistry
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, "=")
		switch k {
		case "PODRUN_TESTBED_SLOW_IMAGES":
			s.images = strings.Fields(v)
		case "PODRUN_TESTBED_SLOW_LINK":
			s.link = v
		case "PODRUN_TESTBED_SLOW_LINK_MODEL":
			s.model = v
		}
	}
	if len(s.images) != 3 {
		fail(fmt.Sprintf("slow-registry env names %d images, want 3:\n%s", len(s.images), out))
	}
	return s
}

// useKubelet takes the shared kubelet's lock, brings the kubelet up
// (kubelet-up: nothing to do when it runs with its standard
// configuration) and reads its kubelet.env; nil when it is off or cannot
// be had (said why). done, called after the table, takes the kubelet down
// again if it was not up before, and drops the lock.
func useKubelet(dir string) (k *kubelet, done func()) {
	if *kubeletMode == "off" || dir == "" {
		return nil, func() {}
	}
	unlock := lockKubelet()
	env := filepath.Join(dir, "kubelet", "kubelet.env")
	_, err := os.Stat(env)
	wasUp := err == nil
	script := func(arg string) error {
		cmd := exec.Command("bash", *testbedScript, arg)
		cmd.Env = append(os.Environ(), "PODRUN_TESTBED_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %v\n%s", *testbedScript, arg, err, out)
		}
		return nil
	}
	ended := false
	done = func() {
		if ended {
			return
		}
		ended = true
		if !wasUp {
			if err := script("kubelet-down"); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
			}
		}
		unlock()
	}
	atFail = append(atFail, done)
	if err := script("kubelet-up"); err != nil {
		fmt.Fprintf(os.Stderr, "bench: kubelet absent: %v\n", err)
		return nil, done
	}
	return findKubelet(env), done
}

// findKubelet reads the kubelet.env kubelet-up writes, or says why the
// kubelet is absent.
func findKubelet(path string) *kubelet {
	env, err := readEnv(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: kubelet absent: %v (bash hack/testbed.sh kubelet-up)\n", err)
		return nil
	}
	k := &kubelet{
		version:   env["PODRUN_TESTBED_KUBELET_VERSION"],
		endpoint:  env["PODRUN_TESTBED_KUBELET_ENDPOINT"],
		staticDir: env["PODRUN_TESTBED_KUBELET_STATIC_POD_DIR"],
		podsURL:   env["PODRUN_TESTBED_KUBELET_PODS_URL"],
	}
	if k.endpoint == "" || k.staticDir == "" || k.podsURL == "" {
		fmt.Fprintln(os.Stderr, "bench: kubelet absent: its kubelet.env lacks the endpoint, static pod dir or pods URL")
		return nil
	}
	return k
}

// coldManifest is the cold-start pod, named name. With sidecar false (for
// podman) the sidecar is the first regular container instead.
func coldManifest(name string, images []string, sidecar bool) string {
	side := fmt.Sprintf(`  - name: sidecar
    image: %s
    command: ["/bin/idle"]
`, images[1])
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  initContainers:
  - name: init
    image: %s
    command: ["true"]
`, name, images[0])
	if sidecar {
		b.WriteString(side)
		b.WriteString("    restartPolicy: Always\n")
	}
	b.WriteString("  containers:\n")
	if !sidecar {
		b.WriteString(side)
	}
	fmt.Fprintf(&b, `  - name: main
    image: %s
    command: ["sleep", "1"]
`, images[2])
	return b.String()
}

// coldSample is one cold run: to the main container's exit (or the
// process's exit where that is all there is), to Ready (kubelet only),
// and the process's own figures.
type coldSample struct {
	sample
	mainExit, ready time.Duration
	lastPull        time.Duration // bare, pulls at once: when the last pull ended
}

// coldMainRuns is how long the cold-start pod's main container runs
// (sleep 1).
const coldMainRuns = time.Second

// coldTable measures the cold-start pod on every side on the slow
// registry's link, which must be of the model link, prints its table and
// returns its verdicts (judged when link is coldJudged).
func coldTable(targets []target, pm *podman, kl *kubelet, link string) []string {
	slow := findSlowRegistry(targets[0].dir)
	if slow.model != link {
		fail(fmt.Sprintf("the slow registry's link model is %q, want %q", slow.model, link))
	}
	// The images go from every runtime after the table, as before each side.
	defer func() {
		for _, t := range targets {
			removeCRIImages(t.endpoint, slow.images)
		}
		if kl != nil {
			removeCRIImages(kl.endpoint, slow.images)
		}
		if pm != nil {
			pm.removeImages(slow.images)
		}
	}()
	fmt.Printf("cold start on the %s link: one pod (init container, sidecar, main container sleep 1) on 3 images of %s, removed before every side; registry behind %s; %d rounds, sides alternating; loadavg before: %s\n",
		link, imageSizes(targets[0].dir), slow.link, *coldRounds, loadavg())
	manifest := filepath.Join(tmp, "cold.yaml")
	pmManifest := filepath.Join(tmp, "cold-podman.yaml")
	if err := os.WriteFile(manifest, []byte(coldManifest("bench-cold", slow.images, true)), 0o644); err != nil {
		fail(err.Error())
	}
	if err := os.WriteFile(pmManifest, []byte(coldManifest("bench-cold", slow.images, false)), 0o644); err != nil {
		fail(err.Error())
	}
	type row struct {
		side, runtime string
		note          string
		samples       []coldSample
	}
	var rows []*row
	var floors []*row // bare, pulls at once: one per target
	var sides []func(r int)
	for i := range targets {
		t := &targets[i]
		rp := &row{side: "podrun", runtime: t.name, note: "podrun's exit (pod torn down)"}
		rb := &row{side: "bare CRI sequence", runtime: t.name, note: "its exit (pod torn down)"}
		ra := &row{side: "bare CRI, pulls at once", runtime: t.name, note: "its exit (pod torn down)"}
		rows = append(rows, rp, rb, ra)
		floors = append(floors, ra)
		sides = append(sides,
			func(int) {
				removeCRIImages(t.endpoint, slow.images)
				root := filepath.Join(tmp, "root")
				watch := watchExit(t.endpoint, "bench-cold/main")
				start := time.Now()
				s := measure(podrunCmd(t, root, manifest))
				os.RemoveAll(root)
				rp.samples = append(rp.samples, coldSample{sample: s, mainExit: watch().Sub(start)})
			},
			func(int) {
				removeCRIImages(t.endpoint, slow.images)
				cmd := exec.Command(*cribarePath, "-endpoint", t.endpoint, "-seq", strings.Join(slow.images, ","), "-timeout", "10m")
				s, out, err := run(cmd)
				if err != nil {
					fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out))
				}
				ms, err := strconv.Atoi(strings.TrimSpace(string(out)))
				if err != nil {
					fail(fmt.Sprintf("cribare -seq printed %q, not the milliseconds to the main container's exit", out))
				}
				rb.samples = append(rb.samples, coldSample{sample: s, mainExit: time.Duration(ms) * time.Millisecond})
			},
			func(int) {
				removeCRIImages(t.endpoint, slow.images)
				cmd := exec.Command(*cribarePath, "-endpoint", t.endpoint, "-seq", strings.Join(slow.images, ","), "-at-once", "-timeout", "10m")
				s, out, err := run(cmd)
				if err != nil {
					fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out))
				}
				f := strings.Fields(string(out))
				var ms [2]int
				for i := range ms {
					if len(f) == 2 {
						ms[i], err = strconv.Atoi(f[i])
					}
				}
				if len(f) != 2 || err != nil {
					fail(fmt.Sprintf("cribare -seq -at-once printed %q, not the milliseconds to the main container's exit and to the last pull's end", out))
				}
				ra.samples = append(ra.samples, coldSample{sample: s,
					mainExit: time.Duration(ms[0]) * time.Millisecond, lastPull: time.Duration(ms[1]) * time.Millisecond})
			})
	}
	if kl != nil {
		rk := &row{side: "kubelet " + kl.version + " (static pod)", runtime: targets[0].name, note: "-"}
		if n := runtimeName(kl.endpoint); n != "" {
			rk.runtime = n
		}
		rows = append(rows, rk)
		sides = append(sides, func(r int) {
			removeCRIImages(kl.endpoint, slow.images)
			rk.samples = append(rk.samples, kl.run(slow.images, r))
		})
	}
	if pm != nil {
		rm := &row{side: "podman kube play", runtime: pm.version, note: "-"}
		rows = append(rows, rm)
		sides = append(sides, func(int) {
			pm.removeImages(slow.images)
			rm.samples = append(rm.samples, pm.runCold(pmManifest, "bench-cold-main"))
		})
	}
	for r := range *coldRounds {
		order := slices.Clone(sides)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, side := range order {
			side(r)
		}
		fmt.Fprintf(os.Stderr, "bench: cold start on the %s link: round %d/%d done (loadavg %s)\n", link, r+1, *coldRounds, loadavg())
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\truntime\tto Ready ms (min-max)\tto main's end ms (min-max)\texit of\texit ms (min-max)\tCPU ms\tpeak RSS\t")
	for _, rw := range rows {
		ready := "-"
		if rw.samples[0].ready > 0 {
			ready = spread(sorted(rw.samples, func(s coldSample) time.Duration { return s.ready }))
		}
		exit, cpu, rss := "-", "-", "-"
		if rw.samples[0].wall > 0 {
			exit = spread(sorted(rw.samples, func(s coldSample) time.Duration { return s.wall }))
			cpu = fmt.Sprintf("%.0f", msf(median(sorted(rw.samples, func(s coldSample) time.Duration { return s.cpu }))))
			var m int64
			for _, s := range rw.samples {
				m = max(m, s.maxRSSKiB)
			}
			rss = fmt.Sprintf("%.1f MiB", float64(m)/1024)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", rw.side, rw.runtime, ready,
			spread(sorted(rw.samples, func(s coldSample) time.Duration { return s.mainExit })), rw.note, exit, cpu, rss)
	}
	tw.Flush()
	lastPullOf := func(rw *row) time.Duration {
		return median(sorted(rw.samples, func(s coldSample) time.Duration { return s.lastPull }))
	}
	for _, rw := range floors {
		fmt.Printf("floor on %s: the three pulls sent at once through CRI ended after %s ms (median, min-max); the main container needs all three images and runs %v: no CRI client's main container ends before %d ms\n",
			rw.runtime, spread(sorted(rw.samples, func(s coldSample) time.Duration { return s.lastPull })),
			coldMainRuns, (lastPullOf(rw) + coldMainRuns).Milliseconds())
	}

	// The goals: podrun on the first testbed (the kubelet's containerd
	// line) against the kubelet and podman.
	mainOf := func(rw *row) time.Duration {
		return median(sorted(rw.samples, func(s coldSample) time.Duration { return s.mainExit }))
	}
	podrun := mainOf(rows[0])
	var verdicts []string
	for _, g := range []struct {
		prefix, what string
		goal         float64
	}{{"kubelet", "the kubelet's", coldKubeletGoal}, {"podman", "podman's", coldPodmanGoal}} {
		var other *row
		for _, rw := range rows {
			if strings.HasPrefix(rw.side, g.prefix) {
				other = rw
			}
		}
		if other == nil {
			verdicts = append(verdicts, fmt.Sprintf("cold start (%s link), podrun on %s over %s: not measured (%s absent); goal %.2f", link, rows[0].runtime, g.what, g.prefix, g.goal))
			continue
		}
		ratio := float64(podrun) / float64(mainOf(other))
		floor := lastPullOf(floors[0]) + coldMainRuns
		verdicts = append(verdicts, fmt.Sprintf("cold start (%s link), podrun on %s over %s time to the main container's end: %.2f %s%s",
			link, rows[0].runtime, g.what, ratio, coldVerdict(ratio, g.goal, link), floorNote(floor, mainOf(other), g.goal)))
	}
	return verdicts
}

// coldVerdict is a cold-start ratio's verdict: against the goal on the
// judged link; on another, not judged, but whether it would meet it.
func coldVerdict(ratio, goal float64, link string) string {
	meets := ratio <= goal
	if link == coldJudged {
		if meets {
			return fmt.Sprintf("(goal at most %.2f): meets the goal", goal)
		}
		return fmt.Sprintf("(goal at most %.2f): MISSES the goal", goal)
	}
	if meets {
		return fmt.Sprintf("(not judged: the goal, at most %.2f, is judged on the %s link; this would meet it)", goal, coldJudged)
	}
	return fmt.Sprintf("(not judged: the goal, at most %.2f, is judged on the %s link; this would miss it)", goal, coldJudged)
}

// floorNote says where the runtime's floor (the pulls at once, then the
// main container's run) stands against a goal of at most goal times
// other's time.
func floorNote(floor, other time.Duration, goal float64) string {
	r := float64(floor) / float64(other)
	if r > goal {
		return fmt.Sprintf("; the runtime's floor (the pulls at once + %v) is %.2f of it: the goal is below the floor", coldMainRuns, r)
	}
	return fmt.Sprintf("; the runtime's floor (the pulls at once + %v) is %.2f of it", coldMainRuns, r)
}

// imageSizes is "25.2, 25.2 and 25.2 MB" of the slow registry's images (their
// layers as stored), or "unknown size".
func imageSizes(dir string) string {
	var sizes []string
	for _, name := range []string{"init", "sidecar", "main"} {
		var n int64
		files, _ := filepath.Glob(filepath.Join(dir, "slow-registry", "images", name, "blobs", "sha256", "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
		if n == 0 {
			return "unknown size"
		}
		sizes = append(sizes, fmt.Sprintf("%.1f", float64(n)/1e6))
	}
	return sizes[0] + ", " + sizes[1] + " and " + sizes[2] + " MB"
}

// watchExit starts hack/cribare -exit-of POD/CONTAINER on the runtime at
// endpoint and returns what waits for it: the exit time the runtime
// recorded for the container. A watch that fails fails the bench.
func watchExit(endpoint, podContainer string) func() time.Time {
	cmd := exec.Command(*cribarePath, "-endpoint", endpoint, "-exit-of", podContainer, "-timeout", "10m")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		fail(fmt.Sprintf("%s: %v", strings.Join(cmd.Args, " "), err))
	}
	return func() time.Time {
		err := cmd.Wait()
		f := strings.Fields(out.String())
		if err != nil || len(f) != 2 {
			fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String()))
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || f[1] != "0" {
			fail(fmt.Sprintf("%s: %q: want the exit's Unix nanoseconds and exit code 0", strings.Join(cmd.Args, " "), out.String()))
		}
		return time.Unix(0, ns)
	}
}

// removeCRIImages removes the images from the runtime at endpoint.
func removeCRIImages(endpoint string, images []string) {
	cmd := exec.Command(*cribarePath, "-endpoint", endpoint, "-rmi", strings.Join(images, ","))
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Sprintf("removing the cold-start images from %s: %v\n%s", endpoint, err, out))
	}
}

// runtimeName is "containerd 2.4.2" of the runtime at endpoint, or "".
func runtimeName(endpoint string) string {
	out, err := exec.Command(*cribarePath, "-endpoint", endpoint, "-ping", "-v").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) < 2 {
		return ""
	}
	return f[0] + " " + strings.TrimPrefix(f[1], "v")
}

// run is one kubelet sample: the manifest (named for round r, so that no
// round's pod has a name or UID a former one had) written into the static
// pod dir, /pods polled to Ready and to the main container's
// termination, the manifest removed and the pod waited for gone.
func (k *kubelet) run(images []string, r int) coldSample {
	name := fmt.Sprintf("bench-cold-%d-%d", os.Getpid(), r)
	path := filepath.Join(k.staticDir, name+".yaml")
	hidden := filepath.Join(k.staticDir, "."+name+".yaml")
	if err := os.WriteFile(hidden, []byte(coldManifest(name, images, true)), 0o644); err != nil {
		fail(err.Error())
	}
	defer os.Remove(path)
	start := time.Now()
	if err := os.Rename(hidden, path); err != nil {
		os.Remove(hidden)
		fail(err.Error())
	}
	failk := func(msg string) {
		os.Remove(path)
		fail(msg)
	}
	var s coldSample
	deadline := start.Add(10 * time.Minute)
	for s.mainExit == 0 {
		if time.Now().After(deadline) {
			failk(fmt.Sprintf("the kubelet did not end static pod %s's main container in 10 minutes", name))
		}
		pod, err := k.pod(name)
		if err != nil {
			failk(err.Error())
		}
		now := time.Since(start)
		if pod != nil {
			for _, c := range pod.Status.Conditions {
				if c.Type == v1.PodReady && c.Status == v1.ConditionTrue && s.ready == 0 {
					s.ready = now
				}
			}
			for _, c := range pod.Status.ContainerStatuses {
				if t := c.State.Terminated; c.Name == "main" && t != nil {
					if t.ExitCode != 0 {
						failk(fmt.Sprintf("the kubelet's static pod %s: main exited %d (%s)", name, t.ExitCode, t.Reason))
					}
					// /pods shows it once the kubelet's status has it; the
					// time is the runtime's, as for every side.
					s.mainExit = watchExit(k.endpoint, pod.Name+"/main")().Sub(start)
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.Remove(path); err != nil {
		fail(err.Error())
	}
	for gone := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		pod, err := k.pod(name)
		if err != nil {
			fail(err.Error())
		}
		if pod == nil {
			break
		}
		if time.Now().After(gone) {
			fail(fmt.Sprintf("the kubelet still lists static pod %s 2 minutes after its manifest went", name))
		}
	}
	// The kubelet removes a deleted pod's sandbox and containers only in
	// its garbage collection, later; until then their snapshots would
	// keep the images' layers unpacked and make the next round's pulls
	// all but free. They go now (the kubelet only ever finds them gone),
	// once the kubelet has stopped the sandbox: it may still be at it
	// after the pod left /pods (a stop of ours meanwhile fails in CNI).
	for try := 1; ; try++ {
		cmd := exec.Command(*cribarePath, "-endpoint", k.endpoint, "-cleanup", "-prefix", name+"-")
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if try == 30 {
			fail(fmt.Sprintf("removing static pod %s's sandbox from the kubelet's containerd: %v\n%s", name, err, out))
		}
		time.Sleep(time.Second)
	}
	return s
}

// pod is the kubelet's static pod made from the manifest name (named
// name-NODE), or nil.
func (k *kubelet) pod(name string) (*v1.Pod, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(k.podsURL)
	if err != nil {
		return nil, fmt.Errorf("the kubelet's %s: %w", k.podsURL, err)
	}
	defer resp.Body.Close()
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("the kubelet's %s: %w", k.podsURL, err)
	}
	for i := range list.Items {
		if strings.HasPrefix(list.Items[i].Name, name+"-") {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// lockKubelet takes /tmp/podrun-kubelet.lock, as every user of the shared
// kubelet does, waiting up to -kubelet-lock-wait; it returns the unlock.
// fail exits with it held: the lock goes with the process.
func lockKubelet() func() {
	f, err := os.OpenFile("/tmp/podrun-kubelet.lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fail(err.Error())
	}
	for deadline := time.Now().Add(*kubeletLockWait); ; time.Sleep(time.Second) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			fail(fmt.Sprintf("/tmp/podrun-kubelet.lock: %v (another user of the kubelet for more than %v)", err, *kubeletLockWait))
		}
	}
	return func() { f.Close() }
}

// removeImages is podman rmi of the images (absent ones ignored).
func (pm *podman) removeImages(images []string) {
	cmd := exec.Command("podman", append([]string{"rmi", "-i"}, images...)...)
	cmd.Env = pm.env
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Sprintf("podman rmi: %v\n%s", err, out))
	}
}

// runCold is one podman cold sample: kube play (which pulls) and podman
// wait of the main container, timed; kube down after.
func (pm *podman) runCold(manifest, mainName string) coldSample {
	var s coldSample
	before := cgroupDirs(podmanUnified)
	defer removeNewEmpty(podmanUnified, before)
	down := func() string {
		down := exec.Command("podman", "kube", "down", manifest)
		down.Env = pm.env
		if out, err := down.CombinedOutput(); err != nil {
			return fmt.Sprintf("podman kube down: %v\n%s", err, out)
		}
		return ""
	}
	start := time.Now()
	for _, args := range [][]string{
		{"kube", "play", "--cert-dir", pm.certDir, manifest},
		{"wait", mainName},
	} {
		cmd := exec.Command("podman", args...)
		cmd.Env = pm.env
		one, out, err := run(cmd)
		if err == nil && args[0] == "wait" && strings.TrimSpace(string(out)) != "0" {
			err = fmt.Errorf("%s exited %s", mainName, strings.TrimSpace(string(out)))
		}
		if err != nil {
			fail(fmt.Sprintf("podman %s: %v\n%s\n%s", strings.Join(args, " "), err, out, down()))
		}
		s.wall += one.wall
		s.cpu += one.cpu
		s.maxRSSKiB = max(s.maxRSSKiB, one.maxRSSKiB)
	}
	inspect := exec.Command("podman", "inspect", "--format", "{{.State.FinishedAt.UnixNano}}", mainName)
	inspect.Env = pm.env
	out, err := inspect.Output()
	ns, perr := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || perr != nil {
		fail(fmt.Sprintf("podman inspect %s: %v %v (%q)\n%s", mainName, err, perr, out, down()))
	}
	if msg := down(); msg != "" {
		fail(msg)
	}
	s.mainExit = time.Unix(0, ns).Sub(start)
	s.wall = 0 // no exit of its own to show: kube down is not timed
	return s
}
