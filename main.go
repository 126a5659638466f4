// Command podrun runs Kubernetes Pod manifests once on the node's own CRI
// runtime, with the kubelet's semantics and no API server:
//
//	podrun -f pod.yaml
//
// main.go wires the command line (urfave/cli, as crictl) and config.go
// resolves `podrun run`'s flags once into a checked runConfig; the work is
// in sources (manifests), cri (the runtime client) and runner (the
// pipeline). docs/architecture.md says which package does what.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podlist"
	"github.com/podrun/podrun/sources"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	tuneGC()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// gcTuned says that main set the garbage collector up (tuneGC), so that a
// run limits its memory once its manifests are read (limitMemory); tests
// that call run leave their own process's collector alone.
var gcTuned bool

// gcMemoryLimit is the least soft limit of the Go runtime's memory that
// limitMemory sets (docs/benchmark.md has the measurements behind it).
const gcMemoryLimit = 24 << 20

// tuneGC: podrun's heap stays small (a few MiB of manifests and status) and
// it shares two cores with the runtime it drives, so it collects less often
// than Go's default (GOGC 400). GOGC in the environment wins.
func tuneGC() {
	gcTuned = true
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// limitMemory sets a soft limit on the Go runtime's memory once a run's
// manifests are read: gcMemoryLimit, or four times the heap they hold when
// that is more. Past it the run collects more often instead of growing
// (docs/benchmark.md, The memory limit), and a run of thousands of pods is
// not made to collect over and over.
// GOMEMLIMIT in the environment wins.
func limitMemory() {
	if !gcTuned || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	if heap[0].Value.Kind() == metrics.KindUint64 {
		debug.SetMemoryLimit(memoryLimit(heap[0].Value.Uint64()))
	}
}

// memoryLimit is the soft memory limit of a run whose manifests hold heap
// bytes.
func memoryLimit(heap uint64) int64 {
	return max(gcMemoryLimit, 4*int64(min(heap, 1<<60)))
}

// exitError carries an exit status out of an action.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

// flagCtx returns the context that set the flag: `podrun -r X run -f Y`
// sets -r on the app and -f on the run command, and both count. A flag
// with an environment variable is set from it in every command that has
// the flag, so a value from the command line, which differs from the
// variable's, wins wherever it was given: `CONTAINER_RUNTIME_ENDPOINT=Y
// podrun -r X ps` talks to X, as crictl would.
func flagCtx(c *cli.Context, name string) *cli.Context {
	var set []*cli.Context
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			set = append(set, ctx)
		}
	}
	if len(set) == 0 {
		return c
	}
	for _, env := range flagEnvVars(set[0], name) {
		if v, ok := os.LookupEnv(env); ok {
			for _, ctx := range set {
				if ctx.String(name) != v {
					return ctx
				}
			}
		}
	}
	return set[0]
}

// flagEnvVars is the environment variables of the flag name of ctx's
// command (or app).
func flagEnvVars(ctx *cli.Context, name string) []string {
	flags := ctx.App.Flags
	if ctx.Command != nil && ctx.Command.Name != "" {
		flags = ctx.Command.Flags
	}
	for _, f := range flags {
		if ef, ok := f.(interface{ GetEnvVars() []string }); ok && slices.Contains(f.Names(), name) {
			return ef.GetEnvVars()
		}
	}
	return nil
}

func str(c *cli.Context, name string) string             { return flagCtx(c, name).String(name) }
func boolean(c *cli.Context, name string) bool           { return flagCtx(c, name).Bool(name) }
func strs(c *cli.Context, name string) []string          { return flagCtx(c, name).StringSlice(name) }
func duration(c *cli.Context, name string) time.Duration { return flagCtx(c, name).Duration(name) }

func podrunError(err error) error { return &exitError{code: runner.ExitPodrunError, err: err} }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.Run(interspersed(app, args))
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "podrun: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "podrun: %v\n", err)
	return runner.ExitPodrunError
}

