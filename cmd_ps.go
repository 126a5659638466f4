package main

// `podrun ps`: the pods podrun runs on this node, those of --root-dir or
// with --all-roots all of them (cmd_scope.go), as `kubectl get pods` shows
// the pods of a namespace or of all (docs/ps.md). runner.PodLister builds
// them from the runtime, their status by the run's own status code;
// package runner/report/podlist works out the columns; this file prints.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/podref"
	"github.com/podrun/podrun/runner/report/podlist"
)

// psWatchInterval is how often `ps -w` looks again besides the runtime's
// container events: probe results and waiting reasons change without an
// event, and a runtime without events (containerd 1.6) has only this.
const psWatchInterval = time.Second

func psCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "ps",
		Usage: "list the pods podrun runs on this node",
		UsageText: `podrun ps [flags] [POD...]   (POD: NAME, NAMESPACE/NAME or UID; none: every pod of --root-dir)

# podrun's pods of this root dir (--root-dir), as kubectl get pods
podrun ps
# with the node, the run and who looks after each
podrun ps -o wide
# every podrun pod on this node, whatever its root dir, with it (ROOT)
podrun ps --all-roots -o wide
# one pod as a v1.Pod with its live status, for scripts
podrun ps -o json web
# a row each time a pod changes, until Ctrl-C
podrun ps -w`,
		Flags: append(runtimeFlags(),
			allRootsFlag("every podrun pod on the runtime, whatever its --root-dir (without it: the pods of --root-dir); -o wide then adds ROOT"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Category: catOutput,
				Usage: "`FORMAT`: table, wide, json or yaml (wide adds NODE, RUN and OWNER; json and yaml print a v1.List of v1.Pod, or the v1.Pod when one POD names one)"},
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Category: catOutput,
				Usage: "after the list, print a pod again whenever it changes, as kubectl get -w (until Ctrl-C)"},
			&cli.BoolFlag{Name: "no-headers", Category: catOutput,
				Usage: "table and wide: print the rows without the header line, as kubectl get --no-headers"},
		),
		Action: func(c *cli.Context) error { return psAction(c, stdout, stderr) },
	}
}

// podSource is one source of the pods ps lists, kept across a watch's
// refreshes. The runtime's podrun pods (runner.PodLister) are the first;
// another (pods handed over to a kubelet, say) adds its pods to
// psSources, and they are merged, selected and printed alike.
type podSource func(ctx context.Context) ([]podref.Listed, error)

// listSources merges the sources' pods, sorted by namespace and name.
func listSources(ctx context.Context, sources []podSource) ([]podref.Listed, error) {
	var items []podref.Listed
	for _, src := range sources {
		its, err := src(ctx)
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
	}
	podref.Sort(items)
	return items, nil
}

// psOptions are `podrun ps`'s flags and PODs, checked before the runtime
// is dialled.
type psOptions struct {
	format                  string
	args                    []string
	scope                   podref.Scope
	noHeaders, quiet, watch bool
}

// psOptionsOf checks --output and the PODs, and takes the scope.
func psOptionsOf(c *cli.Context) (psOptions, error) {
	o := psOptions{format: str(c, "output"), args: c.Args().Slice(),
		noHeaders: boolean(c, "no-headers"), quiet: boolean(c, "quiet"), watch: boolean(c, "watch")}
	switch o.format {
	case "table", "wide", "json", "yaml":
	default:
		return o, fmt.Errorf("invalid --output %q: want table, wide, json or yaml", o.format)
	}
	for _, a := range o.args {
		// Flags after a POD are moved before it (interspersed); what
		// is left that looks like one came after "--".
		if strings.HasPrefix(a, "-") {
			return o, fmt.Errorf("%q is not a pod name", a)
		}
	}
	var err error
	o.scope, err = podScope(c)
	return o, err
}

func psAction(c *cli.Context, stdout, stderr io.Writer) error {
	o, err := psOptionsOf(c)
	if err != nil {
		return podrunError(err)
	}
	return withRuntime(c, func(ctx context.Context, rt *cri.Client, sigCode func() int) error {
		lister := runner.NewPodLister(rt)
		sources := []podSource{lister.List}
		p, selected, err := o.list(ctx, sources, stdout, stderr, sigCode)
		if err != nil || !o.watch {
			return err
		}
		return o.watchChanges(ctx, lister.Changes(ctx, psWatchInterval), sources, p, selected, sigCode)
	})
}

