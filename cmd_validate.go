package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
)

// validateCommand is `podrun validate`: `podrun run --dry-run` under a name
// of its own. It takes the run's flags, so that a run's command line can be
// checked as it stands, but --dry-run (always on) and --junit (a dry run
// runs no container).
func validateCommand(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	var flags []cli.Flag
	for _, f := range runFlags() {
		switch f.Names()[0] {
		case "dry-run", "junit":
			continue
		case "output":
			f = &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Category: catOutput,
				Usage: "text: a summary per pod; json or yaml: the CRI PodSandboxConfig and every ContainerConfig a run would send, secrets masked (docs/validate.md)"}
		}
		flags = append(flags, f)
	}
	return &cli.Command{
		Name:  "validate",
		Usage: "check pods as a run would (decode, default, validate, admit) without running them, and show what a run would send the runtime",
		UsageText: `podrun validate [flags] -f SOURCE...   (same as: podrun run --dry-run -f SOURCE...)
podrun validate NAME --image IMAGE [flags] [-- COMMAND [ARG...]]   (the pod podrun run NAME would run)

# check a manifest as a run would, without root or a runtime: exit 0, or 125 with the run's errors
podrun validate -f pod.yaml
# the CRI configs a run would send, secrets masked (a runtime that answers is asked for its cgroup driver alone)
podrun validate -o yaml -f pod.yaml`,
		Flags:                  flags,
		UseShortOptionHandling: true,
		Action: func(c *cli.Context) error {
			f := runFlagsOf(c)
			f.DryRun, f.NameAllowed = true, true
			return runWith(f, stdin, stdout, stderr)
		},
	}
}

// dryRun is the rest of a dry run once the manifests are read: the node's
// facts from this machine and the cgroup driver from the runtime a run
// would dial, when one answers (runner.DryRunFacts), the run's refusals and
// configs (runner.DryRun), then the summary or the configs on stdout and
// the notes on stderr. A signal while it waits for the runtime ends it
// with the signal's exit status (sigCode), as it ends a run.
func dryRun(ctx context.Context, cfg runConfig, set *sources.Set, stdout, stderr io.Writer, sigCode func() int) error {
	var rt *cri.Client
	defer func() {
		if rt != nil {
			rt.Close()
		}
	}()
	var ask runner.DryRunDial
	asked := false
	// Without pod cgroups (--cgroup-root "") the driver names nothing.
	if cfg.Run.CgroupRoot != "" {
		ask = func(ctx context.Context) (runner.DriverRuntime, error) {
			asked = true
			c, err := dial(ctx, cfg.Endpoint)
			if err != nil {
				return nil, err
			}
			rt = c
			return c, nil
		}
	}
	facts, err := runner.DryRunFacts(ctx, cfg.Facts, ask)
	if err != nil {
		return podrunError(err)
	}
	if asked && ctx.Err() != nil {
		return interrupted(fmt.Errorf("asking the runtime for its cgroup driver: %w", ctx.Err()), sigCode)
	}
	res, err := runner.DryRun(facts, setPods(set), wired(cfg.withManifests(set), plainOutputs(cfg, stdout, stderr), nil))
	if err != nil {
		// The run's refusals, named as a run names them.
		return podrunError(withOrigins(err, set))
	}
	if cfg.Output == "text" {
		writeDryRunSummary(stdout, res)
	} else {
		doc, err := dryRunDocument(res)
		if err == nil {
			err = writeObject(stdout, cfg.Output, doc)
		}
		if err != nil {
			return podrunError(err)
		}
	}
	for _, n := range append(workloadNotes(set), res.Notes...) {
		fmt.Fprintf(stderr, "podrun: note: %s\n", n)
	}
	return nil
}

// writeDryRunSummary prints, per pod, that it was admitted and its QoS
// class, then its containers with their kind and image, and its volumes.
func writeDryRunSummary(w io.Writer, res *runner.DryRunResult) {
	for i, p := range res.Pods {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "pod %s/%s%s: admitted, QoS class %s\n", p.Pod.Namespace, p.Pod.Name, jobOfPod(p), p.QOSClass)
		if p.RuntimeHandler != "" {
			fmt.Fprintf(w, "  runtime handler %s (RuntimeClass %s)\n", p.RuntimeHandler, *p.Pod.Spec.RuntimeClassName)
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		for _, c := range p.Containers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Kind, c.Name, c.Image)
		}
		for _, v := range p.Pod.Spec.Volumes {
			fmt.Fprintf(tw, "  volume\t%s\t%s\n", v.Name, volumeSummary(v.VolumeSource))
		}
		tw.Flush()
	}
}