// Flags shared by every command that talks to the runtime.
func runtimeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "runtime-endpoint", Aliases: []string{"r"}, EnvVars: []string{"CONTAINER_RUNTIME_ENDPOINT"}, Category: catRuntime,
			Usage: "CRI `ENDPOINT` (unix:///path or /path); default: the first that answers of " + strings.Join(cri.DefaultEndpoints, ", ")},
		&cli.StringFlag{Name: "root-dir", Value: "/var/lib/podrun", Category: catRuntime,
			Usage: "podrun's state and per-pod data `DIR`s (<root-dir>/pods/<uid>); pod logs go under <root-dir>/logs unless --pod-logs-dir is set"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Category: catOutput, Usage: "do not print podrun's own progress on stderr"},
	}
}

func runFlags() []cli.Flag {
	host, _ := os.Hostname()
	return append(runtimeFlags(),
		&cli.StringSliceFlag{Name: "filename", Aliases: []string{"f"}, Category: catInput,
			Usage: "manifest `SOURCE`, repeatable: a file, a directory (every regular file not starting with '.', sorted, not recursive), '-' for stdin, or an http(s):// URL"},
		&cli.StringSliceFlag{Name: "manifest-url-header", Category: catInput,
			Usage: "`'Name:value'` header sent with manifest URL requests, repeatable; a redirect to another scheme, host or port gets none"},
		&cli.StringFlag{Name: "manifest-url-ca", Category: catInput, TakesFile: true,
			Usage: "PEM `FILE` of CA certificates that manifest URL servers are verified against, besides the system roots"},
		&cli.StringFlag{Name: "pod-logs-dir", Category: catRuntime, TakesFile: true,
			Usage: "`DIR` for pod logs (<dir>/<namespace>_<name>_<uid>/<container>/<n>.log), kept after the run; default: under --root-dir, removed with the pod"},
		&cli.StringFlag{Name: "wait", Value: string(runner.WaitAuto), Category: catOutput,
			Usage: "what to wait for (`MODE`): complete (every regular container terminated), ready (every pod Ready), none (started), auto (complete for restartPolicy Never/OnFailure, ready for Always)"},
		&cli.DurationFlag{Name: "timeout", Category: catOutput, Usage: "`DURATION` limit for the whole wait, e.g. 90s or 5m; 0 means none (exit 124 when it expires)"},
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Category: catOutput, Usage: "leave the pods running once the wait ends (stop them with 'podrun down')"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Category: catOutput,
			Usage: "`FORMAT`: text, or json/yaml: print the final pods (v1.Pod, or v1.List for several) on stdout after teardown; container output then goes to stderr. With --dry-run: the CRI configs a run would send"},
		&cli.BoolFlag{Name: "dry-run", Category: catOutput,
			Usage: "decode, default, validate and admit the pods without running them (the runtime, when one answers, is asked for its cgroup driver alone) and print a summary, or with -o json|yaml the CRI configs a run would send, secrets masked (as 'podrun validate')"},
		&cli.StringFlag{Name: "junit", TakesFile: true, Category: catOutput,
			Usage: "write a JUnit XML report to `FILE`: a testsuite per pod, a testcase per container, with exit codes and the failed containers' last log lines; written even when the run fails, times out or is interrupted"},
		&cli.StringFlag{Name: "node-name", Value: host, DefaultText: "this machine's host name", Category: catNode, Usage: "node `NAME`: spec.nodeName default, part of the pod UID"},
		&cli.StringSliceFlag{Name: "cluster-dns", Category: catNetwork, Usage: "DNS server `IP` for pods with dnsPolicy ClusterFirst, repeatable (without it they use the host's resolv.conf, as a kubelet without clusterDNS does)"},
		&cli.StringFlag{Name: "cluster-domain", Category: catNetwork, Usage: "cluster `DOMAIN` for DNS search paths and pod FQDNs, e.g. cluster.local; none by default, as the kubelet"},
		&cli.StringFlag{Name: "cgroup-root", Value: cgroups.DefaultRoot, Category: catNode,
			Usage: "`CGROUP` under which each pod gets its cgroup, by QoS class (pod<uid>, burstable/pod<uid>, besteffort/pod<uid>); '' for none"},
		&cli.StringFlag{Name: "cgroup-driver", Category: catRuntime,
			Usage: "`DRIVER`: cgroupfs or systemd; default: the runtime's (CRI RuntimeConfig, else its status info), else cgroupfs"},
		&cli.StringSliceFlag{Name: "system-reserved", Category: catNode,
			Usage: "`RESOURCES` held back from pods, e.g. cpu=500m,memory=1Gi,ephemeral-storage=1Gi: pods are admitted against the machine's CPUs, memory and --root-dir filesystem less these and the kubelet's default eviction thresholds"},
		&cli.StringSliceFlag{Name: "node-labels", Category: catNode,
			Usage: "node `LABELS` for nodeSelector and node affinity, KEY=VALUE, comma list or repeatable (the node always has kubernetes.io/hostname=<node name>, kubernetes.io/os and kubernetes.io/arch)"},
		&cli.StringSliceFlag{Name: "allowed-unsafe-sysctls", Category: catSecurity,
			Usage: "`SYSCTLS`, or prefixes ending in *, that pods may set besides the safe ones, comma list or repeatable, e.g. 'kernel.msg*,net.core.somaxconn'"},
		&cli.StringFlag{Name: "cni-conf-dir", Category: catNetwork, TakesFile: true,
			Usage: "CNI network config `DIR` checked before pods off the host network run, over the one the runtime reports in its status; " +
				"with neither, " + cni.DefaultConfDir + " if --cni-bin-dir is given, else no CNI files are checked and the runtime's NetworkReady decides (CRI-O reports no dirs)"},
		&cli.StringFlag{Name: "cni-bin-dir", Category: catNetwork, TakesFile: true,
			Usage: "CNI plugin `DIRS`, colon-separated, over the ones the runtime reports in its status; with neither, " + cni.DefaultBinDir + " if --cni-conf-dir is given"},
		&cli.StringFlag{Name: "image-credentials", TakesFile: true, Category: catSecurity,
			Usage: "docker config.json `FILE` with registry credentials, tried after the pods' imagePullSecrets and before the node's docker config (<root-dir>/config.json, ./config.json, $DOCKER_CONFIG or ~/.docker/config.json, ...)"},
		&cli.StringFlag{Name: "seccomp-profile-root", TakesFile: true, Category: catSecurity,
			Usage: "`DIR` of the Localhost seccomp profiles pods name (seccompProfile.localhostProfile is relative to it); default <root-dir>/seccomp, as the kubelet's"},
		&cli.BoolFlag{Name: "static-pod-names", Category: catNode, Usage: "name and default pods as the kubelet does static pods: <name>-<node-name>, spec.nodeName this node, a NoExecute toleration (for a kubelet taking them over: docs/handover.md)"},
	)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	runCmd := func(c *cli.Context) error { return runAction(c, stdin, stdout, stderr) }
	appFlags := runFlags()
	app := &cli.App{
		Name:        "podrun",
		Usage:       "run Kubernetes Pod manifests once on the node's CRI runtime, as a kubelet would",
		UsageText:   appUsageText(appFlags),
		Description: exitStatusHelp,
		Writer:      stdout,
		ErrWriter:   stderr,
		Reader:      stdin,
		Flags:       appFlags,
		Action:      runCmd,
		Commands: []*cli.Command{
			{
				Name: "run", Usage: "run pods from manifests until they complete or are ready, then tear them down",
				UsageText: "podrun run [flags] -f SOURCE...\n\n" +
					"# a job pod: stream its logs, exit with its status, give up after 10 minutes\n" +
					"podrun run --timeout 10m -f job.yaml\n" +
					"# every manifest of a directory, left running once Ready\n" +
					"podrun run -d --wait=ready -f manifests/",
				Flags: runFlags(), Action: runCmd,
			},
			psCommand(stdout, stderr),
			{
				Name: "down", Usage: "tear podrun pods down fully: containers, sandboxes, data and log dirs",
				UsageText: "podrun down [flags] POD... | --all   (POD: NAME, NAMESPACE/NAME or UID, of --root-dir)\n\n" +
					"# one pod, by name\n" +
					"podrun down web\n" +
					"# every podrun pod of this root dir (--root-dir): a CI job's cleanup\n" +
					"podrun down --all\n" +
					"# every podrun pod on this node, whatever its root dir\n" +
					"podrun down --all --all-roots",
				Flags: append(runtimeFlags(),
					&cli.BoolFlag{Name: "all", Category: catInput, Usage: "every podrun pod of --root-dir (with --all-roots: on this node)"},
					allRootsFlag("take pods of every --root-dir, not only of this one: POD names any podrun pod, --all takes every one on the runtime")),
				Action: func(c *cli.Context) error { return downAction(c, stderr) },
			},
			validateCommand(stdin, stdout, stderr),
			handoverCommand(stdout, stderr),
			logsCommand(stdout, stderr),
			execCommand(stdin, stdout, stderr),
			cniCommand(stdout, stderr),
			completionCommand(stdout),
			{
				Name: "version", Usage: "print podrun's version",
				UsageText: "podrun version\n\n" +
					"# podrun's version, with the Go version and platform it was built with\n" +
					"podrun version",
				Action: func(c *cli.Context) error {
					fmt.Fprintf(stdout, "podrun %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
					return nil
				},
			},
			completeCommand(stdout),
		},
	}
	finishCommands(app)
	return app
}

