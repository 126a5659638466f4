package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/runner/cgroups"
	"github.com/podrun/podrun/sources/imageref"
	"github.com/podrun/podrun/sources/podresources"
	"github.com/podrun/podrun/volumes"
)

// A dry run (`podrun validate`, `podrun run --dry-run`) goes through a run
// up to the first call to the runtime and stops there: the pods are
// admitted against this machine, refused as a run refuses them, and each
// gets the CRI configs a run would send, built by the run's own functions
// (podSandboxConfig, containerInput and containerConfig, the volumes'
// mounts), without creating anything. Of the runtime it asks only the
// cgroup driver, and only when one answers (DryRunFacts): the pod cgroups
// in the configs are named for the driver a run would use. What else only
// the runtime knows is assumed and said in a note (dryRunNotes);
// docs/validate.md lists it.

// MaskedValue replaces every value a dry run takes from a Secret, and
// every subpath a run or a dry run takes from one in its messages.
const MaskedValue = volumes.MaskedValue

// Placeholders of a dry run for what a run decides only when it runs: its
// owner (run ID and process), the random name of a termination message
// file, and the value of an env var read from a file an earlier container
// writes (fileKeyRef).
const (
	dryRunID              = "<run-id>"
	dryRunPID             = "<pid>"
	dryRunTerminationFile = "<random>"
	dryRunEnvFileValue    = "<read from the env file when the container starts>"
)

// ContainerKind is how a pod runs a container.
type ContainerKind string

const (
	KindInit      ContainerKind = "init"      // an init container that runs to completion
	KindSidecar   ContainerKind = "sidecar"   // an init container with restartPolicy Always
	KindContainer ContainerKind = "container" // a regular container
)

// PodContainer is one container of a pod with its kind.
type PodContainer struct {
	*v1.Container
	Kind ContainerKind
}

// PodContainers lists the pod's containers in spec order, init containers
// (sidecars among them) first, as a run starts them.
func PodContainers(pod *v1.Pod) []PodContainer {
	var out []PodContainer
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		k := KindInit
		if podresources.IsSidecar(c) {
			k = KindSidecar
		}
		out = append(out, PodContainer{c, k})
	}
	for i := range pod.Spec.Containers {
		out = append(out, PodContainer{&pod.Spec.Containers[i], KindContainer})
	}
	return out
}

// dryRunJobs maps the UID of each Job's first pods to the Job.
func dryRunJobs(jobs []Job) map[types.UID]*batchv1.Job {
	out := map[types.UID]*batchv1.Job{}
	for _, j := range jobs {
		for _, p := range JobFirstPods([]Job{j}) {
			out[p.UID] = j.Job
		}
	}
	return out
}

// DryRunPod is what a run would send the runtime for one pod.
type DryRunPod struct {
	Pod *v1.Pod
	// Job is the Job whose first pod (one of its first, with parallelism)
	// this is; nil for a pod of the run.
	Job      *batchv1.Job
	QOSClass v1.PodQOSClass
	Sandbox  *runtimeapi.PodSandboxConfig // RunPodSandbox's config
	// RuntimeHandler is RunPodSandbox's runtime_handler: the handler of
	// the pod's RuntimeClass, "" (the runtime's default) without one.
	RuntimeHandler string
	Containers     []DryRunContainer // in PodContainers order
}

// DryRunContainer is the CreateContainer config of a container's first
// instance.
type DryRunContainer struct {
	PodContainer
	Config *runtimeapi.ContainerConfig
}

// DryRunResult is the outcome of a dry run that refused nothing.
type DryRunResult struct {
	Pods []DryRunPod
	// Notes say what the dry run could not check without the runtime and
	// what it assumed instead, the cgroup driver of the configs and where
	// it came from, and the warnings a run would print.
	Notes []string
}

// DryRunRuntimeTimeout bounds all a dry run spends on the runtime: the
// dial (Version, on each endpoint a run would try) and the two calls that
// give the cgroup driver. A runtime answers them in milliseconds; a dry run
// is meant to work anywhere, so one that does not answer within it is
// noted, not waited for (a missing socket fails at once).
const DryRunRuntimeTimeout = 2 * time.Second

