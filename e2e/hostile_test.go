//go:build e2e

package e2e

// The hostile-manifest suite: the real binary on the real runtime, given
// input meant to hurt it. Every case exits 125 with an error that names the
// file, the document and the field, and creates nothing: no sandbox or
// container, no pod data or log dir, no mount, no pod cgroup, and no file
// outside what the manifest names (expectNoTrace). The cases a unit or CLI
// test already covers (sources/hostile_test.go, main_input_test.go,
// volumes/hostile_test.go) are here again because only this tier shows
// that the binary, dialling the runtime, still creates nothing.
//
// The corpus's NEG rows are TestE2EConformance's (conformance_test.go):
// each of them is checked with expectNoTrace there.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podrun/podrun/sources"
	"github.com/podrun/podrun/volumes"
)

// ------------------------------------------------------------ no trace --

// runArgs picks the -f sources and --node-name out of podrun's arguments.
func runArgs(args []string) (specs []string, nodeName string) {
	for i := 0; i < len(args)-1; i++ {
		switch args[i] {
		case "-f", "--filename":
			specs = append(specs, args[i+1])
		case "--node-name":
			nodeName = args[i+1]
		}
	}
	if nodeName == "" {
		nodeName, _ = os.Hostname()
	}
	return specs, strings.ToLower(nodeName)
}

// podUIDs are the UIDs podrun gives the pods of args' file sources, decoded
// the way podrun decodes them (same paths, same node name). Sources that do
// not decode give none: podrun stops before any pod has a UID.
func podUIDs(t *testing.T, args []string) []string {
	t.Helper()
	specs, node := runArgs(args)
	var files []string
	for _, s := range specs {
		if s != "-" && !strings.Contains(s, "://") {
			files = append(files, s)
		}
	}
	if len(files) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := sources.Load(ctx, files, sources.Options{NodeName: node})
	if err != nil {
		return nil
	}
	var uids []string
	for _, p := range set.Pods {
		uids = append(uids, string(p.UID))
	}
	return uids
}

// expectNoTrace fails the test unless the run of args left nothing of its
// own: no sandbox or container of the test's root dir or podrun processes
// (asked now, not only when the test ends), no pod or log dir, no mount at
// or below the root dir, and no pod cgroup of any of its pods, under every
// hierarchy and QoS class.
func expectNoTrace(t *testing.T, e *env, args []string) {
	t.Helper()
	e.checkClean(e.root)
	if ms, err := volumes.MountsUnder(e.root); err != nil {
		t.Errorf("reading the mounts: %v", err)
	} else if len(ms) > 0 {
		t.Errorf("mounts left under the root dir: %v", ms)
	}
	for _, uid := range podUIDs(t, args) {
		for _, l := range podCgroupsLeft("/podrun", uid) {
			t.Errorf("left: %s", l)
		}
	}
}

// expectRefused fails the test unless podrun exited 125 with stderr holding
// each of want, and created nothing at all (expectNothingCreated: not even
// the root dir's pods/ and logs/).
func expectRefused(t *testing.T, e *env, r result, want ...string) {
	t.Helper()
	expectCode(t, r, 125)
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q\n%s", w, r)
		}
	}
	expectNothingCreated(t, e)
	expectNoTrace(t, e, r.args)
}

// expectEmptyDir fails the test unless dir holds nothing: the place a
// hostile manifest tried to reach through a symlink.
func expectEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("reading %s: %v", dir, err)
	}
	for _, en := range entries {
		t.Errorf("created outside through a symlink: %s", filepath.Join(dir, en.Name()))
	}
}

// ------------------------------------------------------------- cases --

// hostileCase is one manifest and what podrun must say about it.
type hostileCase struct {
	name string
	// manifest writes the case's manifest and returns its path; outside
	// is a dir of the test's that the manifest points at and that must
	// stay empty.
	manifest func(t *testing.T, uid, outside string) string
	// want are the lines of stderr, less the manifest's path and the
	// document, which are checked on their own ("PATH: document N").
	want []string
	doc  string // e.g. `document 1 (Pod "x")` or `document 1: pod default/x`
}

func itemCase(name, source, want string) hostileCase {
	return hostileCase{name: name, doc: `document 3 (Pod "hostile-items")`, want: []string{want},
		manifest: func(t *testing.T, uid, _ string) string {
			return fromTemplate(t, "hostile/volume-source.yaml", "UID", uid, "SOURCE", source)
		}}
}

