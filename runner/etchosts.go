package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The kubelet-managed /etc/hosts (pkg/kubelet/kubelet_pods.go makeMounts,
// makeHostsMount, ensureHostsFile).
const (
	etcHostsPath                      = "/etc/hosts"
	etcHostsFile                      = "etc-hosts" // in the pod data dir
	managedHostsHeader                = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// hostsFileContent is the content of a pod's /etc/hosts, byte for byte as
// the kubelet writes it: for a pod on the host network the header and the
// node's hosts file (hostEtcHosts), else the header, the localhost lines and
// one line per pod IP; then the hostAliases.
func hostsFileContent(pod *v1.Pod, podIPs []string, hostname, domain string, hostEtcHosts []byte) []byte {
	var b bytes.Buffer
	if pod.Spec.HostNetwork {
		b.WriteString(managedHostsHeaderWithHostNetwork)
		b.Write(hostEtcHosts)
	} else {
		b.WriteString(managedHostsHeader)
		b.WriteString("127.0.0.1\tlocalhost\n")
		b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
		b.WriteString("fe00::0\tip6-localnet\n")
		b.WriteString("fe00::0\tip6-mcastprefix\n")
		b.WriteString("fe00::1\tip6-allnodes\n")
		b.WriteString("fe00::2\tip6-allrouters\n")
		for _, ip := range podIPs {
			if domain != "" {
				fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
			} else {
				fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
			}
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.Bytes()
}

// mountsEtcHosts is whether a container gets the managed /etc/hosts: when
// the pod has IPs (a pod on the host network has the node's) and none of
// the container's volumeMounts targets /etc/hosts.
func mountsEtcHosts(c *v1.Container, hasIPs bool) bool {
	if !hasIPs {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == etcHostsPath {
			return false
		}
	}
	return true
}

// hostsMount (re)writes <pod dir>/etc-hosts, as the kubelet does before
// every container start, and returns its mount, or nil when the container
// does not get one.
func (p *podRun) hostsMount(c *v1.Container, podIPs []string) (*runtimeapi.Mount, error) {
	if !mountsEtcHosts(c, len(podIPs) > 0 || p.pod.Spec.HostNetwork) {
		return nil, nil
	}
	names, err := podHostnames(p.pod, p.r.opts.ClusterDomain)
	if err != nil {
		return nil, err
	}
	var node []byte
	if p.pod.Spec.HostNetwork {
		if node, err = os.ReadFile(etcHostsPath); err != nil {
			return nil, fmt.Errorf("reading the node's hosts file: %w", err)
		}
	}
	path := filepath.Join(p.dataDir, etcHostsFile)
	if err := writeHostsFile(path, hostsFileContent(p.pod, podIPs, names.Hostname, names.Domain, node)); err != nil {
		return nil, err
	}
	return etcHostsMount(p.dataDir), nil
}

// writeHostsFile makes the file at path hold content, mode 0644 whatever
// the umask. The file is bind-mounted into the pod's running containers,
// so it is written in place (a new file would not reach them), and only
// when its content differs: the kubelet truncates and rewrites it for
// every start, and a container that read it in that moment, such as a
// sidecar resolving localhost while the next container started, found no
// localhost in it.
func writeHostsFile(path string, content []byte) error {
	if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, content) {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return os.Chmod(path, 0o644)
}

// etcHostsMount is the mount of the managed /etc/hosts of the pod whose
// data dir is dataDir.
func etcHostsMount(dataDir string) *runtimeapi.Mount {
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: filepath.Join(dataDir, etcHostsFile), SelinuxRelabel: true}
}
