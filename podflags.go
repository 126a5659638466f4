package main

// The pod flags of a run: overrides of the manifests' pods (--image
// CONTAINER=IMAGE, --env NAME=VALUE), the pod `podrun run NAME --image
// IMAGE [-- ARG...]` generates as kubectl run does, -i and -t (the attach,
// attach.go), and --dry-run=client, which prints the pods as manifests.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources"
)

// nameArgCommands are the commands that take NAME, the pod podrun run
// generates; their flags may follow it (interspersed).
var nameArgCommands = map[string]bool{"run": true, "validate": true}

// podFlags are the run's flags of category catPod.
func podFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "image", Category: catPod,
			Usage: "with -f: set the image of a container, repeatable, as kubectl set image: `CONTAINER=IMAGE` (every pod that has the container; an init, sidecar or regular one), POD/CONTAINER=IMAGE (that pod's), or *=IMAGE (every container); with podrun run NAME: the IMAGE to run"},
		&cli.GenericFlag{Name: "env", Category: catPod, Value: &repeatedValue{},
			Usage: "set an environment variable, repeatable, as `NAME=VALUE`: with -f in every container of every pod, as kubectl set env (a variable of that name is replaced); with podrun run NAME in its container"},
		&cli.BoolFlag{Name: "stdin", Aliases: []string{"i"}, Category: catPod,
			Usage: "attach podrun's stdin to the container with stdin: true once it starts (podrun run NAME: give the container stdin: true and stdinOnce: true), as kubectl run -i; its stdin closes when podrun's ends"},
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}, Category: catPod,
			Usage: "with -i: a terminal; podrun run NAME gives its container tty: true; when podrun's stdin is a terminal and the container has one, it is attached in raw mode, resized with it, and the container's output comes through it"},
		&cli.BoolFlag{Name: "command", Category: catPod, Usage: "podrun run NAME: the arguments after -- are the container's command, not its args (as kubectl run --command)"},
		&cli.StringFlag{Name: "restart", Category: catPod, DefaultText: "Never",
			Usage: "podrun run NAME: the pod's restartPolicy (`POLICY`): Never, OnFailure or Always (kubectl run's default is Always: podrun runs the pod once and exits with its status)"},
		&cli.StringFlag{Name: "labels", Aliases: []string{"l"}, Category: catPod,
			Usage: "podrun run NAME: the pod's `LABELS`, KEY=VALUE,... (default run=NAME)"},
		&cli.StringFlag{Name: "image-pull-policy", Category: catPod,
			Usage: "podrun run NAME: the container's imagePullPolicy (`POLICY`): Always, IfNotPresent or Never; default: from the image's tag"},
		&cli.StringFlag{Name: "port", Category: catPod, Usage: "podrun run NAME: the container `PORT` it exposes (containerPort)"},
		&cli.BoolFlag{Name: "privileged", Category: catPod, Usage: "podrun run NAME: run the container privileged"},
		&cli.BoolFlag{Name: "rm", Category: catPod, Usage: "taken as kubectl run --rm is: podrun removes every pod it ran anyway, unless -d"},
	}
}

// repeatedValue is a flag value given once per flag, never split at commas
// (an environment variable's value may hold one).
type repeatedValue []string

func (r *repeatedValue) Set(s string) error { *r = append(*r, s); return nil }
func (r *repeatedValue) String() string     { return "" }

// repeated is the values of the repeatable flag name.
func repeated(c *cli.Context, name string) []string {
	if v, ok := flagCtx(c, name).Generic(name).(*repeatedValue); ok {
		return *v
	}
	return nil
}

// dryRunValue is --dry-run's mode: given alone (or =true, =server) the
// checks of a run and what it would send the runtime; =client the pods as
// manifests, as kubectl's --dry-run=client prints what it would create.
type dryRunValue string

const (
	dryRunServer = "server"
	dryRunClient = "client"
)

func (d *dryRunValue) Set(s string) error {
	switch s {
	case "true", dryRunServer:
		*d = dryRunServer
	case dryRunClient:
		*d = dryRunClient
	case "false", "none":
		*d = ""
	default:
		return fmt.Errorf("want client, server or none")
	}
	return nil
}

