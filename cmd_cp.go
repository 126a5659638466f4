package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/urfave/cli/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/artifacts"
)

// `podrun cp`: kubectl cp out of a running container of a pod podrun
// runs: tar in the container through the runtime's streaming server (CRI
// Exec, as exec -i), its stream extracted into the host dir by
// artifacts.Untar, which keeps every entry inside it. docs/artifacts.md.

func cpCommand(stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "cp",
		Usage: "copy a file or directory out of a running container of a pod into a host dir, as kubectl cp does",
		UsageText: `podrun cp [flags] POD:PATH HOSTDIR [-c CONTAINER]   (POD: NAME, NAMESPACE/NAME or UID)

# what a detached pod's container wrote to /srv/reports, into ./artifacts
podrun cp web:/srv/reports ./artifacts
# one file of container app of pod web in namespace ci: ./nginx.conf
podrun cp ci/web:/etc/nginx/nginx.conf . -c app`,
		Description: "The container must be running: tar runs in it (its image needs tar), and its stream is extracted into HOSTDIR, " +
			"a dir's content into it, a file under its name, without leaving it; symlinks are skipped, not followed nor made. " +
			"What a container that exited left on its volumes: a run's --copy-out. docs/artifacts.md",
		Flags: append(runtimeFlags(),
			containerFlag("else the first"),
			&cli.StringFlag{Name: "limit", Value: "1Gi", Category: catInput,
				Usage: "`SIZE` of the files copied at most, e.g. 100Mi or 5G; 0: no limit. A copy that would go over it stops there and fails"},
		),
		Action: func(c *cli.Context) error { return cpAction(c, stderr) },
	}
}

// cpArgs checks `podrun cp`'s arguments: POD:PATH, PATH absolute, then
// HOSTDIR.
func cpArgs(args []string) (pod, p, hostDir string, err error) {
	const usage = "podrun cp POD:PATH HOSTDIR"
	switch {
	case len(args) == 0:
		return "", "", "", errors.New("name what to copy and where: " + usage)
	case len(args) > 2:
		return "", "", "", fmt.Errorf("unexpected arguments %q: %s", strings.Join(args[2:], " "), usage)
	}
	pod, p, ok := strings.Cut(args[0], ":")
	switch {
	case !ok && len(args) == 2 && strings.Contains(args[1], ":"):
		return "", "", "", fmt.Errorf("podrun cp copies out of a container only, POD:PATH first: %s", usage)
	case !ok:
		return "", "", "", fmt.Errorf("%q is not POD:PATH: %s", args[0], usage)
	case pod == "":
		return "", "", "", fmt.Errorf("%q names no pod: %s", args[0], usage)
	case p == "":
		return "", "", "", fmt.Errorf("%q names no PATH: %s", args[0], usage)
	case !path.IsAbs(p):
		return "", "", "", fmt.Errorf("PATH %q must be absolute", p)
	case len(args) == 1 || args[1] == "":
		return "", "", "", errors.New("name the host dir to copy into: " + usage)
	}
	return pod, path.Clean(p), args[1], nil
}

// parseLimit reads a size flag: a quantity of bytes, 0 for no limit.
func parseLimit(flag, v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("invalid %s %q: want a size in bytes, e.g. 1Gi, 500M or 0 for no limit", flag, v)
	}
	return q.Value(), nil
}

func cpAction(c *cli.Context, stderr io.Writer) error {
	pod, p, hostDir, err := cpArgs(c.Args().Slice())
	if err != nil {
		return podrunError(err)
	}
	limit, err := parseLimit("--limit", str(c, "limit"))
	if err != nil {
		return podrunError(err)
	}
	if hostDir, err = filepath.Abs(hostDir); err != nil {
		return podrunError(err)
	}
	quiet := boolean(c, "quiet")
	// remotecommand reports through klog the output it could not copy
	// once the copy stopped (over --limit); the error says why.
	klog.SetLogger(logr.Discard())
	return withRuntimeUntilSignal(c, func(ctx context.Context, rt runner.Runtime) error {
		target, err := findTarget(ctx, rt, runner.FindCopyTarget, pod, str(c, "container"), quiet, stderr)
		if err != nil {
			return err
		}
		d, err := copyFromContainer(ctx, rt, target, p, hostDir, limit)
		if d != nil && !quiet {
			for _, s := range d.Skipped {
				fmt.Fprintf(stderr, "warning: skipped %s\n", s)
			}
		}
		return err
	})
}

// copyFromContainer runs tar in the container (artifacts.TarCommand) and
// extracts its stream into hostDir (artifacts.Untar), at most limit
// bytes. A stream Untar refuses stops the command; tar's own failure (a
// missing path, no tar in the image) is the error, with what tar said.
func copyFromContainer(ctx context.Context, rt runner.Runtime, t runner.ExecTarget, p, hostDir string, limit int64) (*artifacts.Dest, error) {
	cmd, base := artifacts.TarCommand(p)
	d := artifacts.NewDest(hostDir, limit)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	tarErr := &boundedBuffer{max: 4096}
	var code int
	var execErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, execErr = execStream(ctx, rt, t, cmd, nil, pw, tarErr, false, 0)
		pw.Close()
	}()
	untarErr := artifacts.Untar(pr, base, d)
	if untarErr == nil {
		_, untarErr = io.Copy(io.Discard, pr) // tar's padding: let it finish
	} else {
		cancel()
	}
	pr.CloseWithError(errors.New("the copy stopped"))
	<-done
	closeErr := d.Close()
	what := fmt.Sprintf("copying %s of container %s of pod %s", p, t.Container, t.Pod)
	var tarFailed error
	switch {
	case code == 126 || code == 127:
		tarFailed = fmt.Errorf("the container has no tar, which podrun cp runs in it, as kubectl cp does (exit %d: %s)", code, tarErr.text())
	case code != 0:
		tarFailed = fmt.Errorf("tar in the container exited with code %d: %s", code, tarErr.text())
	}
	switch {
	case untarErr != nil && tarFailed != nil:
		// tar's own words say why its stream broke off.
		return d, fmt.Errorf("%s: %w (%v)", what, tarFailed, untarErr)
	case untarErr != nil:
		return d, fmt.Errorf("%s: %w", what, untarErr)
	case tarFailed != nil:
		return d, fmt.Errorf("%s: %w", what, tarFailed)
	case execErr != nil:
		return d, fmt.Errorf("%s: %w", what, execErr)
	case closeErr != nil:
		return d, fmt.Errorf("%s: %w", what, closeErr)
	}
	return d, nil
}

// boundedBuffer keeps the first max bytes written to it (tar's stderr).
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := b.max - len(b.b); n > 0 {
		b.b = append(b.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// text is what was written, on one line.
func (b *boundedBuffer) text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.Join(strings.Fields(strings.TrimSpace(string(b.b))), " ")
	if s == "" {
		return "no message"
	}
	return s
}
