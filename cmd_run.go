package main

// `podrun run`, which is also podrun itself: the pods of the manifests run
// once (runner.Run), their output streamed, then reported with the exit
// status of how they ended.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/artifacts"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/report/podlist"
	"github.com/podrun/podrun/sources"
)

// runCommand is `podrun run`; newApp gives podrun itself its flags and
// action.
func runCommand(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name: "run", Usage: "run pods from manifests until they complete or are ready, then tear them down",
		UsageText: `podrun run [flags] -f SOURCE...
podrun run NAME --image IMAGE [flags] [-- COMMAND [ARG...]]

# a job pod: stream its logs, exit with its status, give up after 10 minutes
podrun run --timeout 10m -f job.yaml
# every manifest of a directory, left running once Ready
podrun run -d --wait=ready -f manifests/
# the job pod with the image this build made
podrun run --image tests=registry.example.com/app-tests:1.5 -f job.yaml
# a pod without a manifest, as kubectl run: stdin piped in, exit with the command's status
podrun run t -i --image busybox -- wc -c
# the pod kubectl run would create, as a manifest
podrun run web --image nginx --port 80 --dry-run=client -o yaml`,
		UseShortOptionHandling: true,
		Flags:                  runFlags(),
		Action:                 func(c *cli.Context) error { return runAction(c, true, stdin, stdout, stderr) },
	}
}

// runFlags are the run command's flags, by what they are about.
func runFlags() []cli.Flag {
	return slices.Concat(runtimeFlags(), inputFlags(), podFlags(), outputFlags(), nodeFlags(), staticPodFlags())
}

// inputFlags say where the manifests come from.
func inputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "filename", Aliases: []string{"f"}, Category: catInput,
			Usage: "manifest `SOURCE`, repeatable: a file, a directory (every regular file not starting with '.', sorted, not recursive), '-' for stdin, or an http(s):// URL"},
		&cli.StringSliceFlag{Name: "manifest-url-header", Category: catInput,
			Usage: "`'Name:value'` header sent with manifest URL requests, repeatable; a redirect to another scheme, host or port gets none"},
		&cli.StringFlag{Name: "manifest-url-ca", Category: catInput, TakesFile: true,
			Usage: "PEM `FILE` of CA certificates that manifest URL servers are verified against, besides the system roots"},
	}
}

// outputFlags say what a run waits for and what it prints.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "pod-logs-dir", Category: catRuntime, TakesFile: true,
			Usage: "`DIR` for pod logs (<dir>/<namespace>_<name>_<uid>/<container>/<n>.log), kept after the run; default: under --root-dir, removed with the pod"},
		&cli.StringFlag{Name: "wait", Value: string(runner.WaitAuto), Category: catOutput,
			Usage: "what to wait for (`MODE`): complete (every regular container terminated), ready (every pod Ready), none (started), auto (complete for restartPolicy Never/OnFailure, ready for Always; a container's own restartPolicy counts for it)"},
		&cli.DurationFlag{Name: "timeout", Category: catOutput, Usage: "`DURATION` limit for the whole wait, e.g. 90s or 5m; 0 means none (exit 124 when it expires)"},
		&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Category: catOutput, Usage: "leave the pods running once the wait ends (stop them with 'podrun down')"},
		&cli.BoolFlag{Name: "supervise", Category: catOutput,
			Usage: "a node's service: keep the pods as the kubelet would (restarts, probes) until a signal tears them down, or, with --static-pod-names, until a kubelet is at work and they are handed over to it; under systemd (Type=notify) READY=1 once every pod is Ready (docs/bootstrap.md)"},
		&cli.BoolFlag{Name: "replace", Category: catOutput,
			Usage: "first stop a detached pod of the same namespace and name in --root-dir, as 'podrun down' does (preStop hooks, grace period), then run the pod in its place"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Category: catOutput,
			Usage: "`FORMAT`: text, or json/yaml: print the final pods (v1.Pod, or v1.List for several) on stdout after teardown; container output then goes to stderr. With --dry-run: the CRI configs a run would send"},
		dryRunFlag(),
		&cli.GenericFlag{Name: "copy-out", Category: catOutput, Value: &stringList{},
			Usage: "copy out `CONTAINER:PATH=HOSTDIR`, repeatable: PATH as CONTAINER sees it, on one of its emptyDir or hostPath volumes, " +
				"is copied into HOSTDIR (made when missing) once the container has ended for good, else at teardown; symlinks are not followed. " +
				"[NAMESPACE/]POD/CONTAINER:... when several pods have the container (docs/artifacts.md)"},
		&cli.StringFlag{Name: "copy-out-limit", Value: "1Gi", Category: catOutput,
			Usage: "`SIZE` of the files one --copy-out copies at most, e.g. 100Mi or 5G; 0: no limit. A copy that would go over it stops there and fails"},
		&cli.BoolFlag{Name: "copy-out-required", Category: catOutput,
			Usage: "a --copy-out that fails fails the run (exit 125); without it, a failed copy is a CopyOutFailed event and the exit status stays the pods'"},
		&cli.StringFlag{Name: "junit", TakesFile: true, Category: catOutput,
			Usage: "write a JUnit XML report to `FILE`: a testsuite per pod, a testcase per container, with exit codes and the failed containers' last log lines; written even when the run fails, times out or is interrupted"},
	}
}

