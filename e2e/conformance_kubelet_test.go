//go:build e2e

package e2e

// The differential conformance test (make conformance-kubelet): every
// runnable row of the conformance test (conformanceRows, the same list and
// verdicts) runs on podrun, on the testbed, and on the oracle kubelet
// (e2e/kubeletoracle, hack/testbed.sh kubelet-up) at once, and the two
// outcomes are compared per pod and per container (kubeletoracle.Compare).
// A difference is either fixed in podrun or documented as deliberate in
// docs/kubelet-differences.md, whose table this test reads: a difference
// the table does not explain fails the test. Besides the corpus rows, the
// project's own manifests of behaviour the corpus lacks (projectRows) run
// the same way.
//
// Its name does not contain E2E, so `make e2e` (-run E2E) leaves it to
// `make conformance-kubelet`, which starts the kubelet first.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/e2e/kubeletoracle"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
	"github.com/podrun/podrun/sources/podresources"
)

// kubeletDefaultTimeout ends the wait of a row whose flags give none (the
// exec rows): on podrun and on the kubelet alike.
const kubeletDefaultTimeout = 90 * time.Second

// kubeletConcurrency is how many rows run at once (each on both sides):
// rows mostly wait, but each holds a kubelet pod and a podrun process on
// a 2-core machine.
const kubeletConcurrency = 12

// differencesDoc is the documented differences, relative to the repo.
const differencesDoc = "docs/kubelet-differences.md"

// kubeletWait is how a row's run ends on both sides: podrun's --wait and
// --timeout from the row's flags (auto and kubeletDefaultTimeout when it
// gives none; the exec rows add theirs at run time, and end Ready here).
func kubeletWait(flags []string) (runner.WaitMode, time.Duration) {
	wait, timeout := runner.WaitAuto, kubeletDefaultTimeout
	for i, f := range flags {
		switch {
		case strings.HasPrefix(f, "--wait="):
			wait = runner.WaitMode(strings.TrimPrefix(f, "--wait="))
		case f == "--timeout" && i+1 < len(flags):
			if d, err := time.ParseDuration(flags[i+1]); err == nil {
				timeout = d
			}
		}
	}
	return wait, timeout
}

