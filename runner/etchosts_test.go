package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHostsFileContent(t *testing.T) {
	const managed = "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n"
	aliases := []v1.HostAlias{
		{IP: "127.0.0.1", Hostnames: []string{"foo.local", "bar.local"}},
		{IP: "10.1.2.3", Hostnames: []string{"foo.remote"}},
	}
	const aliasLines = "\n# Entries added by HostAliases.\n" +
		"127.0.0.1\tfoo.local\tbar.local\n" +
		"10.1.2.3\tfoo.remote\n"
	const node = "127.0.0.1 localhost\n192.168.1.5 vm\n"
	cases := []struct {
		name         string
		hostNetwork  bool
		ips          []string
		host, domain string
		aliases      []v1.HostAlias
		want         string
	}{
		{name: "one pod IP, no domain", ips: []string{"10.88.0.5"}, host: "web",
			want: managed + "10.88.0.5\tweb\n"},
		{name: "a domain gives the FQDN first", ips: []string{"10.88.0.5"}, host: "web", domain: "db.ns.svc.cluster.local",
			want: managed + "10.88.0.5\tweb.db.ns.svc.cluster.local\tweb\n"},
		{name: "one line per pod IP", ips: []string{"10.88.0.5", "fd00::5"}, host: "web",
			want: managed + "10.88.0.5\tweb\nfd00::5\tweb\n"},
		{name: "hostAliases come last, one line per alias", ips: []string{"10.88.0.5"}, host: "web", aliases: aliases,
			want: managed + "10.88.0.5\tweb\n" + aliasLines},
		{name: "host network: the node's hosts file under its own header", hostNetwork: true, ips: []string{"192.168.1.5"}, host: "web",
			want: "# Kubernetes-managed hosts file (host network).\n" + node},
		{name: "host network with hostAliases", hostNetwork: true, host: "web", aliases: aliases,
			want: "# Kubernetes-managed hosts file (host network).\n" + node + aliasLines},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
				Spec: v1.PodSpec{HostNetwork: tc.hostNetwork, HostAliases: tc.aliases}}
			if got := string(hostsFileContent(pod, tc.ips, tc.host, tc.domain, []byte(node))); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestMountsEtcHosts(t *testing.T) {
	plain := &v1.Container{Name: "c"}
	own := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}}
	other := &v1.Container{Name: "c", VolumeMounts: []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts.d"}}}
	for _, tc := range []struct {
		name   string
		c      *v1.Container
		hasIPs bool
		want   bool
	}{
		{"a pod with IPs gets the managed file", plain, true, true},
		{"a pod without IPs gets none", plain, false, false},
		{"a volumeMount at /etc/hosts wins", own, true, false},
		{"a volumeMount elsewhere does not matter", other, true, true},
	} {
		if got := mountsEtcHosts(tc.c, tc.hasIPs); got != tc.want {
			t.Errorf("%s: mountsEtcHosts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// writeHostsFile leaves a file that holds the content alone (a container
// reading it while the next one starts never finds it empty), and writes
// a changed one in place, where the bind mounts of running containers see it.
func TestWriteHostsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), etcHostsFile)
	content := []byte("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n")
	stat := func() (os.FileInfo, *syscall.Stat_t) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi, fi.Sys().(*syscall.Stat_t)
	}
	check := func(what string) {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || string(got) != string(content) {
			t.Errorf("%s: the file holds %q, %v; want %q", what, got, err, content)
		}
		if fi, _ := stat(); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", what, fi.Mode().Perm())
		}
	}

	if err := writeHostsFile(path, content); err != nil {
		t.Fatal(err)
	}
	check("a new file")
	_, first := stat()

	// Unchanged: not written again.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeHostsFile(path, content); err != nil {
		t.Fatal(err)
	}
	check("the same content")
	if fi, _ := stat(); !fi.ModTime().Equal(old) {
		t.Errorf("a file that held the content was written again (mtime %v)", fi.ModTime())
	}

	// Changed by a container: written again, in the same inode.
	if err := os.WriteFile(path, []byte("10.0.0.9\tmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeHostsFile(path, content); err != nil {
		t.Fatal(err)
	}
	check("a changed file")
	if _, st := stat(); st.Ino != first.Ino {
		t.Errorf("the file was replaced (inode %d, was %d): running containers' bind mounts would not see it", st.Ino, first.Ino)
	}
}
