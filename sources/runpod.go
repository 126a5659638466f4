package sources

import (
	"errors"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// RunPod is the pod `podrun run NAME --image IMAGE [-- ARG...]` generates,
// with kubectl run's flags (k8s.io/kubectl pkg/cmd/run, createPod).
type RunPod struct {
	Name  string
	Image string
	// Args are the arguments after "--": the container's args, or with
	// Command its command.
	Args    []string
	Command bool
	Env     []v1.EnvVar
	// Labels replace kubectl's default run=NAME.
	Labels          map[string]string
	Stdin           bool // -i: stdin: true and stdinOnce: true
	TTY             bool // -t
	RestartPolicy   v1.RestartPolicy
	ImagePullPolicy v1.PullPolicy // "" leaves it to the defaults
	Port            int32         // 0: none
	Privileged      bool
}

// Pod is the pod as kubectl run creates it: one container named NAME,
// labels run=NAME unless Labels, dnsPolicy ClusterFirst, stdin and
// stdinOnce with -i, and the restart policy given.
func (r RunPod) Pod() *v1.Pod {
	labels := r.Labels
	if len(labels) == 0 {
		labels = map[string]string{"run": r.Name}
	}
	c := v1.Container{
		Name:            r.Name,
		Image:           r.Image,
		Env:             r.Env,
		Stdin:           r.Stdin,
		StdinOnce:       r.Stdin,
		TTY:             r.TTY,
		ImagePullPolicy: r.ImagePullPolicy,
	}
	if r.Privileged {
		c.SecurityContext = &v1.SecurityContext{Privileged: &r.Privileged}
	}
	if len(r.Args) > 0 {
		if r.Command {
			c.Command = r.Args
		} else {
			c.Args = r.Args
		}
	}
	if r.Port != 0 {
		c.Ports = []v1.ContainerPort{{ContainerPort: r.Port}}
	}
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: labels},
		Spec: v1.PodSpec{
			Containers:    []v1.Container{c},
			DNSPolicy:     v1.DNSClusterFirst,
			RestartPolicy: r.RestartPolicy,
		},
	}
}

// commandLineSource is the source of the pod `podrun run NAME` generates:
// errors name it "command line", its UID hashes "podrun run" and the
// manifest, and its pods' config.source annotation is "cli".
var commandLineSource = source{display: "command line", identity: "podrun run", config: "cli"}

// DecodeRunPod decodes the pod r generates as a manifest with it would be
// (defaults, validation, UID): the same command line gives the same UID.
func DecodeRunPod(r RunPod, opts Options) (*Set, error) {
	data, err := yaml.Marshal(r.Pod())
	if err != nil {
		return nil, fmt.Errorf("generating pod %s: %w", strconv.Quote(r.Name), err)
	}
	opts.matched = make([]bool, len(opts.Overrides.Images))
	set, errs := decodeSource(commandLineSource, data, opts)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}
