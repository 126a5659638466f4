package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
)

// `podrun cni init` defaults.
const (
	// InitFileName sorts early, so that a runtime picks it unless the
	// node has a network config already.
	InitFileName    = "10-podrun.conflist"
	InitNetworkName = "podrun"
	DefaultSubnet   = "10.88.0.0/16"
	DefaultBridge   = "cni0"
)

// initVersions are the cniVersions init may write, newest first: the
// newest every plugin speaks. Not 1.1.0: runtimes built on libcni before
// v1.2 (containerd 1.6, for one) read config versions up to 1.0.0.
func initVersions() []string { return []string{"1.0.0", "0.4.0", "0.3.1"} }

// initPlugins are the plugins the written config runs (bridge with
// host-local IPAM, then portmap for hostPorts), and loopback: not in the
// list, because the runtime brings up each pod's lo itself (containerd
// runs the loopback plugin from its plugin dirs, or does it internally), but
// containerd 1.x cannot create a pod without it.
func initPlugins() []string { return []string{"bridge", "host-local", "portmap", "loopback"} }

// InitOptions are `podrun cni init`'s flags.
type InitOptions struct {
	ConfDir string
	BinDirs []string
	Subnet  string
	Bridge  string
}

// Init writes the default network config for a fresh node into
// o.ConfDir, never over an existing file, after checking that its plugins
// are in o.BinDirs. It returns the file written, and the file the runtime
// will use instead when another config sorts before it ("" otherwise).
func Init(ctx context.Context, o InitOptions) (path, shadowedBy string, err error) {
	subnet, err := parseSubnet(o.Subnet)
	if err != nil {
		return "", "", err
	}
	if err := checkBridgeName(o.Bridge); err != nil {
		return "", "", err
	}
	path = filepath.Join(o.ConfDir, InitFileName)
	if _, err := os.Lstat(path); err == nil {
		return "", "", fmt.Errorf("%s already exists; not overwriting it (remove it to write a new one)", path)
	}

	// The plugins: present, and the newest version they all speak.
	ctx, cancel := context.WithTimeout(ctx, validateTimeout)
	defer cancel()
	cfg := libcni.NewCNIConfig(o.BinDirs, nil)
	supported := map[string][]string{}
	var missing []string
	for _, p := range initPlugins() {
		if _, err := invoke.FindInPath(p, o.BinDirs); err != nil {
			missing = append(missing, p)
			continue
		}
		vi, err := cfg.GetVersionInfo(ctx, p)
		if err != nil {
			return "", "", fmt.Errorf("plugin %q does not answer CNI_COMMAND=VERSION: %w", p, err)
		}
		supported[p] = vi.SupportedVersions()
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("CNI plugins not found in %s: %s (install the CNI plugins or set --cni-bin-dir)",
			strings.Join(o.BinDirs, ":"), strings.Join(missing, ", "))
	}
	version, err := pickVersion(supported)
	if err != nil {
		return "", "", err
	}
	content, err := initConfList(version, o.Bridge, subnet)
	if err != nil {
		return "", "", err
	}
	list, err := libcni.ConfListFromBytes(content)
	if err != nil {
		return "", "", fmt.Errorf("the config init made does not load: %w", err)
	}
	if _, err := cfg.ValidateNetworkList(ctx, list); err != nil {
		return "", "", fmt.Errorf("validating the config init made: %w", err)
	}

	if err := writeNew(path, content); err != nil {
		return "", "", err
	}
	files, _ := libcni.ConfFiles(o.ConfDir, confExtensions())
	if first := pickConfFile(files); first != path {
		shadowedBy = first
	}
	return path, shadowedBy, nil
}

// parseSubnet accepts a network address in CIDR notation.
func parseSubnet(s string) (*net.IPNet, error) {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, fmt.Errorf("invalid --subnet %q: want a network in CIDR notation, e.g. %s", s, DefaultSubnet)
	}
	if !ip.Equal(n.IP) {
		return nil, fmt.Errorf("invalid --subnet %q: not a network address (did you mean %s?)", s, n)
	}
	return n, nil
}

// checkBridgeName accepts a Linux interface name (at most 15 bytes).
func checkBridgeName(s string) error {
	if s == "" || len(s) > 15 || strings.ContainsAny(s, "/: \t\n") || s == "." || s == ".." {
		return fmt.Errorf("invalid --bridge %q: want an interface name of 1 to 15 characters without '/', ':' or spaces", s)
	}
	return nil
}

// pickVersion returns the newest of initVersions that every plugin
// supports.
func pickVersion(supported map[string][]string) (string, error) {
	for _, v := range initVersions() {
		all := true
		for _, vs := range supported {
			all = all && slices.Contains(vs, v)
		}
		if all {
			return v, nil
		}
	}
	var names []string
	for p, vs := range supported {
		names = append(names, fmt.Sprintf("%s: %s", p, strings.Join(vs, ", ")))
	}
	slices.Sort(names)
	return "", fmt.Errorf("the CNI plugins speak no common config version of %s (%s)",
		strings.Join(initVersions(), ", "), strings.Join(names, "; "))
}

// initConfList is the default network: a bridge (the pods' gateway,
// masquerading traffic that leaves the subnet, hairpin so that a pod can
// reach itself through a hostPort) with host-local IPAM in subnet and a
// default route, then portmap for hostPorts. portmap's default snat:true
// makes hostPorts reachable on 127.0.0.1 (route_localnet on the bridge and
// a masquerade rule for localhost).
func initConfList(version, bridge string, subnet *net.IPNet) ([]byte, error) {
	defaultRoute := "0.0.0.0/0"
	if subnet.IP.To4() == nil {
		defaultRoute = "::/0"
	}
	type ipam struct {
		Type   string                `json:"type"`
		Ranges [][]map[string]string `json:"ranges"`
		Routes []map[string]string   `json:"routes"`
	}
	type bridgePlugin struct {
		Type        string `json:"type"`
		Bridge      string `json:"bridge"`
		IsGateway   bool   `json:"isGateway"`
		IPMasq      bool   `json:"ipMasq"`
		HairpinMode bool   `json:"hairpinMode"`
		IPAM        ipam   `json:"ipam"`
	}
	type portmapPlugin struct {
		Type         string          `json:"type"`
		Capabilities map[string]bool `json:"capabilities"`
	}
	conf := struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}{
		CNIVersion: version,
		Name:       InitNetworkName,
		Plugins: []any{
			bridgePlugin{Type: "bridge", Bridge: bridge, IsGateway: true, IPMasq: true, HairpinMode: true,
				IPAM: ipam{Type: "host-local",
					Ranges: [][]map[string]string{{{"subnet": subnet.String()}}},
					Routes: []map[string]string{{"dst": defaultRoute}}}},
			portmapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeNew writes content to path unless path exists: to a temp file in
// the same dir first (a name runtimes do not load), then linked into
// place, so that a runtime watching the dir never reads half a file and
// an existing file is never replaced.
func writeNew(path string, content []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; not overwriting it (remove it to write a new one)", path)
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