// DriverRuntime is what a dry run asks a runtime: the two read-only calls
// a run makes for the cgroup driver (one verbose Status, RuntimeConfig),
// and the endpoint it answered at. *cri.Client satisfies it.
type DriverRuntime interface {
	ReadyStatus(ctx context.Context, needNetwork, verbose bool) (*runtimeapi.StatusResponse, error)
	CgroupDriver(ctx context.Context) (string, error)
	Endpoint() string
}

// DryRunDial connects to the runtime a run would use (its -r, else the
// first of the default endpoints that answers); the error says why none
// answered, naming the endpoints tried.
type DryRunDial func(ctx context.Context) (DriverRuntime, error)

// DryRunFacts are the facts GatherFacts would gather, from this machine
// (the node: CPUs, memory, the root dir's filesystem or its nearest
// reachable parent, --system-reserved, --node-labels,
// --allowed-unsafe-sysctls; the host IP) and, for the cgroup driver alone,
// the runtime: --cgroup-driver; else, when dial reaches a runtime within
// DryRunRuntimeTimeout, the driver a run would take from it
// (dryRunCgroupDriver); else unknown ("", DriverFromUnknown, saying why).
// Nothing else is asked of the runtime (NoRuntime); dial nil asks nothing.
func DryRunFacts(ctx context.Context, c FactsConfig, dial DryRunDial) (Facts, error) {
	node, err := admission.NodeFromHost(c.Node)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{Node: node, HostIP: hostIP(), NoRuntime: true}
	if c.CgroupDriver != "" {
		f.CgroupDriver, f.CgroupDriverSource, err = decideCgroupDriver(cgroupDriverInput{Flag: c.CgroupDriver})
		return f, err
	}
	if dial != nil {
		f.CgroupDriver, f.CgroupDriverSource, f.DryRunEndpoint = dryRunCgroupDriver(ctx, dial)
	}
	return f, nil
}

// dryRunCgroupDriver is the cgroup driver a run would take from the
// runtime dial reaches, asked as GatherFacts asks it (one verbose Status,
// RuntimeConfig, decideCgroupDriver), within DryRunRuntimeTimeout, and the
// endpoint that answered. The runtime's readiness is not judged: a
// not-ready runtime's status info is read as a ready one's. When no
// runtime answers, or it fails to say, the driver is unknown ("") and the
// source says why.
func dryRunCgroupDriver(ctx context.Context, dial DryRunDial) (string, CgroupDriverSource, string) {
	ctx, cancel := context.WithTimeout(ctx, DryRunRuntimeTimeout)
	defer cancel()
	rt, err := dial(ctx)
	if err != nil {
		return "", CgroupDriverSource{Said: fmt.Sprintf("no runtime answered (%v)", err)}, ""
	}
	ep := rt.Endpoint()
	status, err := rt.ReadyStatus(ctx, false, true)
	if err != nil && !errors.As(err, new(*cri.NotReadyError)) {
		return "", CgroupDriverSource{Said: fmt.Sprintf("the runtime at %s did not say (%v)", ep, err)}, ep
	}
	driver, source, err := cgroupDriver(ctx, rt, "", status.GetInfo())
	if err != nil {
		return "", CgroupDriverSource{Said: fmt.Sprintf("the runtime at %s did not say (%v)", ep, err)}, ep
	}
	return driver, source, ep
}

