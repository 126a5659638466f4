package runner

// What probes (prober.go) and lifecycle hooks (hooks.go) share to reach a
// container: CRI ExecSync, and HTTP GETs built and sent the kubelet's way
// (pkg/probe/http, pkg/kubelet/lifecycle/handlers.go).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kubeVersion is the Kubernetes version podrun's probes and hooks name in
// their User-Agent (kube-probe/<major>.<minor>, kube-lifecycle/...), as a
// kubelet of that version does.
const kubeVersion = "1.34"

// userAgent is the kubelet's User-Agent for purpose "probe" or "lifecycle".
func userAgent(purpose string) string { return "kube-" + purpose + "/" + kubeVersion }

// eventFunc prints one progress line of a pod, named like a kubelet event.
type eventFunc func(reason, format string, args ...any)

// execer is the CRI call exec probes and hooks use.
type execer interface {
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
}

// maxProbeOutput is how much of an exec probe's output or an HTTP probe's
// (or hook's) body is read (10 KiB, pkg/probe/exec and pkg/probe/http).
const maxProbeOutput = 10 << 10

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
