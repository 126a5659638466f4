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
// containerd's go-cni does) and validates it with libcni: every plugin
// binary present in the plugin dirs and speaking the config's cniVersion.
// A failure is a *NotReadyError naming the file, the plugin and the dirs.
// When neither the runtime (CRI-O and cri-dockerd say nothing of CNI in
// their Status) nor a flag names a directory, podrun does not guess: it
// checks no files and goes by NetworkReady alone, as the kubelet does.
//
// The decisions are pure functions with table tests (runtimeInfo from the
// Status info map, resolveDirs, pickConfFile, NotReadyError's message,
// pickVersion, initConfList); the libcni calls around them are thin.
//
//   - dirs.go: where the configuration and plugins are, and why
//   - check.go: the pre-flight check
//   - init.go: `podrun cni init`
package cni
