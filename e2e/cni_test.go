//go:build e2e

package e2e

// The pod network end to end: the pre-flight check and `podrun cni init`
// (package cni), hostPorts, the pod IP and hostNetwork. The testbed's
// runtime keeps its own, valid CNI config; the bad configurations here are
// shown to podrun alone through --cni-conf-dir and --cni-bin-dir, which
// override the directories the runtime reports.

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// testbedCNIBinDir is where the testbed's CNI plugins are.
func testbedCNIBinDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("PODRUN_TESTBED_CNI_BIN_DIR")
	if d == "" {
		t.Fatal("PODRUN_TESTBED_CNI_BIN_DIR is not set (eval \"$(bash hack/testbed.sh env)\")")
	}
	return d
}

// onPodNetwork: ip is on the testbed's pod subnet (PODRUN_TESTBED_POD_SUBNET;
// each testbed instance has its own).
func onPodNetwork(t *testing.T, ip string) bool {
	t.Helper()
	s := os.Getenv("PODRUN_TESTBED_POD_SUBNET")
	subnet, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatalf("PODRUN_TESTBED_POD_SUBNET %q: %v (eval \"$(bash hack/testbed.sh env)\")", s, err)
	}
	a, err := netip.ParseAddr(ip)
	return err == nil && subnet.Contains(a)
}

// badCNI makes a conf dir whose config names a plugin that does not exist
// and a bin dir holding the testbed's bridge plugin only.
func badCNI(t *testing.T) (confDir, binDir string) {
	t.Helper()
	tmp := t.TempDir()
	confDir, binDir = filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	for _, d := range []string{confDir, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(testbedCNIBinDir(t), "bridge"), filepath.Join(binDir, "bridge")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-bad.conflist"), []byte(readTestdata(t, "cni/bad.conflist")), 0o644); err != nil {
		t.Fatal(err)
	}
	return confDir, binDir
}

func TestE2ECNIMissingPluginRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	confDir, binDir := badCNI(t)
	m := testdata("cni/missing-plugin.yaml")
	r := e.runPodrun([]string{"--cni-conf-dir", confDir, "--cni-bin-dir", binDir, "-f", m}, "")
	expectCode(t, r, 125)
	want := `CNI network "e2e-bad" (` + filepath.Join(confDir, "10-bad.conflist") + `): plugin "podrun-e2e-nosuchplugin" not found in ` + binDir + ` (from --cni-bin-dir)`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	if strings.Contains(r.stdout+r.stderr, "should-not-run") || strings.Contains(r.stderr, "Pulled") {
		t.Errorf("the refused pod started\n%s", r)
	}
	if sbs := sandboxesOf(t, "e2e-cni-missing"); len(sbs) != 0 {
		t.Errorf("%d sandboxes of the refused pod", len(sbs))
	}
	expectNothingCreated(t, e)

	// No config at all in the dir named.
	r = e.runPodrun([]string{"--cni-conf-dir", t.TempDir() + "/none", "-f", m}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, "no CNI network config (*.conflist, *.conf, *.json) in ") || !strings.Contains(r.stderr, "/none (from --cni-conf-dir)") {
		t.Errorf("stderr does not name the empty conf dir\n%s", r)
	}
	expectNothingCreated(t, e)
}

func TestE2ECNIHostNetworkPodRunsWithBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	confDir, binDir := badCNI(t)
	r := e.runPodrun([]string{"--cni-conf-dir", confDir, "--cni-bin-dir", binDir, "-f", testdata("cni/hostnet-bad-config.yaml")}, "")
	expectCode(t, r, 0)
	if !strings.Contains(r.stdout, "host-network-ok") {
		t.Errorf("the host-network pod's output is missing\n%s", r)
	}
}

