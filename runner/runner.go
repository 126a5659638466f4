package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/runner/artifacts"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/credentials"
	"github.com/podrun/podrun/sources/podresources"
)

// Options are a run's: its configuration, what it is to do, and its
// wiring, what it writes to and what stops it.
type Options struct {
	Config
	Wiring
}

// Config is what a run is to do: what podrun's flags say (package main's
// runConfig gives it), with what the manifests bring besides the pods
// (ConfigMaps, Secrets, the pods whose UID podrun gave).
type Config struct {
	RootDir    string // podrun's state and pod data dirs
	PodLogsDir string // "" means <RootDir>/logs, removed with each pod

	Wait    WaitMode
	Timeout time.Duration // 0: no limit
	Detach  bool          // leave the pods running once the wait ends

	ResolvConf    string // host resolv.conf, default /etc/resolv.conf
	ClusterDNS    []string
	ClusterDomain string

	// ConfigMaps and Secrets of the run, for volumes, env and image pull
	// secrets (the kubelet would fetch them from the API server).
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret

	// RuntimeClasses of the run: a pod's spec.runtimeClassName names one,
	// whose handler its sandbox is created with (runtimeclass.go; the
	// kubelet would fetch them from the API server).
	RuntimeClasses []*nodev1.RuntimeClass

	// Replace: a detached pod of the same namespace and name in RootDir
	// is stopped first, as `podrun down` stops it, and the run's pod
	// takes its place (replace.go); without it such a pod of the same UID
	// refuses the run.
	Replace bool

	// GivenUIDs are the pods whose UID podrun gave (their manifests have
	// no metadata.uid): their sandboxes say so, and `podrun handover`
	// never counts them as adopted, as no kubelet can give them that UID.
	GivenUIDs map[types.UID]bool

	// ImageCredentials is the docker config.json of --image-credentials
	// (credentials.LoadFile), tried after the pods' imagePullSecrets and
	// before the node's docker config; nil for none.
	ImageCredentials *credentials.Keyring

	// CgroupRoot is the cgroup under which each pod gets its cgroup, by QoS
	// class (package cgroups, with the facts' driver); "" makes none and
	// leaves the sandboxes' placement to the runtime.
	CgroupRoot string

	// SeccompProfileRoot is where Localhost seccomp profiles live
	// (--seccomp-profile-root); "" means <RootDir>/seccomp, the kubelet's
	// default under its root dir.
	SeccompProfileRoot string

	// LogTailLines, when above 0, has each PodResult keep the last lines of
	// each container's log (PodResult.Logs), read before teardown removes
	// them (for --junit).
	LogTailLines int

	// CopyOuts are the paths copied out of the containers' volumes into
	// host dirs when the containers end (--copy-out; copyout.go), each
	// of at most CopyOutLimit bytes (0: no limit). A failed copy is a
	// pod's error (exit 125) with CopyOutRequired, else an event.
	CopyOuts        []artifacts.Spec
	CopyOutLimit    int64
	CopyOutRequired bool
	// Jobs are the run's Jobs (a Job or CronJob document each), which the
	// run runs beside its pods as their controller would (job.go); their
	// pods' UIDs are podrun's.
	Jobs []Job
}

// Wiring is what a run is connected to: where the containers' output and
// podrun's own progress go, what a second signal closes, and the process
// that owns the pods.
type Wiring struct {
	Stdout   io.Writer // container stdout
	Stderr   io.Writer // container stderr
	Progress Progress  // podrun's own progress; nil for --quiet

	// Force is closed on a second signal: teardown then kills containers at
	// once instead of waiting for their grace period.
	Force <-chan struct{}

	// Owner identifies this process; zero means newOwner(Detach).
	Owner Owner

	// Attach, when set, is -i's attach to a container with stdin: true.
	Attach *Attach

	// HandOver, when closed, ends the wait of every pod still waiting and
	// leaves it running, detached, for a kubelet that takes it over
	// (`podrun run --supervise`); nil: never.
	HandOver <-chan struct{}
}

// Attach is -i: podrun's stdin streamed into one container of the run,
// attached to the first instance of it that starts, once, as kubectl run
// -i attaches once (its stdinOnce then closes the container's stdin when
// the attach's stdin ends; a restarted instance gets none).
type Attach struct {
	PodUID    types.UID
	Container string
	// Output: the instance's output comes through the attach (a
	// terminal), so the run does not also write it from its log.
	Output bool
	// Start attaches to the instance, just started; it returns at once
	// and the attach goes on by itself (package main: attach.go).
	Start func(containerID string)
}