func mountCase(name, volume, mount, env, doc, want string) hostileCase {
	return hostileCase{name: name, doc: doc, want: []string{want},
		manifest: func(t *testing.T, uid, outside string) string {
			vol := strings.ReplaceAll(volume, "OUTSIDE", outside)
			return fromTemplate(t, "hostile/mount.yaml", "UID", uid, "VOLUME", vol, "MOUNT", mount, "ENV", env)
		}}
}

// linkVolume is a hostPath dir holding "link", a symlink to the test's
// outside dir, as a volume source.
func linkVolume(t *testing.T, outside string) string {
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func hostPathCase(name, typ, target string, want string) hostileCase {
	return hostileCase{name: name, doc: "document 1: pod default/hostile-hostpath", want: []string{want},
		manifest: func(t *testing.T, uid, outside string) string {
			link := filepath.Join(t.TempDir(), "link")
			tgt := strings.ReplaceAll(target, "OUTSIDE", outside)
			if target == "LOOP" {
				tgt = link
			}
			if target == "FILE" {
				tgt = filepath.Join(t.TempDir(), "file")
				os.WriteFile(tgt, nil, 0o644)
			}
			if err := os.Symlink(tgt, link); err != nil {
				t.Fatal(err)
			}
			return fromTemplate(t, "hostile/hostpath.yaml", "UID", uid, "PATH", link, "TYPE", typ)
		}}
}

// valueCase is a container with fields (resources, securityContext) that
// validation refuses.
func valueCase(name, fields, want string) hostileCase {
	return hostileCase{name: name, doc: `document 1 (Pod "hostile-values")`, want: []string{want},
		manifest: func(t *testing.T, uid, _ string) string {
			return fromTemplate(t, "hostile/values.yaml", "UID", uid, "FIELDS", fields)
		}}
}

// bigCase writes data (generated) as a manifest.
func bigCase(name, doc string, data func() string, want string) hostileCase {
	return hostileCase{name: name, doc: doc, want: []string{want},
		manifest: func(t *testing.T, _, _ string) string { return manifest(t, "hostile.yaml", data()) }}
}

func hostileCases() []hostileCase {
	const (
		dots   = `: must not contain '..'`
		abs    = `: must be a relative path`
		mountD = `document 1 (Pod "hostile-mount")`
		mountR = `document 1: pod default/hostile-mount`
		empty  = `emptyDir: {}`
	)
	noEnv := "[]"
	return []hostileCase{
		// Item paths of the volumes that write files: API validation.
		itemCase("configMap item with ..", `configMap: {name: hostile-cm, items: [{key: k, path: ../../etc/hostile}]}`,
			`spec.volumes[0].configMap.items[0].path: Invalid value: "../../etc/hostile"`+dots),
		itemCase("configMap item absolute", `configMap: {name: hostile-cm, items: [{key: k, path: /etc/hostile}]}`,
			`spec.volumes[0].configMap.items[0].path: Invalid value: "/etc/hostile"`+abs),
		itemCase("secret item with ..", `secret: {secretName: hostile-secret, items: [{key: k, path: a/../../b}]}`,
			`spec.volumes[0].secret.items[0].path: Invalid value: "a/../../b"`+dots),
		itemCase("secret item absolute", `secret: {secretName: hostile-secret, items: [{key: k, path: /root/.ssh/authorized_keys}]}`,
			`spec.volumes[0].secret.items[0].path: Invalid value: "/root/.ssh/authorized_keys"`+abs),
		itemCase("downwardAPI item with ..", `downwardAPI: {items: [{path: ../x, fieldRef: {fieldPath: metadata.name}}]}`,
			`spec.volumes[0].downwardAPI.items[0].path: Invalid value: "../x"`+dots),
		itemCase("downwardAPI item absolute", `downwardAPI: {items: [{path: /x, fieldRef: {fieldPath: metadata.name}}]}`,
			`spec.volumes[0].downwardAPI.items[0].path: Invalid value: "/x"`+abs),
		itemCase("projected configMap item with ..", `projected: {sources: [{configMap: {name: hostile-cm, items: [{key: k, path: ../x}]}}]}`,
			`spec.volumes[0].projected.sources[0].configMap.items[0].path: Invalid value: "../x"`+dots),
		itemCase("projected secret item absolute", `projected: {sources: [{secret: {name: hostile-secret, items: [{key: k, path: /x}]}}]}`,
			`spec.volumes[0].projected.sources[0].secret.items[0].path: Invalid value: "/x"`+abs),
		itemCase("projected downwardAPI item with ..", `projected: {sources: [{downwardAPI: {items: [{path: a/../../y, fieldRef: {fieldPath: metadata.name}}]}}]}`,
			`spec.volumes[0].projected.sources[0].downwardAPI.items[0].path: Invalid value: "a/../../y"`+dots),

		// subPath and subPathExpr as written: API validation.
		mountCase("subPath with ..", empty, `subPath: a/../../x`, noEnv, mountD,
			`spec.containers[0].volumeMounts[0].subPath: Invalid value: "a/../../x"`+dots),
		mountCase("subPath absolute", empty, `subPath: /etc`, noEnv, mountD,
			`spec.containers[0].volumeMounts[0].subPath: Invalid value: "/etc"`+abs),
		mountCase("subPathExpr with ..", empty, `subPathExpr: "$(X)/../.."`, noEnv, mountD,
			`spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(X)/../.."`+dots),
		mountCase("subPathExpr absolute", empty, `subPathExpr: "/$(X)"`, noEnv, mountD,
			`spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "/$(X)"`+abs),
		// subPathExpr as expanded from the container's environment, known
		// before anything is created.
		mountCase("subPathExpr expanding to ..", empty, `subPathExpr: "$(D)"`, `[{name: D, value: "a/../../etc"}]`, mountR,
			`spec.containers[0].volumeMounts[0].subPathExpr: "$(D)" expands to "a/../../etc": unable to provision SubPath`),
		mountCase("subPathExpr expanding to an absolute path", empty, `subPathExpr: "$(D)"`, `[{name: D, value: /etc}]`, mountR,
			"spec.containers[0].volumeMounts[0].subPathExpr: \"$(D)\" expands to \"/etc\": error SubPath `/etc` must not be an absolute path"),
		mountCase("subPathExpr with a missing variable", empty, `subPathExpr: "logs/$(NOPE)"`, noEnv, mountR,
			`spec.containers[0].volumeMounts[0].subPathExpr: "logs/$(NOPE)": missing value for NOPE`),
		// Symlinks out of a hostPath volume, there before the run.
		{name: "subPath through a symlink out of a hostPath", doc: mountR,
			want: []string{`spec.containers[0].volumeMounts[0].subPath: subPath "link" of volume "v" leads outside the volume (through a symlink)`},
			manifest: func(t *testing.T, uid, outside string) string {
				vol := fmt.Sprintf(`hostPath: {path: %q, type: Directory}`, linkVolume(t, outside))
				return fromTemplate(t, "hostile/mount.yaml", "UID", uid, "VOLUME", vol, "MOUNT", "subPath: link", "ENV", noEnv)
			}},
		{name: "subPath to be created through a symlink out of a hostPath", doc: mountR,
			want: []string{`spec.containers[0].volumeMounts[0].subPath: subPath "link/new" of volume "v" leads outside the volume (through a symlink)`},
			manifest: func(t *testing.T, uid, outside string) string {
				vol := fmt.Sprintf(`hostPath: {path: %q}`, linkVolume(t, outside))
				return fromTemplate(t, "hostile/mount.yaml", "UID", uid, "VOLUME", vol, "MOUNT", "subPath: link/new", "ENV", noEnv)
			}},
		{name: "subPathExpr through a symlink out of a hostPath", doc: mountR,
			want: []string{`spec.containers[0].volumeMounts[0].subPathExpr: subPath "link/new" of volume "v" leads outside the volume (through a symlink)`},
			manifest: func(t *testing.T, uid, outside string) string {
				vol := fmt.Sprintf(`hostPath: {path: %q}`, linkVolume(t, outside))
				return fromTemplate(t, "hostile/mount.yaml", "UID", uid, "VOLUME", vol, "MOUNT", `subPathExpr: "$(L)/new"`, "ENV", `[{name: L, value: link}]`)
			}},

		// hostPath volumes whose path is a symlink, with each type it
		// fails: one that leads nowhere (nothing is created through it),
		// one to the wrong kind of file, a loop.
		hostPathCase("hostPath dangling symlink without a type", "", "OUTSIDE/nothing", "is a symlink to OUTSIDE/nothing, which does not exist: nothing is created through it"),
		hostPathCase("hostPath dangling symlink of type DirectoryOrCreate", "DirectoryOrCreate", "OUTSIDE/dir", "is a symlink to OUTSIDE/dir, which does not exist"),
		hostPathCase("hostPath dangling symlink of type FileOrCreate", "FileOrCreate", "OUTSIDE/file", "is a symlink to OUTSIDE/file, which does not exist"),
		hostPathCase("hostPath dangling symlink of type Directory", "Directory", "OUTSIDE/dir", "which does not exist"),
		hostPathCase("hostPath dangling symlink of type File", "File", "OUTSIDE/file", "which does not exist"),
		hostPathCase("hostPath dangling symlink of type Socket", "Socket", "OUTSIDE/sock", "which does not exist"),
		hostPathCase("hostPath symlink to a file of type Directory", "Directory", "FILE", "is not a directory (a symlink to "),
		hostPathCase("hostPath symlink to a dir of type File", "File", "OUTSIDE", "is not a file (a symlink to OUTSIDE)"),
		hostPathCase("hostPath symlink to a dir of type FileOrCreate", "FileOrCreate", "OUTSIDE", "is not a file (a symlink to OUTSIDE)"),
		hostPathCase("hostPath symlink to a file of type DirectoryOrCreate", "DirectoryOrCreate", "FILE", "is not a directory (a symlink to "),
		hostPathCase("hostPath symlink to a file of type Socket", "Socket", "FILE", "is not a socket file (a symlink to "),
		hostPathCase("hostPath symlink to a file of type CharDevice", "CharDevice", "FILE", "is not a character device (a symlink to "),
		hostPathCase("hostPath symlink to a dir of type BlockDevice", "BlockDevice", "OUTSIDE", "is not a block device (a symlink to OUTSIDE)"),
		hostPathCase("hostPath symlink loop", "Directory", "LOOP", "too many levels of symbolic links"),

		// Values the API server refuses, and quantities beyond the
		// kubelet's int64: API validation.
		valueCase("negative cpu", `resources: {limits: {cpu: "-1"}}`,
			`spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`),
		valueCase("memory of 2^64 bytes", `resources: {limits: {memory: "18446744073709551616"}}`,
			`spec.containers[0].resources.limits[memory]: Invalid value: "18446744073709551616": must be less than or equal to 9223372036854775807 (an int64)`),
		valueCase("requests above limits", `resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}`,
			`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`),
		valueCase("runAsUser -1", `securityContext: {runAsUser: -1}`,
			`spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`),

		// A namespace and a name the API server takes, whose log dir name
		// is longer than a file name may be: refused before the sandbox.
		{name: "namespace and name too long for the log dir", doc: "document 1: pod " + strings.Repeat("n", 63) + "/" + strings.Repeat("x", 253),
			want: []string{`metadata.name: the pod's log dir <namespace>_<name>_<uid> would be a file name of `,
				`longer than the 255 bytes a file name may have (NAME_MAX)`},
			manifest: func(t *testing.T, uid, _ string) string {
				return fromTemplate(t, "hostile/long-name.yaml", "UID", uid, "NAMESPACE", strings.Repeat("n", 63), "NAME", strings.Repeat("x", 253))
			}},

		// Size and shape.
		bigCase("a 100 MB document", "", func() string { return podYAMLOfSize(100 << 20) }, "larger than the 10 MiB limit"),
		bigCase("deeply nested flow YAML", "document 1", func() string {
			return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {x: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}\n"
		}, "parsing: yaml: line 4: exceeded max depth of 10000"),
		bigCase("deeply nested block YAML", "document 1", func() string {
			return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x:\n  " + strings.Repeat("- ", 20000) + "x\n"
		}, "parsing: yaml: line 6: exceeded max depth of 10000"),
		bigCase("a YAML alias bomb: a 1 MiB anchor 500 times", `document 1 (Pod "bomb")`, func() string {
			return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  annotations:\n    big: &a \"" + strings.Repeat("x", 1<<20) +
				"\"\nspec:\n  containers:\n  - name: c\n    image: busybox:1.28\n    args: [" + strings.TrimSuffix(strings.Repeat("*a, ", 500), ", ") + "]\n"
		}, "spec.containers[0].args[8]: aliases expand the source beyond the 10 MiB limit"),
		bigCase("billion laughs", "document 1", func() string {
			var b strings.Builder
			b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
			for i := 1; i <= 9; i++ {
				fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
			}
			return b.String()
		}, "parsing: yaml: document contains excessive aliasing"),
	}
}

// podYAMLOfSize is a pod followed by a comment, size bytes in all.
func podYAMLOfSize(size int) string {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: busybox:1.28}]}\n#"
	return pod + strings.Repeat("x", size-len(pod))
}