// interrupts ends a run early: the first SIGINT, SIGTERM or SIGHUP, or
// output (closed: podrun's stdout or stderr lost its reader), cancels ctx
// and sets the exit status (130, 143, 129, 141: 128 + the signal, as a
// shell reports a process the signal killed, though podrun first tears
// everything down); the second closes force.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	force  chan struct{}
	ch     chan os.Signal
	done   chan struct{}

	mu   sync.Mutex
	n    int
	code int
}

// interruptSignals are the signals that stop a run, with their exit status.
var interruptSignals = map[os.Signal]int{
	syscall.SIGINT:  runner.ExitSIGINT,
	syscall.SIGTERM: runner.ExitSIGTERM,
	syscall.SIGHUP:  runner.ExitSIGHUP,
}

func newInterrupts() *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, force: make(chan struct{}), ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(in.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case s := <-in.ch:
				in.interrupt(interruptSignals[s])
			case <-in.done:
				return
			}
		}
	}()
	return in
}

// interrupt counts one interruption with its exit status.
func (in *interrupts) interrupt(code int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.n++
	switch in.n {
	case 1:
		in.code = code
		in.cancel()
	case 2:
		close(in.force)
	}
}

// exitCode is the first interruption's exit status, 0 before any.
func (in *interrupts) exitCode() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.code
}

