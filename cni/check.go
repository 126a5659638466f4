package cni

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// confExtensions are the files containerd's go-cni (and CRI-O's ocicni)
// load from the conf dir.
func confExtensions() []string { return []string{".conf", ".conflist", ".json"} }

// validateTimeout bounds running every plugin with CNI_COMMAND=VERSION.
// Plugins answer at once; one that hangs must not hang the run.
const validateTimeout = 20 * time.Second

// CheckPodNetworkStatus is the pre-flight for a run with pods that are not
// on the host network, given the runtime's verbose CRI Status: it takes
// where the runtime's CNI configuration and plugins are from the Status,
// lets flags override that, and checks the network configuration there
// (see preflight). When neither names a directory (CRI-O, cri-dockerd) it
// checks nothing and returns nil, nil (see resolveDirs). The runtime's own
// NetworkReady condition is cri.Client.ReadyStatus's to report.
//
// A configuration found whole whose plugins were not yet asked their
// versions comes back as a *Pending: the run confirms it once a pod's
// sandbox got its network (Confirm), or has it explain a sandbox the
// runtime failed to make (Explain).
func CheckPodNetworkStatus(ctx context.Context, st *runtimeapi.StatusResponse, flags Flags) (*Pending, error) {
	d, ok := resolveDirs(flags, runtimeInfo(st.GetInfo()))
	if !ok {
		return nil, nil // the runtime's NetworkReady alone, as for the kubelet
	}
	return preflight(ctx, d, flags.StateFile)
}

// check is the whole check of the network configuration in d: preflight,
// then the plugins' versions (Pending.validate). It returns a
// *NotReadyError saying what is wrong, or nil.
func check(ctx context.Context, d Dirs, stateFile string) error {
	p, err := preflight(ctx, d, stateFile)
	if err != nil || p == nil {
		return err
	}
	return p.validate(ctx)
}

// preflight picks the network configuration the runtime uses from
// d.ConfDir and checks what costs no plugin run: the file is there and
// parses, and every plugin it names (and loopback, when the runtime runs
// it) is found in d.BinDirs. It returns nil, nil when stateFile ("": none)
// records a successful validation of exactly this configuration and these
// binaries; a *NotReadyError when something is wrong (a plugin missing:
// then the others are asked their versions too, to say all that is wrong
// at once); else a *Pending whose plugins were not run.
//
// Asking each plugin CNI_COMMAND=VERSION is an exec of a Go binary, 2.6 to
// 3 ms of CPU each for Debian's (docs/benchmark.md, A run's first
// milliseconds): on a fresh root dir, the most a one-pod run spent before
// its sandbox. The runtime runs the same plugins when it makes the first
// sandbox, and says what failed; the versions are asked only then, to
// explain that failure (Explain), as the kubelet too learns of a plugin
// that cannot run only from the runtime's error.
func preflight(ctx context.Context, d Dirs, stateFile string) (*Pending, error) {
	files, err := libcni.ConfFiles(d.ConfDir, confExtensions())
	if err != nil {
		return nil, &NotReadyError{Dirs: d, Err: err}
	}
	file := pickConfFile(files)
	if file == "" {
		return nil, &NotReadyError{Dirs: d}
	}
	list, err := loadConfList(file)
	if err != nil {
		return nil, &NotReadyError{Dirs: d, File: file, Err: err}
	}
	key := validationKey(d, file, pluginTypes(list))
	if validatedBefore(stateFile, key) {
		return nil, nil
	}
	p := &Pending{d: d, file: file, list: list, key: key, stateFile: stateFile}
	if key == "" {
		// A plugin not found (or the file gone): the whole check now.
		return nil, p.validate(ctx)
	}
	return p, nil
}

// Pending is a network configuration that passed preflight and whose
// plugins were not yet asked their versions. A nil *Pending has nothing
// pending: its methods do nothing. Its methods are safe for concurrent use.
type Pending struct {
	d              Dirs
	file           string
	list           *libcni.NetworkConfigList
	key, stateFile string
	confirmed      sync.Once
	explained      sync.Once
	explanation    error
}

// Confirm records that the runtime made a pod's sandbox with its network
// on this configuration: it ran every plugin of the list, which validates
// them better than their versions do. The record (the state file) spares
// the next run on the same root dir the plugin runs of a failed sandbox's
// Explain, as it spared them the VERSION runs before.
func (p *Pending) Confirm() {
	if p == nil {
		return
	}
	p.confirmed.Do(func() { rememberValidation(p.stateFile, p.key) })
}

// Explain is, after the runtime failed to make a sandbox off the host
// network, what is wrong with the configuration: each plugin asked its
// versions (once per run, whatever the number of pods asking) and the
// *NotReadyError naming each plugin that failed, or nil when every
// plugin answers and speaks the list's version (the failure was not
// theirs, or not one they show to VERSION).
func (p *Pending) Explain(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.explained.Do(func() { p.explanation = p.validate(ctx) })
	return p.explanation
}

