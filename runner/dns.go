package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DNS limits of the kubelet (pkg/apis/core/validation, pkg/kubelet/network/dns).
const (
	maxDNSNameservers  = 3
	maxDNSSearchPaths  = 32
	maxDNSSearchLength = 2048
)

// resolvConf is the parsed host resolv.conf.
type resolvConf struct {
	Servers  []string
	Searches []string
	Options  []string
}

// readResolvConf parses a resolv.conf as the kubelet does: nameservers
// accumulate; the last search and options lines win. A missing file is empty.
func readResolvConf(path string) (resolvConf, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return resolvConf{}, nil
	}
	if err != nil {
		return resolvConf{}, err
	}
	var rc resolvConf
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) > 1 {
				rc.Servers = append(rc.Servers, f[1])
			}
		case "search":
			rc.Searches = nil
			for _, s := range f[1:] {
				if s != "." {
					s = strings.TrimSuffix(s, ".")
				}
				rc.Searches = append(rc.Searches, s)
			}
		case "options":
			rc.Options = append([]string(nil), f[1:]...)
		}
	}
	return rc, sc.Err()
}

// dnsInput is everything dnsConfigFor decides from.
type dnsInput struct {
	Pod           *v1.Pod
	Host          resolvConf
	ClusterDNS    []string
	ClusterDomain string
}

// dnsConfigFor is the sandbox DNS config of a pod (kubelet GetPodDNS) and the
// warnings the kubelet would record as events (MissingClusterDNS,
// DNSConfigForming).
func dnsConfigFor(in dnsInput) (*runtimeapi.DNSConfig, []string) {
	pod := in.Pod
	var warnings []string
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = v1.DNSClusterFirst
	}
	cluster := false
	switch policy {
	case v1.DNSClusterFirstWithHostNet:
		cluster = true
	case v1.DNSClusterFirst:
		cluster = !pod.Spec.HostNetwork
	}
	if cluster && len(in.ClusterDNS) == 0 {
		warnings = append(warnings, fmt.Sprintf("MissingClusterDNS: pod %q has DNSPolicy %q but no cluster DNS is configured (--cluster-dns); falling back to the %q policy",
			pod.Name, policy, v1.DNSDefault))
		cluster = false
	}

	cfg := &runtimeapi.DNSConfig{}
	switch {
	case policy == v1.DNSNone:
	case cluster:
		cfg.Servers = slices.Clone(in.ClusterDNS)
		dom := in.ClusterDomain
		if dom != "" {
			cfg.Searches = []string{pod.Namespace + ".svc." + dom, "svc." + dom, dom}
		}
		cfg.Searches = appendUnique(cfg.Searches, in.Host.Searches...)
		cfg.Options = []string{"ndots:5"}
	default:
		cfg.Servers = slices.Clone(in.Host.Servers)
		cfg.Searches = slices.Clone(in.Host.Searches)
		cfg.Options = slices.Clone(in.Host.Options)
		if len(cfg.Servers) == 0 {
			cfg.Servers = []string{"127.0.0.1"}
		}
		if len(cfg.Searches) == 0 {
			cfg.Searches = []string{"."}
		}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = appendUnique(cfg.Servers, dc.Nameservers...)
		cfg.Searches = appendUnique(cfg.Searches, dc.Searches...)
		cfg.Options = mergeDNSOptions(cfg.Options, dc.Options)
	}
	if len(cfg.Servers) > maxDNSNameservers {
		warnings = append(warnings, fmt.Sprintf("DNSConfigForming: nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: %s",
			strings.Join(cfg.Servers[:maxDNSNameservers], " ")))
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
	}
	cfg.Searches = trimSearches(cfg.Searches, &warnings)
	return cfg, warnings
}

func appendUnique(dst []string, vals ...string) []string {
	for _, v := range vals {
		if !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}

// mergeDNSOptions merges options by name; a later value wins.
func mergeDNSOptions(base []string, extra []v1.PodDNSConfigOption) []string {
	out := slices.Clone(base)
	name := func(o string) string { return strings.SplitN(o, ":", 2)[0] }
	for _, o := range extra {
		s := o.Name
		if o.Value != nil {
			s += ":" + *o.Value
		}
		if i := slices.IndexFunc(out, func(x string) bool { return name(x) == o.Name }); i >= 0 {
			out[i] = s
		} else {
			out = append(out, s)
		}
	}
	return out
}

func trimSearches(s []string, warnings *[]string) []string {
	var out []string
	total := 0
	for _, d := range s {
		if len(d) > 253 {
			continue
		}
		if len(out) == maxDNSSearchPaths || total+len(d) > maxDNSSearchLength {
			*warnings = append(*warnings, "DNSConfigForming: search line limits were exceeded, some search paths have been omitted")
			break
		}
		out = append(out, d)
		total += len(d) + 1
	}
	return out
}
