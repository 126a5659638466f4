package sources

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// maxManifestSize caps a file, stdin or HTTP body, as the kubelet's
	// maxConfigLength does.
	maxManifestSize = 10 << 20
	// maxRedirects is how many redirects a manifest URL may take, as
	// Go's and curl's defaults (the kubelet's client: Go's).
	maxRedirects = 10
)

// defaultHTTPTimeout is the kubelet's HTTP source client timeout: for the
// whole request, the body included.
const defaultHTTPTimeout = 10 * time.Second

// Load reads every -f spec in order and returns everything decoded, or
// an error: all problems found, joined, one *Error each.
//
// A spec is:
//   - "-": Options.Stdin (at most once);
//   - an http:// or https:// URL: one GET with Options.HTTPHeaders; any
//     status but 200, an empty body or a body over 10 MiB is an error;
//     TLS is verified against the system roots and Options.HTTPCAFile;
//     at most 10 redirects are followed, none from https to http, and a
//     redirect to another origin gets none of Options.HTTPHeaders
//     (keepHeadersOnOrigin); the whole request has 10 s. Errors show the
//     URL without its user name and password (redactURL) and never a
//     header value;
//   - a directory: like the kubelet's static-pod directory, every regular
//     file (symlinks followed) whose name does not start with "." in
//     lexical order; subdirectories are not entered;
//   - anything else: a file (a named pipe such as <(cmd) works too).
//
// Reading stdin or a named pipe stops when ctx is cancelled (see pipe.go).
// Files are capped at 10 MiB. A file, stdin or body that holds no object
// is an error; an empty directory is not. Two objects of one kind with
// the same namespace and name are an error naming both. Pods that name a
// RuntimeClass are admitted against the RuntimeClasses of every spec, as
// the API server admits them (admitRuntimeClasses).
func Load(ctx context.Context, specs []string, opts Options) (*Set, error) {
	if opts.HTTPClient == nil {
		timeout := opts.HTTPTimeout
		if timeout == 0 {
			timeout = defaultHTTPTimeout
		}
		c, err := newHTTPClient(opts.HTTPCAFile, timeout)
		if err != nil {
			return nil, err
		}
		opts.HTTPClient = c
	}
	if err := checkHeaderNames(opts.HTTPHeaders); err != nil {
		return nil, err
	}
	opts.matched = make([]bool, len(opts.Overrides.Images))
	set := &Set{}
	var errs []error
	stdinUsed := false
	for _, spec := range specs {
		if err := ctx.Err(); err != nil {
			return nil, &Error{Origin: Origin{Source: DisplayName(spec)}, Err: err}
		}
		if spec == "-" {
			if stdinUsed {
				errs = append(errs, &Error{Origin: Origin{Source: "stdin"}, Msg: "stdin given more than once"})
				continue
			}
			stdinUsed = true
		}
		inputs, err := read(ctx, spec, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, in := range inputs {
			s, derrs := decodeSource(sourceFor(in.name), in.data, opts)
			errs = append(errs, derrs...)
			if len(derrs) == 0 && s.len() == 0 {
				errs = append(errs, &Error{Origin: Origin{Source: DisplayName(in.name)}, Msg: "no objects found"})
			}
			set.append(s)
		}
	}
	return finishSet(set, errs, opts)
}

// input is the content of one source: a file, stdin or a URL.
type input struct {
	name string // as passed to sourceFor
	data []byte
}

// DisplayName is a -f spec as podrun prints it: "stdin" for "-", a URL
// without its credentials (redactURL), a path as given.
func DisplayName(spec string) string {
	switch {
	case spec == "-":
		return "stdin"
	case isURL(spec):
		return redactURL(spec)
	}
	return spec
}

// redacted stands for a URL's user name and password wherever podrun
// prints the URL.
const redacted = "xxxxx"

// redactURL hides a URL's credentials: the user name and the password of
// its userinfo are each "xxxxx" ("https://xxxxx@host/", "https://xxxxx:xxxxx@host/"),
// in URLs it cannot parse as well. A token is often given as a bare user
// name (https://TOKEN@host/), so that net/url's Redacted, which hides
// only the password, is not enough. An empty user name stays empty.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		if u.User == nil {
			return s
		}
		v := *u
		name := ""
		if u.User.Username() != "" {
			name = redacted
		}
		if _, ok := u.User.Password(); ok {
			v.User = url.UserPassword(name, redacted)
		} else {
			v.User = url.User(name)
		}
		return v.String()
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	name, _, hasPass := strings.Cut(rest[:at], ":")
	if name != "" {
		name = redacted
	}
	if hasPass {
		name += ":" + redacted
	}
	return scheme + "://" + name + "@" + rest[at+1:]
}

// read returns the inputs of one spec.
func read(ctx context.Context, spec string, opts Options) ([]input, error) {
	fail := func(msg string, err error) ([]input, error) {
		return nil, &Error{Origin: Origin{Source: DisplayName(spec)}, Msg: msg, Err: err}
	}
	switch {
	case spec == "-":
		if opts.Stdin == nil {
			return fail("no stdin to read", nil)
		}
		data, err := readStdin(ctx, opts.Stdin)
		if err != nil {
			return fail("reading", err)
		}
		return []input{{spec, data}}, nil
	case isURL(spec):
		data, err := fetch(ctx, spec, opts)
		if err != nil {
			return fail("", err)
		}
		return []input{{spec, data}}, nil
	}
	fi, err := os.Stat(spec)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the source already names the path
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fail("", fs.ErrNotExist)
		}
		return fail("", err)
	}
	if !fi.IsDir() {
		data, err := readFile(ctx, spec)
		if err != nil {
			if ctx.Err() != nil {
				return fail("reading", err)
			}
			return fail("", err)
		}
		return []input{{spec, data}}, nil
	}
	return readDir(ctx, spec)
}

