package main

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildPodrun builds the podrun binary into a temp dir.
func buildPodrun(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	bin := filepath.Join(t.TempDir(), "podrun")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building podrun: %v\n%s", err, out)
	}
	return bin
}

// waitForFD waits until process pid holds a descriptor other than those
// in skip whose link satisfies match.
func waitForFD(t *testing.T, pid int, what string, match func(link string) bool, skip ...string) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && match(link) && !contains(skip, e.Name()) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("podrun (pid %d) never opened %s", pid, what)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCLISignalWhileReadingAManifest: SIGINT, SIGTERM or SIGHUP while
// podrun waits for a manifest on stdin (`sleep 30 | podrun -f -`) or on a
// named pipe with no writer ends it at once with 130, 143 or 129.
func TestCLISignalWhileReadingAManifest(t *testing.T) {
	bin := buildPodrun(t)
	for _, sig := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		for _, src := range []string{"stdin", "fifo"} {
			t.Run(src+"/"+sig.sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				args := []string{"--root-dir", filepath.Join(dir, "root"), "--cgroup-root=", "-f"}
				cmd := exec.Command(bin)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				// wait tells when podrun is reading: it holds the FIFO
				// open, or a descriptor of its own of the stdin pipe.
				var wait func(pid int)
				switch src {
				case "stdin":
					r, w, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					defer w.Close() // a writer that never writes, as `sleep 30 |`
					cmd.Stdin = r
					cmd.Args = append(append(cmd.Args, args...), "-")
					var st syscall.Stat_t
					if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
						t.Fatal(err)
					}
					pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
					wait = func(pid int) {
						r.Close()
						waitForFD(t, pid, "its own descriptor of the stdin pipe", func(l string) bool { return l == pipe }, "0")
					}
				case "fifo":
					fifo := filepath.Join(dir, "pod.fifo")
					if err := syscall.Mkfifo(fifo, 0o600); err != nil {
						t.Fatal(err)
					}
					cmd.Args = append(append(cmd.Args, args...), fifo)
					wait = func(pid int) {
						waitForFD(t, pid, fifo, func(l string) bool { return l == fifo })
					}
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				defer cmd.Process.Kill()
				wait(cmd.Process.Pid)
				sent := time.Now()
				if err := cmd.Process.Signal(sig.sig); err != nil {
					t.Fatal(err)
				}
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					t.Fatalf("podrun still running 10 s after %v; stderr:\n%s", sig.sig, stderr.String())
				}
				if code := cmd.ProcessState.ExitCode(); code != sig.code {
					t.Errorf("exit status %d, want %d; stderr:\n%s", code, sig.code, stderr.String())
				}
				if !strings.Contains(stderr.String(), "podrun: interrupted: ") {
					t.Errorf("stderr %q does not say it was interrupted", stderr.String())
				}
				t.Logf("exited %v after the signal: %s", time.Since(sent).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
			})
		}
	}
}

// TestCLIManifestURLErrorsHideSecrets: a bearer token in a malformed
// --manifest-url-header, a URL's password and a token given as its user
// name appear in no error.
func TestCLIManifestURLErrorsHideSecrets(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/cm", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"header without a colon", []string{"--manifest-url-header", "Authorization Bearer s3cret", "-f", srv.URL},
			"podrun: invalid --manifest-url-header (#1): want 'Name:value'\n"},
		{"header without a name", []string{"--manifest-url-header", "A: b", "--manifest-url-header", ":s3cret", "-f", srv.URL},
			"podrun: invalid --manifest-url-header (#2): want 'Name:value'\n"},
		{"header name that is not a token", []string{"--manifest-url-header", "Bearer s3cret:x", "-f", srv.URL},
			"podrun: manifest URL headers: a header name is not an HTTP token (not shown: it may hold a secret)\n"},
		{"header value with a newline", []string{"--manifest-url-header", "Authorization: Bearer s3cret\nX: y", "-f", srv.URL + "/pod"},
			"podrun: " + srv.URL + `/pod: Get "` + srv.URL + `/pod": net/http: invalid header field value for "Authorization"` + "\n"},
		{"password in the URL", []string{"--manifest-url-header", "Authorization: Bearer s3cret", "-f", "http://user:s3cret@" + host + "/pod"},
			"podrun: http://xxxxx:xxxxx@" + host + "/pod: unexpected HTTP status 404 Not Found\n"},
		{"a token for the URL's user name", []string{"-f", "http://s3cret@" + host + "/pod"},
			"podrun: http://xxxxx@" + host + "/pod: unexpected HTTP status 404 Not Found\n"},
		{"no pod at a URL with a token", []string{"-f", "http://s3cret@" + host + "/cm"},
			"podrun: no pod in http://xxxxx@" + host + "/cm\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := podrunAt(t, "", tt.args...)
			if code != 125 || errOut != tt.want {
				t.Errorf("exit %d, stderr:\n%s\nwant 125 and:\n%s", code, errOut, tt.want)
			}
			if strings.Contains(errOut, "s3cret") {
				t.Errorf("stderr shows the secret: %s", errOut)
			}
		})
	}
}

