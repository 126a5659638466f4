package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/dump"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/sources/podresources"
	"github.com/podrun/podrun/volumes"
)

// A container's start, as the kubelet's kuberuntime_container.go has it:
// startContainer (the restart back-off, the image, the config,
// CreateContainer, StartContainer, the postStart hook) beside the config
// it starts with (makeContainerConfig: containerConfig's decision from
// containerInput, then the mounts).

// startContainer starts one container instance unless it is in back-off.
// It reports whether it started one, and when a deferred start is due.
func (p *podRun) startContainer(ctx context.Context, sandboxID string, c *v1.Container) (bool, time.Time, error) {
	prev := p.observed.latest(c.Name)
	if until, in := p.restartBackOff(c, prev); in {
		return false, until, nil
	}

	sandboxCfg := p.sandboxes[sandboxID]
	// The image volumes first, as the kubelet's lazyStart pulls them
	// before the container's own image.
	if ok, wakeAt, err := p.ensureImageVolumes(ctx, c, sandboxCfg); err != nil || !ok {
		return false, wakeAt, err
	}
	ref, wakeAt, err := p.ensureImage(ctx, c, sandboxCfg)
	if err != nil {
		return false, time.Time{}, err
	}
	if ref == "" {
		// The pull failed for now, or is in back-off: look again at wakeAt.
		return false, wakeAt, nil
	}
	// The kubelet's restart count: one more than the newest instance's,
	// else counted on from the container's log files (restartall.go).
	var restartCount int
	if prev != nil {
		restartCount = prev.RestartCount + 1
	} else {
		restartCount = restartCountFromLogDir(filepath.Join(p.logDir, c.Name))
	}
	cfg, err := p.makeContainerConfig(ctx, sandboxID, c, ref, restartCount)
	if err != nil {
		return false, time.Time{}, err
	}
	hookCtx := ctx // a signal may cut the postStart hook
	// As for the sandbox, a signal must not cut create or start midway.
	ctx = context.WithoutCancel(ctx)
	id, err := p.r.rt.CreateContainer(ctx, sandboxID, cfg, sandboxCfg)
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateContainerErr, Message: err.Error()}
		// A sandbox that died meanwhile is recreated by the next sync; in a
		// ready sandbox the runtime refuses this container for good.
		if st, serr := p.r.rt.PodSandboxStatus(ctx, sandboxID, false); serr == nil &&
			st.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			p.acted.all = true
			return true, time.Time{}, nil
		}
		err = fmt.Errorf("%s: creating container %q: %w", reasonCreateContainerErr, c.Name, err)
		if hint := imageVolumeHint(p.pod, c, err.Error()); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
		return false, time.Time{}, p.withCgroupDriverHint(err)
	}
	p.acted.containers = append(p.acted.containers, id)
	p.event("Created", "Created container %s", c.Name)
	if err := p.r.rt.StartContainer(ctx, id); err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonRunContainerError, Message: err.Error()}
		p.event("Failed", "Error: %s: %v", reasonRunContainerError, err)
		// containerd leaves the container exited (128, StartError), and the
		// restart policy decides what next. CRI-O removes it: the next sync
		// would create it again at once, and again, as nothing changes in
		// a run; like a container the runtime refuses to create, the run
		// ends (exit 125).
		if _, serr := p.r.rt.ContainerStatus(ctx, id); cri.IsNotFound(serr) {
			return false, time.Time{}, fmt.Errorf("%s: starting container %q (the runtime removed it): %w", reasonRunContainerError, c.Name, err)
		}
		return true, time.Time{}, nil
	}
	delete(p.reasons, c.Name)
	p.event("Started", "Started container %s", c.Name)
	// Its output shows from now on, while the hook below runs (logs.go),
	// unless it comes through -i's attach.
	if !p.attach(id, c) && cfg.GetLogPath() != "" && sandboxCfg.GetLogDirectory() != "" {
		p.logs.started(id, c.Name, filepath.Join(sandboxCfg.GetLogDirectory(), cfg.GetLogPath()))
	}
	// The postStart hook runs synchronously; if it fails the container is
	// killed, to be restarted by its restart policy (hooks.go).
	p.postStart(hookCtx, id, c)
	return true, time.Time{}, nil
}