// nodeFlags describe the node as a kubelet's configuration would.
func nodeFlags() []cli.Flag {
	host, _ := os.Hostname()
	return []cli.Flag{
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
	}
}

// staticPodFlags are for the pods of a node's bootstrap, which a kubelet
// later takes over (docs/bootstrap.md, docs/handover.md).
func staticPodFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "static-pod-names", Category: catNode, Usage: "name and default pods as the kubelet does static pods: <name>-<node-name>, spec.nodeName this node, a NoExecute toleration (for a kubelet taking them over: docs/handover.md)"},
		&cli.BoolFlag{Name: "static-pod-strict", Category: catNode,
			Usage: "with --static-pod-names, refuse what a kubelet would refuse or not read in a static pod manifest (a reference to a Secret, ConfigMap, service account or claim; a second document in a file), which is otherwise a warning"},
		&cli.BoolFlag{Name: "ignore-running-kubelet", Category: catNode,
			Usage: "with --static-pod-names, run even where a kubelet is at work (its healthz answers, or the runtime runs pods a kubelet made), which a run otherwise refuses: that kubelet kills such pods as orphans"},
		&cli.StringFlag{Name: "kubelet-healthz", Value: runner.DefaultKubeletHealthz, Category: catNode,
			Usage: "`URL` of the node's kubelet's healthz, asked before static-named pods run (--static-pod-names); '' to not ask"},
	}
}

// runAction is podrun's and podrun run's action; nameAllowed: the
// command takes NAME, the pod to generate (podrun run).
func runAction(c *cli.Context, nameAllowed bool, stdin io.Reader, stdout, stderr io.Writer) error {
	f := runFlagsOf(c)
	f.NameAllowed = nameAllowed
	return runWith(f, stdin, stdout, stderr)
}

