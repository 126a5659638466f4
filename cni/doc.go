// Package cni checks the node's pod network before podrun creates any
// sandbox, and writes a default network configuration for a fresh node.
// It reads the network the way containerd's CRI plugin loads it (go-cni
// over libcni, the directories of its verbose CRI Status), where the
// kubelet only sees the runtime's NetworkReady condition.
//
// podrun never runs CNI plugins itself: the runtime does, when it creates a
// sandbox. What podrun does is the pre-flight a kubelet gets from the
// runtime's NetworkReady condition, made more precise. It finds the network
// configuration the runtime uses (the directories the runtime reports in
// its verbose CRI Status, or podrun's flags), picks the file the runtime
// would pick (the lexically first *.conf, *.conflist or *.json, as
// containerd's go-cni does) and checks it parses and that every plugin
// binary it names is in the plugin dirs. A failure is a *NotReadyError
// naming the file, the plugin and the dirs. Whether each plugin speaks
// the config's cniVersion (libcni's validation: each run with
// CNI_COMMAND=VERSION, an exec of a few milliseconds of CPU) is left to
// the runtime, which runs the plugins when it makes the first sandbox: the
// check hands the run a *Pending, which the first sandbox made on the
// network confirms (remembered in the root dir, with the configuration's
// and the binaries' identity) and a sandbox the runtime failed to make has
// explain itself (the plugins asked their versions then, the problems
// named beside the runtime's error).
// When neither the runtime (CRI-O and cri-dockerd say nothing of CNI in
// their Status) nor a flag names a directory, podrun does not guess: it
// checks no files and goes by NetworkReady alone, as the kubelet does.
//
// The decisions are pure functions with table tests (runtimeInfo from the
// Status info map, resolveDirs, pickConfFile, NotReadyError's message,
// pickVersion, initConfList); the libcni calls around them are thin.
//
//   - dirs.go: where the configuration and plugins are, and why
//   - check.go: the pre-flight check, and the plugins' versions after a
//     failed sandbox
//   - cache.go: the record of a network validated
//   - init.go: `podrun cni init`
package cni
