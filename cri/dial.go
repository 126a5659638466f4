package cri

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultEndpoints, tried in order when no endpoint is given: containerd,
// CRI-O, cri-dockerd (the same list and order as crictl).
var DefaultEndpoints = []string{
	"unix:///run/containerd/containerd.sock",
	"unix:///run/crio/crio.sock",
	"unix:///run/cri-dockerd.sock",
}

const (
	// CallTimeout bounds each RPC (the kubelet's default
	// --runtime-request-timeout). It is long enough for a busy runtime to
	// create a container or wait out its own restart, and short enough that a
	// hung runtime fails the run instead of hanging it.
	CallTimeout = 2 * time.Minute

	// DialTimeout bounds the Version check that Dial makes. A runtime that
	// cannot answer Version within it is not one to run pods on, and
	// DialFirst should move on to the next socket rather than wait.
	DialTimeout = 10 * time.Second

	// maxMsgSize is the largest message sent or received, as in crictl:
	// ListContainers on a busy node exceeds gRPC's 4 MiB default.
	maxMsgSize = 16 << 20

	// reconnectMaxDelay caps gRPC's reconnect backoff (120s by default) so a
	// runtime that restarts is found again within seconds.
	reconnectMaxDelay = 2 * time.Second
)

// Client is a CRI v1 client on one runtime endpoint. It is safe for
// concurrent use.
type Client struct {
	endpoint    string
	conn        *grpc.ClientConn
	runtime     runtimeapi.RuntimeServiceClient
	images      runtimeapi.ImageServiceClient
	callTimeout time.Duration
	version     *runtimeapi.VersionResponse // Dial's check
}

// Option changes how Dial and DialFirst set up a Client.
type Option func(*Client)

// WithCallTimeout replaces CallTimeout as the bound on each RPC (a CLI's
// --timeout flag, or a test that wants failures fast). d <= 0 is ignored.
func WithCallTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.callTimeout = d
		}
	}
}

// Dial connects to endpoint ("unix:///path" or a bare "/path") and checks it
// speaks CRI v1 by calling Version. The check fails fast when nothing
// listens on the socket; later calls wait for the runtime to come back.
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	path, err := socketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	c := &Client{endpoint: endpoint, callTimeout: CallTimeout}
	for _, o := range opts {
		o(c)
	}
	conn, err := newConn(path)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	v, err := probe(ctx, endpoint, conn, min(DialTimeout, c.callTimeout))
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.version = v
	c.conn = conn
	c.runtime = runtimeapi.NewRuntimeServiceClient(conn)
	c.images = runtimeapi.NewImageServiceClient(conn)
	return c, nil
}

// probe checks that the runtime behind conn answers Version with CRI v1.
// The call neither waits for a connection (no WaitForReady) nor is
// retried (serviceConfig leaves Version out), so an endpoint with nothing
// (or no CRI) behind it fails now and DialFirst can move on. It goes on
// the client's own connection: a connection of its own cost a handshake
// and a teardown on both ends of every run (about 0.3 ms of podrun's
// CPU).
func probe(ctx context.Context, endpoint string, conn *grpc.ClientConn, timeout time.Duration) (*runtimeapi.VersionResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := runtimeapi.NewRuntimeServiceClient(conn).Version(ctx, &runtimeapi.VersionRequest{Version: apiVersion})
	if err != nil {
		return nil, wrap(err, "checking CRI v1 at %s", endpoint)
	}
	if v.GetRuntimeApiVersion() != apiVersion {
		return nil, fmt.Errorf("checking CRI v1 at %s: runtime %s %s speaks CRI %q",
			endpoint, v.GetRuntimeName(), v.GetRuntimeVersion(), v.GetRuntimeApiVersion())
	}
	return v, nil
}

// newConn makes a gRPC connection to the socket at path, with
// serviceConfig's retries. It connects lazily, on the first call.
func newConn(path string) (*grpc.ClientConn, error) {
	bo := backoff.DefaultConfig
	bo.BaseDelay = 100 * time.Millisecond
	bo.MaxDelay = reconnectMaxDelay
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMsgSize),
			grpc.MaxCallSendMsgSize(maxMsgSize),
		),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: DialTimeout}),
		grpc.WithDefaultServiceConfig(serviceConfig),
	}
	return grpc.NewClient("unix://"+path, opts...)
}

