//go:build e2e

package e2e

// Manifest sources end to end: a file, a directory, stdin, http and https
// URLs (with a header, the size and time limits, the TLS trust), several -f,
// multi-document streams, v1.List and v1.PodList, JSON and KYAML, and
// ConfigMaps and Secrets beside the pods.

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestE2ESourceFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("sources/file.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "from file\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func TestE2ESourceDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sources/dir")}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	// Files 1.yaml, 10.yaml, 2.yaml in sorted order; .hidden.yaml and sub/ skipped.
	want := []string{"e2e-dir-one", "e2e-dir-ten", "e2e-dir-two"}
	if got := podNames(pods); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pods %v, want %v (sorted by file name, dotfiles and subdirs skipped)", got, want)
	}
	for _, p := range pods {
		if p.Status.Phase != v1.PodSucceeded {
			t.Errorf("pod %s phase %q, want Succeeded", p.Name, p.Status.Phase)
		}
	}
	if strings.Contains(r.stderr, "must not run") || strings.Contains(r.stderr, "e2e-dir-hidden") || strings.Contains(r.stderr, "e2e-dir-nested") {
		t.Errorf("a dotfile or subdir pod ran\n%s", r)
	}
}

func TestE2ESourceStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", "-"}, readTestdata(t, "sources/stdin.yaml"))
	expectCode(t, r, 0)
	if r.stdout != "from stdin\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func TestE2ESourceURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := readTestdata(t, "sources/url.yaml")
	var mu sync.Mutex
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.Header.Get("X-Token"))
		mu.Unlock()
		switch {
		case r.URL.Path != "/pod.yaml":
			http.NotFound(w, r)
		case r.Header.Get("X-Token") != "abc":
			http.Error(w, "forbidden", http.StatusForbidden)
		default:
			w.Write([]byte(body))
		}
	}))
	defer srv.Close()

	// Refusals first, while nothing may exist. Without the header the
	// server answers 403: anything but 200 is an error.
	r := e.runPodrun([]string{"-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, srv.URL+"/pod.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// 404.
	url404 := srv.URL + "/missing.yaml"
	r = e.runPodrun([]string{"-f", url404}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, url404) || !strings.Contains(r.stderr, "404") {
		t.Errorf("the error does not name the URL and the status 404\n%s", r)
	}
	expectNothingCreated(t, e)

	r = e.runPodrun([]string{"-q", "--manifest-url-header", "X-Token:abc", "-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 0)
	if r.stdout != "from url\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
	mu.Lock()
	if len(tokens) == 0 || tokens[len(tokens)-1] != "abc" {
		t.Errorf("server saw X-Token %q, want %q last", tokens, "abc")
	}
	mu.Unlock()
}

func TestE2ESourceSeveralMultiDocAndList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sources/multi.yaml"), "-f", testdata("sources/list.yaml")}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	want := []string{"e2e-multi-a", "e2e-multi-b", "e2e-list-a", "e2e-list-b"}
	if got := podNames(pods); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pods %v, want %v", got, want)
	}
	for _, w := range []string{"[pod/e2e-multi-a/c] multi a", "[pod/e2e-multi-b/c] multi b", "[pod/e2e-list-a/c] list a", "[pod/e2e-list-b/c] list b"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q (container output goes to stderr with -o json)\n%s", w, r)
		}
	}
}