func TestKubeletConformance(t *testing.T) {
	k, err := kubeletoracle.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, differencesDoc))
	if err != nil {
		t.Fatal(err)
	}
	known, err := kubeletoracle.ParseDifferences(doc)
	if err != nil {
		t.Fatalf("%s: %v", differencesDoc, err)
	}
	root := corpusRoot(t)
	var rows []conformanceRow
	for _, r := range conformanceRows() {
		if r.skip == "" {
			rows = append(rows, r)
		}
	}
	corpusRows := len(rows)
	rows = append(rows, projectRows()...)
	// PODRUN_CONFORMANCE_ROWS (a regexp of row paths) runs a subset, by
	// hand; make conformance-kubelet runs them all.
	if expr := os.Getenv("PODRUN_CONFORMANCE_ROWS"); expr != "" {
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("PODRUN_CONFORMANCE_ROWS: %v", err)
		}
		rows = slices.DeleteFunc(rows, func(r conformanceRow) bool { return !re.MatchString(r.path) })
		corpusRows = 0
		for _, r := range rows {
			if !r.project {
				corpusRows++
			}
		}
		t.Logf("PODRUN_CONFORMANCE_ROWS=%s: %d rows of the table only", expr, len(rows))
	}
	// The slow rows first, as in TestE2EConformance.
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].slow && !rows[b].slow })

	// Both runtimes hold the sandbox image and the rows' images before the
	// rows start: on a fresh testbed the kubelet's containerd has none,
	// while the testbed's pulled them in make e2e. In a cold CI run the
	// kubelet's first twelve pods all waited for its first pulls on two
	// busy cores, and two of them were still ContainerCreating when their
	// rows timed out (15 and 30 s).
	prePull(t, rows, root, k.Endpoint, os.Getenv("CONTAINER_RUNTIME_ENDPOINT"))

	start := time.Now()
	results := make([]kubeletoracle.Row, len(rows))
	out := make([]bool, len(rows)) // left out by -run or -skip
	sem := make(chan struct{}, kubeletConcurrency)
	var wg sync.WaitGroup
	for i, row := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i].Name = row.path
			// Subtests started from goroutines run at once; none calls
			// t.Parallel.
			results[i].Err = "the comparison failed (see the subtest's log)"
			started := false
			t.Run(row.path, func(t *testing.T) {
				started = true
				rep := kubeletoracle.Classify(row.path, diffRow(t, k, rowRoot(root, row), row), known)
				results[i].Report, results[i].Err = rep, ""
				for _, d := range rep.Undocumented() {
					t.Errorf("undocumented difference %s: podrun=%q kubelet=%q (fix podrun, or document it in %s)", d.Path, d.Podrun, d.Kubelet, differencesDoc)
				}
			})
			out[i] = !started
		}()
	}
	wg.Wait()
	var compared []kubeletoracle.Row
	for i, r := range results {
		if !out[i] {
			compared = append(compared, r)
		}
	}
	results = compared
	sort.Slice(results, func(a, b int) bool { return results[a].Name < results[b].Name })
	left := ""
	if n := len(rows) - len(results); n > 0 {
		left = fmt.Sprintf(" (%d left out by -run or -skip)", n)
	}
	report := fmt.Sprintf("podrun against kubelet %s, %d corpus rows and %d of the project's%s in %s:\n%s",
		k.Version, corpusRows, len(rows)-corpusRows, left, time.Since(start).Round(time.Second), kubeletoracle.Table(results))
	t.Log(report)
	// make conformance-kubelet prints it after the run, whatever testlog
	// keeps of a passing test's log.
	if f := os.Getenv("PODRUN_CONFORMANCE_REPORT"); f != "" {
		if err := os.WriteFile(f, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
	used := map[string]bool{}
	for _, r := range results {
		for _, d := range r.Report.Diffs {
			used[d.Known] = true
		}
	}
	for _, d := range known {
		if !used[d.ID] {
			t.Logf("documented difference %s (rows %s, field %s) was not seen in this run", d.ID, d.Rows, d.Field)
		}
	}
}

// projectRows are rows of the project's own manifests (under testdata/e2e,
// path relative to the repo: project set), for behaviour no corpus
// manifest has; each is a manifest an e2e test of podrun runs too. They
// are compared on both sides as the corpus rows are, and run only here.
func projectRows() []conformanceRow {
	return []conformanceRow{
		// runner/deadline.go: Failed, DeadlineExceeded, killed (137).
		{path: "testdata/e2e/deadline/deadline.yaml", project: true},
		// A startup probe kill under Never: the status after the kill.
		{path: "testdata/e2e/probes/startup-never.yaml", project: true},
		{path: "testdata/e2e/probes/liveness-never.yaml", project: true},
		// A container's own restart policy and rules (ContainerRestartRules):
		// restarts under a pod's Never, none under its Always.
		{path: "testdata/e2e/sync/restart-rules.yaml", project: true},
		{path: "testdata/e2e/sync/container-never.yaml", project: true},
		// A restart rule's RestartAllContainers action: the pod restarted
		// in place, its statuses after (restartall.go).
		{path: "testdata/e2e/sync/restart-all.yaml", project: true},
	}
}

// prePull pulls the sandbox image and every image of the rows' pods on
// each runtime endpoint, three at a time, before the comparison: each side then starts a row's
// pod as the other does, with the image there (a row whose policy is
// Always still asks the registry, which answers at once). An image that
// does not pull (a row about a missing image) is left to its row.
func prePull(t *testing.T, rows []conformanceRow, corpus string, endpoints ...string) {
	t.Helper()
	// The sandbox image first: both containerds are configured with the
	// testbed's, and the kubelet's pulls it for its first pod otherwise.
	sandbox := os.Getenv("PODRUN_TESTBED_SANDBOX_IMAGE")
	if sandbox == "" {
		t.Fatal("pre-pulling: PODRUN_TESTBED_SANDBOX_IMAGE is not set (hack/testbed.sh env)")
	}
	images := []string{sandbox}
	for _, row := range rows {
		file := filepath.Join(rowRoot(corpus, row), row.path)
		b, err := os.ReadFile(file)
		if err != nil {
			continue // the row reports it
		}
		set, err := sources.Decode(file, b, sources.Options{})
		if err != nil {
			continue
		}
		var specs []v1.PodSpec
		for _, p := range set.Pods {
			specs = append(specs, p.Spec)
		}
		for _, j := range set.Jobs {
			specs = append(specs, j.Job.Spec.Template.Spec)
		}
		for _, spec := range specs {
			for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
				if c.Image != "" && !slices.Contains(images, c.Image) {
					images = append(images, c.Image)
				}
			}
		}
	}
	start := time.Now()
	for _, ep := range endpoints {
		if ep == "" {
			t.Fatal("pre-pulling the rows' images: a runtime endpoint is not set (hack/testbed.sh env)")
		}
		rt, err := cri.Dial(context.Background(), ep, cri.WithCallTimeout(5*time.Minute))
		if err != nil {
			t.Fatalf("pre-pulling the rows' images on %s: %v", ep, err)
		}
		sem := make(chan struct{}, 3)
		var wg sync.WaitGroup
		for _, img := range images {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := rt.PullImage(context.Background(), img, nil, nil); err != nil {
					t.Logf("pre-pull of %s on %s: %v (left to its row)", img, ep, err)
				}
			})
		}
		wg.Wait()
		rt.Close()
	}
	t.Logf("pre-pulled %d images on %d runtimes in %s", len(images), len(endpoints), time.Since(start).Round(time.Millisecond))
}