// attach starts -i's attach (Wiring.Attach) to the container instance id,
// just started, when it is the first instance of the container it names.
// It reports whether the instance's output comes through the attach, so
// that its log is not followed too.
func (p *podRun) attach(id string, c *v1.Container) bool {
	a := p.r.opts.Attach
	if a == nil || p.attached || a.PodUID != p.pod.UID || a.Container != c.Name {
		return false
	}
	p.attached = true
	if a.Output {
		p.logs.skip(id)
	}
	a.Start(id)
	return a.Output
}

// restartBackOff is the kubelet's doBackOff for a container whose newest
// instance prev exited: while the back-off from its exit runs, the
// container waits in CrashLoopBackOff, and the returned time is when the
// kubelet would look at it again (requeueAfter: the back-off's end plus
// jitter); past the back-off's end, the next restart's back-off is
// recorded.
func (p *podRun) restartBackOff(c *v1.Container, prev *containerStatus) (until time.Time, in bool) {
	if prev == nil || prev.State != stateExited {
		return time.Time{}, false
	}
	now := p.r.now()
	if until, in := p.backoff.until(c.Name, prev.FinishedAt, now); in {
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", p.backoff.delay(c.Name), c.Name, p.fullName())
		if p.reasons[c.Name].Reason != reasonCrashLoopBackOff {
			p.event("BackOff", "Back-off restarting failed container %s in pod %s", c.Name, p.fullName())
		}
		p.reasons[c.Name] = waitingReason{Reason: reasonCrashLoopBackOff, Message: msg}
		return now.Add(requeueAfter(until.Sub(now), p.r.jitter())), true
	}
	p.backoff.next(c.Name, prev.FinishedAt, now)
	return time.Time{}, false
}

// makeContainerConfig is the CRI config of the container's instance
// restartCount from image ref, with its mounts. What fails is a
// CreateContainerConfigError, recorded as the container's waiting reason.
func (p *podRun) makeContainerConfig(ctx context.Context, sandboxID string, c *v1.Container, ref string, restartCount int) (*runtimeapi.ContainerConfig, error) {
	var cfg *runtimeapi.ContainerConfig
	// The kubelet's getImageUser, for runAsNonRoot and the default uid.
	img, err := p.imageStatus(ctx, ref)
	if err != nil {
		err = &configError{err.Error()}
	} else {
		cfg, err = containerConfig(p.containerInput(c, ref, restartCount, p.ips[sandboxID], imageUserOf(img)))
	}
	if err != nil {
		// A config error ends the run (exit 125); the status shows the
		// reason and the kubelet's message.
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		p.event("Failed", "Error: %v", err)
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	// The kubelet's makeMounts, after the environment (for subPathExpr):
	// the volume mounts come first.
	mounts, err := p.containerMounts(c, p.ips[sandboxID])
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	cfg.Mounts = append(mounts, cfg.Mounts...)
	// Then the managed /etc/hosts, rewritten for every start (kubelet
	// makeMounts), and the instance's termination message file (kuberuntime
	// makeMounts; like the kubelet, a file that cannot be made is skipped).
	hosts, err := p.hostsMount(c, p.ips[sandboxID])
	if err != nil {
		p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	if hosts != nil {
		cfg.Mounts = append(cfg.Mounts, hosts)
	}
	if term, err := p.terminationMount(c); err != nil {
		p.event("Warning", "error on creating termination-log file for container %s: %v", c.Name, err)
	} else if term != nil {
		cfg.Mounts = append(cfg.Mounts, term)
	}
	// Last, the directory of the container's log file, 0755 (the kubelet's
	// generateContainerConfig): CRI-O makes only the pod's log dir, and
	// its conmon fails the create without this one; containerd makes it
	// itself. It goes with the pod's log dir.
	if dir := containerLogDir(p.sandboxes[sandboxID], cfg); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			err = fmt.Errorf("create container log directory for container %s failed: %w", c.Name, err)
			p.reasons[c.Name] = waitingReason{Reason: reasonCreateConfigError, Message: err.Error()}
			p.event("Failed", "Error: %v", err)
			return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
		}
	}
	return cfg, nil
}