// TestE2ECNIVersionsLeftToTheSandbox: a run on a fresh root dir runs no
// CNI plugin itself (their VERSION is asked only to explain a sandbox the
// runtime failed to make); the sandbox the runtime made on the network
// records it as validated. podrun's check is pointed, by the flags, at the
// testbed's config and at wrappers of its plugins that log each run.
func TestE2ECNIVersionsLeftToTheSandbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	confDir := os.Getenv("PODRUN_TESTBED_CNI_CONF_DIR")
	if confDir == "" {
		t.Fatal("PODRUN_TESTBED_CNI_CONF_DIR is not set (eval \"$(bash hack/testbed.sh env)\")")
	}
	realBin := testbedCNIBinDir(t)
	tmp := t.TempDir()
	binDir, calls := filepath.Join(tmp, "bin"), filepath.Join(tmp, "calls")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	plugins, err := os.ReadDir(realBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plugins {
		wrapper := "#!/bin/sh\necho \"$CNI_COMMAND\" >> " + calls + "\nexec " + filepath.Join(realBin, p.Name()) + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(binDir, p.Name()), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--cni-conf-dir", confDir, "--cni-bin-dir", binDir, "-f", testdata("cni/versions-left.yaml")}
	for i := range 2 {
		r := e.runPodrun(args, "")
		expectCode(t, r, 0)
		if !strings.Contains(r.stdout, "network-ok") {
			t.Errorf("run %d: the pod's output is missing\n%s", i+1, r)
		}
		if b, err := os.ReadFile(calls); err == nil {
			t.Errorf("run %d: podrun ran CNI plugins itself: %q", i+1, b)
		}
		if _, err := os.Stat(filepath.Join(e.root, "cni-validated")); err != nil {
			t.Errorf("run %d: the network the sandbox got is not recorded: %v", i+1, err)
		}
	}
}

// httpGet fetches url, retrying until deadline (the server in the pod may
// not listen yet when the pod turns Ready).
func httpGet(t *testing.T, url string, within time.Duration) (string, error) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(url)
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return string(b), nil
			}
			err = rerr
			if err == nil {
				err = &httpStatusError{resp.Status}
			}
		}
		if time.Now().After(deadline) {
			return "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type httpStatusError struct{ status string }

func (e *httpStatusError) Error() string { return "HTTP " + e.status }

// A hostPort reaches the pod from the node, the pod IP is in status and
// reachable from the node, and after `podrun down` the port is closed
// again. Where the node reaches it is the runtime's: on containerd the
// portmap plugin maps it, on 127.0.0.1 too (its DNAT of local traffic,
// route_localnet and the masquerade of 127.0.0.1 it sets up); CRI-O maps
// hostPorts with its own hostport manager (internal/hostport), whose DNAT
// of local traffic leaves 127.0.0.1 as the source, which the pod's bridge
// drops: the port answers on the node's other addresses only, here the
// bridge's (docs/cri-o.md; a kubelet on CRI-O shows the same).
func TestE2ECNIHostPort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const name, hostPort = "e2e-cni-hostport", "38080"
	e.downOnCleanup(name)
	r := e.runPodrun([]string{"-d", "-o", "json", "-f", testdata("cni/hostport.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if !onPodNetwork(t, p.Status.PodIP) {
		t.Errorf("podIP %q, want one on the testbed's pod network %s", p.Status.PodIP, os.Getenv("PODRUN_TESTBED_POD_SUBNET"))
	}

	url := "http://" + byRuntime(t, "127.0.0.1", bridgeAddr(t)) + ":" + hostPort + "/"
	body, err := httpGet(t, url, 15*time.Second)
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, r)
	}
	if !strings.Contains(body, "Welcome to nginx!") {
		t.Errorf("GET %s answered %q, want the nginx stand-in's page", url, body)
	}
	if p.Status.PodIP != "" {
		if body, err := httpGet(t, "http://"+p.Status.PodIP+":80/", 5*time.Second); err != nil || !strings.Contains(body, "Welcome to nginx!") {
			t.Errorf("GET the pod IP %s:80: %q, %v", p.Status.PodIP, body, err)
		}
	}

	r = e.runPodrun([]string{"down", name}, "")
	expectCode(t, r, 0)
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after podrun down (%s)", url, resp.Status)
	}
}

