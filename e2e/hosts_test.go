//go:build e2e

package e2e

// How a pod names itself and what the kubelet writes for it, end to end
// (runner/etchosts.go, runner/hostname.go, runner/dns.go,
// runner/termination.go): the managed /etc/hosts with hostAliases, its
// host-network variant and a volumeMount that replaces it; hostname,
// subdomain and setHostnameAsFQDN; the custom-dns corpus row's resolv.conf;
// termination messages from the file and from the log.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// managedHosts is the kubelet's /etc/hosts of a pod off the host network,
// before its pod IP lines.
const managedHosts = "# Kubernetes-managed hosts file.\n" +
	"127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

// hostAliasLines are the hostAliases of the hosts/ manifests as the kubelet
// writes them.
const hostAliasLines = "\n# Entries added by HostAliases.\n" +
	"127.0.0.1\tfoo.local\tbar.local\n" +
	"10.1.2.3\tfoo.remote\tbar.remote\n"

func TestE2EHostsFileWithHostAliases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-o", "json", "--cluster-domain", "cluster.local", "-f", testdata("hosts/aliases.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	if p.Status.PodIP == "" {
		t.Fatalf("no pod IP in the status:\n%s", r.stdout)
	}
	want := managedHosts + p.Status.PodIP + "\tweb.sub.default.svc.cluster.local\tweb\n" + hostAliasLines
	if r.stderr != want {
		t.Errorf("/etc/hosts is\n%q\nwant\n%q", r.stderr, want)
	}
}

func TestE2EHostsFileHostNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	node, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	r := e.runPodrun([]string{"-q", "-f", testdata("hosts/hostnet.yaml")}, "")
	expectCode(t, r, 0)
	if want := "# Kubernetes-managed hosts file (host network).\n" + string(node) + hostAliasLines; r.stdout != want {
		t.Errorf("/etc/hosts is\n%q\nwant\n%q", r.stdout, want)
	}
}

func TestE2EHostsFileVolumeMountWins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "-f", testdata("hosts/volume-wins.yaml")}, "")
	expectCode(t, r, 0)
	if r.stdout != "10.9.9.9 mine\n" {
		t.Errorf("/etc/hosts is %q, want the volume's", r.stdout)
	}
}

func TestE2EHostname(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, file, want string
	}{
		{"the pod name", "hosts/hostname-pod-name.yaml", "e2e-hostname"},
		{"spec.hostname", "hosts/hostname-hostname.yaml", "box"},
		{"a subdomain keeps the short name", "hosts/hostname-subdomain.yaml", "box"},
		{"setHostnameAsFQDN", "hosts/hostname-fqdn.yaml", "box.sub.default.svc.cluster.local"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := testdata(tt.file)
			r := e.runPodrun([]string{"-q", "--cluster-domain", "cluster.local", "-f", m}, "")
			expectCode(t, r, 0)
			if got := strings.TrimSpace(r.stdout); got != tt.want {
				t.Errorf("hostname %q, want %q", got, tt.want)
			}
		})
	}
}

func TestE2EHostnameFQDNTooLong(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"--cluster-domain", "cluster.local", "-f", testdata("hosts/fqdn-too-long.yaml")}, "")
	if r.code != 125 || !strings.Contains(r.stderr, "is too long (64 characters is the max, 65 characters requested)") {
		t.Errorf("want exit 125 naming the FQDN limit:\n%s", r)
	}
}

// TestE2EDNSCustomDNSCorpus runs the corpus row service/networking/custom-dns.yaml
// (read in place): dnsPolicy None with a dnsConfig gives exactly its resolv.conf.
func TestE2EDNSCustomDNSCorpus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.downOnCleanup("dns-example")
	r := e.runPodrun([]string{"-d", "-q", "-o", "json", "--timeout", "60s", "-f", corpusPod(t, "service/networking/custom-dns.yaml")}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	id := containerIDOf(t, containerStatus(t, p, "test"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, errOut, code, err := rtClient.ExecSync(ctx, id, []string{"cat", "/etc/resolv.conf"}, 10*time.Second)
	if err != nil || code != 0 {
		t.Fatalf("cat /etc/resolv.conf: %v, exit %d, %s", err, code, errOut)
	}
	got := lines(string(out))
	sort.Strings(got)
	want := []string{"nameserver 192.0.2.1", "options ndots:2 edns0", "search ns1.svc.cluster-domain.example my.dns.search.suffix"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resolv.conf is\n%s\nwant the lines\n%s", out, strings.Join(want, "\n"))
	}
	expectCode(t, e.runPodrun([]string{"down", "dns-example"}, ""), 0)
}

func TestE2ETerminationMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("x", 60)
	r := e.runPodrun([]string{"-q", "-o", "json", "-f", testdata("hosts/termination.yaml")}, "")
	if r.code == 0 {
		t.Fatalf("want a failure exit:\n%s", r)
	}
	p := parsePod(t, r.stdout)

	var logs strings.Builder
	for i := 21; i <= 100; i++ {
		fmt.Fprintf(&logs, "line %d\n", i)
	}
	var capped strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&capped, "%s %d\n", long, i)
	}
	c := capped.String()
	for name, want := range map[string]string{
		"file":        "all done",
		"path":        "because\n",
		"capped":      strings.Repeat("a", 4095) + "b",
		"logs":        logs.String(),
		"logs-capped": c[len(c)-2048:],
		"logs-ok":     "",
		"file-wins":   "from the file",
	} {
		s := containerStatus(t, p, name)
		if s.State.Terminated == nil {
			t.Errorf("container %s: not terminated: %+v", name, s.State)
			continue
		}
		if got := s.State.Terminated.Message; got != want {
			t.Errorf("container %s: message (%d bytes)\n%q\nwant (%d bytes)\n%q", name, len(got), got, len(want), want)
		}
	}
}

// The managed /etc/hosts never looks empty to a running container while
// the next ones start (runner/etchosts.go writeHostsFile). Before the fix
// the reader saw it empty in two of three runs.
func TestE2EHostsFileSteadyForRunningContainers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runPodrun([]string{"-q", "--timeout", "90s", "-f", testdata("hosts/reader.yaml")}, "")
	expectCode(t, r, 0)
	if n := strings.Count(r.stdout, "MISSING"); n > 0 {
		t.Errorf("the sidecar found no localhost in /etc/hosts %d times while the other containers started", n)
	}
}