// PodResult is how one pod's run ended.
type PodResult struct {
	Pod     *v1.Pod
	Status  v1.PodStatus // as observed when the wait ended
	Outcome Outcome
	Err     error // set with OutcomeError, and for teardown problems

	// Logs are the last Options.LogTailLines lines of the newest instance
	// of each container that logged, by container name.
	Logs map[string]string

	// CopyOuts are how the pod's --copy-outs went, in the order given.
	CopyOuts []CopyOutResult
}

// Reached tells whether the pod reached its wait condition.
func (r PodResult) Reached() bool { return r.Outcome == OutcomeReached }

// Result is the outcome of a run.
type Result struct {
	Pods []PodResult
	Jobs []JobResult // in Config.Jobs order
}

// ExitCode is podrun's exit status; interruptCode is the status of an
// interruption, 128 + the signal (129 SIGHUP, 130 SIGINT, 141 SIGPIPE: a
// lost stdout or stderr, 143 SIGTERM), else 0.
func (r *Result) ExitCode(interruptCode int) int { return exitCode(r.Pods, r.Jobs, interruptCode) }

// Err joins every pod's and Job's error.
func (r *Result) Err() error {
	var errs []error
	for _, j := range r.Jobs {
		if j.Err != nil {
			errs = append(errs, fmt.Errorf("job %s/%s: %w", j.Job.Namespace, j.Job.Name, j.Err))
		}
	}
	for _, p := range r.Pods {
		_, running := p.Err.(*alreadyRunningError)
		switch {
		case p.Err == nil:
		case running:
			errs = append(errs, p.Err) // it names the pod
		default:
			errs = append(errs, fmt.Errorf("pod %s/%s: %w", p.Pod.Namespace, p.Pod.Name, p.Err))
		}
	}
	return errors.Join(errs...)
}

// runState is the state shared by the pods of one invocation of Run.
type runState struct {
	ctx   context.Context // the run's: a signal cancels it
	rt    Runtime
	facts Facts
	opts  Options
	obs   *observer
	sink  *logSink
	multi bool // more than one container in the run: prefix output lines
	host  resolvConf
	now   func() time.Time
	rand  func() float64 // in [0, 1), for the kubelet's jitter; nil: none

	nodeKeyrings []*credentials.Keyring // the node's image pull credentials, tried after a pod's
	prefetch     *prefetcher            // the run's pulls ahead (prefetch.go); nil: none

	cgroups *cgroups.Host     // nil: no pod cgroups
	cgsys   cgroups.System    // the host's cgroups, for reclaiming
	userns  map[string]uint32 // by pod UID: the host ID range of pods with hostUsers false
	// jobUserns are the host ID ranges each Job (by namespace/name) holds
	// for its pods with hostUsers false, one per pod it runs at once.
	jobUserns map[string][]uint32
	notes     []string // what the refusals could not check (runtime handlers), said once the run starts
}

// Run runs the pods concurrently, on the node and runtime the facts
// describe (GatherFacts), until each reaches the wait condition,
// fails, times out or ctx is cancelled (a signal), then tears them down
// unless Detach is set. Problems that stop a pod from running at all are
// reported in its PodResult with outcome error. A pod the node rejects
// (package admission) stops the whole run before anything is created: Run returns
// the *admission.Error of every rejected pod, joined, and a Result with each
// pod's status.
func Run(ctx context.Context, rt Runtime, facts Facts, pods []*v1.Pod, opts Options) (*Result, error) {
	return runPods(ctx, rt, facts, pods, opts, cgroups.HostSystem())
}

