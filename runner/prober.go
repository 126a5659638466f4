package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// maxProbeRetries is the kubelet's: a probe that errors (not one that
// fails) is tried this many times.
const maxProbeRetries = 3

// podProber runs the probe workers of one pod and holds their published
// results. The sync loop hands it each observed status (observe), reads the
// results (snapshot) and is woken on wake when a published result changes.
type podProber struct {
	pod   *v1.Pod
	exec  execer           // exec probes: CRI ExecSync
	event eventFunc        // the pod's progress lines (Unhealthy, ProbeWarning)
	now   func() time.Time // the clock: initialDelaySeconds
	wake  chan struct{}

	mu       sync.Mutex
	status   *runtimeStatus
	podIP    string
	results  probeResults
	triggers map[string]chan struct{} // readiness workers' manual trigger, by container name
	workers  []containerWorker        // every worker, in start order (lastLook)

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPodProber(pod *v1.Pod, exec execer, event eventFunc, now func() time.Time) *podProber {
	return &podProber{
		pod: pod, exec: exec, event: event, now: now, wake: make(chan struct{}, 1),
		status: &runtimeStatus{},
		results: probeResults{
			Liveness:  map[string]probeResult{},
			Readiness: map[string]probeResult{},
			Startup:   map[string]probeResult{},
		},
		triggers: map[string]chan struct{}{},
	}
}

// containerWorker is a worker with the container it probes.
type containerWorker struct {
	c *v1.Container
	w *probeWorker
}

// start starts a worker for every probe of the pod's regular containers
// and sidecars (regular init containers are not probed).
func (pr *podProber) start(ctx context.Context) {
	ctx, pr.cancel = context.WithCancel(ctx)
	pod := pr.pod
	spawn := func(c *v1.Container) {
		restarts := func(exitCode int32) bool { return containerRestarts(c, pod.Spec.RestartPolicy, exitCode) }
		for _, k := range []probeKind{probeStartup, probeReadiness, probeLiveness} {
			spec := k.spec(c)
			if spec == nil {
				continue
			}
			w := newProbeWorker(k, spec, restarts)
			pr.workers = append(pr.workers, containerWorker{c, w})
			var trigger chan struct{}
			if k == probeReadiness {
				trigger = make(chan struct{}, 1)
				pr.triggers[c.Name] = trigger
			}
			pr.wg.Add(1)
			go func() {
				defer pr.wg.Done()
				pr.runWorker(ctx, c, w, trigger)
			}()
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; podresources.IsSidecar(c) {
			spawn(c)
		}
	}
	for i := range pod.Spec.Containers {
		spawn(&pod.Spec.Containers[i])
	}
}

// stop stops every worker and waits for them.
func (pr *podProber) stop() {
	if pr.cancel != nil {
		pr.cancel()
	}
	pr.wg.Wait()
}

// lastLook runs, once and at once, every startup and readiness probe
// that the pod's running containers have not passed yet (past their
// initial delay), startup probes first: a container whose startup probe
// passes now is probed for readiness too. It is the last thing a run does
// before it hands the pod over to a kubelet (runPod): the kubelet probes
// the pod it takes at once (its workers' first probes come within a
// period of its start, the containers' initial delays long past), so what
// podrun leaves recorded is what a probe says at the hand-over, not a
// result still pending its next period (a container restarted a few
// seconds before: etcd's startup probe runs every 10 s). A result counts
// as a worker's would (thresholds, events). Call it once the workers have
// stopped (stop), with the pod's newest status.
func (pr *podProber) lastLook(ctx context.Context, st *runtimeStatus, podIP string) {
	pr.mu.Lock()
	pr.status, pr.podIP = st, podIP
	pr.mu.Unlock()
	for _, kind := range []probeKind{probeStartup, probeReadiness} {
		for _, cw := range pr.workers {
			if cw.w.kind != kind {
				continue
			}
			pr.mu.Lock()
			t, ok := pr.target(cw.c)
			results := pr.results.of(kind)
			probe, _, _ := cw.w.tick(results, t, ok, pr.now())
			pending := results[t.ID] != probeSuccess
			pr.mu.Unlock()
			if !probe || !pending {
				continue
			}
			r, err := pr.probe(ctx, kind, cw.w.spec, cw.c, t.ID, podIP)
			if err != nil {
				continue // no answer: the result stays as it was
			}
			pr.mu.Lock()
			cw.w.record(results, r)
			pr.mu.Unlock()
		}
	}
}

// observe hands the workers the pod's newest status. Like the kubelet's
// UpdatePodStatus, it triggers the readiness probe of a running container
// that is not ready yet at once, instead of at its next period.
func (pr *podProber) observe(st *runtimeStatus, podIP string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.status, pr.podIP = st, podIP
	for name, trig := range pr.triggers {
		cs := st.latest(name)
		if cs == nil || cs.State != stateRunning || pr.results.Readiness[cs.ID] == probeSuccess {
			continue
		}
		select {
		case trig <- struct{}{}:
		default:
		}
	}
}

// snapshot copies the published results.
func (pr *podProber) snapshot() probeResults {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	cp := func(m map[string]probeResult) map[string]probeResult {
		out := make(map[string]probeResult, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return probeResults{Liveness: cp(pr.results.Liveness), Readiness: cp(pr.results.Readiness), Startup: cp(pr.results.Startup)}
}

func (pr *podProber) notify() {
	select {
	case pr.wake <- struct{}{}:
	default:
	}
}

// target is what a worker of c sees; pr.mu must be held.
func (pr *podProber) target(c *v1.Container) (probeTarget, bool) {
	cs := pr.status.latest(c.Name)
	if cs == nil {
		return probeTarget{}, false
	}
	t := probeTarget{ID: cs.ID, Running: cs.State == stateRunning, Exited: cs.State == stateExited, ExitCode: cs.ExitCode, StartedAt: cs.StartedAt}
	t.Started = t.Running && (c.StartupProbe == nil || pr.results.Startup[cs.ID] == probeSuccess)
	return t, true
}

// runWorker probes at once, then every periodSeconds (or when triggered),
// until ctx ends or the worker stops.
func (pr *podProber) runWorker(ctx context.Context, c *v1.Container, w *probeWorker, trigger <-chan struct{}) {
	period := time.Duration(max(w.spec.PeriodSeconds, 1)) * time.Second
	t := time.NewTicker(period)
	defer t.Stop()
	for pr.doProbe(ctx, c, w) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-trigger:
		}
	}
}

func (pr *podProber) doProbe(ctx context.Context, c *v1.Container, w *probeWorker) bool {
	pr.mu.Lock()
	t, ok := pr.target(c)
	results := pr.results.of(w.kind)
	probe, stop, changed := w.tick(results, t, ok, pr.now())
	podIP := pr.podIP
	pr.mu.Unlock()
	if changed {
		pr.notify()
	}
	if stop {
		return false
	}
	if !probe {
		return true
	}
	r, err := pr.probe(ctx, w.kind, w.spec, c, t.ID, podIP)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		return true // a probe that errored is thrown away
	}
	pr.mu.Lock()
	changed = w.record(results, r)
	pr.mu.Unlock()
	if changed {
		pr.notify()
	}
	return true
}

// probe runs a probe with the kubelet's retries and events
// (pkg/kubelet/prober/prober.go probe): Warning counts as Success (event
// ProbeWarning), anything but Success or Warning as Failure (event
// Unhealthy). An error means the result is to be thrown away.
func (pr *podProber) probe(ctx context.Context, kind probeKind, spec *v1.Probe, c *v1.Container, id, podIP string) (probeResult, error) {
	var (
		res probeOutcome
		out string
		err error
	)
	for range maxProbeRetries {
		res, out, err = runProbe(ctx, pr.exec, spec, c, id, podIP)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		// The run stopped probing (it detached, ended or was interrupted)
		// while this probe was under way: the probe was cut short by
		// podrun, not answered by the container, so there is no result and
		// no Unhealthy event (a kubelet's worker lets its last probe finish).
		return probeUnknown, ctx.Err()
	}
	switch {
	case err != nil:
		pr.event("Unhealthy", "%s probe errored and resulted in unknown state: %v", kind, err)
		return probeFailure, err
	case res == probeRunWarning:
		pr.event("ProbeWarning", "%s probe warning: %s", kind, out)
		return probeSuccess, nil
	case res != probeRunSuccess:
		pr.event("Unhealthy", "%s probe failed: %s", kind, out)
		return probeFailure, nil
	}
	return probeSuccess, nil
}

// runProbe runs one probe once, from the host (exec: in the container, as
// the user's command), with timeoutSeconds.
func runProbe(ctx context.Context, rt execer, spec *v1.Probe, c *v1.Container, id, podIP string) (probeOutcome, string, error) {
	timeout := time.Duration(max(spec.TimeoutSeconds, 1)) * time.Second
	switch {
	case spec.Exec != nil:
		return execProbe(ctx, rt, id, expandOnlyStatic(spec.Exec.Command, c.Env), timeout)
	case spec.HTTPGet != nil:
		req, err := newHTTPGetRequest(ctx, spec.HTTPGet, c, podIP, "probe")
		if err != nil {
			return probeRunUnknown, "", err
		}
		return httpProbe(req, timeout)
	case spec.TCPSocket != nil:
		port, err := resolvePort(spec.TCPSocket.Port, c)
		if err != nil {
			return probeRunUnknown, "", err
		}
		host := spec.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		return tcpProbe(ctx, net.JoinHostPort(host, strconv.Itoa(port)), timeout)
	case spec.GRPC != nil:
		service := ""
		if spec.GRPC.Service != nil {
			service = *spec.GRPC.Service
		}
		return grpcProbe(ctx, podIP, service, int(spec.GRPC.Port), timeout)
	}
	return probeRunUnknown, "", errors.New("missing probe handler")
}

// expandOnlyStatic is ExpandContainerCommandOnlyStatic: $(VAR) in an exec
// probe's command is expanded only with the container's env values as
// written (valueFrom entries count as empty).
func expandOnlyStatic(cmd []string, env []v1.EnvVar) []string {
	vals := map[string]string{}
	for _, e := range env {
		vals[e.Name] = e.Value
	}
	return expandAll(cmd, vals)
}

// execProbe runs cmd through CRI ExecSync: exit 0 is Success, another exit
// Failure, a timeout Failure with "command ... timed out"
// (pkg/probe/exec/exec.go, with ExecProbeTimeout).
func execProbe(ctx context.Context, rt execer, id string, cmd []string, timeout time.Duration) (probeOutcome, string, error) {
	stdout, stderr, code, err := rt.ExecSync(ctx, id, cmd, timeout)
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			return probeRunFailure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " ")), nil
		}
		return probeRunUnknown, "", err
	}
	out := append(stdout, stderr...)
	if len(out) > maxProbeOutput {
		out = out[:maxProbeOutput]
	}
	if code != 0 {
		return probeRunFailure, string(out), nil
	}
	return probeRunSuccess, string(out), nil
}