func (d *dryRunValue) String() string   { return string(*d) }
func (d *dryRunValue) IsBoolFlag() bool { return true } // --dry-run alone, or --dry-run=MODE

// boolOrValueFlag is a flag given alone or as --name=VALUE, never with its
// value in the next argument: help shows no placeholder, and flags after
// POD or NAME (interspersed) do not take the next argument as its value.
type boolOrValueFlag struct{ *cli.GenericFlag }

func (boolOrValueFlag) TakesValue() bool { return false }

func dryRunFlag() cli.Flag {
	return boolOrValueFlag{&cli.GenericFlag{Name: "dry-run", Category: catOutput, Value: new(dryRunValue),
		Usage: "decode, default, validate and admit the pods without running them (the runtime, when one answers, is asked for its cgroup driver alone) and print a summary, or with -o json|yaml the CRI configs a run would send, secrets masked (as 'podrun validate'); " +
			"--dry-run=client prints the pods as manifests instead, overrides applied, before defaults (YAML, or JSON with -o json), as kubectl run --dry-run=client -o yaml"}}
}

// dryRunMode is --dry-run's mode: "", server or client.
func dryRunMode(c *cli.Context) string {
	if v, ok := flagCtx(c, "dry-run").Generic("dry-run").(*dryRunValue); ok {
		return string(*v)
	}
	return ""
}

// podFlagValues are the pod flags as given.
type podFlagValues struct {
	Images          []string
	Env             []string
	Stdin, TTY      bool
	Command         bool
	Restart         string
	Labels          string
	ImagePullPolicy string
	Port            string
	Privileged      bool
	Remove          bool // --rm: what a run does anyway; refused with -d
}

func podFlagsOf(c *cli.Context) podFlagValues {
	return podFlagValues{
		Images: strs(c, "image"), Env: repeated(c, "env"),
		Stdin: boolean(c, "stdin"), TTY: boolean(c, "tty"), Command: boolean(c, "command"),
		Restart: str(c, "restart"), Labels: str(c, "labels"), ImagePullPolicy: str(c, "image-pull-policy"),
		Port: str(c, "port"), Privileged: boolean(c, "privileged"), Remove: boolean(c, "rm"),
	}
}

// podInput is what a run's pod flags and arguments make of its pods: the
// pod podrun run NAME generates, or the overrides of the manifests'.
type podInput struct {
	RunPod    *sources.RunPod
	Overrides sources.Overrides
}

// newPodInput checks the pod flags with the arguments (args: after podrun
// run, NAME [-- ARG...]; nameAllowed: the command takes NAME) and the -f
// sources.
func newPodInput(f podFlagValues, args []string, nameAllowed bool, filenames []string) (podInput, error) {
	if f.TTY && !f.Stdin {
		return podInput{}, errors.New("-t/--tty needs -i/--stdin: a terminal is attached to the container's stdin")
	}
	env, err := parseEach(f.Env, sources.ParseEnvOverride)
	if err != nil {
		return podInput{}, err
	}
	if len(args) == 0 || !nameAllowed {
		if len(args) > 0 {
			return podInput{}, fmt.Errorf("unexpected argument %q: manifests are given with -f (see podrun --help)", args[0])
		}
		return overridesInput(f, env)
	}
	name, cmd, err := runPodArgs(args)
	if err != nil {
		return podInput{}, err
	}
	if len(filenames) > 0 {
		return podInput{}, fmt.Errorf("podrun run %s generates its pod: -f is for manifests, not with NAME", name)
	}
	r, err := runPodOf(f, name, cmd, env)
	if err != nil {
		return podInput{}, err
	}
	return podInput{RunPod: &r}, nil
}