func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.done)
	in.cancel()
}

// signals cancels the returned context on the first SIGINT, SIGTERM or
// SIGHUP and closes force on the second. code reports 130, 143 or 129 once
// signalled.
func signals() (ctx context.Context, force <-chan struct{}, code func() int, stop func()) {
	in := newInterrupts()
	return in.ctx, in.force, in.exitCode, in.stop
}

// outputGuard is podrun's stdout or stderr during a run. SIGPIPE is
// ignored, so a write to a pipe whose reader is gone (`podrun -f pod.yaml
// | head -1`) fails with EPIPE instead of killing podrun with its pods left
// running: the guard then calls closed once and drops every later write,
// and the run stops and tears down as after a signal (exit 141).
type outputGuard struct {
	w      io.Writer
	closed func()
	gone   atomic.Bool
}

func (g *outputGuard) Write(p []byte) (int, error) {
	if g.gone.Load() {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		if g.gone.CompareAndSwap(false, true) {
			g.closed()
		}
		return len(p), nil
	}
	return n, err
}

// Unwrap is the writer the guard guards: the run's log sink drops a
// stream whose writer is /dev/null (runner's unlessDiscard), guarded or not.
func (g *outputGuard) Unwrap() io.Writer { return g.w }

func runAction(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	return runWith(runFlagsOf(c), stdin, stdout, stderr)
}

