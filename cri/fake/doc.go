// Package fake is an in-memory CRI v1 runtime served over gRPC on a unix
// socket, for testing podrun's cri client and runner over the real wire
// (as the kubelet's tests use k8s.io/cri-api/pkg/apis/testing, but behind
// a real socket, and with containerd's answers).
//
// Start serves a Server on a temporary socket. It implements the
// RuntimeService and ImageService calls a runner needs, with containerd's
// habits where it matters (duplicate sandbox names refused, stop of a
// created container a no-op, remove of an unknown ID a no-op, errors worded
// like containerd's). Containers follow a script (Behavior): by default one
// read from their command line ("sleep 2", "sh -c 'echo hi; exit 3'"), or
// one a test returns from SetBehavior's hook. They run on real timers; a
// test speeds them up with SetSecond. Containers whose config has a
// LogPath, in a sandbox with a LogDirectory, write their Output there in
// the CRI log format.
//
// Tests steer the fake with FailNext (error injection), Delay (a slow or
// hung runtime), SetCondition (runtime and network readiness),
// EnableEvents, the image set (AddImages, SetMissing, RequireAuth), and
// ExitContainer, and read it back with Calls, Pulls, SandboxConfig and
// ContainerConfig. Stop and Restart take the server down and up on the same
// socket with its state kept, like a runtime restart. All methods are safe
// for concurrent use.
package fake
