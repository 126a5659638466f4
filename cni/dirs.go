package cni

import (
	"encoding/json"
	"strings"
)

// The CNI conventions, and containerd's and CRI-O's defaults: the check
// looks there for the one directory nothing names when a flag or the
// runtime names the other (see resolveDirs); `podrun cni init` writes
// there by default.
const (
	DefaultConfDir = "/etc/cni/net.d"
	DefaultBinDir  = "/opt/cni/bin"
)

// Where a directory setting came from, as messages name it.
const (
	fromConfFlag = "--cni-conf-dir"
	fromBinFlag  = "--cni-bin-dir"
	fromRuntime  = "the runtime's status"
	fromDefault  = "podrun's default"
)

// Flags are podrun's --cni-conf-dir and --cni-bin-dir as given on the
// command line; empty when not given.
type Flags struct {
	ConfDir string
	BinDirs []string
	// StateFile remembers the last successful validation (see cache.go);
	// "" validates every time.
	StateFile string
}

// RuntimeInfo is what a runtime reports of its CNI setup in the Info map of
// its verbose Status. Empty fields: not reported.
type RuntimeInfo struct {
	ConfDir string
	BinDirs []string
	// Loopback is true when the runtime runs the loopback plugin from
	// BinDirs to bring up each pod's lo (containerd 1.x always, 2.x unless
	// useInternalLoopback).
	Loopback bool
}

// Dirs are the directories the check looks at, and where each came from.
type Dirs struct {
	ConfDir     string
	ConfDirFrom string
	BinDirs     []string
	BinDirsFrom string
	// Loopback: check the loopback plugin too (see RuntimeInfo).
	Loopback bool
}

// SplitBinDirs splits a colon-separated --cni-bin-dir value, dropping
// empty elements.
func SplitBinDirs(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ":") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// runtimeInfo reads the CNI directories from a verbose Status Info map.
// containerd (1.6 to 2.x) reports two keys:
//
//   - "cniconfig": go-cni's ConfigResult, the directories and networks it
//     loaded: PluginDirs, PluginConfDir, Networks (the loopback network it
//     adds itself has IFName "lo").
//   - "config": the CRI plugin's configuration, whose "cni" object has
//     confDir, binDir (1.x) or binDirs (2.x; binDir deprecated) and, in
//     2.x, useInternalLoopback.
//
// cniconfig wins where both name a directory: it is what go-cni uses.
// CRI-O and cri-dockerd report neither key, and a value that does not
// parse counts as not reported (see resolveDirs for what follows).
func runtimeInfo(info map[string]string) RuntimeInfo {
	var ri RuntimeInfo

	var cniConfig struct {
		PluginDirs    []string
		PluginConfDir string
		Networks      []struct {
			Config struct {
				Plugins []struct {
					Network struct {
						Type string `json:"type"`
					}
				}
			}
			IFName string
		}
	}
	if s, ok := info["cniconfig"]; ok && json.Unmarshal([]byte(s), &cniConfig) == nil {
		ri.ConfDir = cniConfig.PluginConfDir
		ri.BinDirs = nonEmpty(cniConfig.PluginDirs)
		for _, n := range cniConfig.Networks {
			for _, p := range n.Config.Plugins {
				ri.Loopback = ri.Loopback || p.Network.Type == "loopback"
			}
		}
	}

	var config struct {
		CNI *struct {
			ConfDir             string   `json:"confDir"`
			BinDir              string   `json:"binDir"`
			BinDirs             []string `json:"binDirs"`
			UseInternalLoopback bool     `json:"useInternalLoopback"`
		} `json:"cni"`
	}
	if s, ok := info["config"]; ok && json.Unmarshal([]byte(s), &config) == nil && config.CNI != nil {
		if ri.ConfDir == "" {
			ri.ConfDir = config.CNI.ConfDir
		}
		if len(ri.BinDirs) == 0 {
			ri.BinDirs = nonEmpty(config.CNI.BinDirs)
		}
		if len(ri.BinDirs) == 0 {
			ri.BinDirs = nonEmpty([]string{config.CNI.BinDir})
		}
		ri.Loopback = ri.Loopback || !config.CNI.UseInternalLoopback
	}
	return ri
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// resolveDirs decides whether podrun checks the pod network's files at
// all, and in which directories. When neither a flag nor the runtime's
// Status names a directory (CRI-O and cri-dockerd report none), podrun
// does not guess where the runtime looks: check is false, and the
// runtime's NetworkReady condition, which the caller has asked for and
// which is all the kubelet goes by, decides alone. Otherwise each
// directory is the flag when given, else what the runtime reported, else
// the default. Flags win so that a node whose runtime reports its
// directories can still be checked against others (and tests can point
// podrun at a broken configuration). The loopback plugin is checked only
// in the runtime's own plugin dirs, where the runtime looks for it.
func resolveDirs(f Flags, rt RuntimeInfo) (d Dirs, check bool) {
	if f.ConfDir == "" && len(f.BinDirs) == 0 && rt.ConfDir == "" && len(rt.BinDirs) == 0 {
		return Dirs{}, false
	}
	d = Dirs{ConfDir: DefaultConfDir, ConfDirFrom: fromDefault, BinDirs: []string{DefaultBinDir}, BinDirsFrom: fromDefault}
	switch {
	case f.ConfDir != "":
		d.ConfDir, d.ConfDirFrom = f.ConfDir, fromConfFlag
	case rt.ConfDir != "":
		d.ConfDir, d.ConfDirFrom = rt.ConfDir, fromRuntime
	}
	switch {
	case len(f.BinDirs) > 0:
		d.BinDirs, d.BinDirsFrom = f.BinDirs, fromBinFlag
	case len(rt.BinDirs) > 0:
		d.BinDirs, d.BinDirsFrom = rt.BinDirs, fromRuntime
		d.Loopback = rt.Loopback
	}
	return d, true
}