// runWith runs the pods the flags name; a dry run stops before the
// runtime, which it asks for the cgroup driver at most (dryRun). With
// --junit the report is written whatever the outcome, once the run has
// ended (junit.go).
func runWith(f runFlagValues, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	cfg, err := newRunConfig(f, os.ReadFile)
	if err != nil {
		return podrunError(err)
	}
	in := newInterrupts()
	defer in.stop()
	ctx, force, sigCode := in.ctx, in.force, in.exitCode
	signal.Ignore(syscall.SIGPIPE)
	jr, err := newJUnitReport(cfg)
	if err != nil {
		return podrunError(err)
	}
	defer func() { err = jr.write(err, sigCode()) }()

	// 1. Read every manifest before touching the runtime: bad input creates nothing.
	// A dry run stamps no config.seen: it sees no pod start, and its
	// output stays the same from one dry run to the next (docs/validate.md).
	seen := time.Now()
	if cfg.DryRun {
		seen = time.Time{}
	}
	set, err := sources.Load(ctx, cfg.Sources, sources.Options{Stdin: stdin, HTTPHeaders: cfg.Headers, HTTPCAFile: cfg.ManifestURLCA,
		NodeName: cfg.NodeName, StaticPodNames: cfg.StaticPodNames, Seen: seen})
	if err != nil {
		return interrupted(err, sigCode)
	}
	if len(set.Pods) == 0 {
		names := make([]string, len(cfg.Sources))
		for i, s := range cfg.Sources {
			names[i] = sources.DisplayName(s) // a URL without its credentials
		}
		return podrunError(fmt.Errorf("no pod in %s", strings.Join(names, ", ")))
	}
	if cfg.DryRun {
		return dryRun(ctx, cfg, set, stdout, stderr, sigCode)
	}
	limitMemory()
	pods := setPods(set)
	jr.setPods(pods)

	// 2. Connect to the runtime and learn the node and the runtime.
	rt, err := dial(ctx, cfg.Endpoint)
	if err != nil {
		return interrupted(err, sigCode)
	}
	defer rt.Close()
	facts, err := runner.GatherFacts(ctx, rt, pods, cfg.Facts)
	if err != nil {
		return interrupted(err, sigCode)
	}

	// 3. Run.
	stdout, errOut := guardOutputs(in, stdout, stderr)
	opts := cfg.runOptions(set, force, stdout, errOut)
	stopLive := startLiveProgress(&opts, stderr)
	defer stopLive()
	res, err := runner.Run(ctx, rt, facts, pods, opts)
	stopLive()
	jr.setResult(res)
	if err != nil {
		return runFailed(withOrigins(err, set), res, cfg.Output, stdout, sigCode)
	}

	// 4. Report.
	return withOrigins(report(res, cfg.Output, opts.Progress, stdout, sigCode), set)
}

// guardOutputs wraps podrun's stdout and stderr in outputGuards that
// interrupt the run, once, when either has lost its reader.
func guardOutputs(in *interrupts, stdout, stderr io.Writer) (io.Writer, io.Writer) {
	var once sync.Once
	lost := func() (first bool) {
		once.Do(func() { first = true; in.interrupt(runner.ExitSIGPIPE) })
		return first
	}
	errOut := &outputGuard{w: stderr, closed: func() { lost() }}
	out := &outputGuard{w: stdout, closed: func() {
		if lost() {
			fmt.Fprintln(errOut, "podrun: stdout is closed (broken pipe): stopping the pods")
		}
	}}
	return out, errOut
}

// runFailed is the error of a run that could not run its pods. Refused
// pods that have a status print as the kubelet reports them: rejected ones
// Failed, with the reason; ones with an invalid image name Pending, the
// container waiting with InvalidImageName.
func runFailed(err error, res *runner.Result, output string, stdout io.Writer, sigCode func() int) error {
	if res != nil && output != "text" {
		if perr := printPods(stdout, output, res.Pods); perr != nil {
			return podrunError(errors.Join(err, perr))
		}
	}
	return interrupted(err, sigCode)
}