// runWith runs the pods the flags name, in steps: the configuration
// (newRunConfig), what interrupts the run (runInterrupts), the JUnit
// report, the manifests (readManifests) and the --copy-outs against them,
// then the pods (runPods). A dry
// run stops before the runtime, which it asks for the cgroup driver at
// most (dryRun). With --junit the report is written whatever the outcome,
// once the run has ended (junit.go).
func runWith(f runFlagValues, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	cfg, err := newRunConfig(f, os.ReadFile)
	if err != nil {
		return podrunError(err)
	}
	in := runInterrupts()
	defer in.stop()
	jr, err := newJUnitReport(cfg)
	if err != nil {
		return podrunError(err)
	}
	defer func() { err = jr.write(err, in.exitCode()) }()
	set, err := readManifests(in.ctx, cfg, stdin, in.exitCode)
	if err != nil {
		return err
	}
	if cfg.StaticPodNames {
		if err := cfg.StaticPod.manifests(set, stderr); err != nil {
			return podrunError(err)
		}
	}
	if cfg.PrintManifests {
		return printManifests(stdout, cfg.Output, set)
	}
	// Before the runtime is dialled (runner.Run checks them again, with
	// the rest of what refuses a run).
	if err := artifacts.CheckRun(podsToCheck(set), cfg.Run.CopyOuts); err != nil {
		return podrunError(err)
	}
	at, err := attachTarget(cfg, set, stdin, stderr)
	if err != nil {
		return podrunError(err)
	}
	if cfg.DryRun {
		return dryRun(in.ctx, cfg, set, stdout, stderr, in.exitCode)
	}
	limitMemory(len(set.Pods) + len(set.Jobs))
	return runPods(cfg, set, at, in, jr, stdout, stderr)
}

// printManifests is --dry-run=client: the pods as manifests, overrides
// applied, before defaults (a v1.Pod, or a v1.List for several), as YAML
// unless -o json.
func printManifests(stdout io.Writer, output string, set *sources.Set) error {
	pods := objectsOf(set.Pods, func(p *sources.Pod) *v1.Pod { return podlist.WithKind(p.Manifest) })
	if output != "json" {
		output = "yaml"
	}
	var obj any = podlist.List(pods)
	if len(pods) == 1 {
		obj = pods[0]
	}
	if err := writeObject(stdout, output, obj); err != nil {
		return podrunError(err)
	}
	return nil
}

// runInterrupts is what interrupts a run: a signal, or a write to a stdout
// or stderr whose reader is gone, SIGPIPE being ignored (outputGuard).
func runInterrupts() *interrupts {
	in := newInterrupts()
	signal.Ignore(syscall.SIGPIPE)
	return in
}

// readManifests reads every manifest before the runtime is touched: bad
// input creates nothing. A dry run stamps no config.seen: it sees no pod
// start, and its output stays the same from one dry run to the next
// (docs/validate.md).
func readManifests(ctx context.Context, cfg runConfig, stdin io.Reader, sigCode func() int) (*sources.Set, error) {
	seen := time.Now()
	if cfg.DryRun {
		seen = time.Time{}
	}
	opts := sources.Options{Stdin: stdin, HTTPHeaders: cfg.Headers, HTTPCAFile: cfg.ManifestURLCA,
		NodeName: cfg.NodeName, StaticPodNames: cfg.StaticPodNames, Seen: seen,
		Overrides: cfg.Pods.Overrides, KeepManifests: cfg.PrintManifests}
	if cfg.Pods.RunPod != nil {
		set, err := sources.DecodeRunPod(*cfg.Pods.RunPod, opts)
		if err != nil {
			return nil, podrunError(err)
		}
		return set, nil
	}
	set, err := sources.Load(ctx, cfg.Sources, opts)
	if err != nil {
		return nil, interrupted(err, sigCode)
	}
	if len(set.Pods) == 0 && len(set.Jobs) == 0 {
		names := make([]string, len(cfg.Sources))
		for i, s := range cfg.Sources {
			names[i] = sources.DisplayName(s) // a URL without its credentials
		}
		return nil, podrunError(fmt.Errorf("no pod in %s", strings.Join(names, ", ")))
	}
	return set, nil
}