// volumeSummary describes a volume of a type a run sets up.
func volumeSummary(s v1.VolumeSource) string {
	switch {
	case s.EmptyDir != nil:
		if s.EmptyDir.Medium == v1.StorageMediumMemory {
			return "emptyDir (Memory)"
		}
		return "emptyDir"
	case s.HostPath != nil:
		if t := s.HostPath.Type; t != nil && *t != "" {
			return fmt.Sprintf("hostPath %s (%s)", s.HostPath.Path, *t)
		}
		return "hostPath " + s.HostPath.Path
	case s.ConfigMap != nil:
		return "configMap " + s.ConfigMap.Name
	case s.Secret != nil:
		return "secret " + s.Secret.SecretName
	case s.DownwardAPI != nil:
		return "downwardAPI"
	case s.Projected != nil:
		var parts []string
		for _, p := range s.Projected.Sources {
			switch {
			case p.ConfigMap != nil:
				parts = append(parts, "configMap "+p.ConfigMap.Name)
			case p.Secret != nil:
				parts = append(parts, "secret "+p.Secret.Name)
			case p.DownwardAPI != nil:
				parts = append(parts, "downwardAPI")
			}
		}
		return "projected (" + strings.Join(parts, ", ") + ")"
	case s.Image != nil:
		return fmt.Sprintf("image %s (%s)", s.Image.Reference, s.Image.PullPolicy)
	}
	return "?"
}

// The -o json|yaml document of a dry run: one entry per pod, in the run's
// order, naming it and giving its sandbox config and its containers'
// configs in the order a run starts them. The configs are the CRI messages
// in their proto3 JSON form (camelCase names, enums by name, 64-bit
// integers as strings), as crictl prints them, except that env values are
// text rather than base64. docs/validate.md describes it; scripts may rely
// on it.
type dryRunDoc struct {
	Pods []dryRunPodDoc `json:"pods"`
}

type dryRunPodDoc struct {
	Pod      string `json:"pod"`           // namespace/name
	Job      string `json:"job,omitempty"` // namespace/name of the Job whose first pod it is
	UID      string `json:"uid"`
	QOSClass string `json:"qosClass"`
	// RuntimeHandler is RunPodSandbox's runtime_handler, the handler of
	// the pod's RuntimeClass; absent for the runtime's default.
	RuntimeHandler string               `json:"runtimeHandler,omitempty"`
	SandboxConfig  map[string]any       `json:"sandboxConfig"`
	Containers     []dryRunContainerDoc `json:"containers"`
}

type dryRunContainerDoc struct {
	Name   string         `json:"name"`
	Kind   string         `json:"kind"` // init, sidecar or container
	Config map[string]any `json:"config"`
}

// dryRunDocument is the -o json|yaml document of a dry run.
func dryRunDocument(res *runner.DryRunResult) (*dryRunDoc, error) {
	doc := &dryRunDoc{Pods: []dryRunPodDoc{}}
	for _, p := range res.Pods {
		sb, err := protoMap(p.Sandbox)
		if err != nil {
			return nil, err
		}
		pd := dryRunPodDoc{Pod: p.Pod.Namespace + "/" + p.Pod.Name, UID: string(p.Pod.UID), QOSClass: string(p.QOSClass),
			RuntimeHandler: p.RuntimeHandler, SandboxConfig: sb, Containers: []dryRunContainerDoc{}}
		if p.Job != nil {
			pd.Job = p.Job.Namespace + "/" + p.Job.Name
		}
		for _, c := range p.Containers {
			cfg, err := containerConfigMap(c.Config)
			if err != nil {
				return nil, err
			}
			pd.Containers = append(pd.Containers, dryRunContainerDoc{Name: c.Name, Kind: string(c.Kind), Config: cfg})
		}
		doc.Pods = append(doc.Pods, pd)
	}
	return doc, nil
}

// containerConfigMap is a container config in the document's form: its
// proto3 JSON, with env values as text.
func containerConfigMap(cfg *runtimeapi.ContainerConfig) (map[string]any, error) {
	c := proto.Clone(cfg).(*runtimeapi.ContainerConfig)
	c.Envs = nil
	m, err := protoMap(c)
	if err != nil {
		return nil, err
	}
	if len(cfg.Envs) > 0 {
		envs := make([]map[string]string, len(cfg.Envs))
		for i, e := range cfg.Envs {
			envs[i] = map[string]string{"key": e.Key, "value": string(e.Value)}
		}
		m["envs"] = envs
	}
	return m, nil
}

// protoMap is a message's proto3 JSON form as a map, so that the one
// serializer (writeObject) prints it, with stable spacing and key order.
func protoMap(m proto.Message) (map[string]any, error) {
	b, err := protojson.MarshalOptions{EmitDefaultValues: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	out := map[string]any{}
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}
