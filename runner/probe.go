package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/podrun/podrun/podresources"
)

// kubeVersion is the Kubernetes version podrun's probes and hooks name in
// their User-Agent (kube-probe/<major>.<minor>, kube-lifecycle/...), as a
// kubelet of that version does.
const kubeVersion = "1.34"

// userAgent is the kubelet's User-Agent for purpose "probe" or "lifecycle".
func userAgent(purpose string) string { return "kube-" + purpose + "/" + kubeVersion }

// probeKind is one of the three probes of a container.
type probeKind int

const (
	probeLiveness probeKind = iota
	probeReadiness
	probeStartup
)

// String is the kubelet's probeType name, used in its events.
func (k probeKind) String() string {
	return [...]string{"Liveness", "Readiness", "Startup"}[k]
}

// initialResult is the result a worker publishes for a new container
// instance before it has probed it (pkg/kubelet/prober/worker.go newWorker).
func (k probeKind) initialResult() probeResult {
	switch k {
	case probeReadiness:
		return probeFailure
	case probeLiveness:
		return probeSuccess
	}
	return probeUnknown
}

func (k probeKind) spec(c *v1.Container) *v1.Probe {
	return [...]*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}[k]
}

func (r probeResults) of(k probeKind) map[string]probeResult {
	return [...]map[string]probeResult{r.Liveness, r.Readiness, r.Startup}[k]
}

// probeTarget is what a worker sees of the newest instance of its container.
type probeTarget struct {
	ID        string
	Running   bool
	Exited    bool
	StartedAt time.Time
	// Started: running, and the startup probe succeeded or there is none.
	Started bool
}

// probeWorker is the kubelet's prober worker (pkg/kubelet/prober/worker.go)
// for one probe of one container, across its instances, without effects:
// tick decides whether to probe now and record takes the probe's result.
// Both publish into the results map of the worker's kind, by container ID.
type probeWorker struct {
	kind probeKind
	spec *v1.Probe
	// restarts: a terminated instance is followed by another (pod
	// restartPolicy not Never, or a sidecar), so the worker goes on.
	restarts bool

	containerID string
	onHold      bool // after a published liveness/startup Failure, until a new instance
	lastResult  probeResult
	resultRun   int
}

func newProbeWorker(kind probeKind, spec *v1.Probe, restarts bool) *probeWorker {
	return &probeWorker{kind: kind, spec: spec, restarts: restarts, lastResult: probeUnknown}
}

// set publishes r for id and reports whether the published value changed.
func set(results map[string]probeResult, id string, r probeResult) bool {
	old, ok := results[id]
	results[id] = r
	return !ok || old != r
}

// tick is the first half of doProbe: given the newest instance of the
// container (ok false: none yet), it updates what is published and says
// whether to run the probe now, and whether the worker should stop.
func (w *probeWorker) tick(results map[string]probeResult, t probeTarget, ok bool, now time.Time) (probe, stop, changed bool) {
	if !ok || t.ID == "" {
		return false, false, false
	}
	if w.containerID != t.ID {
		if w.containerID != "" {
			delete(results, w.containerID)
		}
		w.containerID = t.ID
		changed = set(results, t.ID, w.kind.initialResult())
		// A new instance: resume probing.
		w.onHold = false
	}
	if w.onHold {
		return false, false, changed
	}
	if !t.Running {
		changed = set(results, t.ID, probeFailure) || changed
		// Stop when no further instance will come.
		return false, t.Exited && !w.restarts, changed
	}
	// No probing during initialDelaySeconds, counted in whole seconds from
	// the instance's start.
	if int32(now.Sub(t.StartedAt)/time.Second) < w.spec.InitialDelaySeconds {
		return false, false, changed
	}
	if t.Started {
		// The startup probe is done once the container has started.
		if w.kind == probeStartup {
			return false, false, changed
		}
	} else if w.kind != probeStartup {
		// Liveness and readiness wait for the startup probe.
		return false, false, changed
	}
	return true, false, changed
}

// record is the second half of doProbe: it counts the probe's result and
// publishes it once it has come successThreshold (failureThreshold) times
// in a row. It reports whether the published value changed.
func (w *probeWorker) record(results map[string]probeResult, r probeResult) bool {
	if w.lastResult == r {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = r, 1
	}
	if r == probeFailure && w.resultRun < int(w.spec.FailureThreshold) ||
		r == probeSuccess && w.resultRun < int(w.spec.SuccessThreshold) {
		return false
	}
	changed := set(results, w.containerID, r)
	if r == probeFailure && (w.kind == probeLiveness || w.kind == probeStartup) {
		// The container will be killed and restarted: probe no more until
		// the new instance appears.
		w.onHold = true
		w.resultRun = 0
	}
	return changed
}

// probeOutcome is one run of a probe (pkg/probe Result).
type probeOutcome int

const (
	probeRunSuccess probeOutcome = iota
	probeRunWarning
	probeRunFailure
	probeRunUnknown
)