// runPods is Run with the host's cgroups reached through cgsys.
func runPods(ctx context.Context, rt Runtime, facts Facts, pods []*v1.Pod, opts Options, cgsys cgroups.System) (*Result, error) {
	// Admit every pod, and check what else can refuse it, before anything
	// is listed, reclaimed or created: one refused pod and none runs. A
	// Job's first pods are judged with them.
	if res, err := refusals(pods, facts, opts); err != nil {
		return res, err
	}
	testPause(ctx, PauseAdmitted)
	r, err := newRunState(rt, facts, pods, opts, cgsys)
	if err != nil {
		return nil, err
	}
	for _, n := range r.notes {
		r.progressf("note: %s", n)
	}
	if err := r.cgroups.CheckDriver(); err != nil {
		return nil, fmt.Errorf("cgroup driver %s (%s): %w; if the runtime does not use systemd cgroups either, run podrun with --cgroup-driver=cgroupfs",
			facts.CgroupDriver, facts.CgroupDriverSource, err)
	}
	r.ctx = ctx
	opts = r.opts
	// Pull ahead what the pods and the Jobs' first pods will need, while
	// the run reclaims and sets them up; a run that ends, however, cancels
	// what is still under way.
	r.prefetch = startPrefetch(ctx, rt, r.now, planPullsAhead(append(slices.Clip(pods), JobFirstPods(opts.Jobs)...),
		opts.Secrets, r.nodeKeyrings), pullAheadLimit)
	defer r.prefetch.stop()

	// Reclaim what dead podruns left behind, and refuse pods a live one runs.
	sbs, err := listManaged(ctx, rt)
	if err != nil {
		return nil, err
	}
	if err := reclaim(ctx, rt, cgsys, opts.RootDir, sbs, r.progressf); err != nil {
		r.progressf("warning: reclaiming leftovers: %v", err)
	}
	if opts.Replace {
		if sbs, err = r.replace(ctx, pods, sbs); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(checkNotRunning(pods, sbs, opts.RootDir), checkJobsNotRunning(opts.Jobs, sbs, opts.RootDir)); err != nil {
		return nil, err
	}
	if r.userns, r.jobUserns, err = allocateRunUserns(pods, opts.Jobs, sbs); err != nil {
		return nil, err
	}

	waitCtx := ctx
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	waitCtx, stopHandOver := handOverContext(waitCtx, opts.HandOver)
	defer stopHandOver()
	obsCtx, stopObs := context.WithCancel(context.Background())
	defer stopObs()
	go r.obs.watch(obsCtx)

	res := &Result{Pods: make([]PodResult, len(pods)), Jobs: make([]JobResult, len(opts.Jobs))}
	var wg, syncing sync.WaitGroup
	for i, pod := range pods {
		wg.Add(1)
		syncing.Add(1)
		go func() {
			defer wg.Done()
			res.Pods[i] = r.runPod(ctx, waitCtx, newPodRun(r, pod), func() {
				r.prefetch.release(i)
				syncing.Done()
			})
		}()
	}
	first := len(pods) // a Job's first pods follow the pods in the plan
	for i, job := range opts.Jobs {
		wg.Add(1)
		syncing.Add(1)
		held := first
		first += jobParallel(job.Job)
		go func() {
			defer wg.Done()
			res.Jobs[i] = r.runJob(ctx, waitCtx, job, func() {
				for h := held; h < held+jobParallel(job.Job); h++ {
					r.prefetch.release(h)
				}
				syncing.Done()
			})
		}()
	}
	// Once no pod syncs any more, nobody needs the observer: teardown asks
	// the runtime directly.
	syncing.Wait()
	stopObs()
	wg.Wait()
	return res, nil
}

// refusals refuses the run before anything is created: a pod the node
// rejects (the Result then holds each pod's status), an image name that is
// not a reference, names too long for the pod's log dir (checkPathNames), a
// volume podrun
// cannot set up (a type that needs an API server or a CSI driver, a
// ConfigMap or Secret the run lacks, a failed hostPath check), a
// RuntimeClass the run lacks or whose handler the runtime does not have
// (runtimeHandlers), hostUsers false where the pod's handler has no user
// namespaces.
func refusals(pods []*v1.Pod, facts Facts, opts Options) (*Result, error) {
	if len(opts.Jobs) > 0 {
		o := opts
		o.Jobs = nil
		res, err := refusals(append(slices.Clip(pods), JobFirstPods(opts.Jobs)...), facts, o)
		if res != nil {
			res.Pods = res.Pods[:len(pods)] // the pods of the run; a Job's rejected pod is in the error
		}
		return res, err
	}
	if facts.Node.Name != "" {
		if rejected := admission.Admit(pods, facts.Node); rejected != nil {
			return rejectedResult(pods, rejected), admission.JoinRejections(rejected)
		}
	}
	if res, err := checkImageNames(pods); err != nil {
		return res, err
	}
	if err := checkPathNames(pods); err != nil {
		return nil, err
	}
	if err := checkVolumes(pods, opts.ConfigMaps, opts.Secrets, facts); err != nil {
		return nil, err
	}
	if err := artifacts.CheckRun(pods, opts.CopyOuts); err != nil {
		return nil, err
	}
	handlers, _, err := runtimeHandlers(pods, opts.RuntimeClasses, facts)
	if err != nil {
		return nil, err
	}
	if facts.NoRuntime {
		return nil, nil // the runtime's handlers are unknown: DryRun notes it
	}
	return nil, checkUserns(pods, handlers, facts.RuntimeHandlers)
}

// newRunState is the state of a run, with the options' defaults filled in.
func newRunState(rt Runtime, facts Facts, pods []*v1.Pod, opts Options, cgsys cgroups.System) (*runState, error) {
	if opts.Wait == "" {
		opts.Wait = WaitAuto
	}
	if opts.ResolvConf == "" {
		opts.ResolvConf = "/etc/resolv.conf"
	}
	if opts.Owner.RunID == "" {
		o, err := newOwner(opts.Detach)
		if err != nil {
			return nil, err
		}
		opts.Owner = o
	}
	host, err := readResolvConf(opts.ResolvConf)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", opts.ResolvConf, err)
	}
	// The notes of the run's pods and of its Jobs' (their first pods stand
	// for the rest: one template).
	_, notes, err := runtimeHandlers(append(slices.Clip(pods), JobFirstPods(opts.Jobs)...), opts.RuntimeClasses, facts)
	if err != nil {
		return nil, err
	}
	cgHost, err := cgroups.NewHost(opts.CgroupRoot, facts.CgroupDriver, cgsys)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range pods {
		n += len(p.Spec.InitContainers) + len(p.Spec.Containers)
	}
	for _, j := range opts.Jobs {
		t := &j.Job.Spec.Template.Spec
		n += jobParallel(j.Job) * (len(t.InitContainers) + len(t.Containers))
	}
	return &runState{
		rt: rt, facts: facts, opts: opts, host: host, now: time.Now, rand: rand.Float64,
		nodeKeyrings: credentials.NodeKeyrings(opts.ImageCredentials, credentials.NodeDockerConfigDirs(opts.RootDir)),
		cgroups:      cgHost, cgsys: cgsys, notes: notes,
		obs:   newObserver(rt, map[string]string{labelRun: opts.Owner.RunID}),
		sink:  newLogSink(opts.Stdout, opts.Stderr),
		multi: n > 1,
	}, nil
}

