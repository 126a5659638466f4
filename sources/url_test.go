package sources

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// caFile writes the certificate of a TLS test server as a PEM file.
func caFile(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// newCAPEM makes a self-signed CA certificate, in PEM.
func newCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "another CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// quietTLSServer is a TLS test server that does not log refused handshakes.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func podHandler(w http.ResponseWriter, r *http.Request) { w.Write([]byte(podYAML)) }

func TestLoadHTTPSVerifiesTheServer(t *testing.T) {
	srv := quietTLSServer(http.HandlerFunc(podHandler))
	defer srv.Close()

	// The test server's CA is in no system pool.
	_, err := Load(context.Background(), []string{srv.URL}, Options{})
	if err == nil || !strings.Contains(err.Error(), "x509: certificate signed by unknown authority") {
		t.Errorf("without its CA: error %v, want an unknown authority", err)
	}

	ca := caFile(t, srv)
	set, err := Load(context.Background(), []string{srv.URL}, Options{HTTPCAFile: ca})
	if err != nil || len(set.Pods) != 1 {
		t.Errorf("with its CA: %v", err)
	}

	// Another CA does not do.
	otherCA := filepath.Join(t.TempDir(), "other.pem")
	writeFile(t, otherCA, string(newCAPEM(t)))
	if _, err := Load(context.Background(), []string{srv.URL}, Options{HTTPCAFile: otherCA}); err == nil || !strings.Contains(err.Error(), "x509: certificate signed by unknown authority") {
		t.Errorf("with another CA: error %v, want an unknown authority", err)
	}

	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	writeFile(t, notPEM, "not a certificate\n")
	missing := filepath.Join(dir, "missing.pem")
	for _, tt := range []struct{ file, want string }{
		{notPEM, notPEM + ": reading the manifest URL CA: no PEM certificate found"},
		{missing, missing + ": reading the manifest URL CA: open " + missing + ": no such file or directory"},
	} {
		// Reported even when no source is a URL.
		_, err := Load(context.Background(), []string{"-"}, Options{HTTPCAFile: tt.file, Stdin: strings.NewReader(podYAML)})
		if err == nil || err.Error() != tt.want {
			t.Errorf("error %v, want %s", err, tt.want)
		}
	}
}

func TestLoadHTTPRedirects(t *testing.T) {
	var hits int
	mux := http.NewServeMux()
	// /chain/N redirects N times, then serves the pod.
	mux.HandleFunc("/chain/", func(w http.ResponseWriter, r *http.Request) {
		hits++
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/"))
		if n == 0 {
			podHandler(w, r)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	hits = 0
	if _, err := Load(context.Background(), []string{srv.URL + "/chain/10"}, Options{}); err != nil || hits != 11 {
		t.Errorf("10 redirects: %v after %d requests", err, hits)
	}
	hits = 0
	_, err := Load(context.Background(), []string{srv.URL + "/chain/11"}, Options{})
	if want := srv.URL + `/chain/11: Get "/chain/0": stopped after 10 redirects`; err == nil || err.Error() != want || hits != 11 {
		t.Errorf("11 redirects: error %v after %d requests, want %s after 11", err, hits, want)
	}
	hits = 0
	_, err = Load(context.Background(), []string{srv.URL + "/loop"}, Options{})
	if want := srv.URL + `/loop: Get "/loop": stopped after 10 redirects`; err == nil || err.Error() != want || hits != 11 {
		t.Errorf("redirect loop: error %v after %d requests, want %s after 11", err, hits, want)
	}

	// https to http is refused: the redirect would drop the TLS check.
	tlsSrv := quietTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/chain/0", http.StatusFound)
	}))
	defer tlsSrv.Close()
	_, err = Load(context.Background(), []string{tlsSrv.URL + "/pod"}, Options{HTTPCAFile: caFile(t, tlsSrv)})
	if want := tlsSrv.URL + `/pod: Get "` + srv.URL + `/chain/0": refusing a redirect from https to http`; err == nil || err.Error() != want {
		t.Errorf("https to http: error %v, want %s", err, want)
	}
}

func TestLoadHTTPErrorsHideSecrets(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/pod", podHandler)
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://user:s3cret-redirect@"+r.Host+"/missing", http.StatusFound)
	})
	mux.HandleFunc("/away-token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://s3cret-redirect@"+r.Host+"/missing", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	closed := httptest.NewServer(http.HandlerFunc(podHandler))
	closedHost := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()

	headers := http.Header{}
	headers.Set("Authorization", "Bearer s3cret-token")
	badHeaders := http.Header{}
	badHeaders.Set("Authorization", "Bearer s3cret-token\nX-Evil: 1")

	badName := http.Header{"Bearer s3cret-token": {"x"}}

	for _, tt := range []struct {
		name    string
		url     string
		headers http.Header
		want    string // a prefix of the error
	}{
		{"bad header name", "http://" + host + "/pod", badName, "manifest URL headers: a header name is not an HTTP token (not shown: it may hold a secret)"},
		{"status", "http://user:s3cret@" + host + "/missing", headers, "http://xxxxx:xxxxx@" + host + "/missing: unexpected HTTP status 404 Not Found"},
		{"a token for a user name", "http://s3cret-token@" + host + "/missing", headers, "http://xxxxx@" + host + "/missing: unexpected HTTP status 404 Not Found"},
		{"a token for a user name, escaped", "http://s3cret%2Dtoken@" + host + "/missing", nil, "http://xxxxx@" + host + "/missing: unexpected HTTP status 404 Not Found"},
		{"no server", "http://user:s3cret@" + closedHost + "/pod", headers, "http://xxxxx:xxxxx@" + closedHost + `/pod: Get "http://xxxxx:xxxxx@` + closedHost + `/pod": dial tcp`},
		{"no server, a token for a user name", "http://s3cret-token@" + closedHost + "/pod", headers, "http://xxxxx@" + closedHost + `/pod: Get "http://xxxxx@` + closedHost + `/pod": dial tcp`},
		{"password in a redirect", "http://" + host + "/away", headers, "http://" + host + "/away: unexpected HTTP status 404 Not Found"},
		{"bad header value", "http://" + host + "/pod", badHeaders, "http://" + host + `/pod: Get "http://` + host + `/pod": net/http: invalid header field value for "Authorization"`},
		{"password only", "http://:s3cret@" + host + "/missing", nil, "http://:xxxxx@" + host + "/missing: unexpected HTTP status 404 Not Found"},
		{"unparsable URL", "http://user:s3cret@" + host + "/%zz", nil, "http://xxxxx:xxxxx@" + host + `/%zz: parse "http://xxxxx:xxxxx@` + host + `/%zz": invalid URL escape "%zz"`},
		{"unparsable URL, a token for a user name", "http://s3cret-token@" + host + "/%zz", nil, "http://xxxxx@" + host + `/%zz: parse "http://xxxxx@` + host + `/%zz": invalid URL escape "%zz"`},
		{"a token for a user name in a redirect", "http://" + host + "/away-token", headers, "http://" + host + "/away-token: unexpected HTTP status 404 Not Found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), []string{tt.url}, Options{HTTPHeaders: tt.headers})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to start with %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows a secret", err)
			}
		})
	}
	// The URL's password still goes to the server.
	var user, pass string
	authSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ = r.BasicAuth()
		podHandler(w, r)
	}))
	defer authSrv.Close()
	u := "http://user:s3cret@" + strings.TrimPrefix(authSrv.URL, "http://") + "/pod"
	set, err := Load(context.Background(), []string{u}, Options{})
	if err != nil || user != "user" || pass != "s3cret" {
		t.Fatalf("basic auth %q:%q, error %v", user, pass, err)
	}
	if got := set.Pods[0].Origin.Source; strings.Contains(got, "s3cret") {
		t.Errorf("origin %q shows the password", got)
	}
	// A token for a user name goes to the server too, and is no more
	// shown in the origin (the file of every field-path error).
	u = "http://s3cret-token@" + strings.TrimPrefix(authSrv.URL, "http://") + "/pod"
	set, err = Load(context.Background(), []string{u}, Options{})
	if err != nil || user != "s3cret-token" {
		t.Fatalf("basic auth user %q, error %v", user, err)
	}
	if got, want := set.Pods[0].Origin.Source, "http://xxxxx@"+strings.TrimPrefix(authSrv.URL, "http://")+"/pod"; got != want {
		t.Errorf("origin %q, want %q", got, want)
	}
}

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://host/p?q=1", "https://host/p?q=1"},
		{"https://TOKEN@host/p", "https://xxxxx@host/p"},
		{"https://user:pass@host:8443/p", "https://xxxxx:xxxxx@host:8443/p"},
		{"https://:pass@host/p", "https://:xxxxx@host/p"},
		{"https://user:@host/p", "https://xxxxx:xxxxx@host/p"},
		{"https://@host/p", "https://@host/p"},
		{"https://TOKEN@host/%zz", "https://xxxxx@host/%zz"},
		{"https://user:pa%zzss@host/p", "https://xxxxx:xxxxx@host/p"},
		{"https://host/a@b", "https://host/a@b"}, // an @ in the path is no userinfo
		{"stdin", "stdin"},
	} {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLoadHTTPRedirectDropsHeadersOffOrigin: a redirect to another origin
// (another host, port or scheme; here a second server, on another port of
// 127.0.0.1, and localhost for the same port) gets none of the user's
// headers, custom ones (X-Api-Key, PRIVATE-TOKEN) included, nor the
// Referer that names the first URL; a redirect on the same origin keeps
// them; and a chain that went elsewhere and came back does not get them
// back. Go's client dropped only Authorization (and cookies) there.
func TestLoadHTTPRedirectDropsHeadersOffOrigin(t *testing.T) {
	type seen struct{ path, apiKey, token, auth, referer string }
	var mu sync.Mutex
	var got []seen
	record := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Private-Token"), r.Header.Get("Authorization"), r.Header.Get("Referer")})
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		if r.URL.Path == "/back" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		podHandler(w, r)
	}))
	defer other.Close()
	var first *httptest.Server
	first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch r.URL.Path {
		case "/cross":
			http.Redirect(w, r, other.URL+"/pod", http.StatusFound)
		case "/localhost":
			http.Redirect(w, r, strings.Replace(first.URL, "127.0.0.1", "localhost", 1)+"/pod", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/pod", http.StatusFound)
		case "/there-and-back":
			http.Redirect(w, r, other.URL+"/back?to="+first.URL+"/pod", http.StatusFound)
		default:
			podHandler(w, r)
		}
	}))
	defer first.Close()

	headers := http.Header{}
	headers.Set("X-Api-Key", "s3cret-key")
	headers.Set("PRIVATE-TOKEN", "s3cret-token")
	headers.Set("Authorization", "Bearer s3cret-auth")
	all := seen{"", "s3cret-key", "s3cret-token", "Bearer s3cret-auth", ""}
	with := func(path, referer string) seen {
		s := all
		s.path, s.referer = path, referer
		return s
	}
	for _, tt := range []struct {
		path string
		want []seen
	}{
		{"/cross", []seen{with("/cross", ""), {path: "/pod"}}},
		{"/localhost", []seen{with("/localhost", ""), {path: "/pod"}}},
		{"/same", []seen{with("/same", ""), with("/pod", first.URL+"/same")}},
		{"/there-and-back", []seen{with("/there-and-back", ""), {path: "/back"}, {path: "/pod"}}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			if _, err := Load(context.Background(), []string{first.URL + tt.path}, Options{HTTPHeaders: headers}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("the servers saw\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"http://h/a", "http://h/b", true},
		{"http://h/a", "http://H:80/b", true},
		{"https://h/a", "https://h:443/b", true},
		{"http://h/a", "https://h/a", false},
		{"http://h/a", "http://h:8080/a", false},
		{"http://h/a", "http://sub.h/a", false},
		{"http://h/a", "http://other/a", false},
		{"http://[::1]:80/a", "http://[::1]/b", true},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := sameOrigin(a, b); got != tt.want {
			t.Errorf("sameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLoadHTTPBodyThatNeverEnds(t *testing.T) {
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(podYAML + "# "))
		for {
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte("#" + strings.Repeat("x", 64<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(stop)

	for _, tt := range []struct{ path, want string }{
		{"/trickle", ": reading body: not complete within 500ms: "},
		{"/flood", ": reading body: larger than the 10 MiB limit"},
		{"/silent", `: Get "` + srv.URL + `/silent": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
	} {
		start := time.Now()
		_, err := Load(context.Background(), []string{srv.URL + tt.path}, Options{HTTPTimeout: 500 * time.Millisecond})
		if want := srv.URL + tt.path + tt.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("GET %s: error %v, want it to start with %s", tt.path, err, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("GET %s took %v", tt.path, d)
		}
	}
}
