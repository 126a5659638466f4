package runner

// The cgroup driver of a run, found as the node knows it: the kubelet
// takes it from its config, or from CRI RuntimeConfig
// (KubeletCgroupDriverFromCRI). containerd answers RuntimeConfig only from
// 2.0 on, CRI-O from 1.28; containerd 1.6 and 1.7 answer Unimplemented,
// but show their CRI config in their verbose Status, where SystemdCgroup
// is. decideCgroupDriver reads them in that order and says where the
// driver came from (CgroupDriverSource); cgroupDriverHint says, when the
// runtime still refuses the pod cgroup, which driver podrun used and why.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/runner/cgroups"
)

// CgroupDriverFrom is where a run's cgroup driver came from.
type CgroupDriverFrom string

const (
	// DriverFromUnknown: nothing decided it (a dry run without
	// --cgroup-driver whose runtime was not asked, did not answer or did
	// not say).
	DriverFromUnknown CgroupDriverFrom = ""
	// DriverFromFlag: --cgroup-driver.
	DriverFromFlag CgroupDriverFrom = "flag"
	// DriverFromRuntimeConfig: CRI RuntimeConfig (containerd ≥ 2.0,
	// CRI-O ≥ 1.28), as the kubelet asks it.
	DriverFromRuntimeConfig CgroupDriverFrom = "runtime-config"
	// DriverFromStatusInfo: the runtime's config in its verbose CRI
	// Status (containerd 1.6 and 1.7: SystemdCgroup; CRI-O:
	// cgroup_manager).
	DriverFromStatusInfo CgroupDriverFrom = "status-info"
	// DriverAssumed: the runtime said nothing podrun could read; cgroupfs,
	// the kubelet's default.
	DriverAssumed CgroupDriverFrom = "assumed"
)

// CgroupDriverSource says where a run's cgroup driver came from and, when
// the runtime's status info gave it or could not be read, what it said.
type CgroupDriverSource struct {
	From CgroupDriverFrom
	// Said is, with DriverFromStatusInfo, what the status info said
	// (`containerd's default runtime "runc": SystemdCgroup = true`); with
	// DriverAssumed, why it gave no driver when it could not be read ("" when it
	// said nothing of one); with DriverFromUnknown, why a dry run could not
	// ask the runtime ("" when it did not try).
	Said string
}

// String is the source as podrun's messages, the dry run and `podrun ps`
// show it.
func (s CgroupDriverSource) String() string {
	switch s.From {
	case DriverFromFlag:
		return "from --cgroup-driver"
	case DriverFromRuntimeConfig:
		return "from the runtime's CRI RuntimeConfig"
	case DriverFromStatusInfo:
		return "from the runtime's status info: " + s.Said
	case DriverAssumed:
		if s.Said != "" {
			return "assumed: the runtime did not say; its status info was unreadable: " + s.Said
		}
		return "assumed: the runtime did not say"
	}
	if s.Said != "" {
		return "unknown: " + s.Said
	}
	return "unknown: the runtime was not asked"
}

// cgroupDriverInput is what decideCgroupDriver decides from.
type cgroupDriverInput struct {
	// Flag is --cgroup-driver; "" for none.
	Flag string
	// RuntimeConfig is what CRI RuntimeConfig said of the driver
	// (cgroups.DriverSystemd, DriverCgroupfs, or "" for an answer without a
	// Linux config), and RuntimeConfigErr its error (matching
	// cri.ErrUnimplemented on containerd before 2.0). Not asked with a Flag.
	RuntimeConfig    string
	RuntimeConfigErr error
	// StatusInfo is the Info map of the runtime's verbose CRI Status.
	StatusInfo map[string]string
}

