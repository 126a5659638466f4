package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/podref"
	"github.com/podrun/podrun/runner/report/sdnotify"
)

// `podrun run --supervise`: the foreground mode of a node's service
// (docs/bootstrap.md ships the systemd unit). The run keeps its pods as
// the kubelet would, restarts with back-off and probes, with no wait
// condition but their end (runner.WaitSupervise), until:
//   - a signal: the pods are torn down as in any run (SIGTERM is systemd's
//     stop; the unit counts 143 a clean exit);
//   - a kubelet at work on the node (runner.CheckNoKubelet's signs, looked
//     for every kubeletWatchInterval, with --static-pod-names and not
//     --ignore-running-kubelet): the run steps aside, leaves the pods
//     running (runner.Wiring.HandOver) and hands them over as `podrun
//     handover` does (runner.Handover), then exits 0.
// Under systemd (a Type=notify unit: $NOTIFY_SOCKET) it reports READY=1
// once every pod is Ready, and STATUS lines as the pods change
// (runner/report/sdnotify).

// handOverTimeout bounds the hand-over once a kubelet is seen: a kubelet
// that has the manifests adopts or replaces each pod within its first
// syncs; past it the pods stay running, detached, for 'podrun handover'
// or 'podrun down', and the run fails.
const handOverTimeout = 5 * time.Minute

// kubeletWatchInterval is how often a supervised run looks for a kubelet.
const kubeletWatchInterval = 2 * time.Second

// superviseUsage checks that --supervise comes without what it replaces:
// a wait condition, a timeout, leaving the pods running.
func superviseUsage(f runFlagValues, wait runner.WaitMode) (runner.WaitMode, error) {
	switch {
	case wait != runner.WaitAuto:
		return "", errors.New("--supervise waits for no condition but a signal or a kubelet: drop --wait")
	case f.Timeout > 0:
		return "", errors.New("--supervise runs until a signal or a kubelet: drop --timeout")
	case f.Detach:
		return "", errors.New("--supervise keeps the pods in the foreground: drop --detach (or drop --supervise to leave them unsupervised)")
	}
	return runner.WaitSupervise, nil
}

// supervision is a supervised run's notifier and kubelet watch.
type supervision struct {
	notifier *sdnotify.Notifier
	handOver chan struct{}
	once     sync.Once
	stopped  chan struct{}
}

// startSupervision starts what a supervised run needs beside the run: the
// notifier (when systemd gave a socket) and the watch for a kubelet.
// Not supervised (no --supervise): nil, whose methods do nothing.
func startSupervision(ctx context.Context, cfg runConfig, rt runner.Runtime, pods int) (*supervision, error) {
	if !cfg.Supervise {
		return nil, nil
	}
	n, err := sdnotify.New(os.Getenv("NOTIFY_SOCKET"), pods)
	if err != nil {
		return nil, err
	}
	s := &supervision{notifier: n, handOver: make(chan struct{}), stopped: make(chan struct{})}
	if n != nil {
		go func() {
			select {
			case <-ctx.Done(): // a signal: teardown begins
				n.Stopping("stopping the pods")
			case <-s.stopped:
			}
		}()
	}
	if cfg.StaticPodNames && !cfg.StaticPod.IgnoreKubelet {
		go s.watchKubelet(ctx, rt, cfg.StaticPod.KubeletHealthzURL)
	}
	return s, nil
}

// watchKubelet closes handOver once a kubelet is at work on the node.
func (s *supervision) watchKubelet(ctx context.Context, rt runner.Runtime, healthz string) {
	t := time.NewTicker(kubeletWatchInterval)
	defer t.Stop()
	for s.nextTick(ctx, t.C) {
		if runner.CheckNoKubelet(ctx, rt, healthz) != nil {
			if s.notifier != nil {
				s.notifier.Stopping("a kubelet is at work on the node: handing the pods over")
			}
			close(s.handOver)
			return
		}
	}
}

// nextTick waits for tick: false when the run ends first, by a signal
// (ctx) or by stop.
func (s *supervision) nextTick(ctx context.Context, tick <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-s.stopped:
		return false
	case <-tick:
		return true
	}
}

// progress is the run's progress with the notifier's beside it.
func (s *supervision) progress(p runner.Progress) runner.Progress {
	if s == nil || s.notifier == nil {
		return p
	}
	return runner.TeeProgress(p, s.notifier)
}

// wire gives the run the hand-over channel.
func (s *supervision) wire(opts runner.Options) runner.Options {
	if s != nil {
		opts.HandOver = s.handOver
	}
	return opts
}

// handedOver says whether the run stepped aside for a kubelet.
func (s *supervision) handedOver() bool {
	if s == nil {
		return false
	}
	select {
	case <-s.handOver:
		return true
	default:
		return false
	}
}

// stop ends the watch and tells systemd the run is stopping.
func (s *supervision) stop(why string) {
	if s == nil {
		return
	}
	s.once.Do(func() {
		close(s.stopped)
		if s.notifier != nil {
			s.notifier.Stopping(why)
			s.notifier.Close()
		}
	})
}

// handOverPods hands the run's pods to the kubelet (runner.Handover) once
// the run has left them running, and reports each pod's outcome.
func handOverPods(ctx context.Context, cfg runConfig, rt runner.Runtime, res *runner.Result, stderr io.Writer) error {
	var args []string
	for _, p := range res.Pods {
		if p.Reached() {
			args = append(args, string(p.Pod.UID))
		}
	}
	if len(args) == 0 {
		return nil
	}
	progressf := func(format string, a ...any) {
		if !cfg.Quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, handOverTimeout)
	defer cancel()
	results, err := runner.Handover(ctx, rt, runner.HandoverOptions{Args: args, Scope: podref.Scope{Root: cfg.Run.RootDir},
		RootDir: cfg.Run.RootDir, Healthz: cfg.StaticPod.KubeletHealthzURL, Progressf: progressf})
	for _, r := range results {
		progressf("pod/%s: %s", r.Name, r.Outcome)
	}
	return err
}