// TestE2EHostileManifests: every hostile manifest is refused with exit 125
// and an error naming the file, the document and the field, and nothing
// is created, not even through the symlinks it holds.
func TestE2EHostileManifests(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			outside := t.TempDir()
			path := tc.manifest(t, "hostile-"+randomSuffix(t), outside)
			start := time.Now()
			r := e.runPodrun([]string{"--node-name", "hostile-e2e", "-f", path}, "")
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "OUTSIDE", outside))
			}
			where := "podrun: " + path + ": "
			if tc.doc != "" {
				where += tc.doc + ": "
			}
			expectRefused(t, e, r, append(want, where)...)
			expectEmptyDir(t, outside)
			if strings.Contains(r.stdout+r.stderr, "ran-hostile") {
				t.Errorf("a container ran\n%s", r)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the refusal took %v", d)
			}
		})
	}
}

// TestE2EHostileSubPathThroughAnInitContainersSymlink: an init container
// turns a dir of an emptyDir into a symlink to the host's / (or to a host
// dir of the test's), and the main container mounts a subPath through it.
// Only the container's creation can see it: like the kubelet
// (CreateContainerConfigError), podrun refuses the container, then ends the
// run with 125 and tears the pod down; the main container never runs,
// nothing is mounted or created outside the volume, and nothing is left.
func TestE2EHostileSubPathThroughAnInitContainersSymlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target, subPath string
	}{
		{"to / itself", "/", "d"},
		{"to the host's /etc below it", "/", "d/etc"},
		{"to a host dir with a subPath to create there", "OUTSIDE", "d/new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			outside := t.TempDir()
			target := strings.ReplaceAll(tc.target, "OUTSIDE", outside)
			path := fromTemplate(t, "hostile/init-symlink.yaml", "UID", "hostile-"+randomSuffix(t), "TARGET", target, "SUBPATH", tc.subPath)
			r := e.runPodrun([]string{"--node-name", "hostile-e2e", "-f", path}, "")
			expectCode(t, r, 125)
			for _, w := range []string{
				"[pod/hostile-init-symlink/init] linked",
				fmt.Sprintf(`podrun: %s: document 1: pod default/hostile-init-symlink: CreateContainerConfigError: subPath %q of volume "v" leads outside the volume (through a symlink)`, path, tc.subPath),
			} {
				if !strings.Contains(r.stderr+r.stdout, w) {
					t.Errorf("output lacks %q\n%s", w, r)
				}
			}
			if strings.Contains(r.stdout+r.stderr, "ran-hostile") {
				t.Errorf("the main container ran\n%s", r)
			}
			expectEmptyDir(t, outside)
			expectNoTrace(t, e, r.args)
		})
	}
}