// readDir reads a directory the way the kubelet's file source does
// (pkg/kubelet/config/file.go): names starting with "." are skipped,
// entries are sorted lexically, subdirectories and other non-regular
// files are skipped.
func readDir(ctx context.Context, dir string) ([]input, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, &Error{Origin: Origin{Source: dir}, Err: err}
	}
	var inputs []input
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := filepath.Join(dir, e.Name())
		fi, err := os.Stat(name)
		if err != nil {
			errs = append(errs, &Error{Origin: Origin{Source: name}, Err: err})
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := readFile(ctx, name)
		if err != nil {
			errs = append(errs, &Error{Origin: Origin{Source: name}, Err: err})
			continue
		}
		inputs = append(inputs, input{name, data})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return inputs, nil
}

// errTooLarge is returned for input over maxManifestSize.
var errTooLarge = fmt.Errorf("larger than the %d MiB limit", maxManifestSize>>20)

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestSize {
		return nil, errTooLarge
	}
	return data, nil
}

// newHTTPClient is the client for manifest URLs: the kubelet's timeout,
// TLS verified against the system roots and the certificates of caFile,
// redirects limited by checkRedirect.
func newHTTPClient(caFile string, timeout time.Duration) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		fail := func(err error) (*http.Client, error) {
			return nil, &Error{Origin: Origin{Source: caFile}, Msg: "reading the manifest URL CA", Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pemData, err := os.ReadFile(caFile)
		if err != nil {
			return fail(err)
		}
		if !pool.AppendCertsFromPEM(pemData) {
			return fail(errors.New("no PEM certificate found"))
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: checkRedirect}, nil
}

// checkHeaderNames refuses a header name that is not an HTTP token
// before the client would, with an error that shows the name: from a flag
// such as 'Bearer abc:def' it would be half a secret.
func checkHeaderNames(h http.Header) error {
	for name := range h {
		if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
			return &Error{Origin: Origin{Source: "manifest URL headers"}, Msg: "a header name is not an HTTP token (not shown: it may hold a secret)"}
		}
	}
	return nil
}

// isTokenChar tells whether r may be in an HTTP token (RFC 9110).
func isTokenChar(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		strings.ContainsRune("!#$%&'*+-.^_`|~", r))
}

// checkRedirect follows at most maxRedirects redirects, and none from
// https to http, which would drop the server's verification.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errors.New("refusing a redirect from https to http")
	}
	return nil
}

// keepHeadersOnOrigin is a client's CheckRedirect (then next, or Go's
// default of at most 10 redirects) that sends the user's headers (the
// names of headers, --manifest-url-header) and the Referer on a redirect
// only while it stays on the first URL's origin: its scheme, host and port
// (sameOrigin), as every request before it did. Go's client copies every
// header to a redirect's request but Authorization, WWW-Authenticate and
// Cookie, which it drops only for another domain (a subdomain keeps them):
// an X-Api-Key or PRIVATE-TOKEN went to whichever host the server
// redirected to, and the Referer, which names the previous URL with its
// query, carried a token given there (?private_token=) along. Once a
// redirect has left the origin, they stay dropped, back on it too.
func keepHeadersOnOrigin(headers http.Header, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		same := sameOrigin(via[0].URL, req.URL)
		for _, r := range via[1:] {
			same = same && sameOrigin(via[0].URL, r.URL)
		}
		if !same {
			for name := range headers {
				req.Header.Del(name)
			}
			req.Header.Del("Referer")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// sameOrigin tells whether a and b have the same origin (RFC 6454): the
// same scheme, host (without regard to case) and port, an absent port
// being the scheme's default. A subdomain, another port, or http and
// https on the same host are other origins, as they are for curl, which
// drops its Authorization and Cookie headers there.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "http":
			return "80"
		case "https":
			return "443"
		}
		return ""
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// fetch GETs a manifest URL like the kubelet's HTTP source
// (pkg/kubelet/config/http.go).
func fetch(ctx context.Context, rawURL string, opts Options) ([]byte, error) {
	data, err := get(ctx, rawURL, opts)
	// The client's errors name the URL, or a redirect's Location, as
	// given: without its password.
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redactURL(ue.URL)
	}
	return data, err
}

func get(ctx context.Context, rawURL string, opts Options) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range opts.HTTPHeaders {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	client := *opts.HTTPClient
	client.CheckRedirect = keepHeadersOnOrigin(opts.HTTPHeaders, client.CheckRedirect)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("unexpected HTTP status %s", resp.Status)
	}
	data, err := readCapped(resp.Body)
	if err != nil {
		var ne net.Error
		if ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("reading body: not complete within %v: %w", opts.HTTPClient.Timeout, err)
		}
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if len(data) == 0 {
		return nil, errors.New("zero-length data received")
	}
	return data, nil
}