// containerInput is what containerConfig decides container c's instance
// restartCount from: image ref, run as the image's user u, in a sandbox
// with podIPs.
func (p *podRun) containerInput(c *v1.Container, ref string, restartCount int, podIPs []string, u imageUser) containerInput {
	return containerInput{
		Pod: p.pod, Container: c, RestartCount: restartCount, ImageRef: ref, Owner: p.r.opts.Owner,
		PodIPs: podIPs, HostIP: p.r.facts.HostIP, Node: volumeNode(p.r.facts.Node),
		Objects:        volumes.Objects{ConfigMaps: p.r.opts.ConfigMaps, Secrets: p.r.opts.Secrets},
		MemoryCapacity: p.r.facts.Node.MemoryCapacity, ImageUser: u,
		SeccompProfileRoot: p.r.opts.seccompProfileRoot(), PodDir: p.dataDir,
		UsernsBase: p.usernsBase,
	}
}

// configError is a container config problem the kubelet reports as
// CreateContainerConfigError.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// containerInput is everything containerConfig decides from.
type containerInput struct {
	Pod          *v1.Pod
	Container    *v1.Container
	RestartCount int
	ImageRef     string // the image as the runtime resolved it
	Owner        Owner

	// For the environment, the resources and the security context.
	PodIPs             []string // the sandbox's IPs
	HostIP             string
	Node               volumes.Node    // allocatable: unset limits in resourceFieldRef
	Objects            volumes.Objects // the run's ConfigMaps and Secrets
	MemoryCapacity     int64           // the node's memory, for oom_score_adj
	ImageUser          imageUser       // the user the image runs as
	SeccompProfileRoot string          // Localhost seccomp profiles live here
	PodDir             string          // the pod's data dir (fileKeyRef reads env files there)
	UsernsBase         uint32          // hostUsers false: the pod's host ID range (the sandbox's)
}

// envInput is what the container's environment is made from.
func (in containerInput) envInput() envInput {
	return envInput{
		Pod: in.Pod, Container: in.Container, PodIPs: in.PodIPs, HostIP: in.HostIP, Node: in.Node, Objects: in.Objects,
		PodDir: in.PodDir,
	}
}

// containerConfig is the CRI ContainerConfig of one container instance
// (kubelet generateContainerConfig): image, command and args with $(VAR)
// expansion, environment, working dir, log path, TTY and stdin, labels and
// annotations, resources with oom_score_adj, and the security context
// with the namespace options. A runAsNonRoot the image breaks is refused
// (verifyRunAsNonRoot) after the environment, as in the kubelet's
// generateContainerConfig.
func containerConfig(in containerInput) (*runtimeapi.ContainerConfig, error) {
	pod, c := in.Pod, in.Container
	env, err := containerEnv(in.envInput())
	if err != nil {
		return nil, err
	}
	if err := verifyRunAsNonRoot(pod, c, in.ImageUser); err != nil {
		return nil, err
	}
	sc, err := containerSecurityContext(pod, c, in.ImageUser, in.SeccompProfileRoot)
	if err != nil {
		return nil, err
	}
	sc.NamespaceOptions.UsernsOptions = usernsOptions(pod, in.UsernsBase)
	res := cgroups.ContainerResources(c)
	res.OomScoreAdj = oomScoreAdj(pod, c, in.MemoryCapacity)
	envMap := map[string]string{}
	for _, e := range env {
		envMap[e.Key] = string(e.Value)
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(in.RestartCount)},
		Image:       &runtimeapi.ImageSpec{Image: in.ImageRef, UserSpecifiedImage: c.Image},
		Command:     expandAll(c.Command, envMap),
		Args:        expandAll(c.Args, envMap),
		WorkingDir:  c.WorkingDir,
		Envs:        env,
		LogPath:     filepath.Join(c.Name, strconv.Itoa(in.RestartCount)+".log"),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Labels:      containerLabels(pod, c, in.Owner),
		Annotations: containerAnnotations(pod, c, in.RestartCount),
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       res,
			SecurityContext: sc,
		},
	}
	return cfg, nil
}