// jitter is a random number in [0, 1) for the waits the kubelet jitters,
// 0 when the run has no source of it (tests).
func (r *runState) jitter() float64 {
	if r.rand == nil {
		return 0
	}
	return r.rand()
}

// progressf writes a note of podrun's own progress.
func (r *runState) progressf(format string, args ...any) {
	if r.opts.Progress != nil {
		r.opts.Progress.Note(fmt.Sprintf(format, args...))
	}
}

// runPod runs one pod: set up, sync until the wait ends, tear down. A
// pod of a Job (p.inJob) is stopped when its Job's controller cancels
// waitCtx with a *stopCause (OutcomeStopped).
func (r *runState) runPod(ctx, waitCtx context.Context, p *podRun, synced func()) PodResult {
	pod := p.pod
	handedOver := false
	o, err := p.syncLoop(waitCtx)
	synced()
	var stopped *stopCause
	switch {
	case err != nil:
		o = OutcomeError
	case o == OutcomeWaiting && ctx.Err() != nil:
		o = OutcomeInterrupted
	case o == OutcomeWaiting && errors.As(context.Cause(waitCtx), &stopped):
		o, p.stopped = OutcomeStopped, true
	case o == OutcomeWaiting && context.Cause(waitCtx) == errHandedOver:
		o, handedOver = OutcomeReached, true
	case o == OutcomeWaiting:
		o = OutcomeTimeout
	}
	switch o {
	case OutcomeError:
		p.event("Failed", "%v", err)
	case OutcomeTimeout:
		p.event("Timeout", "timed out after %s waiting for the pod (--timeout)", r.opts.Timeout)
	case OutcomeInterrupted:
		p.event("Interrupted", "stopping")
	case OutcomeStopped:
		p.event("Killing", "stopping: %s", stopped.reason)
	}
	if handedOver && !p.inJob {
		p.lastLook(ctx)
	}
	res := PodResult{Pod: pod, Status: p.apiStatus, Outcome: o, Err: err}
	if (r.opts.Detach || handedOver) && o == OutcomeReached && !p.inJob {
		// The detach point: the record says from now on that the run left
		// the pod running on purpose (ps shows it detached, with the last
		// status podrun saw; reclaim leaves it to `podrun down`). Until it
		// does, the pod is this run's, reclaimed should the run die. A pod
		// that cannot be marked is not left behind unmarked: it goes.
		if derr := p.recordStatus(func(rec *statusRecord) { rec.Detached = true }); derr != nil {
			res.failWith(fmt.Errorf("detaching: %w (tearing the pod down: unmarked, a later run would take it for a dead run's leftover)", derr))
		} else {
			p.logs.finishAll(false)
			res.Logs = p.readLogTails()
			if handedOver {
				p.event("HandedOver", "leaving the pod running for the kubelet")
			} else {
				p.event("Detached", "leaving the pod running")
			}
			res.failWith(p.logsLost())
			res.CopyOuts = p.copyOutResults("the pod was left running (--detach)")
			res.failCopyOuts(r.opts.CopyOutRequired)
			return res
		}
	}
	if terr := p.teardown(); terr != nil {
		res.failWith(fmt.Errorf("tearing down: %w", terr))
	}
	// A run whose output was lost does not succeed (exit 125).
	res.failWith(p.lostLogs)
	res.CopyOuts = p.copyOutResults("the pod never ran")
	res.failCopyOuts(r.opts.CopyOutRequired)
	res.Status = p.apiStatus // final once teardown stopped a pod that ended (observeFinal)
	res.Logs = p.logTails
	return res
}

