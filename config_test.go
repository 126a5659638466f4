package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
)

// goodFlags are the flags of a valid run, as the command line's defaults
// and one -f give them.
func goodFlags() runFlagValues {
	return runFlagValues{
		Filenames: []string{"pod.yaml"}, RootDir: "/var/lib/podrun", Wait: "auto", Output: "text",
		NodeName: "Node1", CgroupRoot: "/podrun", CopyOutLimit: "1Gi",
	}
}

// readFiles is a readFile over a map of file contents.
func readFiles(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		b, ok := files[name]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return []byte(b), nil
	}
}

func TestNewRunConfig(t *testing.T) {
	files := readFiles(map[string]string{
		"/creds.json": `{"auths":{"reg.io":{"username":"u","password":"p"}}}`,
		"/bad.json":   `{"auths":{"reg.io":{"password":"hunter2",}}}`,
	})
	for _, tc := range []struct {
		name   string
		mutate func(f *runFlagValues)
		err    string // "" : valid
	}{
		{"defaults", func(f *runFlagValues) {}, ""},
		{"stray argument", func(f *runFlagValues) { f.Args = []string{"extra"} }, `unexpected argument "extra": manifests are given with -f`},
		{"no manifest", func(f *runFlagValues) { f.Filenames = nil }, "no manifest given: use -f FILE"},
		{"bad --wait", func(f *runFlagValues) { f.Wait = "forever" }, `forever`},
		{"bad --output", func(f *runFlagValues) { f.Output = "xml" }, `invalid --output "xml": want text, json or yaml`},
		{"bad --manifest-url-header", func(f *runFlagValues) { f.ManifestURLHeaders = []string{"novalue"} }, `invalid --manifest-url-header (#1)`},
		{"empty --node-name", func(f *runFlagValues) { f.NodeName = "" }, "--node-name is empty"},
		{"bad --system-reserved", func(f *runFlagValues) { f.SystemReserved = []string{"cpu"} }, `invalid --system-reserved: "cpu": want RESOURCE=QUANTITY`},
		{"--system-reserved of gpus", func(f *runFlagValues) { f.SystemReserved = []string{"nvidia.com/gpu=1"} }, "invalid --system-reserved"},
		{"bad --node-labels", func(f *runFlagValues) { f.NodeLabels = []string{"a=b", "bad key=x"} }, `invalid --node-labels: "bad key=x": invalid label key`},
		{"bad --allowed-unsafe-sysctls", func(f *runFlagValues) { f.AllowedUnsafeSysctls = []string{"kernel.panic"} }, "invalid --allowed-unsafe-sysctls"},
		{"bad --cgroup-driver", func(f *runFlagValues) { f.CgroupDriver = "bogus" }, `invalid --cgroup-driver "bogus": want cgroupfs or systemd`},
		{"relative --cgroup-root", func(f *runFlagValues) { f.CgroupRoot = "podrun" }, `invalid --cgroup-root "podrun": want an absolute cgroup path`},
		{"a slice --cgroup-root, driver unknown yet", func(f *runFlagValues) { f.CgroupRoot = "podrun.slice" }, ""},
		{"a slice --cgroup-root with cgroupfs", func(f *runFlagValues) { f.CgroupRoot, f.CgroupDriver = "podrun.slice", "cgroupfs" }, `invalid --cgroup-root "podrun.slice"`},
		{"'_' in --cgroup-root with systemd", func(f *runFlagValues) { f.CgroupRoot, f.CgroupDriver = "/pod_run", "systemd" }, "'_' cannot be used with the systemd cgroup driver"},
		{"no pod cgroups", func(f *runFlagValues) { f.CgroupRoot = "" }, ""},
		{"--image-credentials", func(f *runFlagValues) { f.ImageCredentials = "/creds.json" }, ""},
		{"missing --image-credentials", func(f *runFlagValues) { f.ImageCredentials = "/absent.json" }, "reading --image-credentials: open /absent.json"},
		{"--image-credentials not a docker config", func(f *runFlagValues) { f.ImageCredentials = "/bad.json" }, "reading --image-credentials /bad.json: not a valid docker config"},
		{"--dry-run", func(f *runFlagValues) { f.DryRun = true }, ""},
		{"--junit", func(f *runFlagValues) { f.JUnit = "report.xml" }, ""},
		{"--junit with --dry-run", func(f *runFlagValues) { f.DryRun, f.JUnit = true, "report.xml" }, "--junit reports a run's containers; a dry run runs none"},
		{"--copy-out", func(f *runFlagValues) {
			f.CopyOuts = []string{"tests:/out=./artifacts", "job/side:/log=/nonexistent/a"}
		}, ""},
		{"--copy-out without HOSTDIR", func(f *runFlagValues) { f.CopyOuts = []string{"tests:/out"} }, `invalid --copy-out "tests:/out": no =HOSTDIR: want CONTAINER:PATH=HOSTDIR`},
		{"--copy-out of a relative path", func(f *runFlagValues) { f.CopyOuts = []string{"tests:out=a"} }, `invalid --copy-out "tests:out=a": PATH "out" must be absolute`},
		{"--copy-out into a file", func(f *runFlagValues) { f.CopyOuts = []string{"tests:/out=/dev/null"} }, `invalid --copy-out "tests:/out=/dev/null": /dev/null is not a directory`},
		{"--copy-out with --detach", func(f *runFlagValues) { f.CopyOuts, f.Detach = []string{"tests:/out=a"}, true }, "--copy-out copies when the run's containers end or the run tears its pods down, and --detach leaves them running"},
		{"bad --copy-out-limit", func(f *runFlagValues) { f.CopyOutLimit = "lots" }, `invalid --copy-out-limit "lots": want a size in bytes`},
		{"negative --copy-out-limit", func(f *runFlagValues) { f.CopyOutLimit = "-1" }, `invalid --copy-out-limit "-1"`},
		{"no --copy-out-limit", func(f *runFlagValues) { f.CopyOutLimit = "0" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := goodFlags()
			tc.mutate(&f)
			_, err := newRunConfig(f, files)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("newRunConfig: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("newRunConfig = %v, want %q", err, tc.err)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Errorf("the error quotes the credentials file: %v", err)
			}
		})
	}
}

