package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/runner/artifacts"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/credentials"
	"github.com/podrun/podrun/sources"
)

// runFlagValues are the run command's flags as the command line gave them.
type runFlagValues struct {
	Args                 []string // stray arguments
	Filenames            []string
	ManifestURLHeaders   []string
	ManifestURLCA        string
	Endpoint             string
	RootDir              string
	Quiet                bool
	PodLogsDir           string
	Wait                 string
	Timeout              time.Duration
	Detach               bool
	Output               string
	NodeName             string
	ClusterDNS           []string
	ClusterDomain        string
	CgroupRoot           string
	CgroupDriver         string
	SystemReserved       []string
	NodeLabels           []string
	AllowedUnsafeSysctls []string
	CNIConfDir           string
	CNIBinDir            string
	ImageCredentials     string
	SeccompProfileRoot   string
	DryRun               bool // --dry-run, any mode
	DryRunClient         bool // --dry-run=client: print the pods as manifests
	JUnit                string
	StaticPodNames       bool
	StaticPodStrict      bool
	IgnoreRunningKubelet bool
	KubeletHealthzURL    string
	CopyOuts             []string
	CopyOutLimit         string
	CopyOutRequired      bool
	Replace              bool
	Pod                  podFlagValues // podflags.go
	// NameAllowed: the command takes NAME, the pod to generate (podrun
	// run and validate; podrun itself takes only -f).
	NameAllowed bool
	Supervise   bool
}

// runFlagsOf reads the run command's flags, wherever on the command line
// they were set (flagCtx).
func runFlagsOf(c *cli.Context) runFlagValues {
	return runFlagValues{
		Args:                 c.Args().Slice(),
		Filenames:            strs(c, "filename"),
		ManifestURLHeaders:   strs(c, "manifest-url-header"),
		ManifestURLCA:        str(c, "manifest-url-ca"),
		Endpoint:             str(c, "runtime-endpoint"),
		RootDir:              str(c, "root-dir"),
		Quiet:                boolean(c, "quiet"),
		PodLogsDir:           str(c, "pod-logs-dir"),
		Wait:                 str(c, "wait"),
		Timeout:              duration(c, "timeout"),
		Detach:               boolean(c, "detach"),
		Output:               str(c, "output"),
		NodeName:             str(c, "node-name"),
		ClusterDNS:           strs(c, "cluster-dns"),
		ClusterDomain:        str(c, "cluster-domain"),
		CgroupRoot:           str(c, "cgroup-root"),
		CgroupDriver:         str(c, "cgroup-driver"),
		SystemReserved:       strs(c, "system-reserved"),
		NodeLabels:           strs(c, "node-labels"),
		AllowedUnsafeSysctls: strs(c, "allowed-unsafe-sysctls"),
		CNIConfDir:           str(c, "cni-conf-dir"),
		CNIBinDir:            str(c, "cni-bin-dir"),
		ImageCredentials:     str(c, "image-credentials"),
		SeccompProfileRoot:   str(c, "seccomp-profile-root"),
		DryRun:               dryRunMode(c) != "",
		DryRunClient:         dryRunMode(c) == dryRunClient,
		Pod:                  podFlagsOf(c),
		JUnit:                str(c, "junit"),
		StaticPodNames:       boolean(c, "static-pod-names"),
		StaticPodStrict:      boolean(c, "static-pod-strict"),
		IgnoreRunningKubelet: boolean(c, "ignore-running-kubelet"),
		KubeletHealthzURL:    str(c, "kubelet-healthz"),
		CopyOuts:             stringListOf(c, "copy-out"),
		CopyOutLimit:         str(c, "copy-out-limit"),
		CopyOutRequired:      boolean(c, "copy-out-required"),
		Supervise:            boolean(c, "supervise"),
		Replace:              boolean(c, "replace"),
	}
}

