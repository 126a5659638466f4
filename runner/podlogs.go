package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

// `podrun logs`: a container's log read from the runtime's log files with
// the one decoder (crilog.go), picked as the kubelet picks it
// (validateContainerLogStatus), followed across restarts.

// nextInstancePoll is how often `podrun logs -f` looks for the instance
// that replaces one that ended, while the container waits to restart.
const nextInstancePoll = 500 * time.Millisecond

// LogsOptions are `podrun logs`' options, as kubectl logs has them.
type LogsOptions struct {
	Container     string // -c: "" for the default
	AllContainers bool
	Follow        bool      // go on with the output as it comes, across restarts
	Previous      bool      // the last terminated instance
	TailLines     int64     // the last lines only; < 0: all
	Since         time.Time // lines from then on; zero: all
	Timestamps    bool      // each line with its RFC3339 time
	Prefix        bool      // each line with [pod/NAME/CONTAINER]

	Stdout, Stderr io.Writer
	// Warn takes kubectl's warnings (a default-container annotation that
	// names no container); nil drops them.
	Warn func(string)
}

// logState is what the kubelet's status says of a container, as far as
// picking its log goes: the current instance (running, terminated, or
// none while it waits) and the last one that terminated.
type logState struct {
	running, terminated *containerStatus
	last                *containerStatus // lastState.terminated
}

// logStateOf derives the container's state from its instances, newest
// first, as podStatusFor does: the newest is the current one, unless it
// exited and will start again (it then waits, and is the last state); the
// last state is otherwise the instance before it, once that exited. With
// supervised false (no podrun looks after the pod: it was detached, or its
// podrun died) nothing starts it again, so an exited newest instance is
// the current, terminated one, as `podrun ps` shows it (listedPod).
func logStateOf(policy v1.RestartPolicy, c PodContainer, instances []*containerStatus, supervised bool) logState {
	var s logState
	if len(instances) == 0 {
		return s
	}
	newest := instances[0]
	switch newest.State {
	case stateRunning:
		s.running = newest
	case stateExited:
		if supervised && restarts(policy, c, newest.ExitCode) {
			s.last = newest
			return s
		}
		s.terminated = newest
	}
	if len(instances) > 1 && instances[1].State == stateExited {
		s.last = instances[1]
	}
	return s
}

// logInstance is the instance whose log `podrun logs` reads, chosen as
// the kubelet's validateContainerLogStatus chooses it, with its messages:
// with previous, the last terminated instance; else a running one, else
// a terminated one, else the last terminated one.
func logInstance(pod string, policy v1.RestartPolicy, c PodContainer, instances []*containerStatus, previous, supervised bool) (*containerStatus, error) {
	s := logStateOf(policy, c, instances, supervised)
	switch {
	case previous:
		if s.last == nil {
			return nil, fmt.Errorf("previous terminated container %q in pod %q not found", c.Name, pod)
		}
		return s.last, nil
	case s.running != nil:
		return s.running, nil
	case s.terminated != nil:
		return s.terminated, nil
	case s.last != nil:
		return s.last, nil
	}
	return nil, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", c.Name, pod)
}