// report prints each pod's outcome and, with -o json or yaml, the final
// pods, and returns podrun's exit status.
func report(res *runner.Result, output string, progress runner.Progress, stdout io.Writer, sigCode func() int) error {
	for _, p := range res.Pods {
		if progress != nil {
			progress.Note(fmt.Sprintf("pod/%s: %s (phase %s)", p.Pod.Name, p.Outcome, p.Status.Phase))
		}
	}
	if output != "text" {
		if err := printPods(stdout, output, res.Pods); err != nil {
			return podrunError(err)
		}
	}
	// After printing: a stdout closed meanwhile counts (141).
	code := res.ExitCode(sigCode())
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: res.Err()}
}

// interrupted turns an error that a signal caused before any pod was
// created (a runtime call cut short) into the signal's exit status.
func interrupted(err error, sigCode func() int) error {
	if code := sigCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("interrupted: %w", err)}
	}
	return podrunError(err)
}

func dial(ctx context.Context, endpoint string) (*cri.Client, error) {
	if endpoint != "" {
		return cri.Dial(ctx, endpoint)
	}
	return cri.DialFirst(ctx, cri.DefaultEndpoints)
}

// printPods prints the final pods as a v1.Pod, or a v1.List for several.
func printPods(w io.Writer, format string, results []runner.PodResult) error {
	pods := make([]*v1.Pod, len(results))
	for i, r := range results {
		p := podlist.WithKind(r.Pod)
		p.Status = r.Status
		pods[i] = p
	}
	if len(pods) == 1 {
		return writeObject(w, format, pods[0])
	}
	return writeObject(w, format, podlist.List(pods))
}

// writeObject prints obj as indented JSON, or as YAML for format "yaml":
// the one serializer of -o json|yaml.
func writeObject(w io.Writer, format string, obj any) error {
	b, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

func downAction(c *cli.Context, stderr io.Writer) error {
	if c.NArg() == 0 && !boolean(c, "all") {
		return podrunError(errors.New("name the pods to tear down (NAME, NAMESPACE/NAME or UID) or use --all"))
	}
	progress := func(format string, args ...any) {
		if !boolean(c, "quiet") {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}
	scope, err := podScope(c)
	if err != nil {
		return podrunError(err)
	}
	// A signal once down has the runtime does not abandon the stop half
	// way (a pod with its containers still running and its data dir gone):
	// as a run's teardown after its first signal, down carries on, and a
	// second signal kills the containers at once and still removes
	// everything. The exit status is then the first signal's (130, 143,
	// 129), once down is done; an error of down's own wins (125).
	in := newInterrupts()
	defer in.stop()
	rt, err := dial(in.ctx, str(c, "runtime-endpoint"))
	if err != nil {
		return interrupted(err, in.exitCode)
	}
	defer rt.Close()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-in.ctx.Done():
			progress("podrun: interrupted: finishing the stop (a second signal kills the containers at once)")
		case <-finished:
		}
	}()
	err = runner.DownWith(context.WithoutCancel(in.ctx), rt, runner.DownOptions{
		Args: c.Args().Slice(), All: boolean(c, "all"), Scope: scope, Force: in.force, Progressf: progress,
	})
	if err != nil {
		return podrunError(err)
	}
	if code := in.exitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// withRuntime dials the runtime the command's flags name and runs f with
// it, under a context a signal cancels (sigCode: the exit status of the
// signal that came, 0 for none); f's errors exit 125 unless they carry
// their exit status.
func withRuntime(c *cli.Context, f func(ctx context.Context, rt *cri.Client, sigCode func() int) error) error {
	ctx, _, sigCode, stop := signals()
	defer stop()
	rt, err := dial(ctx, str(c, "runtime-endpoint"))
	if err != nil {
		return podrunError(err)
	}
	defer rt.Close()
	if err := f(ctx, rt, sigCode); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return podrunError(err)
	}
	return nil
}