// httpProbe is DoHTTPProbe (pkg/probe/http/http.go): 200–399 is Success,
// a 3xx that was not followed Warning, anything else Failure; transport
// errors are Failures.
func httpProbe(req *http.Request, timeout time.Duration) (probeOutcome, string, error) {
	tr := httpTransport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: redirectChecker}
	res, err := client.Do(req)
	if err != nil {
		return probeRunFailure, err.Error(), nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxProbeOutput))
	if err != nil {
		return probeRunFailure, "", err
	}
	if res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusBadRequest {
		if res.StatusCode >= http.StatusMultipleChoices {
			return probeRunWarning, fmt.Sprintf("Probe terminated redirects, Response body: %v", string(b)), nil
		}
		return probeRunSuccess, string(b), nil
	}
	return probeRunFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
}

// tcpProbe is DoTCPProbe: a connection that opens is Success.
func tcpProbe(ctx context.Context, addr string, timeout time.Duration) (probeOutcome, string, error) {
	d := probeDialer()
	d.Timeout = timeout
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return probeRunFailure, err.Error(), nil
	}
	_ = conn.Close()
	return probeRunSuccess, "", nil
}

// grpcProbe calls grpc.health.v1.Health/Check with service on host:port
// (pkg/probe/grpc/grpc.go): SERVING is Success, anything else Failure.
func grpcProbe(ctx context.Context, host, service string, port int, timeout time.Duration) (probeOutcome, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithUserAgent(userAgent("probe")),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return probeDialer().DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		return probeRunFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return probeRunFailure, fmt.Sprintf("this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message()), nil
			case codes.DeadlineExceeded:
				return probeRunFailure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout), nil
			}
		}
		return probeRunFailure, fmt.Sprintf("error: health rpc probe failed: %+v", err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return probeRunFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return probeRunSuccess, "service healthy", nil
}
