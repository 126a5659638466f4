// Package cri is podrun's client for a node's container runtime, spoken to
// over the CRI v1 gRPC API on a unix socket (containerd, CRI-O,
// cri-dockerd). It is the only way podrun talks to the runtime. It
// follows the kubelet's remote runtime client (k8s.io/cri-client,
// pkg/kubelet/cri/remote) and crictl's connection handling.
//
// A Client wraps one gRPC connection. Every call runs under its own timeout
// derived from the caller's context (CallTimeout; PullImage and event
// streams are bounded by the caller alone), and waits for the connection to
// come back when the runtime restarts instead of failing at once; calls that
// are safe to repeat (status, list, stop, remove, image calls) are also
// retried when the connection breaks under them.
//
// Errors are short verb phrases ("stopping container \"abc\": ...") that wrap
// the gRPC status, so status.FromError, status.Code and IsNotFound keep
// working on them. Stop and remove calls count "not found" as done, as
// crictl and the kubelet do.
package cri