// DialFirst tries each endpoint in order (DefaultEndpoints when endpoints is
// empty) and returns a Client on the first that answers Version. The error
// names every endpoint tried and why each failed.
func DialFirst(ctx context.Context, endpoints []string, opts ...Option) (*Client, error) {
	if len(endpoints) == 0 {
		endpoints = DefaultEndpoints
	}
	var errs []error
	for _, ep := range endpoints {
		c, err := Dial(ctx, ep, opts...)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &dialFirstError{errs: errs}
}

// dialFirstError lists every endpoint DialFirst tried on one line.
type dialFirstError struct{ errs []error }

func (e *dialFirstError) Error() string {
	parts := make([]string, len(e.errs))
	for i, err := range e.errs {
		parts[i] = err.Error()
	}
	return "finding a CRI runtime: " + strings.Join(parts, "; ")
}

func (e *dialFirstError) Unwrap() []error { return e.errs }

// DialVersion is the runtime's answer to the Version call Dial made to
// check the endpoint.
func (c *Client) DialVersion() *runtimeapi.VersionResponse { return c.version }

// Endpoint returns the endpoint the Client was dialled with.
func (c *Client) Endpoint() string { return c.endpoint }

// Close closes the connection. Calls in flight fail.
func (c *Client) Close() error { return c.conn.Close() }

// socketPath turns "unix:///path", "unix://path" or a bare path into an
// absolute socket path. Other schemes (tcp://, npipe://) are refused: podrun
// runs on the node, next to the runtime's socket.
func socketPath(endpoint string) (string, error) {
	p := endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		if scheme := endpoint[:i]; scheme != "unix" {
			return "", fmt.Errorf("connecting to %s: unsupported protocol %q, want unix", endpoint, scheme)
		}
		p = endpoint[i+len("://"):]
	}
	if p == "" {
		return "", errors.New("connecting to the runtime: empty endpoint")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	return abs, nil
}

// apiVersion is the CRI version podrun speaks.
const apiVersion = "v1"

// callCtx returns the context for one RPC: the caller's, bounded by the
// Client's per-call timeout plus extra (for calls that wait on purpose, such
// as a stop's grace period), saturated at the longest time.Duration rather
// than wrapped around into a deadline already past (a grace period of
// MaxStopTimeout seconds plus the per-call timeout). WithTimeout never
// extends the caller's deadline.
func (c *Client) callCtx(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, addDurations(c.callTimeout, extra))
}

// addDurations is a+b for durations of at least 0, at most the longest
// time.Duration.
func addDurations(a, b time.Duration) time.Duration { return a + min(b, math.MaxInt64-a) }

// serviceConfig retries idempotent calls that fail with Unavailable: a call
// sent on a connection just as the runtime went down fails that way even
// with WaitForReady, since the connection looked alive when the call left.
// The retry then waits for the new connection. Calls that must not run twice
// (RunPodSandbox, CreateContainer, StartContainer, ExecSync) are not
// retried: the runtime may have done them before it went down. Nor is
// Version, Dial's probe, which must fail at once on a dead socket.
const serviceConfig = `{"methodConfig": [{
	"name": [
		{"service": "runtime.v1.RuntimeService", "method": "Status"},
		{"service": "runtime.v1.RuntimeService", "method": "StopPodSandbox"},
		{"service": "runtime.v1.RuntimeService", "method": "RemovePodSandbox"},
		{"service": "runtime.v1.RuntimeService", "method": "PodSandboxStatus"},
		{"service": "runtime.v1.RuntimeService", "method": "ListPodSandbox"},
		{"service": "runtime.v1.RuntimeService", "method": "StopContainer"},
		{"service": "runtime.v1.RuntimeService", "method": "RemoveContainer"},
		{"service": "runtime.v1.RuntimeService", "method": "ListContainers"},
		{"service": "runtime.v1.RuntimeService", "method": "ContainerStatus"},
		{"service": "runtime.v1.RuntimeService", "method": "GetContainerEvents"},
		{"service": "runtime.v1.ImageService"}
	],
	"retryPolicy": {
		"maxAttempts": 5,
		"initialBackoff": "0.1s",
		"maxBackoff": "1s",
		"backoffMultiplier": 2,
		"retryableStatusCodes": ["UNAVAILABLE"]
	}
}]}`

// waitForReady makes an RPC wait, within its deadline, for a connection
// that is down (the runtime restarting) instead of failing at once.
func waitForReady() grpc.CallOption { return grpc.WaitForReady(true) }

// call makes one RPC under the Client's per-call timeout plus extra
// (callCtx), waiting for a connection that is down (waitForReady).
func call[Req, Resp any](c *Client, ctx context.Context, extra time.Duration,
	rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := c.callCtx(ctx, extra)
	defer cancel()
	return rpc(ctx, req, waitForReady())
}