// TestCLIManifestURLCA: an https manifest URL is verified against the
// system roots, and --manifest-url-ca adds a private CA.
func TestCLIManifestURLCA(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(jobPod)) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	// The runtime is unreachable: a run that gets that far has read the pod.
	sock := "unix://" + filepath.Join(t.TempDir(), "none.sock")
	_, errOut, code := podrunAt(t, "", "-r", sock, "-f", srv.URL)
	if code != 125 || !strings.Contains(errOut, "x509: certificate signed by unknown authority") {
		t.Errorf("without --manifest-url-ca: exit %d, stderr %q; want 125 and an unknown authority", code, errOut)
	}
	_, errOut, code = podrunAt(t, "", "-r", sock, "--manifest-url-ca", ca, "-f", srv.URL)
	if code != 125 || !strings.HasPrefix(errOut, "podrun: connecting to "+sock) {
		t.Errorf("with --manifest-url-ca: exit %d, stderr %q; want 125 from connecting to the runtime", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	_, errOut, code = podrunAt(t, "", "-r", sock, "--manifest-url-ca", missing, "-f", srv.URL)
	if want := "podrun: " + missing + ": reading the manifest URL CA: open " + missing + ": no such file or directory\n"; code != 125 || errOut != want {
		t.Errorf("missing CA file: exit %d, stderr %q; want 125 and %q", code, errOut, want)
	}
}

// TestCLIHostileManifestsExit125: each is refused with 125 and an error
// naming the file, the document and, where there is one, the field, and
// nothing is created under --root-dir.
func TestCLIHostileManifestsExit125(t *testing.T) {
	refs := strings.TrimSuffix(strings.Repeat("*a, ", 500), ", ")
	bomb := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  annotations:\n    big: &a \"" + strings.Repeat("x", 1<<20) +
		"\"\nspec:\n  containers:\n  - name: c\n    image: busybox\n    args: [" + refs + "]\n"
	for _, tt := range []struct{ name, data, want string }{
		{"alias bomb", bomb, `document 1 (Pod "bomb"): spec.containers[0].args[8]: aliases expand the source beyond the 10 MiB limit`},
		{"deep nesting", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {x: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n",
			"document 1: parsing: yaml: line 4: exceeded max depth of 10000"},
		{"text after a KYAML document", "{apiVersion: v1, kind: Pod, metadata: {name: k}, spec: {containers: [{name: c, image: busybox}]}}\nspec: {comand: [x]}\n",
			`document 1 (Pod "k"): line 2: text after the end of the document: "spec: {comand: [x]}"`},
		{"uid that is a path", "apiVersion: v1\nkind: Pod\nmetadata: {name: u, uid: ../x}\nspec: {containers: [{name: c, image: busybox}]}\n",
			`document 1 (Pod "u"): metadata.uid: Invalid value: "../x": a lowercase RFC 1123 label`},
		{"100 MB document", podYAMLForSize(100 << 20), "larger than the 10 MiB limit"},
		{"configMap item path with ..", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, configMap: {name: c, items: [{key: k, path: ../../etc/x}]}}]\n  containers: [{name: c, image: busybox}]\n",
			`document 1 (Pod "p"): spec.volumes[0].configMap.items[0].path: Invalid value: "../../etc/x": must not contain '..'`},
		{"absolute secret item path", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, secret: {secretName: s, items: [{key: k, path: /etc/x}]}}]\n  containers: [{name: c, image: busybox}]\n",
			`document 1 (Pod "p"): spec.volumes[0].secret.items[0].path: Invalid value: "/etc/x": must be a relative path`},
		{"subPath with ..", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, emptyDir: {}}]\n  containers: [{name: c, image: busybox, volumeMounts: [{name: v, mountPath: /v, subPath: a/../../x}]}]\n",
			`document 1 (Pod "p"): spec.containers[0].volumeMounts[0].subPath: Invalid value: "a/../../x": must not contain '..'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			m := filepath.Join(dir, "pod.yaml")
			if err := os.WriteFile(m, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "root")
			start := time.Now()
			_, errOut, code := podrunAt(t, "", "--root-dir", root, "-f", m)
			if code != 125 || !strings.HasPrefix(errOut, "podrun: "+m+": ") || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %.300q; want 125 and %s: ...%s", code, errOut, m, tt.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("--root-dir was created (%v)", err)
			}
		})
	}
}

// podYAMLForSize is a pod followed by a comment, size bytes in all.
func podYAMLForSize(size int) string {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: busybox}]}\n#"
	return pod + strings.Repeat("x", size-len(pod))
}
