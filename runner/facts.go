package runner

import (
	"bufio"
	"context"
	"net"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cni"
	"github.com/podrun/podrun/runner/admission"
)

// Facts are what a run knows of the node and the runtime, gathered once
// before anything is created (GatherFacts) and read by the stages: the
// node's status a kubelet would keep (its Node object, its runtime's
// status and config).
type Facts struct {
	// Node is the node pods are admitted against (package admission); a
	// zero Node (no Name) skips admission.
	Node admission.Node
	// HostIP is status.hostIP; "" leaves it unset.
	HostIP string
	// RuntimeName and RuntimeVersion are the runtime's (CRI Version, asked
	// when podrun dialled it); the name is the containerID scheme
	// ("containerd://…").
	RuntimeName, RuntimeVersion string
	// CgroupDriver is cgroupfs or systemd (package cgroups), and
	// CgroupDriverSource where it came from (cgroupdriver.go).
	CgroupDriver       string
	CgroupDriverSource CgroupDriverSource
	// RuntimeHandlers are the runtime's handlers and their features (CRI
	// Status), which say whether user namespaces are supported (userns.go).
	RuntimeHandlers []*runtimeapi.RuntimeHandler
	// NoRuntime: a dry run's facts (DryRunFacts): the runtime was asked
	// for its cgroup driver at most, so what else only the runtime knows
	// (its handlers; the cgroup driver too when CgroupDriver is "") is
	// unknown rather than missing.
	NoRuntime bool
	// Network is the pod network's configuration when its plugins were
	// not yet asked their versions (cni.Pending; nil: nothing pending): a
	// sandbox off the host network confirms it, or has it explain its
	// failure (sandbox.go).
	Network *cni.Pending
	// DryRunEndpoint is, in a dry run's facts, the endpoint of the runtime
	// that answered its dial and was asked for the cgroup driver; "" when
	// none was asked or none answered.
	DryRunEndpoint string
}

// FactsConfig is what the facts depend on besides the node and the runtime.
type FactsConfig struct {
	// Node: the node's name, the root dir whose filesystem is its
	// ephemeral storage, --system-reserved, --node-labels and
	// --allowed-unsafe-sysctls.
	Node admission.HostOptions
	// CgroupDriver is --cgroup-driver; "" takes the runtime's.
	CgroupDriver string
	// CNI is --cni-conf-dir and --cni-bin-dir, over what the runtime
	// reports, and where a successful check is remembered.
	CNI cni.Flags
}

// GatherFacts reads the node and asks the runtime, once, what the run
// needs to know: one CRI Status says whether the runtime is ready (and its
// network, when a pod is off the host network: then verbose, for where its
// CNI configuration is, which is checked here) and which handlers it has;
// unless --cgroup-driver gives the cgroup driver, RuntimeConfig is asked
// and the Status is verbose too, for the runtime's config where
// RuntimeConfig is unimplemented (decideCgroupDriver).
func GatherFacts(ctx context.Context, rt Runtime, pods []*v1.Pod, c FactsConfig) (Facts, error) {
	needNetwork := slices.ContainsFunc(pods, func(p *v1.Pod) bool { return !p.Spec.HostNetwork })
	node, err := admission.NodeFromHost(c.Node)
	if err != nil {
		return Facts{}, err
	}
	status, err := rt.ReadyStatus(ctx, needNetwork, needNetwork || c.CgroupDriver == "")
	if err != nil {
		return Facts{}, err
	}
	driver, source, err := cgroupDriver(ctx, rt, c.CgroupDriver, status.GetInfo())
	if err != nil {
		return Facts{}, err
	}
	var network *cni.Pending
	if needNetwork {
		if network, err = cni.CheckPodNetworkStatus(ctx, status, c.CNI); err != nil {
			return Facts{}, err
		}
	}
	v := rt.DialVersion()
	return Facts{
		Network: network,
		Node:    node, HostIP: hostIP(),
		RuntimeName: v.GetRuntimeName(), RuntimeVersion: v.GetRuntimeVersion(),
		CgroupDriver: driver, CgroupDriverSource: source, RuntimeHandlers: status.GetRuntimeHandlers(),
	}, nil
}

// cgroupDriver is decideCgroupDriver over --cgroup-driver (flag), the
// runtime's answer to RuntimeConfig (asked only without the flag) and the
// Info of its verbose Status: a run's (GatherFacts) and a dry run's
// (dryRunCgroupDriver).
func cgroupDriver(ctx context.Context, rt runtimeConfigAsker, flag string, statusInfo map[string]string) (string, CgroupDriverSource, error) {
	in := cgroupDriverInput{Flag: flag, StatusInfo: statusInfo}
	if flag == "" {
		in.RuntimeConfig, in.RuntimeConfigErr = rt.CgroupDriver(ctx)
	}
	return decideCgroupDriver(in)
}

// runtimeConfigAsker asks CRI RuntimeConfig's cgroup driver: Runtime,
// DriverRuntime.
type runtimeConfigAsker interface {
	CgroupDriver(ctx context.Context) (string, error)
}

// hostIP is the node's address for status.hostIP: the first IPv4 address
// of the interface that carries the default route, if any.
func hostIP() string {
	f, err := os.Open("/proc/net/route")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 2 && fields[1] == "00000000" {
			return interfaceIPv4(fields[0])
		}
	}
	return ""
}

// interfaceIPv4 is the first IPv4 address of the interface, "" for none:
// the kernel's answer to SIOCGIFADDR, the first address in the
// interface's list that bears its name (an alias added with a label of
// its own, "eth0:1", is not its address). One ioctl, where the net
// package's InterfaceByName and Addrs dump every link of the node and then
// every address over netlink (about 0.2 ms of a one-pod run's CPU on the
// testbed). TestInterfaceIPv4AsNetlink holds the two to one answer.
func interfaceIPv4(name string) string {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return ""
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFADDR, ifr); err != nil {
		return ""
	}
	ip, err := ifr.Inet4Addr()
	if err != nil {
		return ""
	}
	return net.IP(ip).String()
}