// Logs writes the log of containers of a podrun pod (POD: NAME,
// NAMESPACE/NAME or UID) to opts.Stdout and opts.Stderr, stream for
// stream. Without Follow the containers are read one after the other; an
// error stops at the container it concerns, as kubectl stops. With Follow
// every container is followed at once, each across its restarts: when the
// instance read stops, the one that replaces it is read from its start,
// until the container will not restart (its restart policy, or the pod's
// podrun is gone, or the pod is torn down) or ctx ends.
func Logs(ctx context.Context, rt Runtime, podArg string, opts LogsOptions) error {
	pod, err := findPod(ctx, rt, podArg)
	if err != nil {
		return err
	}
	ctrs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{labelPodUID: pod.UID}})
	if err != nil {
		return err
	}
	sb := pod.Sandboxes[0]
	rec := containersOf(sb, ctrs)
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	chosen, err := logContainers(pod.Name, rec, sb.Annotations[defaultContainerAnnotation], opts.Container, opts.AllContainers, warn)
	if err != nil {
		return err
	}
	if opts.Previous {
		// The last terminated instance has nothing more to follow, as the
		// kubelet's follow of it ends at its end.
		opts.Follow = false
	}
	lo := logOptions{Since: opts.Since, Timestamp: opts.Timestamps, Follow: opts.Follow}
	if opts.TailLines >= 0 {
		lo.TailLines = &opts.TailLines
	}
	// Whole lines, with their prefix, where lines of several containers
	// may meet; the bytes as they come otherwise.
	sink := &logSink{stdout: opts.Stdout, stderr: opts.Stderr}
	lines := opts.Prefix || opts.Follow && len(chosen) > 1
	writers := func(c PodContainer) (stdout, stderr io.Writer, flush func()) {
		if !lines {
			return opts.Stdout, opts.Stderr, func() {}
		}
		prefix := ""
		if opts.Prefix {
			prefix = "[pod/" + pod.Name + "/" + c.Name + "] "
		}
		out := &lineWriter{sink: sink, stream: runtimeapi.Stdout, prefix: prefix}
		errw := &lineWriter{sink: sink, stream: runtimeapi.Stderr, prefix: prefix}
		return out, errw, func() { out.flush(false); errw.flush(false) }
	}

	if !opts.Follow {
		for _, c := range chosen {
			inst, err := pickInstance(ctx, rt, pod, rec.RestartPolicy, c, ctrs, opts.Previous)
			if err != nil {
				return err
			}
			out, errw, flush := writers(c)
			err = readLog(ctx, inst.LogPath, "", &lo, nil, out, errw)
			flush()
			if err != nil {
				return fmt.Errorf("reading the log of container %s: %w", c.Name, err)
			}
		}
		return nil
	}

	// Pick every instance first, so that a container without logs stops
	// the command before anything is followed.
	insts := make([]*containerStatus, len(chosen))
	for i, c := range chosen {
		if insts[i], err = pickInstance(ctx, rt, pod, rec.RestartPolicy, c, ctrs, false); err != nil {
			return err
		}
	}
	errs := make([]error, len(chosen))
	var wg sync.WaitGroup
	for i, c := range chosen {
		wg.Go(func() {
			out, errw, flush := writers(c)
			defer flush()
			f := follower{rt: rt, pod: pod, policy: rec.RestartPolicy, c: c, opts: lo}
			errs[i] = f.follow(ctx, insts[i], out, errw)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// pickInstance reads the statuses of a container's instances (from the
// pod's containers ctrs) and picks the one to read (logInstance).
func pickInstance(ctx context.Context, rt Runtime, pod *foundPod, policy v1.RestartPolicy, c PodContainer, ctrs []*runtimeapi.Container, previous bool) (*containerStatus, error) {
	insts, err := instancesOf(ctx, rt, ctrs, c.Name, 2, "") // what logInstance looks at
	if err != nil {
		return nil, err
	}
	return logInstance(pod.Name, policy, c, insts, previous, supervised(pod.Sandboxes))
}

// instancesOf is the status of the newest instances of the named
// container among ctrs, newest first: the newest max of them, or with
// until set, all down to the instance of that ID. The others are not
// asked about: a container that crash-loops for hours has hundreds. An
// instance removed meanwhile is left out.
func instancesOf(ctx context.Context, rt Runtime, ctrs []*runtimeapi.Container, name string, max int, until string) ([]*containerStatus, error) {
	var mine []*runtimeapi.Container
	for _, c := range ctrs {
		if restoreContainer(c).Name == name {
			mine = append(mine, c)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool {
		a, b := mine[i].GetMetadata().GetAttempt(), mine[j].GetMetadata().GetAttempt()
		if a != b {
			return a > b
		}
		return mine[i].CreatedAt > mine[j].CreatedAt
	})
	st := &runtimeStatus{}
	for i, c := range mine {
		if until == "" && i == max {
			break
		}
		s, err := rt.ContainerStatus(ctx, c.Id)
		if cri.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st.Containers = append(st.Containers, fromCRIStatus(s))
		if c.Id == until {
			break
		}
	}
	st.sortNewestFirst()
	return st.Containers, nil
}

// follower follows one container of a pod across its restarts.
type follower struct {
	rt     Runtime
	pod    *foundPod
	policy v1.RestartPolicy
	c      PodContainer
	opts   logOptions
}

// follow reads inst's log while it runs, then the log of each instance
// that replaces it, from its start.
func (f *follower) follow(ctx context.Context, inst *containerStatus, stdout, stderr io.Writer) error {
	opts := f.opts
	for inst != nil {
		err := readLog(ctx, inst.LogPath, inst.ID, &opts, f.running, stdout, stderr)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("reading the log of container %s: %w", f.c.Name, err)
		}
		opts.TailLines = nil // the next instances from their start
		if inst, err = f.next(ctx, inst); err != nil {
			return err
		}
	}
	return nil
}

// running is ReadLogs' question, whether the container still runs, put
// to the runtime. A container gone (the pod torn down) has stopped; one
// the runtime cannot tell of while it restarts still runs, as ReadLogs
// takes it.
func (f *follower) running(ctx context.Context, id string) (bool, error) {
	st, err := f.rt.ContainerStatus(ctx, id)
	switch {
	case cri.IsNotFound(err):
		return false, nil
	case status.Code(err) == codes.Unavailable:
		return true, nil
	case err != nil:
		return false, err
	}
	return st.State == runtimeapi.ContainerState_CONTAINER_RUNNING, nil
}

// next waits for the instance that replaces cur, once it has started, and
// returns it; nil when there will be none: the container does not restart
// after how cur ended, the pod's podrun is gone (nobody restarts it), or
// the pod is gone.
func (f *follower) next(ctx context.Context, cur *containerStatus) (*containerStatus, error) {
	t := time.NewTicker(nextInstancePoll)
	defer t.Stop()
	for {
		ctrs, err := f.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{
			LabelSelector: map[string]string{labelPodUID: f.pod.UID, labelContainerName: f.c.Name}})
		if err != nil {
			return nil, err
		}
		insts, err := instancesOf(ctx, f.rt, ctrs, f.c.Name, 0, cur.ID)
		if err != nil {
			return nil, err
		}
		if n := newerStarted(insts, cur); n != nil {
			return n, nil
		}
		ended := cur
		for _, in := range insts {
			if in.ID == cur.ID {
				ended = in // with its exit code
			}
		}
		if ended.State == stateExited && !restarts(f.policy, f.c, ended.ExitCode) {
			return nil, nil
		}
		alive, err := f.podAlive(ctx)
		if err != nil || !alive {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// newerStarted is the oldest instance newer than cur that has started
// (its log file exists from then on), or nil.
func newerStarted(insts []*containerStatus, cur *containerStatus) *containerStatus {
	for i := len(insts) - 1; i >= 0; i-- {
		in := insts[i]
		newer := in.RestartCount > cur.RestartCount || in.RestartCount == cur.RestartCount && in.CreatedAt.After(cur.CreatedAt)
		if in.ID != cur.ID && newer && (in.State == stateRunning || in.State == stateExited) {
			return in
		}
	}
	return nil
}

// podAlive reports whether the pod can still restart a container: its
// newest sandbox is ready and the podrun that runs it is alive.
func (f *follower) podAlive(ctx context.Context) (bool, error) {
	sbs, err := f.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{labelPodUID: f.pod.UID}})
	if err != nil {
		return false, err
	}
	return supervised(sbs), nil
}

// supervised says whether a podrun looks after the pod of sandboxes sbs
// (restarting its containers): its newest sandbox is ready and the podrun
// that made it still runs. sbs is sorted in place.
func supervised(sbs []*runtimeapi.PodSandbox) bool {
	if len(sbs) == 0 {
		return false
	}
	sortSandboxesNewestFirst(sbs)
	sb := sbs[0]
	return sb.State == runtimeapi.PodSandboxState_SANDBOX_READY && ownerFromLabels(sb.Labels).Alive()
}

// sortSandboxesNewestFirst orders sandboxes by attempt, then creation,
// newest first.
func sortSandboxesNewestFirst(sbs []*runtimeapi.PodSandbox) {
	sort.SliceStable(sbs, func(i, j int) bool {
		a, b := sbs[i].GetMetadata().GetAttempt(), sbs[j].GetMetadata().GetAttempt()
		if a != b {
			return a > b
		}
		return sbs[i].CreatedAt > sbs[j].CreatedAt
	})
}