// maxProbeRetries is the kubelet's: a probe that errors (not one that
// fails) is tried this many times.
const maxProbeRetries = 3

// maxProbeOutput is how much of an exec probe's output or an HTTP probe's
// body is read (10 KiB, pkg/probe/exec and pkg/probe/http).
const maxProbeOutput = 10 << 10

// podProber runs the probe workers of one pod and holds their published
// results. The sync loop hands it each observed status (observe), reads the
// results (snapshot) and is woken on wake when a published result changes.
type podProber struct {
	p    *podRun
	now  func() time.Time
	wake chan struct{}

	mu       sync.Mutex
	status   *podStatus
	podIP    string
	results  probeResults
	triggers map[string]chan struct{} // readiness workers' manual trigger, by container name

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPodProber(p *podRun) *podProber {
	return &podProber{
		p: p, now: p.r.now, wake: make(chan struct{}, 1),
		status: &podStatus{},
		results: probeResults{
			Liveness:  map[string]probeResult{},
			Readiness: map[string]probeResult{},
			Startup:   map[string]probeResult{},
		},
		triggers: map[string]chan struct{}{},
	}
}

// start starts a worker for every probe of the pod's regular containers
// and sidecars (regular init containers are not probed).
func (pr *podProber) start(ctx context.Context) {
	ctx, pr.cancel = context.WithCancel(ctx)
	pod := pr.p.pod
	spawn := func(c *v1.Container, restarts bool) {
		for _, k := range []probeKind{probeStartup, probeReadiness, probeLiveness} {
			spec := k.spec(c)
			if spec == nil {
				continue
			}
			w := newProbeWorker(k, spec, restarts)
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
			spawn(c, true)
		}
	}
	for i := range pod.Spec.Containers {
		spawn(&pod.Spec.Containers[i], pod.Spec.RestartPolicy != v1.RestartPolicyNever)
	}
}

// stop stops every worker and waits for them.
func (pr *podProber) stop() {
	if pr.cancel != nil {
		pr.cancel()
	}
	pr.wg.Wait()
}

// observe hands the workers the pod's newest status. Like the kubelet's
// UpdatePodStatus, it triggers the readiness probe of a running container
// that is not ready yet at once, instead of at its next period.
func (pr *podProber) observe(st *podStatus, podIP string) {
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
	t := probeTarget{ID: cs.ID, Running: cs.State == stateRunning, Exited: cs.State == stateExited, StartedAt: cs.StartedAt}
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
		res, out, err = runProbe(ctx, pr.p.r.rt, spec, c, id, podIP)
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	switch {
	case err != nil:
		pr.p.event("Unhealthy", "%s probe errored and resulted in unknown state: %v", kind, err)
		return probeFailure, err
	case res == probeRunWarning:
		pr.p.event("ProbeWarning", "%s probe warning: %s", kind, out)
		return probeSuccess, nil
	case res != probeRunSuccess:
		pr.p.event("Unhealthy", "%s probe failed: %s", kind, out)
		return probeFailure, nil
	}
	return probeSuccess, nil
}

// execer is the CRI call exec probes and hooks use.
type execer interface {
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
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

// probeDialer is the kubelet's ProbeDialer: SO_LINGER 1 s, so that
// frequent probes do not pile up sockets in TIME-WAIT.
func probeDialer() *net.Dialer {
	return &net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
		})
	}}
}

// resolvePort is probe.ResolveContainerPort: a number, or the name of a
// container port (or a number written as a string).
func resolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	port := -1
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		found := false
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port, found = int(cp.ContainerPort), true
				break
			}
		}
		if !found {
			n, err := strconv.Atoi(p.StrVal)
			if err != nil {
				return -1, fmt.Errorf("port %s not found", p.StrVal)
			}
			port = n
		}
	}
	if port > 0 && port < 65536 {
		return port, nil
	}
	return port, fmt.Errorf("invalid port number: %v", port)
}

// newHTTPGetRequest is NewRequestForHTTPGetAction (pkg/probe/http/request.go):
// scheme lowercased (default http), host defaulting to the pod IP, the
// port resolved, the headers as given, User-Agent kube-<purpose>/<version>
// and Accept */* unless given (an empty Accept removes it), Host → req.Host.
func newHTTPGetRequest(ctx context.Context, g *v1.HTTPGetAction, c *v1.Container, podIP, purpose string) (*http.Request, error) {
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := g.Host
	if host == "" {
		host = podIP
	}
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(g.Path)
	if err != nil {
		u = &url.URL{Path: g.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, h := range g.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", userAgent(purpose))
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// redirectChecker follows redirects to the same host name, at most 10;
// one to another host is not followed (the 3xx is the response).
func redirectChecker(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// httpTransport is the probes' and hooks' transport: no TLS verification,
// no keep-alives, no proxy, no compression.
func httpTransport() *http.Transport {
	return &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives:   true,
		Proxy:               nil,
		DisableCompression:  true,
		DialContext:         probeDialer().DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
	}
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
