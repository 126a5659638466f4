package runner

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Kernel limits on the names a pod gets (pkg/kubelet/kubelet_pods.go
// truncatePodHostnameIfNeeded, pkg/kubelet/util GetNodenameForKernel).
const (
	hostnameMaxLen = 63 // a 64-byte field with its terminating NUL
	fqdnMaxLen     = 64 // the utsname nodename field
)

// podNames is how a pod names itself.
type podNames struct {
	Hostname string // the short host name, in /etc/hosts
	Domain   string // <subdomain>.<namespace>.svc.<cluster domain>, or ""
	Nodename string // the sandbox's hostname: Hostname, or the FQDN with setHostnameAsFQDN
}

// podHostnames is the kubelet's GeneratePodHostNameAndDomain followed by
// GetNodenameForKernel: spec.hostname (a DNS-1123 label) or the pod name,
// cut to 63 characters without a trailing '-' or '.'; with a subdomain the
// domain <sub>.<ns>.svc.<clusterDomain>, formed as the kubelet forms it even
// when the cluster domain is empty; with setHostnameAsFQDN the nodename is
// the FQDN, refused when longer than 64 characters.
func podHostnames(pod *v1.Pod, clusterDomain string) (podNames, error) {
	host := pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := validation.IsDNS1123Label(h); len(msgs) > 0 {
			return podNames{}, fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		host = h
	}
	if len(host) > hostnameMaxLen {
		host = strings.TrimRight(host[:hostnameMaxLen], "-.")
		if host == "" {
			return podNames{}, fmt.Errorf("hostname for pod %q was invalid: %q", pod.Name, pod.Name)
		}
	}
	n := podNames{Hostname: host, Nodename: host}
	if s := pod.Spec.Subdomain; s != "" {
		if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
			return podNames{}, fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", s, strings.Join(msgs, ";"))
		}
		n.Domain = fmt.Sprintf("%s.%s.svc.%s", s, pod.Namespace, clusterDomain)
	}
	if n.Domain != "" && pod.Spec.SetHostnameAsFQDN != nil && *pod.Spec.SetHostnameAsFQDN {
		fqdn := host + "." + n.Domain
		if len(fqdn) > fqdnMaxLen {
			return podNames{}, fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)",
				fqdn, fqdnMaxLen, len(fqdn))
		}
		n.Nodename = fqdn
	}
	return n, nil
}
