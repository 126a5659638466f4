package sources

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// namedPod is podYAML with another name.
func namedPod(name string) string {
	return strings.Replace(podYAML, "name: web", "name: "+name, 1)
}

func podNames(s *Set) []string {
	var names []string
	for _, p := range s.Pods {
		names = append(names, p.Name)
	}
	return names
}

func TestLoadFilesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "single.yaml"), namedPod("single"))
	manifests := filepath.Join(dir, "manifests")
	writeFile(t, filepath.Join(manifests, "b.yaml"), namedPod("b"))
	writeFile(t, filepath.Join(manifests, "a.json"), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}}`)
	writeFile(t, filepath.Join(manifests, "c"), namedPod("c"))
	writeFile(t, filepath.Join(manifests, ".hidden.yaml"), namedPod("hidden"))
	writeFile(t, filepath.Join(manifests, ".swp"), "not yaml: [")
	writeFile(t, filepath.Join(manifests, "sub", "d.yaml"), namedPod("d"))
	if err := os.Symlink(filepath.Join(dir, "single.yaml"), filepath.Join(manifests, "e-link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(manifests, ".dangling")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "other.yaml"), namedPod("other"))
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	set, err := Load(context.Background(), []string{manifests, filepath.Join(dir, "other.yaml"), filepath.Join(dir, "empty")}, Options{NodeName: "n"})
	if err != nil {
		t.Fatal(err)
	}
	// Lexical order, no dotfiles, no subdirectory, symlinks followed; the
	// symlink names the same file as single.yaml but a different path.
	want := "a b c single other"
	if got := strings.Join(podNames(set), " "); got != want {
		t.Errorf("pods %q, want %q", got, want)
	}
	if got := set.Pods[1].Origin.Source; got != filepath.Join(manifests, "b.yaml") {
		t.Errorf("origin %q", got)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, podYAML+"#"+strings.Repeat("x", maxManifestSize))
	empty := filepath.Join(dir, "empty.yaml")
	writeFile(t, empty, "# nothing here\n")
	badDir := filepath.Join(dir, "bad")
	writeFile(t, filepath.Join(badDir, "1.yaml"), namedPod("one"))
	writeFile(t, filepath.Join(badDir, "2.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: two}\nspec: {containers: [{name: a, image: x, comand: []}]}\n")
	dup := filepath.Join(dir, "dup.yaml")
	writeFile(t, dup, podYAML)

	tests := []struct {
		name  string
		specs []string
		stdin string
		want  string
	}{
		{"missing path", []string{filepath.Join(dir, "nope.yaml")}, "", filepath.Join(dir, "nope.yaml") + ": file does not exist"},
		{"file over 10 MiB", []string{big}, "", big + ": larger than the 10 MiB limit"},
		{"file without objects", []string{empty}, "", empty + ": no objects found"},
		{"bad file in a directory", []string{badDir}, "", filepath.Join(badDir, "2.yaml") + `: document 1 (Pod "two"): spec.containers[0].comand: unknown field`},
		{"stdin", []string{"-"}, "apiVersion: v1\nkind: Service\n", "stdin: document 1: kind Service is not supported: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects"},
		{"stdin twice", []string{"-", "-"}, podYAML, "stdin: stdin given more than once"},
		{"same pod in two sources", []string{dup, "-"}, podYAML, `stdin: document 1 (Pod "web"): metadata.name: Duplicate value: "web": Pod default/web is also defined in ` + dup + `: document 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), tt.specs, Options{Stdin: strings.NewReader(tt.stdin)})
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}

	_, err := Load(context.Background(), []string{filepath.Join(dir, "nope.yaml")}, Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing path error %v is not fs.ErrNotExist", err)
	}
}

func TestLoadStdin(t *testing.T) {
	set, err := Load(context.Background(), []string{"-"}, Options{Stdin: strings.NewReader(podYAML)})
	if err != nil {
		t.Fatal(err)
	}
	p := set.Pods[0]
	if p.Origin != (Origin{Source: "stdin", Doc: 1}) || p.Annotations[ConfigSourceAnnotationKey] != "stdin" {
		t.Errorf("origin %+v, config.source %q", p.Origin, p.Annotations[ConfigSourceAnnotationKey])
	}
}

func TestLoadHTTP(t *testing.T) {
	var gotHeaders http.Header
	mux := http.NewServeMux()
	mux.HandleFunc("/pod", func(w http.ResponseWriter, r *http.Request) {
		gotHeaders = r.Header.Clone()
		w.Write([]byte(podYAML))
	})
	mux.HandleFunc("/podlist", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}}]}`))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/created", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(podYAML))
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(podYAML + "#"))
		w.Write([]byte(strings.Repeat("x", maxManifestSize)))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	headers := http.Header{}
	headers.Add("A", "hello")
	headers.Add("A", "again")
	headers.Add("Authorization", "Bearer t")
	set, err := Load(context.Background(), []string{srv.URL + "/pod", srv.URL + "/podlist"}, Options{HTTPHeaders: headers})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(gotHeaders.Values("A"), ","); got != "hello,again" {
		t.Errorf("header A = %q", got)
	}
	if got := gotHeaders.Get("Authorization"); got != "Bearer t" {
		t.Errorf("header Authorization = %q", got)
	}
	if got := strings.Join(podNames(set), " "); got != "web a" {
		t.Errorf("pods %q", got)
	}
	p := set.Pods[0]
	if p.Origin.Source != srv.URL+"/pod" || p.Annotations[ConfigSourceAnnotationKey] != "http" {
		t.Errorf("origin %+v, config.source %q", p.Origin, p.Annotations[ConfigSourceAnnotationKey])
	}

	for _, tt := range []struct{ path, want string }{
		{"/missing", ": unexpected HTTP status 404 Not Found"},
		{"/created", ": unexpected HTTP status 201 Created"},
		{"/empty", ": zero-length data received"},
		{"/big", ": reading body: larger than the 10 MiB limit"},
	} {
		_, err := Load(context.Background(), []string{srv.URL + tt.path}, Options{})
		if want := srv.URL + tt.path + tt.want; err == nil || err.Error() != want {
			t.Errorf("GET %s: error %v, want %s", tt.path, err, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Load(ctx, []string{srv.URL + "/pod"}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v, want context.Canceled", err)
	}
}

func TestLoadHTTPContextDuringRequest(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	_, err := Load(ctx, []string{srv.URL}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
