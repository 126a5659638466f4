package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// step is one tick of a worker in the table: the container as seen, the
// seconds since it started, and what the probe would return if run.
type step struct {
	t       probeTarget
	absent  bool
	at      time.Duration // since pt0
	result  probeResult   // the probe's result when it runs
	probe   bool          // want: the probe runs
	stop    bool          // want: the worker stops
	publish probeResult   // want: the published result for t.ID afterwards (0: Unknown)
	none    bool          // want: nothing published for t.ID
}

var pt0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func probing(id string, started bool) probeTarget {
	return probeTarget{ID: id, Running: true, StartedAt: pt0, Started: started}
}

func TestProbeWorker(t *testing.T) {
	base := v1.Probe{PeriodSeconds: 1, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	tests := []struct {
		name       string
		kind       probeKind
		mutate     func(*v1.Probe)
		restarts   bool
		restartsOn func(exitCode int32) bool // instead of restarts
		steps      []step
	}{
		{name: "no container yet: nothing is published and nothing probed", kind: probeReadiness,
			steps: []step{{absent: true, none: true}}},
		{name: "readiness starts at Failure and turns Success after one success", kind: probeReadiness,
			steps: []step{{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess}}},
		{name: "liveness starts at Success and fails only after failureThreshold failures", kind: probeLiveness,
			steps: []step{
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeFailure},
			}},
		{name: "a success in between resets the failure count", kind: probeLiveness,
			steps: []step{
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeSuccess},
			}},
		{name: "readiness needs successThreshold successes in a row", kind: probeReadiness,
			mutate: func(p *v1.Probe) { p.SuccessThreshold = 2 },
			steps: []step{
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeFailure},
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
			}},
		{name: "startup starts at Unknown", kind: probeStartup,
			steps: []step{{t: probing("a", false), result: probeFailure, probe: true, publish: probeUnknown}}},
		{name: "initialDelaySeconds counts whole seconds from the start", kind: probeReadiness,
			mutate: func(p *v1.Probe) { p.InitialDelaySeconds = 2 },
			steps: []step{
				{t: probing("a", true), at: 1999 * time.Millisecond, result: probeSuccess, probe: false, publish: probeFailure},
				{t: probing("a", true), at: 2 * time.Second, result: probeSuccess, probe: true, publish: probeSuccess},
			}},
		{name: "liveness and readiness wait until the container has started", kind: probeLiveness,
			steps: []step{
				{t: probing("a", false), result: probeFailure, probe: false, publish: probeSuccess},
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
			}},
		{name: "the startup probe stops once the container has started", kind: probeStartup,
			steps: []step{
				{t: probing("a", false), result: probeSuccess, probe: true, publish: probeSuccess},
				{t: probing("a", true), result: probeFailure, probe: false, publish: probeSuccess},
			}},
		{name: "after a published liveness failure the worker holds until a new container", kind: probeLiveness,
			mutate: func(p *v1.Probe) { p.FailureThreshold = 1 },
			steps: []step{
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeFailure},
				{t: probing("a", true), result: probeSuccess, probe: false, publish: probeFailure},
				{t: probing("b", true), result: probeSuccess, probe: true, publish: probeSuccess},
			}},
		{name: "a startup failure holds too", kind: probeStartup,
			mutate: func(p *v1.Probe) { p.FailureThreshold = 1 },
			steps: []step{
				{t: probing("a", false), result: probeFailure, probe: true, publish: probeFailure},
				{t: probing("a", false), result: probeSuccess, probe: false, publish: probeFailure},
			}},
		{name: "readiness failures do not hold", kind: probeReadiness,
			mutate: func(p *v1.Probe) { p.FailureThreshold = 1 },
			steps: []step{
				{t: probing("a", true), result: probeFailure, probe: true, publish: probeFailure},
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
			}},
		{name: "a container that is not running is a failure", kind: probeLiveness, restarts: true,
			steps: []step{
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
				{t: probeTarget{ID: "a", Exited: true}, probe: false, publish: probeFailure},
			}},
		{name: "the worker stops when an exited container will not restart", kind: probeReadiness, restarts: false,
			steps: []step{{t: probeTarget{ID: "a", Exited: true}, probe: false, stop: true, publish: probeFailure}}},
		{name: "the worker goes on after an exit code its container restarts on", kind: probeReadiness,
			restartsOn: func(code int32) bool { return code == 42 },
			steps:      []step{{t: probeTarget{ID: "a", Exited: true, ExitCode: 42}, probe: false, stop: false, publish: probeFailure}}},
		{name: "the worker stops after an exit code its container does not restart on", kind: probeReadiness,
			restartsOn: func(code int32) bool { return code == 42 },
			steps:      []step{{t: probeTarget{ID: "a", Exited: true, ExitCode: 1}, probe: false, stop: true, publish: probeFailure}}},
		{name: "a new instance starts from the initial result", kind: probeReadiness, restarts: true,
			steps: []step{
				{t: probing("a", true), result: probeSuccess, probe: true, publish: probeSuccess},
				{t: probing("b", true), at: 0, result: probeFailure, probe: true, publish: probeFailure},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := base
			if tt.mutate != nil {
				tt.mutate(&spec)
			}
			restarts := func(int32) bool { return tt.restarts }
			if tt.restartsOn != nil {
				restarts = tt.restartsOn
			}
			w := newProbeWorker(tt.kind, &spec, restarts)
			results := map[string]probeResult{}
			for i, s := range tt.steps {
				probe, stop, _ := w.tick(results, s.t, !s.absent, pt0.Add(s.at))
				if probe != s.probe || stop != s.stop {
					t.Fatalf("step %d: tick = probe %v stop %v, want %v %v", i, probe, stop, s.probe, s.stop)
				}
				if probe {
					w.record(results, s.result)
				}
				got, ok := results[s.t.ID]
				if s.none {
					if ok {
						t.Fatalf("step %d: published %v, want nothing", i, got)
					}
					continue
				}
				if !ok || got != s.publish {
					t.Fatalf("step %d: published %v (%v), want %v", i, got, ok, s.publish)
				}
			}
		})
	}
}