// runPods runs the pods of set, in steps: the runtime and the facts
// (connect), the outputs (startOutputs), the run (runner.Run, with the
// configuration's options wired to the outputs and signals), then the
// report of how the pods ended (report), or of the pods refused
// (runFailed). An error about a pod names where it was read from
// (withOrigins).
func runPods(cfg runConfig, set *sources.Set, at *attachment, in *interrupts, jr *junitReport, stdout, stderr io.Writer) error {
	pods := setPods(set)
	jr.setPods(pods)
	rt, facts, err := connect(in.ctx, cfg, pods, in.exitCode)
	if err != nil {
		return err
	}
	defer rt.Close()
	if cfg.StaticPodNames {
		if err := cfg.StaticPod.kubelet(in.ctx, rt); err != nil {
			return interrupted(err, in.exitCode)
		}
	}
	sup, err := startSupervision(in.ctx, cfg, rt, len(pods))
	if err != nil {
		return podrunError(err)
	}
	defer sup.stop("stopping the pods")
	out, stopLive := startOutputs(cfg, at.terminal(), in, stdout, stderr)
	defer stopLive()
	out.progress = sup.progress(out.progress)
	noteWorkloads(set, out.progress)
	opts := sup.wire(wired(cfg.withManifests(set), out, in.force))
	opts.Attach = at.start(rt, out)
	res, err := runner.Run(in.ctx, rt, facts, pods, opts)
	at.finish()
	stopLive()
	sup.stop("stopping the pods")
	jr.setResult(res)
	if err != nil {
		return runFailed(withOrigins(err, set), res, cfg.Output, out.stdout, in.exitCode)
	}
	if sup.handedOver() {
		if err := handOverPods(in.ctx, cfg, rt, res, stderr); err != nil {
			return interrupted(err, in.exitCode)
		}
	}
	return withOrigins(report(res, cfg.Output, out.progress, out.stdout, in.exitCode), set)
}

// connect dials the runtime and learns the node and the runtime
// (runner.GatherFacts).
func connect(ctx context.Context, cfg runConfig, pods []*v1.Pod, sigCode func() int) (*cri.Client, runner.Facts, error) {
	rt, err := dial(ctx, cfg.Endpoint)
	if err != nil {
		return nil, runner.Facts{}, interrupted(err, sigCode)
	}
	facts, err := runner.GatherFacts(ctx, rt, pods, cfg.Facts)
	if err != nil {
		rt.Close()
		return nil, runner.Facts{}, interrupted(err, sigCode)
	}
	return rt, facts, nil
}

// wired is a run's options: its configuration (runConfig.withManifests) with
// the wiring: where the containers and podrun's progress write
// (runOutputs), and force, which a second signal closes.
func wired(cfg runner.Config, out runOutputs, force <-chan struct{}) runner.Options {
	return runner.Options{Config: cfg, Wiring: runner.Wiring{
		Stdout: out.containerStdout, Stderr: out.containerStderr, Progress: out.progress, Force: force,
	}}
}

// runFailed is the error of a run that could not run its pods. Refused
// pods that have a status print as the kubelet reports them: rejected ones
// Failed, with the reason; ones with an invalid image name Pending, the
// container waiting with InvalidImageName.
func runFailed(err error, res *runner.Result, output string, stdout io.Writer, sigCode func() int) error {
	if res != nil && output != "text" {
		if perr := printPods(stdout, output, res); perr != nil {
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
			progress.Note(podLine(p))
		}
	}
	reportJobs(res, progress)
	if output != "text" {
		if err := printPods(stdout, output, res); err != nil {
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

// podLine is a pod's outcome in a line: "pod/web: reached (phase
// Running)", "pod/job: failed (phase Failed, reason DeadlineExceeded)".
func podLine(p runner.PodResult) string {
	reason := ""
	if p.Status.Reason != "" {
		reason = ", reason " + p.Status.Reason // DeadlineExceeded
	}
	return fmt.Sprintf("pod/%s: %s (phase %s%s)", p.Pod.Name, p.Outcome, p.Status.Phase, reason)
}

// printPods prints the final pods as a v1.Pod, or a v1.List for several
// or with Jobs (resultObjects).
func printPods(w io.Writer, format string, res *runner.Result) error {
	return writeObject(w, format, resultObjects(res))
}