// list prints the pods the PODs name, or every pod of the scope, and
// returns the printer and the pods it printed. A POD that names no pod of
// the scope is an error, which says where a pod of that name is.
func (o psOptions) list(ctx context.Context, sources []podSource, stdout, stderr io.Writer, sigCode func() int) (*psPrinter, []podref.Listed, error) {
	all, err := listSources(ctx, sources)
	if err != nil {
		return nil, nil, interrupted(err, sigCode)
	}
	selected, others := o.scope.Split(all)
	var notFound error
	if len(o.args) > 0 {
		selected, notFound = podref.Named(all, podref.Listed.Ref, o.args, o.scope)
	}
	p := &psPrinter{out: stdout, format: o.format, cols: podlist.ColumnsFor(selected, o.format == "wide"), header: o.noHeaders}
	p.cols.Root = o.format == "wide" && o.scope.AllRoots()
	if len(selected) == 0 && notFound == nil && o.format != "json" && o.format != "yaml" && !o.quiet {
		fmt.Fprintln(stderr, o.scope.NoneFound(len(others)))
	}
	if err := p.list(selected, len(o.args) == 1 && len(selected) == 1); err != nil {
		return nil, nil, podrunError(err)
	}
	if notFound != nil {
		return nil, nil, podrunError(notFound)
	}
	return p, selected, nil
}

// watchChanges prints the pods again on every change, a row (or an
// object) for each pod whose row changed, until a signal. selected are the
// pods the listing printed.
func (o psOptions) watchChanges(ctx context.Context, changes <-chan struct{}, sources []podSource, p *psPrinter, selected []podref.Listed, sigCode func() int) error {
	w := podlist.NewWatch()
	w.Changed(selected)
	for range changes {
		all, err := listSources(ctx, sources)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return podrunError(err)
		}
		items, _ := o.scope.Split(all)
		if len(o.args) > 0 {
			items, _ = podref.Named(all, podref.Listed.Ref, o.args, o.scope)
		}
		if err := p.changed(w.Changed(items)); err != nil {
			return podrunError(err)
		}
	}
	if code := sigCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// psPrinter prints ps's pods in one format, the table's header once.
type psPrinter struct {
	out    io.Writer
	format string
	cols   podlist.Columns
	table  podlist.Table
	header bool   // printed, or not to be printed (--no-headers)
	ns     string // without a NAMESPACE column: the namespace of the rows printed
}

// list prints the listing: the table, or a v1.List (the v1.Pod itself when
// one argument named one pod, as kubectl get pod NAME).
func (p *psPrinter) list(items []podref.Listed, single bool) error {
	switch p.format {
	case "json", "yaml":
		if single {
			return writeObject(p.out, p.format, podlist.WithKind(items[0].Pod))
		}
		return writeObject(p.out, p.format, podlist.List(podlist.Pods(items)))
	}
	return p.rows(items)
}

// changed prints what a watch saw change: rows, or one object per pod.
func (p *psPrinter) changed(items []podref.Listed) error {
	switch p.format {
	case "json", "yaml":
		for _, it := range items {
			if p.format == "yaml" {
				// The listing was the first document.
				if _, err := io.WriteString(p.out, "---\n"); err != nil {
					return err
				}
			}
			if err := writeObject(p.out, p.format, podlist.WithKind(it.Pod)); err != nil {
				return err
			}
		}
		return nil
	}
	return p.rows(items)
}

// rows prints table rows, after the header the first time there is one.
func (p *psPrinter) rows(items []podref.Listed) error {
	if len(items) == 0 {
		return nil
	}
	now := time.Now()
	var rows [][]string
	if !p.header {
		rows = append(rows, p.cols.Header())
		p.header = true
	}
	for _, it := range items {
		r := p.cols.Row(it, now)
		if !p.cols.Namespace {
			// A watch that sees a pod of another namespace than the rows
			// above (no NAMESPACE column) names it NAMESPACE/NAME.
			if p.ns == "" {
				p.ns = it.Pod.Namespace
			} else if it.Pod.Namespace != p.ns {
				r[0] = it.Pod.Namespace + "/" + r[0]
			}
		}
		rows = append(rows, r)
	}
	_, err := io.WriteString(p.out, strings.Join(p.table.Lines(rows), "\n")+"\n")
	return err
}