func splitAddr(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func TestHTTPProbe(t *testing.T) {
	var gotUA, gotAccept, gotHost, gotX string
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		gotUA, gotAccept, gotHost, gotX = r.UserAgent(), r.Header.Get("Accept"), r.Host, r.Header.Get("X-Custom")
		w.Write([]byte(strings.Repeat("x", 20<<10)))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost.invalid/ok", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host, port := splitAddr(t, srv.Listener.Addr().String())
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}

	for _, tt := range []struct {
		name    string
		path    string
		port    intstr.IntOrString
		headers []v1.HTTPHeader
		want    probeOutcome
		out     string
	}{
		{name: "200 is success, to the pod IP, through a named port", path: "/ok", port: intstr.FromString("web"), want: probeRunSuccess},
		{name: "503 is failure", path: "/fail", port: intstr.FromInt32(int32(port)), want: probeRunFailure, out: "HTTP probe failed with statuscode: 503"},
		{name: "a redirect to the same host is followed", path: "/here", port: intstr.FromInt32(int32(port)), want: probeRunSuccess},
		{name: "a redirect to another host is a warning", path: "/away", port: intstr.FromInt32(int32(port)), want: probeRunWarning, out: "Probe terminated redirects"},
		{name: "more than 10 redirects fail", path: "/loop", port: intstr.FromInt32(int32(port)), want: probeRunFailure, out: "stopped after 10 redirects"},
		{name: "headers, Host and User-Agent as given", path: "/ok", port: intstr.FromInt32(int32(port)),
			headers: []v1.HTTPHeader{{Name: "x-custom", Value: "1"}, {Name: "Host", Value: "example.test"}, {Name: "User-Agent", Value: "mine"}}, want: probeRunSuccess},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gotUA, gotAccept, gotHost, gotX = "", "", "", ""
			spec := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: tt.path, Port: tt.port, HTTPHeaders: tt.headers}}}
			res, out, err := runProbe(context.Background(), nil, spec, c, "id", host)
			if err != nil || res != tt.want || !strings.Contains(out, tt.out) {
				t.Fatalf("got %v %q %v, want %v containing %q", res, out, err, tt.want, tt.out)
			}
			if tt.path == "/ok" && len(out) != maxProbeOutput {
				t.Errorf("body of %d bytes read, want the first %d", len(out), maxProbeOutput)
			}
			if tt.headers == nil && tt.want == probeRunSuccess {
				if gotUA != "kube-probe/"+kubeVersion || gotAccept != "*/*" {
					t.Errorf("User-Agent %q Accept %q", gotUA, gotAccept)
				}
			}
			if tt.headers != nil && (gotUA != "mine" || gotHost != "example.test" || gotX != "1") {
				t.Errorf("User-Agent %q Host %q X-Custom %q", gotUA, gotHost, gotX)
			}
		})
	}
	// An unknown port name is an error, thrown away by the worker.
	spec := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Port: intstr.FromString("nope")}}}
	if _, _, err := runProbe(context.Background(), nil, spec, c, "id", host); err == nil {
		t.Error("unknown port name: no error")
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	host, port := splitAddr(t, l.Addr().String())
	spec := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}}
	if res, out, err := runProbe(context.Background(), nil, spec, &v1.Container{}, "id", host); res != probeRunSuccess || err != nil {
		t.Fatalf("open port: %v %q %v", res, out, err)
	}
	l.Close()
	if res, _, err := runProbe(context.Background(), nil, spec, &v1.Container{}, "id", host); res != probeRunFailure || err != nil {
		t.Fatalf("closed port: %v %v", res, err)
	}
}

func TestGRPCProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(l)
	defer srv.Stop()
	host, port := splitAddr(t, l.Addr().String())
	for _, tt := range []struct {
		service string
		want    probeOutcome
		out     string
	}{
		{"", probeRunSuccess, "service healthy"},
		{"db", probeRunFailure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown", probeRunFailure, "NotFound"},
	} {
		svc := tt.service
		spec := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(port), Service: &svc}}}
		res, out, err := runProbe(context.Background(), nil, spec, &v1.Container{}, "id", host)
		if err != nil || res != tt.want || !strings.Contains(out, tt.out) {
			t.Errorf("service %q: %v %q %v, want %v %q", tt.service, res, out, err, tt.want, tt.out)
		}
	}
}

// A probe under way when the run stops probing (podrun detaches, the pod
// ends, a signal) is cut short by podrun: it gives no result and no
// Unhealthy event. podrun -d printed "Readiness probe failed: Get ...:
// context canceled" for a readiness probe in flight at the detach.
func TestProbeCutShortByTheRunIsNoFailure(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer srv.Close()
	host, port := splitAddr(t, srv.Listener.Addr().String())
	var events []string
	pr := newPodProber(&v1.Pod{}, nil, func(reason, format string, args ...any) {
		events = append(events, reason+": "+fmt.Sprintf(format, args...))
	}, time.Now)
	spec := &v1.Probe{TimeoutSeconds: 10, ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))}}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := pr.probe(ctx, probeReadiness, spec, &v1.Container{}, "id", host)
	if err == nil {
		t.Error("a probe cut short by the run gave a result")
	}
	if len(events) != 0 {
		t.Errorf("a probe cut short by the run made events %q", events)
	}

	// A probe that times out on its own still fails, with its event.
	events = nil
	started = make(chan struct{})
	spec.TimeoutSeconds = 1
	res, err := pr.probe(context.Background(), probeReadiness, spec, &v1.Container{}, "id", host)
	if err != nil || res != probeFailure || len(events) != 1 || !strings.HasPrefix(events[0], "Unhealthy: Readiness probe failed:") {
		t.Errorf("a probe that timed out: %v %v, events %q; want Failure and one Unhealthy event", res, err, events)
	}
}