// validate runs each plugin of the list with CNI_COMMAND=VERSION, as
// libcni's ValidateNetworkList does, and checks the runtime's loopback
// plugin is there; it records a success in the state file and returns a
// *NotReadyError saying what is wrong, or nil.
func (p *Pending) validate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, validateTimeout)
	defer cancel()
	d, list := p.d, p.list
	cfg := libcni.NewCNIConfig(d.BinDirs, newPollExec())
	problems := diagnose(ctx, cfg, pluginTypes(list), list.CNIVersion)
	if d.Loopback && !slices.Contains(pluginTypes(list), "loopback") {
		// The runtime runs loopback for each pod's lo with a config of its
		// own: only its presence matters.
		if _, err := invoke.FindInPath("loopback", d.BinDirs); err != nil {
			problems = append(problems, PluginProblem{Type: "loopback"})
		}
	}
	if len(problems) == 0 {
		rememberValidation(p.stateFile, p.key)
		return nil
	}
	return &NotReadyError{Dirs: d, File: p.file, Network: list.Name, CNIVersion: list.CNIVersion, Plugins: problems}
}

// pickConfFile returns the file the runtime uses: the lexically first one
// (go-cni and ocicni sort the names and take the first as the pod
// network). "" when there is none.
func pickConfFile(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return slices.Min(files)
}

// loadConfList loads a .conflist, or a single-plugin .conf/.json wrapped
// into a list, as go-cni does.
func loadConfList(file string) (*libcni.NetworkConfigList, error) {
	if strings.HasSuffix(file, ".conflist") {
		return libcni.ConfListFromFile(file)
	}
	conf, err := libcni.ConfFromFile(file) //nolint:staticcheck // the .conf format runtimes still load
	if err != nil {
		return nil, err
	}
	return libcni.ConfListFromConf(conf) //nolint:staticcheck // as go-cni does
}

func pluginTypes(list *libcni.NetworkConfigList) []string {
	var out []string
	for _, p := range list.Plugins {
		out = append(out, p.Network.Type)
	}
	return out
}

// diagnose runs each plugin type as libcni's ValidateNetworkList does (a
// list is valid when every plugin is found, answers CNI_COMMAND=VERSION and
// speaks version) and keeps what went wrong with each, in the list's order:
// not found, no answer to VERSION, or not speaking version. The plugins run
// at once: each is an exec of its own (3 to 4 ms for Debian's bridge and
// portmap), and one after the other they were most of the time from the
// runtime's Status to the first pod's sandbox on a fresh root dir.
func diagnose(ctx context.Context, cfg *libcni.CNIConfig, types []string, version string) []PluginProblem {
	if version == "" {
		version = "0.1.0" // libcni's default for a config without one
	}
	found := make([]*PluginProblem, len(types))
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Go(func() { found[i] = diagnoseOne(ctx, cfg, t, version) })
	}
	wg.Wait()
	var out []PluginProblem
	for _, p := range found {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// diagnoseOne is diagnose of one plugin type: its problem, or nil.
func diagnoseOne(ctx context.Context, cfg *libcni.CNIConfig, t, version string) *PluginProblem {
	path, err := invoke.FindInPath(t, cfg.Path)
	if err != nil {
		return &PluginProblem{Type: t}
	}
	vi, err := cfg.GetVersionInfo(ctx, t)
	switch {
	case err != nil:
		return &PluginProblem{Type: t, Path: path, Err: err}
	case !slices.Contains(vi.SupportedVersions(), version):
		return &PluginProblem{Type: t, Path: path, Supported: vi.SupportedVersions()}
	}
	return nil
}

// NotReadyError says why pods cannot get a pod network on this node.
type NotReadyError struct {
	Dirs Dirs
	// File is the configuration the runtime uses; "" when there is none.
	File string
	// Network and CNIVersion are the file's name and cniVersion.
	Network, CNIVersion string
	// Plugins are the plugins that failed validation.
	Plugins []PluginProblem
	// Err is a failure to read the conf dir or the file.
	Err error
}

// PluginProblem is one plugin that failed validation.
type PluginProblem struct {
	Type string
	// Path is where the plugin was found; "" when it was not.
	Path string
	// Supported are the versions it speaks, when not the config's.
	Supported []string
	// Err is its failure to answer CNI_COMMAND=VERSION.
	Err error
}

func (e *NotReadyError) Error() string {
	const prefix = "pod network not ready (pods not on the host network need it): "
	d := e.Dirs
	switch {
	case e.File == "" && e.Err != nil:
		return prefix + fmt.Sprintf("reading the CNI config dir %s (from %s): %v", d.ConfDir, d.ConfDirFrom, e.Err)
	case e.File == "":
		return prefix + fmt.Sprintf("no CNI network config (*.conflist, *.conf, *.json) in %s (from %s); "+
			"'podrun cni init' writes one", d.ConfDir, d.ConfDirFrom)
	case len(e.Plugins) == 0:
		return prefix + fmt.Sprintf("CNI config %s: %v", e.File, e.Err)
	}
	var msgs []string
	for _, p := range e.Plugins {
		name := fmt.Sprintf("plugin %q", p.Type)
		switch {
		case p.Path == "":
			msgs = append(msgs, fmt.Sprintf("%s not found in %s (from %s)", name, strings.Join(d.BinDirs, ":"), d.BinDirsFrom))
		case p.Err != nil:
			msgs = append(msgs, fmt.Sprintf("%s (%s) does not answer CNI_COMMAND=VERSION: %v", name, p.Path, p.Err))
		default:
			msgs = append(msgs, fmt.Sprintf("%s (%s) does not support cniVersion %q (it supports %s)",
				name, p.Path, e.CNIVersion, strings.Join(p.Supported, ", ")))
		}
	}
	return prefix + fmt.Sprintf("CNI network %q (%s): %s", e.Network, e.File, strings.Join(msgs, "; "))
}