// decideCgroupDriver is the run's cgroup driver and where it came from:
// --cgroup-driver; else RuntimeConfig's answer; else the runtime's config
// in its status info; else cgroupfs, assumed, and the source says so. An
// error of RuntimeConfig other than Unimplemented is the run's error, as
// it is the kubelet's (getCgroupDriverFromCRI). A status info that cannot
// be read gives no driver: it is not a guess.
func decideCgroupDriver(in cgroupDriverInput) (string, CgroupDriverSource, error) {
	switch in.Flag {
	case cgroups.DriverCgroupfs, cgroups.DriverSystemd:
		return in.Flag, CgroupDriverSource{From: DriverFromFlag}, nil
	case "":
	default:
		return "", CgroupDriverSource{}, fmt.Errorf("invalid --cgroup-driver %q: want cgroupfs or systemd", in.Flag)
	}
	switch {
	case in.RuntimeConfigErr != nil && !errors.Is(in.RuntimeConfigErr, cri.ErrUnimplemented):
		return "", CgroupDriverSource{}, in.RuntimeConfigErr
	case in.RuntimeConfigErr == nil && in.RuntimeConfig != "":
		return in.RuntimeConfig, CgroupDriverSource{From: DriverFromRuntimeConfig}, nil
	}
	driver, said, err := statusInfoCgroupDriver(in.StatusInfo)
	switch {
	case err != nil:
		return cgroups.DriverCgroupfs, CgroupDriverSource{From: DriverAssumed, Said: err.Error()}, nil
	case driver != "":
		return driver, CgroupDriverSource{From: DriverFromStatusInfo, Said: said}, nil
	}
	return cgroups.DriverCgroupfs, CgroupDriverSource{From: DriverAssumed}, nil
}

// containerd's runtime types whose options are runc's (SystemdCgroup), and
// the old one that takes the CRI plugin's top-level systemd_cgroup.
const (
	runtimeTypeRuncV1      = "io.containerd.runc.v1"
	runtimeTypeRuncV2      = "io.containerd.runc.v2"
	runtimeTypeLinuxLegacy = "io.containerd.runtime.v1.linux"
)

// statusInfoCgroupDriver reads the cgroup driver from the runtime's
// config in a verbose Status's Info, key "config":
//
//   - containerd (1.6, 1.7, 2.x: its CRI plugin config): the default
//     runtime containerd.defaultRuntimeName among containerd.runtimes; a
//     runc runtime's options.SystemdCgroup (options null or without it:
//     false, as containerd reads them); the old io.containerd.runtime.v1.linux
//     type's top-level systemdCgroup. containerd 2.x asks the same option
//     for its RuntimeConfig answer (runtime_config_linux.go
//     getCgroupDriver), default runtime first.
//   - CRI-O: crio.CgroupManagerName, its cgroup_manager.
//
// The default handler's ("") is the node's driver, as a kubelet has one
// driver for its node; a pod of a RuntimeClass runs with its class's
// handler (runtimeclass.go), whose runtime should use the same.
//
// driver "" and no error: the info says nothing of a driver (no config,
// another runtime, a default runtime that is not runc). An error: the info
// says something podrun cannot read.
func statusInfoCgroupDriver(info map[string]string) (driver, said string, err error) {
	raw, ok := info["config"]
	if !ok {
		return "", "", nil
	}
	var cfg struct {
		Containerd *struct {
			DefaultRuntimeName string `json:"defaultRuntimeName"`
			Runtimes           map[string]struct {
				RuntimeType string          `json:"runtimeType"`
				Options     json.RawMessage `json:"options"`
			} `json:"runtimes"`
		} `json:"containerd"`
		SystemdCgroup *bool `json:"systemdCgroup"`
		CRIO          *struct {
			CgroupManagerName *string `json:"CgroupManagerName"`
		} `json:"crio"`
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return "", "", fmt.Errorf("config: %v", err)
	}
	switch {
	case cfg.CRIO != nil:
		if cfg.CRIO.CgroupManagerName == nil {
			return "", "", nil
		}
		m := *cfg.CRIO.CgroupManagerName
		if m != cgroups.DriverSystemd && m != cgroups.DriverCgroupfs {
			return "", "", fmt.Errorf("CRI-O's config: cgroup_manager %q, want systemd or cgroupfs", m)
		}
		return m, fmt.Sprintf("CRI-O's cgroup_manager = %q", m), nil
	case cfg.Containerd != nil:
		c := cfg.Containerd
		name := c.DefaultRuntimeName
		if name == "" {
			return "", "", errors.New("containerd's config names no default runtime (defaultRuntimeName)")
		}
		rt, ok := c.Runtimes[name]
		if !ok {
			return "", "", fmt.Errorf("containerd's default runtime %q is not among its runtimes", name)
		}
		switch rt.RuntimeType {
		case runtimeTypeRuncV1, runtimeTypeRuncV2:
		case runtimeTypeLinuxLegacy:
			if cfg.SystemdCgroup == nil {
				return "", "", fmt.Errorf("containerd's default runtime %q is %s, and its config has no systemdCgroup", name, rt.RuntimeType)
			}
			return driverOf(*cfg.SystemdCgroup), fmt.Sprintf("containerd's default runtime %q is %s: systemd_cgroup = %t", name, rt.RuntimeType, *cfg.SystemdCgroup), nil
		default:
			// Another shim (kata, gVisor) keeps its cgroup driver in a
			// config of its own.
			return "", "", nil
		}
		var opts map[string]json.RawMessage
		if err := json.Unmarshal(orNull(rt.Options), &opts); err != nil {
			return "", "", fmt.Errorf("containerd's default runtime %q: options: %v", name, err)
		}
		systemd := false
		if v, ok := opts["SystemdCgroup"]; ok {
			if err := json.Unmarshal(v, &systemd); err != nil {
				return "", "", fmt.Errorf("containerd's default runtime %q: SystemdCgroup is %s, want true or false", name, v)
			}
		}
		return driverOf(systemd), fmt.Sprintf("containerd's default runtime %q: SystemdCgroup = %t", name, systemd), nil
	}
	return "", "", nil
}