// containerLogDir is the directory of the log file the runtime writes for
// a container with cfg in a sandbox with sandboxCfg: the sandbox's
// LogDirectory joined with the container's LogPath, as the runtime joins
// them (the kubelet's BuildContainerLogsDirectory, <pod log dir>/<name>).
// "" when either is unset: the runtime writes no log.
func containerLogDir(sandboxCfg *runtimeapi.PodSandboxConfig, cfg *runtimeapi.ContainerConfig) string {
	if sandboxCfg.GetLogDirectory() == "" || cfg.GetLogPath() == "" {
		return ""
	}
	return filepath.Dir(filepath.Join(sandboxCfg.GetLogDirectory(), cfg.GetLogPath()))
}

func containerLabels(pod *v1.Pod, c *v1.Container, o Owner) map[string]string {
	l := podLabels(pod)
	l[labelContainerName] = c.Name
	maps.Copy(l, o.labels())
	return l
}

func containerAnnotations(pod *v1.Pod, c *v1.Container, restartCount int) map[string]string {
	a := map[string]string{
		annotationRestartCount:             strconv.Itoa(restartCount),
		annotationTerminationMessagePath:   c.TerminationMessagePath,
		annotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
		annotationContainerHash:            containerHash(c),
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		a[annotationPodTerminationGracePeriod] = strconv.FormatInt(*g, 10)
	}
	if len(c.Ports) > 0 {
		if b, err := json.Marshal(c.Ports); err == nil {
			a[annotationContainerPorts] = string(b)
		}
	}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		if b, err := json.Marshal(c.Lifecycle.PreStop); err == nil {
			a[annotationPreStopHandler] = string(b)
		}
	}
	for i := range pod.Spec.InitContainers {
		if ic := &pod.Spec.InitContainers[i]; ic.Name == c.Name && podresources.IsSidecar(ic) {
			a[annotationSidecar] = strconv.Itoa(i)
		}
	}
	return a
}

// containerHash is the kubelet's HashContainer (pkg/kubelet/container/
// helpers.go, the same since v1.31): FNV-32a over the dump.ForHash text of
// the JSON of the container's name and image, in lower-case hex. A kubelet
// that finds a running container whose hash annotation differs restarts it
// ("definition changed"), so the same value lets it adopt podrun's
// containers (docs/handover.md).
func containerHash(c *v1.Container) string {
	b, _ := json.Marshal(map[string]string{"name": c.Name, "image": c.Image})
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(b))
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// expand replaces $(VAR) references with their values (the kubelet's
// third_party/forked/golang/expansion): an unresolved reference stays as
// written, "$$" is an escaped "$", and a "$" followed by anything else, or
// an unclosed "$(", is kept.
func expand(s string, vals map[string]string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			out = append(out, s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			out = append(out, '$')
			i++
		case '(':
			end := -1
			for j := i + 2; j < len(s); j++ {
				if s[j] == ')' {
					end = j
					break
				}
			}
			if end < 0 {
				// Kept as written; what follows is still expanded.
				out = append(out, '$', '(')
				i++
				continue
			}
			name := s[i+2 : end]
			if v, ok := vals[name]; ok && name != "" {
				out = append(out, v...)
			} else {
				out = append(out, s[i:end+1]...)
			}
			i = end
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

func expandAll(in []string, vals map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vals)
	}
	return out
}