// rowRoot is the directory a row's path is relative to: the corpus, or
// the repo for a project row.
func rowRoot(corpus string, row conformanceRow) string {
	if row.project {
		return repoRoot
	}
	return corpus
}

// diffRow runs one row on both sides at once and compares them.
func diffRow(t *testing.T, k *kubeletoracle.Kubelet, root string, row conformanceRow) kubeletoracle.Report {
	wait, timeout := kubeletWait(row.flags)
	var podrun, kubelet kubeletoracle.Side
	var kerr error
	var timedOut bool
	var wg sync.WaitGroup
	wg.Go(func() {
		kubelet, timedOut, kerr = kubeletSide(t, k, filepath.Join(root, row.path), wait, timeout)
	})
	podrun, npods, podrunTimedOut := podrunSide(t, root, row, wait, timeout)
	wg.Wait()
	if kerr != nil {
		t.Fatalf("on the kubelet: %v", kerr)
	}
	opts := kubeletoracle.Options{
		// Crash-looping containers restart on the back-off's clock, and
		// the two sides were stopped at different moments of it.
		RestartTolerance: 1,
		// A pod that never ends was stopped after a different number of
		// lines on each side.
		OutputPrefix: timedOut || podrunTimedOut,
	}
	rep := kubeletoracle.Compare(podrun, kubelet, opts)
	if npods > 1 && kubelet.Pod != nil {
		rep.Diffs = append(rep.Diffs, kubeletoracle.Diff{Path: "pods", Podrun: fmt.Sprint(npods), Kubelet: "1"})
	}
	return rep
}

// kubeletSide runs the row's file, unchanged, as a static pod.
func kubeletSide(t *testing.T, k *kubeletoracle.Kubelet, file string, wait runner.WaitMode, timeout time.Duration) (kubeletoracle.Side, bool, error) {
	manifest, err := os.ReadFile(file)
	if err != nil {
		return kubeletoracle.Side{}, false, err
	}
	// The kubelet admits a pod only while the CPU its pods request fits
	// (podrun admits each run on its own): the rows that request CPU take
	// their share of the kubelet's at a time.
	cpu, name := requestedCPU(file, manifest, k.NodeName)
	kubeletCPU.acquire(cpu)
	defer kubeletCPU.release(cpu)
	// Two rows whose pods have one name (debug/counter-pod.yaml and
	// counter-pod-err.yaml) would be one static pod name on the kubelet:
	// they take turns there.
	unlock := kubeletNames.lock(name)
	defer unlock()
	res, err := k.Run(context.Background(), manifest, kubeletoracle.RunOptions{Wait: wait, Timeout: timeout})
	if errors.Is(err, kubeletoracle.ErrNotRun) {
		return kubeletoracle.Side{Refused: kubeletoracle.Refusal(err)}, false, nil
	}
	if err != nil {
		return kubeletoracle.Side{}, false, err
	}
	if res.FirstSyncLate > 0 {
		t.Logf("on the kubelet: its first sync of the pod ended %s after the row's %s timeout; its status was read then (RunOptions.Timeout)",
			res.FirstSyncLate.Round(100*time.Millisecond), timeout)
	}
	return kubeletoracle.Side{Pod: res.Pod, Logs: res.Logs}, res.TimedOut, nil
}