// DryRun admits and checks the pods as Run does (refusals, with the same
// errors), then builds each pod's sandbox config and every container's
// config as the run would send them, without touching the runtime or
// creating anything: paths a run would create are computed, not made.
// Every value taken from one of opts.Secrets is MaskedValue. The
// refusals are the run's own decisions on the same inputs, Secrets' values
// included (a subPathExpr from a Secret is judged on its value and shown
// masked): a dry run and a run refuse the same pods. The errors a
// run would stop a pod with (a sandbox config it cannot form, a container
// config error) are its errors too, each naming the pod, joined.
func DryRun(facts Facts, pods []*v1.Pod, opts Options) (*DryRunResult, error) {
	if _, err := refusals(pods, facts, opts); err != nil {
		return nil, err
	}
	// Past the refusals, nothing decides from a Secret's value (only
	// from its keys), and the configs are printed: they are made from the
	// Secrets masked.
	opts.Secrets = volumes.MaskSecrets(opts.Secrets)
	opts.Owner = Owner{RunID: dryRunID, Detached: opts.Detach}
	r, err := newRunState(nil, facts, pods, opts, cgroups.HostSystem())
	if err != nil {
		return nil, err
	}
	if r.userns, r.jobUserns, err = allocateRunUserns(pods, opts.Jobs, nil); err != nil {
		return nil, err
	}
	all := append(slices.Clip(pods), JobFirstPods(opts.Jobs)...)
	res := &DryRunResult{Notes: append(dryRunNotes(facts, all, opts), r.notes...)}
	var errs []error
	jobOf := dryRunJobs(opts.Jobs)
	used := map[string]int{} // user namespace ranges given to a Job's pods
	for _, pod := range all {
		p := newPodRun(r, pod)
		job := jobOf[pod.UID]
		if job != nil {
			name, base := job.Namespace+"/"+job.Name, uint32(0)
			if bases := r.jobUserns[name]; len(bases) > 0 {
				base = bases[used[name]%len(bases)]
				used[name]++
			}
			p = r.newJobPodRun(pod, base)
		}
		dp, warnings, err := r.dryRunPod(p)
		dp.Job = job
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err))
			continue
		}
		for _, w := range warnings {
			res.Notes = append(res.Notes, fmt.Sprintf("pod %s/%s: warning: %s", pod.Namespace, pod.Name, w))
		}
		res.Pods = append(res.Pods, dp)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

// dryRunPod builds one pod's configs as its first sync would: the
// sandbox's, then each container's with its mounts (the volumes planned
// under the data dir, the managed /etc/hosts, the termination message
// file), in the order of SyncPod, stopping at the first error as the run
// does.
func (r *runState) dryRunPod(p *podRun) (DryRunPod, []string, error) {
	pod := p.pod
	p.dataDir = podDir(r.opts.RootDir, p.uid)
	if r.cgroups != nil {
		p.cgroup = r.cgroups.PodCgroupName(pod)
	}
	vols, err := p.planVolumes()
	if err != nil {
		return DryRunPod{}, nil, err
	}
	p.volumes = volumes.Planned(p.dataDir, pod, vols)
	sandbox, warnings, err := p.podSandboxConfig(0)
	if err != nil {
		return DryRunPod{}, nil, err
	}
	handler, err := lookupRuntimeHandler(pod, r.opts.RuntimeClasses) // refusals checked it
	if err != nil {
		return DryRunPod{}, nil, err
	}
	labelPlaceholders(sandbox.Labels)
	p.pod = withEnvFilePlaceholders(pod) // the configs' view; the sandbox's is the pod's own
	out := DryRunPod{Pod: pod, QOSClass: podresources.QOSClass(pod), Sandbox: sandbox, RuntimeHandler: handler}
	for _, c := range PodContainers(p.pod) {
		cfg, err := p.dryRunContainerConfig(c.Container)
		if err != nil {
			return DryRunPod{}, nil, err
		}
		out.Containers = append(out.Containers, DryRunContainer{PodContainer: c, Config: cfg})
	}
	return out, warnings, nil
}

// dryRunContainerConfig is makeContainerConfig without the runtime: the
// image as written (with its default tag) instead of the runtime's image
// ID, the image's user unknown, the pod's IPs unknown, and the mounts'
// host paths computed but not made.
func (p *podRun) dryRunContainerConfig(c *v1.Container) (*runtimeapi.ContainerConfig, error) {
	if err := invalidImageName(c.Image); err != nil {
		return nil, err
	}
	cfg, err := containerConfig(p.containerInput(c, imageref.WithDefaultTag(c.Image), 0, nil, imageUser{}))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	labelPlaceholders(cfg.Labels)
	mounts, err := p.containerMounts(c, nil) // planned: subPathExprs were judged by the refusals
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reasonCreateConfigError, err)
	}
	cfg.Mounts = append(mounts, cfg.Mounts...)
	// A pod off the host network is assumed to get IPs, as a run's does
	// once its sandbox is up.
	if mountsEtcHosts(c, true) {
		cfg.Mounts = append(cfg.Mounts, etcHostsMount(p.dataDir))
	}
	if c.TerminationMessagePath != "" {
		path := filepath.Join(p.dataDir, "containers", c.Name, dryRunTerminationFile)
		cfg.Mounts = append(cfg.Mounts, terminationMessageMount(c, path))
	}
	return cfg, nil
}

// labelPlaceholders puts the dry run's placeholders for the owner's
// process into podrun's owner labels.
func labelPlaceholders(l map[string]string) {
	l[LabelPID], l[labelPIDStart] = dryRunPID, dryRunPID
}