// orNull is raw JSON, or null when there is none.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func driverOf(systemd bool) string {
	if systemd {
		return cgroups.DriverSystemd
	}
	return cgroups.DriverCgroupfs
}

// The runtime's words when the pod cgroup podrun hands it is of the other
// driver's kind. runc (and crun) with systemd cgroups: containerd turns a
// parent that is no slice into a path, which runc refuses. CRI-O checks
// the parent itself, for either driver.
var cgroupPathRefusals = []struct {
	words string
	wants string // the driver the runtime uses
}{
	{`expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups`, cgroups.DriverSystemd},
	{`configured with systemd cgroup manager, but did not receive slice as parent`, cgroups.DriverSystemd},
	{`configured with cgroupfs cgroup manager, but received systemd slice as parent`, cgroups.DriverCgroupfs},
}

// cgroupDriverHint is what to add to the runtime's error msg when it
// refused the pod cgroup podrun named with driver because it uses the
// other driver: which driver podrun used, why (src), and the
// --cgroup-driver that fixes it. "" for any other error, and for a
// refusal that does not contradict driver.
func cgroupDriverHint(msg, driver string, src CgroupDriverSource) string {
	for _, r := range cgroupPathRefusals {
		if !strings.Contains(msg, r.words) {
			continue
		}
		if r.wants == driver {
			return ""
		}
		return fmt.Sprintf("podrun named the pod cgroup for the %s cgroup driver (%s), and the runtime uses %s: run podrun with --cgroup-driver=%s",
			driver, src, r.wants, r.wants)
	}
	return ""
}

// withCgroupDriverHint adds cgroupDriverHint to err, an error of the
// runtime creating the pod's sandbox or a container: when the runtime
// refused the pod cgroup podrun handed it for the other driver, which
// driver podrun used, why, and the flag that fixes it.
func (p *podRun) withCgroupDriverHint(err error) error {
	if p.cgroup == "" {
		return err // no pod cgroup: the runtime placed the pod itself
	}
	if hint := cgroupDriverHint(err.Error(), p.r.facts.CgroupDriver, p.r.facts.CgroupDriverSource); hint != "" {
		return fmt.Errorf("%w; %s", err, hint)
	}
	return err
}