// TestE2EHostileURLs: a manifest URL that never ends, fast or slow, or
// that redirects forever (a server of the test's on 127.0.0.1) is refused
// with 125 within the source's limits, naming the URL, and nothing is
// created.
func TestE2EHostileURLs(t *testing.T) {
	t.Parallel()
	chunk := []byte("# " + strings.Repeat("x", 64<<10) + "\n")
	mux := http.NewServeMux()
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: endless}\nspec: {containers: [{name: c, image: busybox:1.28}]}\n"))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: drip}\n"))
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
				w.Write([]byte("#\n"))
			}
		}
	})
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		n := 0
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/loop/"), "%d", &n)
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n+1), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name, path string
		want       string
		limit      time.Duration
	}{
		{"a body that never ends", "/endless", "larger than the 10 MiB limit", 30 * time.Second},
		{"a body that never ends, slowly", "/drip", "reading body: not complete within 10s", 40 * time.Second},
		{"redirects forever", "/loop/0", "stopped after 10 redirects", 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			url := srv.URL + tc.path
			start := time.Now()
			r := e.runPodrun([]string{"-f", url}, "")
			expectRefused(t, e, r, "podrun: "+url+": ", tc.want)
			if d := time.Since(start); d > tc.limit {
				t.Errorf("the refusal took %v, want under %v", d, tc.limit)
			}
		})
	}
}