// lastLookTimeout bounds a handed-over pod's last look (lastLook).
const lastLookTimeout = 10 * time.Second

// lastLook brings the pod's status up to date before the run hands it
// over to a kubelet and records it: the runtime's view observed again,
// and the startup and readiness probes not passed yet run once, at once
// (podProber.lastLook), so that `podrun ps` shows afterwards the readiness
// the kubelet's first probes find, not a result pending its next period.
func (p *podRun) lastLook(ctx context.Context) {
	if p.prober == nil || p.r.obs.poll(ctx) != nil {
		return
	}
	p.observed = p.r.obs.runtimeStatus(p.uid, p.ips)
	ctx, cancel := context.WithTimeout(ctx, lastLookTimeout)
	defer cancel()
	p.prober.lastLook(ctx, p.observed, p.apiStatus.PodIP)
	p.probes = p.prober.snapshot()
	p.apiStatus = p.generateAPIStatus()
}

// errHandedOver is the cause that ends a wait when Wiring.HandOver closes.
var errHandedOver = errors.New("handed over to the kubelet")

// handOverContext is ctx, ended with errHandedOver when handOver closes.
func handOverContext(ctx context.Context, handOver <-chan struct{}) (context.Context, func()) {
	if handOver == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-handOver:
			cancel(errHandedOver)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// failWith makes err, when not nil, one of the pod's errors: the run then
// could not run the pod as asked (exit 125).
func (r *PodResult) failWith(err error) {
	if err == nil {
		return
	}
	r.Err = errors.Join(r.Err, err)
	r.Outcome = OutcomeError
}

// rejectedResult is the result of a run that admission stopped: a rejected
// pod has the status the kubelet gives it (Failed, with the reason and
// message); the others stay Pending, never started.
func rejectedResult(pods []*v1.Pod, rejected []*admission.Error) *Result {
	byPod := map[string]*admission.Error{}
	for _, e := range rejected {
		byPod[e.Namespace+"/"+e.Name] = e
	}
	res := &Result{Pods: make([]PodResult, len(pods))}
	for i, p := range pods {
		r := PodResult{Pod: p, Outcome: OutcomeError, Status: v1.PodStatus{Phase: v1.PodPending}}
		if e := byPod[p.Namespace+"/"+p.Name]; e != nil {
			r.Status, r.Err = e.Status(), e
			// The kubelet's rejectPod reports the pod's QoS class too.
			r.Status.QOSClass = podresources.QOSClass(p)
		} else {
			r.Err = errors.New("not started: another pod of the run was rejected")
		}
		res.Pods[i] = r
	}
	return res
}