// runConfig is `podrun run`'s configuration, resolved once from the flags
// before any manifest is read or the runtime dialled, as crictl resolves
// its own in Before: a malformed flag fails with 125 having touched
// nothing.
type runConfig struct {
	Sources       []string    // -f
	Headers       http.Header // --manifest-url-header
	ManifestURLCA string      // --manifest-url-ca: a PEM CA file trusted besides the system roots
	Endpoint      string      // "" tries cri.DefaultEndpoints
	NodeName      string
	Output        string // text, json or yaml
	Quiet         bool
	DryRun        bool   // --dry-run, podrun validate: stop before the runtime, asking it the cgroup driver at most (cmd_validate.go)
	JUnit         string // --junit: the JUnit report's path (junit.go); "" for none
	// StaticPodNames: the kubelet's static pod names and defaults
	// (sources.Options.StaticPodNames).
	StaticPodNames bool
	// StaticPod: what a run with StaticPodNames checks first
	// (staticPodChecks).
	StaticPod staticPodChecks
	// Pods: the pod podrun run NAME generates, or the overrides of the
	// manifests' pods (podflags.go).
	Pods podInput
	// Attach (-i): podrun's stdin goes to the container with stdin: true;
	// TTY (-t): as a terminal, when it is one (attach.go).
	Attach, TTY bool
	// PrintManifests (--dry-run=client): the pods are printed as manifests.
	PrintManifests bool
	// Supervise: --supervise, a node's service (supervise.go).
	Supervise bool

	Facts runner.FactsConfig
	Run   runner.Config // what the flags say of the run; withManifests adds what the manifests bring, wired the wiring
}

// newRunConfig checks the flags and builds the configuration; readFile
// (os.ReadFile) reads the --image-credentials file. The checks run in
// this order, and the first that fails is the error.
func newRunConfig(f runFlagValues, readFile func(string) ([]byte, error)) (runConfig, error) {
	wait, pods, err := checkRunUsage(f)
	if err != nil {
		return runConfig{}, err
	}
	if f, err = absDirs(f); err != nil {
		return runConfig{}, err
	}
	headers, err := parseHeaders(f.ManifestURLHeaders)
	if err != nil {
		return runConfig{}, err
	}
	nodeName := strings.ToLower(f.NodeName)
	if nodeName == "" {
		return runConfig{}, errors.New("--node-name is empty and the host name is unknown")
	}
	node, err := hostOptions(f, nodeName)
	if err != nil {
		return runConfig{}, err
	}
	if err := checkCgroupFlags(f); err != nil {
		return runConfig{}, err
	}
	creds, err := credentials.LoadFile(f.ImageCredentials, readFile)
	if err != nil {
		return runConfig{}, err
	}
	checks := staticPodChecks{Strict: f.StaticPodStrict, IgnoreKubelet: f.IgnoreRunningKubelet, KubeletHealthzURL: f.KubeletHealthzURL}
	if err := checks.usage(f.StaticPodNames); err != nil {
		return runConfig{}, err
	}
	if f.DryRun && f.JUnit != "" {
		return runConfig{}, errors.New("--junit reports a run's containers; a dry run runs none")
	}
	copyOuts, err := copyOutOptions(f)
	if err != nil {
		return runConfig{}, err
	}
	return runConfig{
		Sources: f.Filenames, Headers: headers, ManifestURLCA: f.ManifestURLCA, Endpoint: f.Endpoint, NodeName: nodeName,
		Output: f.Output, Quiet: f.Quiet, DryRun: f.DryRun, JUnit: f.JUnit, StaticPodNames: f.StaticPodNames,
		StaticPod: checks, Supervise: f.Supervise,
		Facts: factsConfig(f, node),
		Run:   copyOuts.apply(runnerConfig(f, wait, creds)),
		Pods:  pods, Attach: f.Pod.Stdin, TTY: f.Pod.TTY, PrintManifests: f.DryRunClient,
	}, nil
}

// copyOuts is what --copy-out, --copy-out-limit and --copy-out-required
// give the run.
type copyOuts struct {
	specs    []artifacts.Spec
	limit    int64
	required bool
}

func (c copyOuts) apply(cfg runner.Config) runner.Config {
	cfg.CopyOuts, cfg.CopyOutLimit, cfg.CopyOutRequired = c.specs, c.limit, c.required
	return cfg
}

