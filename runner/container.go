package runner

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/dump"

	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/runner/podresources"
	"github.com/podrun/podrun/volumes"
)

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
		"io.kubernetes.container.hash":     containerHash(c),
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
