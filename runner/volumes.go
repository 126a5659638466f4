package runner

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/volumes"
)

// checkVolumes is the volumes' pre-flight for every pod of the run, before
// anything is created: refused volume types and projections, ConfigMaps,
// Secrets and keys the run does not provide, hostPath type checks, invalid
// paths, modes and mounts (volumes.Check), and subPathExprs whose
// expansion is known before the container exists (checkSubPathExprs). A
// kubelet would keep such a pod waiting (ContainerCreating, or
// CreateContainerConfigError for a subpath) until something changed;
// nothing can change in a podrun run, so podrun refuses at once (exit 125).
func checkVolumes(pods []*v1.Pod, configMaps []*v1.ConfigMap, secrets []*v1.Secret, facts Facts) error {
	objs := volumes.Objects{ConfigMaps: configMaps, Secrets: secrets}
	var errs []error
	for _, pod := range pods {
		// One line per problem, each naming the pod.
		for _, err := range []error{volumes.Check(pod, objs), checkSubPathExprs(pod, objs, facts)} {
			parts := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				parts = j.Unwrap()
			}
			for _, e := range parts {
				if e != nil {
					errs = append(errs, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, e))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// preflightPodIPs are two guesses of a pod's IPs, which are not known
// before its sandbox exists: an environment that is the same under both
// does not depend on them.
var preflightPodIPs = [2][]string{{"192.0.2.1"}, {"198.51.100.1", "2001:db8::1"}}

// checkSubPathExprs expands, before anything is created, the subPathExprs
// of each container whose environment is known then, as its creation will
// (volumes.CheckSubPathExprs): everything but the pod's IPs and files an
// init container writes (fileKeyRef), and an environment that cannot be
// made now is left to the container's creation. objs are the run's own,
// Secrets' values included, in a dry run too: the decision is the run's,
// and its errors show what takes anything from a Secret masked
// (subPathEnv).
func checkSubPathExprs(pod *v1.Pod, objs volumes.Objects, facts Facts) error {
	var errs []error
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			c := &cs[i]
			if !slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.SubPathExpr != "" }) ||
				slices.ContainsFunc(c.Env, func(e v1.EnvVar) bool { return e.ValueFrom != nil && e.ValueFrom.FileKeyRef != nil }) {
				continue
			}
			var envs []volumes.Env
			for _, ips := range preflightPodIPs {
				env, err := subPathEnv(envInput{Pod: pod, Container: c, PodIPs: ips, HostIP: facts.HostIP,
					Node: volumeNode(facts.Node), Objects: objs})
				if err != nil {
					envs = nil
					break
				}
				envs = append(envs, env)
			}
			errs = append(errs, volumes.CheckSubPathExprs(pod, c, envs...))
		}
	}
	return errors.Join(errs...)
}

// volumeNode is what the volume plugins need of the node: its allocatable
// cpu, memory and ephemeral storage (the downward API's defaults for unset
// limits, the ceiling of a memory-backed emptyDir).
func volumeNode(n admission.Node) volumes.Node {
	a := n.Allocatable
	return volumes.Node{
		AllocatableMilliCPU:         a.Cpu().MilliValue(),
		AllocatableMemory:           a.Memory().Value(),
		AllocatableEphemeralStorage: a.StorageEphemeral().Value(),
	}
}

// setUpVolumes sets up every volume of the pod under its data dir, after
// the dir is made and before the sandbox, as the kubelet's volume manager
// does before SyncPod. A failure undoes what was set up; the pod cannot run
// (exit 125).
func (p *podRun) setUpVolumes() error {
	vols, err := p.planVolumes()
	if err != nil {
		return err
	}
	set, err := volumes.SetUp(p.dataDir, p.pod, vols)
	if err != nil {
		return err
	}
	p.volumes = set
	return nil
}

// planVolumes decides the pod's volumes from the run's ConfigMaps and
// Secrets and the node (volumes.Plan).
func (p *podRun) planVolumes() ([]volumes.Volume, error) {
	objs := volumes.Objects{ConfigMaps: p.r.opts.ConfigMaps, Secrets: p.r.opts.Secrets}
	return volumes.Plan(p.pod, objs, volumeNode(p.r.facts.Node))
}

// containerMounts is the CRI mounts of one container instance in a
// sandbox with podIPs, subpaths bind-mounted first; its subPathExprs
// expand in the container's environment, with what comes from a Secret
// masked in the errors (subPathEnv).
func (p *podRun) containerMounts(c *v1.Container, podIPs []string) ([]*runtimeapi.Mount, error) {
	if p.volumes == nil {
		if len(c.VolumeMounts) > 0 {
			return nil, fmt.Errorf("container %q: the pod's volumes are not set up", c.Name)
		}
		return nil, nil
	}
	var env volumes.Env
	if slices.ContainsFunc(c.VolumeMounts, func(m v1.VolumeMount) bool { return m.SubPathExpr != "" }) {
		var err error
		if env, err = subPathEnv(p.containerInput(c, "", 0, podIPs, imageUser{}).envInput()); err != nil {
			return nil, err
		}
	}
	return p.volumes.ContainerMounts(c, env)
}

// podVolumes is a pod's volumes once set up (podRun.volumes).
type podVolumes = volumes.Set