// copyOutOptions checks --copy-out's syntax (which pod, container and
// path it names is checked against the manifests before anything runs:
// artifacts.CheckRun), makes each HOSTDIR absolute and refuses one that
// exists and is not a dir, and reads --copy-out-limit. A detached run
// leaves its pods running, and their containers' volumes with them: it
// copies nothing.
func copyOutOptions(f runFlagValues) (copyOuts, error) {
	limit, err := parseLimit("--copy-out-limit", f.CopyOutLimit)
	if err != nil {
		return copyOuts{}, err
	}
	out := copyOuts{limit: limit, required: f.CopyOutRequired}
	for _, v := range f.CopyOuts {
		s, err := artifacts.ParseSpec(v)
		if err != nil {
			return copyOuts{}, err
		}
		if s.HostDir, err = filepath.Abs(s.HostDir); err != nil {
			return copyOuts{}, err
		}
		if fi, err := os.Stat(s.HostDir); err == nil && !fi.IsDir() {
			return copyOuts{}, fmt.Errorf("invalid --copy-out %q: %s is not a directory", v, s.HostDir)
		}
		out.specs = append(out.specs, s)
	}
	if len(out.specs) > 0 && f.Detach {
		return copyOuts{}, errors.New("--copy-out copies when the run's containers end or the run tears its pods down, and --detach leaves them running: copy from a detached pod with podrun cp")
	}
	return out, nil
}

// checkRunUsage checks what the run is given to run (manifests with -f,
// or podrun run NAME, and the pod flags: newPodInput), where -i's stdin
// comes from, and how it waits and prints (--wait, --output).
func checkRunUsage(f runFlagValues) (runner.WaitMode, podInput, error) {
	pods, err := newPodInput(f.Pod, f.Args, f.NameAllowed, f.Filenames)
	if err != nil {
		return "", podInput{}, err
	}
	if pods.RunPod == nil && len(f.Filenames) == 0 {
		return "", podInput{}, errors.New("no manifest given: use -f FILE, -f DIR, -f URL or -f - (see podrun --help)")
	}
	if f.Pod.Remove && f.Detach {
		return "", podInput{}, errors.New("--rm removes the pod when the run ends; -d leaves it running")
	}
	if f.Pod.Stdin {
		switch {
		case slices.Contains(f.Filenames, "-"):
			return "", podInput{}, errors.New("-i streams podrun's stdin into a container; -f - reads the manifests from it")
		case f.Detach:
			return "", podInput{}, errors.New("-i streams podrun's stdin into a container while podrun runs it; -d leaves it running without")
		}
	}
	wait, err := runner.ParseWaitMode(f.Wait)
	if err != nil {
		return "", podInput{}, err
	}
	switch f.Output {
	case "text", "json", "yaml":
	default:
		return "", podInput{}, fmt.Errorf("invalid --output %q: want text, json or yaml", f.Output)
	}
	if f.Supervise {
		wait, err := superviseUsage(f, wait)
		return wait, pods, err
	}
	return wait, pods, nil
}