func TestNewRunConfigValues(t *testing.T) {
	f := goodFlags()
	f.Timeout, f.Detach, f.Wait, f.Output = 90*time.Second, true, "ready", "json"
	f.ManifestURLHeaders = []string{"a:1", "a: 2"}
	f.SystemReserved, f.NodeLabels = []string{"cpu=500m"}, []string{"disktype=ssd"}
	f.CNIBinDir, f.CgroupDriver = "/a:/b", "systemd"
	cfg, err := newRunConfig(f, readFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Run

	// Dirs handed to the runtime are absolute (CRI-O refuses a relative
	// sandbox log directory).
	wd, _ := os.Getwd()
	rel := goodFlags()
	rel.RootDir, rel.PodLogsDir, rel.SeccompProfileRoot = "r", "./logs", "prof"
	if rc, err := newRunConfig(rel, readFiles(nil)); err != nil || rc.Run.RootDir != filepath.Join(wd, "r") ||
		rc.Run.PodLogsDir != filepath.Join(wd, "logs") || rc.Facts.Node.RootDir != filepath.Join(wd, "r") ||
		rc.Facts.CNI.StateFile != filepath.Join(wd, "r", "cni-validated") {
		t.Errorf("relative dirs: %+v, %v", rc, err)
	}
	if cfg.NodeName != "node1" || cfg.Facts.Node.NodeName != "node1" || cfg.Output != "json" ||
		len(cfg.Headers.Values("A")) != 2 || o.Wait != runner.WaitReady || o.Timeout != 90*time.Second || !o.Detach ||
		o.RootDir != "/var/lib/podrun" || o.CgroupRoot != "/podrun" || o.ImageCredentials != nil {
		t.Errorf("config %+v", cfg)
	}
	f.Detach, f.CopyOuts, f.CopyOutLimit, f.CopyOutRequired = false, []string{"tests:/out/=artifacts"}, "100Mi", true
	if rc, err := newRunConfig(f, readFiles(nil)); err != nil || len(rc.Run.CopyOuts) != 1 || rc.Run.CopyOuts[0].HostDir != filepath.Join(wd, "artifacts") ||
		rc.Run.CopyOuts[0].Path != "/out" || rc.Run.CopyOutLimit != 100<<20 || !rc.Run.CopyOutRequired {
		t.Errorf("--copy-out: %+v, %v", rc.Run, err)
	}
	n := cfg.Facts
	if n.Node.SystemReserved.Cpu().MilliValue() != 500 || n.Node.Labels["disktype"] != "ssd" || n.CgroupDriver != "systemd" ||
		len(n.CNI.BinDirs) != 2 || n.CNI.StateFile != filepath.Join("/var/lib/podrun", "cni-validated") {
		t.Errorf("facts config %+v", n)
	}
}

// A bad --image-credentials fails before the runtime is dialled: the
// socket named does not exist, and the error is the file's.
func TestCLIConfigBeforeTheRuntime(t *testing.T) {
	m := writeManifest(t, jobPod)
	sock := "unix://" + filepath.Join(t.TempDir(), "none.sock")
	for _, args := range [][]string{
		{"--image-credentials", filepath.Join(t.TempDir(), "absent.json")},
		{"--cgroup-root", "relative"},
		{"--cgroup-driver", "bogus"},
	} {
		_, errOut, code := podrunAt(t, "", append(append([]string{"-r", sock}, args...), "-f", m)...)
		if code != 125 || !strings.Contains(errOut, args[0]) || strings.Contains(errOut, "none.sock") {
			t.Errorf("%v: exit %d, stderr %q; want 125 naming %s and not the socket", args, code, errOut, args[0])
		}
	}
}

// TestWithManifestsGivenUIDs: the run learns which pods' UIDs podrun gave, so
// their sandboxes say so for `podrun handover`.
func TestWithManifestsGivenUIDs(t *testing.T) {
	set, err := sources.Decode("/etc/kubernetes/manifests/two.yaml", []byte(`apiVersion: v1
kind: Pod
metadata: {name: given}
spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: kept, uid: 6b1c1a7e-5d2f-4a43-9c1e-0d8f3a2b7c11}
spec: {containers: [{name: c, image: busybox}]}
`), sources.Options{NodeName: "node1"})
	if err != nil {
		t.Fatal(err)
	}
	opts := runConfig{}.withManifests(set)
	given, kept := set.Pods[0].UID, set.Pods[1].UID
	if !opts.GivenUIDs[given] || opts.GivenUIDs[kept] || len(opts.GivenUIDs) != 1 {
		t.Errorf("GivenUIDs %v, want only %s (not %s)", opts.GivenUIDs, given, kept)
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := parseHeaders([]string{"a:hello", "b: again", "a:world"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Values("A"); len(got) != 2 || got[0] != "hello" || got[1] != "world" {
		t.Errorf("a = %v, want [hello world] in order", got)
	}
	if h.Get("B") != "again" {
		t.Errorf("b = %q", h.Get("B"))
	}
}