// bridgeAddr is the node's IPv4 address on the testbed's pod bridge
// (PODRUN_TESTBED_BRIDGE).
func bridgeAddr(t *testing.T) string {
	t.Helper()
	name := os.Getenv("PODRUN_TESTBED_BRIDGE")
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatalf("the testbed's bridge %q (PODRUN_TESTBED_BRIDGE): %v", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		t.Fatalf("the addresses of %s: %v", name, err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Fatalf("the testbed's bridge %s has no IPv4 address", name)
	return ""
}

// `podrun cni init` writes a config the check accepts, and refuses to
// write it a second time.
func TestE2ECNIInit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	confDir := filepath.Join(t.TempDir(), "net.d")
	bin := testbedCNIBinDir(t)
	args := []string{"cni", "init", "--cni-conf-dir", confDir, "--cni-bin-dir", bin, "--subnet", "10.89.0.0/16", "--bridge", "e2e-init0"}
	r := e.runPodrunRaw(args, "")
	expectCode(t, r, 0)
	path := filepath.Join(confDir, "10-podrun.conflist")
	if strings.TrimSpace(r.stdout) != "wrote "+path {
		t.Errorf("stdout %q, want %q", r.stdout, "wrote "+path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"type": "bridge"`, `"bridge": "e2e-init0"`, `"type": "host-local"`, `"subnet": "10.89.0.0/16"`,
		`"type": "portmap"`, `"portMappings": true`, `"cniVersion": "1.0.0"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the config lacks %s:\n%s", w, b)
		}
	}

	// The pre-flight accepts it: a pod on the pod network runs (on the
	// runtime's own network; the check only read this dir).
	r = e.runPodrun([]string{"--cni-conf-dir", confDir, "--cni-bin-dir", bin, "-f", testdata("cni/init.yaml")}, "")
	expectCode(t, r, 0)

	// The second time: refused, the file unchanged.
	r = e.runPodrunRaw([]string{"cni", "init", "--cni-conf-dir", confDir, "--cni-bin-dir", bin, "--subnet", "10.90.0.0/16"}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, path+" already exists; not overwriting it") {
		t.Errorf("stderr does not refuse clearly\n%s", r)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("the refused init changed %s", path)
	}
}

func TestE2EHostNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("cni/hostnet.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %q", p.Status.Phase)
	}
	if onPodNetwork(t, p.Status.PodIP) {
		t.Errorf("hostNetwork pod got a pod-network IP %s", p.Status.PodIP)
	}
	if p.Status.PodIP != "" && p.Status.HostIP != "" && p.Status.PodIP != p.Status.HostIP {
		t.Errorf("hostNetwork pod: podIP %s, want the host IP %s", p.Status.PodIP, p.Status.HostIP)
	}
	// The container sees the host's interfaces: every one of ours.
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(host))
	for sc.Scan() {
		name, _, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && !strings.Contains(name, "|") && !strings.HasPrefix(name, "veth") && !strings.Contains(r.stderr, " "+name+":") && !strings.Contains(r.stderr, "\n"+name+":") {
			t.Errorf("the container does not see the host interface %s\n%s", name, r.stderr)
		}
	}
}

func TestE2EPodIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-o", "json", "-f", testdata("cni/podip.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if !onPodNetwork(t, p.Status.PodIP) {
		t.Fatalf("podIP %q, want one in %s", p.Status.PodIP, os.Getenv("PODRUN_TESTBED_POD_SUBNET"))
	}
	if len(p.Status.PodIPs) == 0 || p.Status.PodIPs[0].IP != p.Status.PodIP {
		t.Errorf("podIPs %+v, want [%s]", p.Status.PodIPs, p.Status.PodIP)
	}
	if !strings.Contains(r.stderr, p.Status.PodIP) {
		t.Errorf("the container's eth0 does not carry the podIP %s\n%s", p.Status.PodIP, r.stderr)
	}
}