// withEnvFilePlaceholders is the pod with each env var that a fileKeyRef
// reads from an emptyDir set to a placeholder: the file is written by an
// earlier container, when the pod runs. A fileKeyRef a run refuses (its
// volume is not an emptyDir of the pod) is left for containerEnv to refuse.
func withEnvFilePlaceholders(pod *v1.Pod) *v1.Pod {
	out := pod
	for _, c := range PodContainers(pod) {
		for i, e := range c.Env {
			ref := envFileRef(pod, e)
			if ref == nil {
				continue
			}
			if out == pod {
				out = pod.DeepCopy()
			}
			// The same container of the copy, by its place in the spec.
			cc := volumes.FindContainer(out, c.Name)
			cc.Env[i] = v1.EnvVar{Name: e.Name, Value: dryRunEnvFileValue}
		}
	}
	return out
}

// envFileRef is e's fileKeyRef when it reads an emptyDir of the pod.
func envFileRef(pod *v1.Pod, e v1.EnvVar) *v1.FileKeySelector {
	if e.ValueFrom == nil || e.ValueFrom.FileKeyRef == nil {
		return nil
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == e.ValueFrom.FileKeyRef.VolumeName && v.EmptyDir != nil {
			return e.ValueFrom.FileKeyRef
		}
	}
	return nil
}

// dryRunNotes says what a dry run of the pods did not check, and what it
// assumed, for the questions a run asks the runtime; and the cgroup driver
// the pod cgroups are named for, when there are pod cgroups.
func dryRunNotes(facts Facts, pods []*v1.Pod, opts Options) []string {
	running := "whether a live podrun already runs one of the pods (a run refuses it)"
	if opts.Replace {
		running = "whether a podrun already runs one of the pods (a run with --replace stops a detached one first, and refuses one a live podrun runs)"
	}
	runtime := "runtime: not asked: its readiness and version, and " + running + ", are not checked"
	if facts.DryRunEndpoint != "" {
		runtime = "runtime: asked only for its cgroup driver, at " + facts.DryRunEndpoint +
			": its readiness, and " + running + ", are not checked"
	}
	notes := []string{
		runtime,
		"images: not pulled or inspected: whether they exist, pull credentials and the image's user (runAsNonRoot, the default uid) are not checked; the configs name the image as written, where a run sends the runtime's image ID",
	}
	if opts.CgroupRoot != "" {
		notes = append(notes, cgroupDriverNote(facts))
	}
	offHost := false
	for _, p := range pods {
		offHost = offHost || !p.Spec.HostNetwork
	}
	if offHost {
		notes = append(notes, "pod network: the CNI configuration and plugins are not checked, and pod IPs are unknown: env from status.podIP and status.podIPs is empty")
	}
	for _, p := range pods {
		name := p.Namespace + "/" + p.Name
		if hostUsersOff(p) {
			notes = append(notes, fmt.Sprintf("pod %s: hostUsers: false: the runtime's user namespace support is not checked (a run refuses the pod without it), and the ID range assumes no other pod holds it", name))
		}
		var files []string
		for _, c := range PodContainers(p) {
			for _, e := range c.Env {
				if envFileRef(p, e) != nil {
					files = append(files, c.Name+": "+e.Name)
				}
			}
		}
		if len(files) > 0 {
			notes = append(notes, fmt.Sprintf("pod %s: env read from files when the container starts (fileKeyRef), shown as a placeholder: %s", name, strings.Join(files, ", ")))
		}
	}
	return notes
}

// cgroupDriverNote says which cgroup driver the pod cgroups in a dry run's
// configs are named for and where it came from, as a run would take it;
// or, when a dry run could not learn it, that cgroupfs is assumed, why,
// and how a run finds it.
func cgroupDriverNote(facts Facts) string {
	if facts.CgroupDriver != "" {
		return fmt.Sprintf("cgroup driver: %s (%s)", facts.CgroupDriver, facts.CgroupDriverSource)
	}
	return "cgroup driver: assumed cgroupfs for the pod cgroups in these configs; the runtime's driver is " + facts.CgroupDriverSource.String() +
		"; a run takes --cgroup-driver, else asks the runtime (CRI RuntimeConfig, else the config in its status info), else uses cgroupfs"
}