func TestE2ESourceHTTPSLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := readTestdata(t, "sources/https.yaml")
	big := strings.Repeat("#", 11<<20) + "\n" + readTestdata(t, "sources/https-big.yaml")
	hang := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pod.yaml":
			w.Write([]byte(body))
		case "/big.yaml":
			w.Write([]byte(big))
		case "/hang.yaml":
			select {
			case <-hang:
			case <-time.After(30 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer func() { close(hang); srv.Close() }()
	// podrun trusts the test server through SSL_CERT_FILE.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var pemBuf bytes.Buffer
	pemBuf.WriteString("-----BEGIN CERTIFICATE-----\n")
	enc := base64Lines(srv.Certificate().Raw)
	pemBuf.WriteString(enc)
	pemBuf.WriteString("-----END CERTIFICATE-----\n")
	if err := os.WriteFile(ca, pemBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sslEnv := "SSL_CERT_FILE=" + ca

	// Anything over 10 MiB is refused.
	r := e.runPodrun([]string{"-f", srv.URL + "/big.yaml"}, "", sslEnv)
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, srv.URL+"/big.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// A server that does not answer: 10 s timeout.
	r = e.runPodrun([]string{"-f", srv.URL + "/hang.yaml"}, "", sslEnv)
	expectCode(t, r, 125)
	if r.elapsed < 9*time.Second || r.elapsed > 20*time.Second {
		t.Errorf("a hanging URL failed after %s, want about 10s", r.elapsed)
	}
	if !strings.Contains(r.stderr, srv.URL+"/hang.yaml") {
		t.Errorf("the error does not name the URL\n%s", r)
	}
	// Without trusting the server's certificate.
	r = e.runPodrun([]string{"-f", srv.URL + "/pod.yaml"}, "")
	expectCode(t, r, 125)
	expectNothingCreated(t, e)

	r = e.runPodrun([]string{"-q", "-f", srv.URL + "/pod.yaml"}, "", sslEnv)
	expectCode(t, r, 0)
	if r.stdout != "from https\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
}

func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 64 {
		out.WriteString(s[:64] + "\n")
		s = s[64:]
	}
	out.WriteString(s + "\n")
	return out.String()
}

func TestE2ESourceJSONPodListConfigMap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("sources/pod.json"), "-f", testdata("sources/podlist.yaml"), "-f", testdata("sources/with-cm.yaml")}, "")
	expectCode(t, r, 0)
	pods := parseList(t, r.stdout)
	if got := strings.Join(podNames(pods), ","); got != "e2e-json,e2e-podlist-a,e2e-kyaml" {
		t.Errorf("pods %s, want e2e-json,e2e-podlist-a,e2e-kyaml", got)
	}
	for _, w := range []string{"from json", "podlist a", "from kyaml"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q\n%s", w, r)
		}
	}
}

// TestE2ESourceURLCredentials: the credentials of a manifest URL stay
// with the server they were given for. A redirect to another server gets
// none of the --manifest-url-header headers (custom ones included, which
// Go's client forwarded: it drops only Authorization and cookies), and the
// first server still gets them; a token given as the URL's user name is
// shown as xxxxx wherever the URL is printed: a failed fetch (404), and a
// pod from that URL the run refuses (the error names its source), on
// stderr, -o json and the JUnit report.
func TestE2ESourceURLCredentials(t *testing.T) {
	t.Parallel()
	suffix := randomSuffix(t)
	token := "podrun-url-token-" + suffix
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: e2e-src-cred-" + suffix + "}\nspec:\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 2\n" +
		"  containers: [{name: c, image: busybox:1.28, command: [sh, -c, echo from the other server]}]\n"
	refused := "apiVersion: v1\nkind: Pod\nmetadata: {name: e2e-src-cred-bad-" + suffix + "}\nspec:\n  containers: [{name: c, image: '<not an image>'}]\n"

	type seen struct{ server, path, apiKey, privateToken string }
	var mu sync.Mutex
	var got []seen
	record := func(server string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{server, r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Private-Token")})
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		w.Write([]byte(pod))
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("first", r)
		switch r.URL.Path {
		case "/moved.yaml":
			http.Redirect(w, r, other.URL+"/pod.yaml", http.StatusFound)
		case "/refused.yaml":
			w.Write([]byte(refused))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(first.Close)
	host := strings.TrimPrefix(first.URL, "http://")

	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "--manifest-url-header", "X-Api-Key:" + token, "--manifest-url-header", "PRIVATE-TOKEN:" + token,
		"-f", first.URL + "/moved.yaml"}, "")
	expectCode(t, r, 0)
	if r.stdout != "from the other server\n" {
		t.Errorf("stdout %q\n%s", r.stdout, r)
	}
	mu.Lock()
	want := []seen{{"first", "/moved.yaml", token, token}, {"other", "/pod.yaml", "", ""}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the servers saw %+v\nwant %+v", got, want)
	}
	mu.Unlock()

	for _, tc := range []struct {
		name, path, want string
	}{
		{"not found", "/missing.yaml", "podrun: http://xxxxx@" + host + "/missing.yaml: unexpected HTTP status 404 Not Found"},
		{"a pod the run refuses", "/refused.yaml", "podrun: http://xxxxx@" + host + "/refused.yaml: document 1: pod default/e2e-src-cred-bad-" + suffix + ": spec.containers[0].image: InvalidImageName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			junit := filepath.Join(t.TempDir(), "junit.xml")
			r := e.runPodrun([]string{"--junit", junit, "-o", "json", "-f", "http://" + token + "@" + host + tc.path}, "")
			expectCode(t, r, 125)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr lacks %s\n%s", tc.want, r)
			}
			report, _ := os.ReadFile(junit)
			for ch, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "junit": string(report)} {
				if strings.Contains(out, token) {
					t.Errorf("%s shows the token:\n%s", ch, out)
				}
			}
			expectNothingCreated(t, e)
		})
	}
}