// absDirs makes the dirs of f absolute. The runtime is handed paths below
// them (the sandbox's log directory, mount sources, Localhost seccomp
// profiles), which it resolves on its own: CRI-O refuses a relative log
// directory and containerd would read a relative one from its own working
// dir.
func absDirs(f runFlagValues) (runFlagValues, error) {
	var err error
	for _, d := range []*string{&f.RootDir, &f.PodLogsDir, &f.SeccompProfileRoot} {
		if *d != "" {
			if *d, err = filepath.Abs(*d); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// checkCgroupFlags checks --cgroup-driver and that --cgroup-root suits it.
func checkCgroupFlags(f runFlagValues) error {
	switch f.CgroupDriver {
	case "", cgroups.DriverCgroupfs, cgroups.DriverSystemd:
	default:
		return fmt.Errorf("invalid --cgroup-driver %q: want cgroupfs or systemd", f.CgroupDriver)
	}
	return cgroups.CheckRoot(f.CgroupRoot, f.CgroupDriver)
}

// factsConfig is what the run learns the node and the runtime with
// (runner.GatherFacts).
func factsConfig(f runFlagValues, node admission.HostOptions) runner.FactsConfig {
	return runner.FactsConfig{
		Node:         node,
		CgroupDriver: f.CgroupDriver,
		CNI: cni.Flags{ConfDir: f.CNIConfDir, BinDirs: cni.SplitBinDirs(f.CNIBinDir),
			StateFile: filepath.Join(f.RootDir, "cni-validated")},
	}
}

// runnerConfig is the run's configuration the flags give (runConfig.Run).
func runnerConfig(f runFlagValues, wait runner.WaitMode, creds *credentials.Keyring) runner.Config {
	return runner.Config{
		RootDir:            f.RootDir,
		PodLogsDir:         f.PodLogsDir,
		Wait:               wait,
		Timeout:            f.Timeout,
		Detach:             f.Detach,
		ClusterDNS:         f.ClusterDNS,
		ClusterDomain:      f.ClusterDomain,
		ImageCredentials:   creds,
		CgroupRoot:         f.CgroupRoot,
		SeccompProfileRoot: f.SeccompProfileRoot,
		Replace:            f.Replace,
	}
}

// hostOptions is what the node pods are admitted against is built from:
// this machine (read with the facts), less --system-reserved, with
// --node-labels and --allowed-unsafe-sysctls.
func hostOptions(f runFlagValues, nodeName string) (admission.HostOptions, error) {
	reserved, err := admission.ParseSystemReserved(f.SystemReserved)
	if err != nil {
		return admission.HostOptions{}, fmt.Errorf("invalid --system-reserved: %w", err)
	}
	labels, err := admission.ParseNodeLabels(f.NodeLabels)
	if err != nil {
		return admission.HostOptions{}, fmt.Errorf("invalid --node-labels: %w", err)
	}
	sysctls, err := admission.ParseAllowedUnsafeSysctls(f.AllowedUnsafeSysctls)
	if err != nil {
		return admission.HostOptions{}, fmt.Errorf("invalid --allowed-unsafe-sysctls: %w", err)
	}
	return admission.HostOptions{
		NodeName: nodeName, RootDir: f.RootDir,
		SystemReserved: reserved, Labels: labels, AllowedUnsafeSysctls: sysctls,
	}, nil
}

// parseHeaders parses repeatable 'Name:value' flags; values of one name are
// added in order, as the kubelet's --manifest-url-header does.
func parseHeaders(vals []string) (http.Header, error) {
	h := http.Header{}
	for i, v := range vals {
		name, value, ok := strings.Cut(v, ":")
		if !ok || strings.TrimSpace(name) == "" {
			// Not shown: it may hold a token.
			return nil, fmt.Errorf("invalid --manifest-url-header (#%d): want 'Name:value'", i+1)
		}
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h, nil
}

// withManifests is the run's configuration: the flags' (runConfig.Run),
// with the run's ConfigMaps, Secrets and RuntimeClasses, the pods whose UID podrun gave,
// and with --junit the log lines its report keeps. The wiring (writers,
// progress, the second signal's channel) is wired's.
func (cfg runConfig) withManifests(set *sources.Set) runner.Config {
	opts := cfg.Run
	opts.ConfigMaps, opts.Secrets, opts.GivenUIDs = configMaps(set), secrets(set), givenUIDs(set)
	opts.Jobs = setJobs(set)
	opts.RuntimeClasses = runtimeClasses(set)
	if cfg.JUnit != "" {
		opts.LogTailLines = junitLogLines
	}
	return opts
}

// givenUIDs are the UIDs podrun gave the pods of set (their manifests have
// none); nil when it gave none.
func givenUIDs(set *sources.Set) map[types.UID]bool {
	var given map[types.UID]bool
	for _, p := range set.Pods {
		if p.GivenUID {
			if given == nil {
				given = map[types.UID]bool{}
			}
			given[p.UID] = true
		}
	}
	return given
}

func setPods(set *sources.Set) []*v1.Pod {
	return objectsOf(set.Pods, func(p *sources.Pod) *v1.Pod { return p.Pod })
}

func configMaps(set *sources.Set) []*v1.ConfigMap {
	return objectsOf(set.ConfigMaps, func(cm *sources.ConfigMap) *v1.ConfigMap { return cm.ConfigMap })
}

func secrets(set *sources.Set) []*v1.Secret {
	return objectsOf(set.Secrets, func(s *sources.Secret) *v1.Secret { return s.Secret })
}

func runtimeClasses(set *sources.Set) []*nodev1.RuntimeClass {
	return objectsOf(set.RuntimeClasses, func(rc *sources.RuntimeClass) *nodev1.RuntimeClass { return rc.RuntimeClass })
}

// objectsOf is the API objects of a set's entries, without their origins.
func objectsOf[E, T any](entries []E, object func(E) T) []T {
	out := make([]T, len(entries))
	for i, e := range entries {
		out[i] = object(e)
	}
	return out
}