// podrunSide runs the row on the testbed with the same wait, keeping the
// pod's logs (--pod-logs-dir) for the comparison. The row's file is run
// from a copy in a temp dir, so that its pod UID is this run's own and no
// other test running the same row meets it.
//
// It returns podrun's first pod (the kubelet's file source runs the first
// document of a file only), how many pods podrun ran, and whether its wait
// timed out.
func podrunSide(t *testing.T, root string, row conformanceRow, wait runner.WaitMode, timeout time.Duration) (kubeletoracle.Side, int, bool) {
	e := newEnv(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(root, row.path))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, filepath.Base(row.path))
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs")
	args := []string{"-f", file}
	for _, comp := range row.companions {
		args = append(args, "-f", filepath.Join(root, comp))
	}
	if row.own != "" {
		args = append(args, "-f", testdata(row.own))
	}
	args = append(args, "-q", "-o", "json", "--pod-logs-dir", logs, "--wait="+string(wait), "--timeout", timeout.String())
	r := e.startPodrun(args, "").result(conformanceRunTimeout)
	pods, err := decodePods(r.stdout)
	if err != nil {
		t.Fatalf("podrun's output: %v\n%s", err, r)
	}
	// Refused before anything ran: exit 125 with no pod, or with pods
	// that never started (an image name that cannot be pulled, say). A pod
	// admission rejected (125 too) is Failed with its reason, as on a
	// kubelet, and is compared.
	if r.code == 125 && !slices.ContainsFunc(pods, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed }) {
		line, _, _ := strings.Cut(strings.TrimSpace(r.stderr), "\n")
		return kubeletoracle.Side{Refused: strings.ReplaceAll(line, dir+"/", "")}, 0, false
	}
	if len(pods) == 0 {
		t.Fatalf("no pod printed, exit %d\n%s", r.code, r)
	}
	p := pods[0]
	out, err := kubeletoracle.ReadPodLogs(kubeletoracle.PodLogDir(logs, p.Namespace, p.Name, string(p.UID)))
	if err != nil {
		t.Fatal(err)
	}
	return kubeletoracle.Side{Pod: p, Logs: out}, len(pods), r.code == 124
}

// kubeletCPU is the oracle kubelet's CPU in millicores, shared out among
// the rows that request CPU (its node's capacity: no reservations).
var kubeletCPU = newCPUGate(int64(runtime.NumCPU()) * 1000)

// requestedCPU is the millicores the file's first pod requests, with the
// API's defaults (requests from limits), as the kubelet admits it, and the
// pod's namespace/name; 0 and "" for a file podrun does not decode.
func requestedCPU(file string, manifest []byte, node string) (int64, string) {
	set, err := sources.Decode(file, manifest, sources.Options{NodeName: node})
	if err != nil || len(set.Pods) == 0 {
		return 0, ""
	}
	p := set.Pods[0].Pod
	q := podresources.Requests(p)[v1.ResourceCPU]
	return q.MilliValue(), p.Namespace + "/" + p.Name
}

// kubeletNames are the pod names in use on the kubelet, one row at a time.
var kubeletNames = &nameLocks{held: map[string]*nameLock{}}

// nameSuccessorDelay is how long a row waits after the kubelet removed the
// last pod of the same name: the kubelet starts a static pod only once its
// pod worker has finished with the previous pod of that full name
// (pod_workers.go allowStaticPodStart), a while after the pod is gone from
// its /pods and root dir.
const nameSuccessorDelay = 15 * time.Second

type nameLocks struct {
	mu   sync.Mutex
	held map[string]*nameLock
}

type nameLock struct {
	sync.Mutex
	users int // rows holding or waiting for it
}

// lock waits until no other row runs a pod of that name on the kubelet;
// "" locks nothing. A row with a successor waiting leaves the kubelet
// nameSuccessorDelay before it unlocks.
func (n *nameLocks) lock(name string) (unlock func()) {
	if name == "" {
		return func() {}
	}
	n.mu.Lock()
	m, ok := n.held[name]
	if !ok {
		m = &nameLock{}
		n.held[name] = m
	}
	m.users++
	n.mu.Unlock()
	m.Lock()
	return func() {
		n.mu.Lock()
		m.users--
		next := m.users > 0
		n.mu.Unlock()
		if next {
			time.Sleep(nameSuccessorDelay)
		}
		m.Unlock()
	}
}

// cpuGate is a counting semaphore over millicores; a request above the
// whole is capped at the whole (the kubelet rejects such a pod whatever
// else runs).
type cpuGate struct {
	mu         sync.Mutex
	cond       *sync.Cond
	free, size int64
}

func newCPUGate(size int64) *cpuGate {
	g := &cpuGate{free: size, size: size}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *cpuGate) acquire(n int64) {
	n = min(n, g.size)
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.free < n {
		g.cond.Wait()
	}
	g.free -= n
}

func (g *cpuGate) release(n int64) {
	n = min(n, g.size)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.free += n
	g.cond.Broadcast()
}

// decodePods reads podrun's -o json: nothing, a v1.Pod or a v1.List of
// them.
func decodePods(out string) ([]*v1.Pod, error) {
	if strings.TrimSpace(out) == "" {
		return nil, nil
	}
	var head struct{ Kind string }
	if err := yaml.Unmarshal([]byte(out), &head); err != nil {
		return nil, err
	}
	if head.Kind != "List" {
		var p v1.Pod
		if err := yaml.Unmarshal([]byte(out), &p); err != nil {
			return nil, err
		}
		return []*v1.Pod{&p}, nil
	}
	var list struct{ Items []v1.Pod }
	if err := yaml.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("an empty list")
	}
	return pods, nil
}