// overridesInput is the overrides of the manifests' pods; the flags only
// podrun run NAME takes are refused.
func overridesInput(f podFlagValues, env []v1.EnvVar) (podInput, error) {
	for _, g := range []struct {
		flag string
		set  bool
	}{{"--command", f.Command}, {"--restart", f.Restart != ""}, {"--labels", f.Labels != ""},
		{"--image-pull-policy", f.ImagePullPolicy != ""}, {"--port", f.Port != ""}, {"--privileged", f.Privileged}} {
		if g.set {
			return podInput{}, fmt.Errorf("%s is for the pod podrun run NAME --image IMAGE generates; a manifest says it itself", g.flag)
		}
	}
	images, err := parseEach(f.Images, func(s string) (sources.ImageOverride, error) {
		if !strings.Contains(s, "=") {
			return sources.ImageOverride{}, fmt.Errorf("--image %q names no container: with -f, --image CONTAINER=IMAGE (or *=IMAGE) sets a container's image; podrun run NAME --image IMAGE runs an image without a manifest", s)
		}
		return sources.ParseImageOverride(s)
	})
	if err != nil {
		return podInput{}, err
	}
	return podInput{Overrides: sources.Overrides{Images: images, Env: env}}, nil
}

// runPodArgs splits podrun run's arguments into NAME and the arguments
// after "--", with kubectl run's rules.
func runPodArgs(args []string) (name string, cmd []string, err error) {
	switch {
	case args[0] == "--":
		return "", nil, errors.New("NAME is required: podrun run NAME --image IMAGE [-- COMMAND [ARG...]]")
	case len(args) > 1 && args[1] != "--":
		return "", nil, fmt.Errorf("the command goes after --: podrun run %s --image IMAGE -- %s", args[0], strings.Join(args[1:], " "))
	case len(args) > 2:
		cmd = args[2:]
	}
	return args[0], cmd, nil
}

// runPodOf is the pod podrun run NAME generates from the flags.
func runPodOf(f podFlagValues, name string, cmd []string, env []v1.EnvVar) (sources.RunPod, error) {
	r := sources.RunPod{Name: name, Args: cmd, Command: f.Command, Env: env, Stdin: f.Stdin, TTY: f.TTY, Privileged: f.Privileged}
	switch {
	case len(f.Images) == 0:
		return r, fmt.Errorf("--image is required: podrun run %s --image IMAGE [-- COMMAND [ARG...]]", name)
	case len(f.Images) > 1:
		return r, fmt.Errorf("podrun run %s takes one --image, got %d", name, len(f.Images))
	case strings.Contains(f.Images[0], "="):
		return r, fmt.Errorf("--image %q: podrun run NAME takes the image alone; CONTAINER=IMAGE sets a container's image in the manifests given with -f", f.Images[0])
	}
	r.Image = f.Images[0]
	switch p := v1.RestartPolicy(f.Restart); p {
	case "":
		r.RestartPolicy = v1.RestartPolicyNever
	case v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
		r.RestartPolicy = p
	default:
		return r, fmt.Errorf("invalid --restart %q: want Always, OnFailure or Never", f.Restart)
	}
	switch p := v1.PullPolicy(f.ImagePullPolicy); p {
	case "", v1.PullAlways, v1.PullIfNotPresent, v1.PullNever:
		r.ImagePullPolicy = p
	default:
		return r, fmt.Errorf("invalid --image-pull-policy %q: want Always, IfNotPresent or Never", f.ImagePullPolicy)
	}
	if f.Port != "" {
		port, err := strconv.ParseInt(f.Port, 10, 32)
		if err != nil || port < 1 || port > 65535 {
			return r, fmt.Errorf("invalid --port %q: want a number from 1 to 65535", f.Port)
		}
		r.Port = int32(port)
	}
	labels, err := parseRunLabels(f.Labels)
	r.Labels = labels
	return r, err
}

// parseRunLabels parses --labels KEY=VALUE,... as kubectl run does; the
// keys and values are validated with the pod.
func parseRunLabels(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.Contains(v, "=") {
			return nil, fmt.Errorf("invalid --labels %q: want KEY=VALUE,...", s)
		}
		labels[k] = v
	}
	return labels, nil
}

func parseEach[T any](vals []string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, v := range vals {
		t, err := parse(v)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
