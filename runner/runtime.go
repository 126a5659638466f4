package runner

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

// Runtime is the part of the CRI that the runner uses: all of it, so that
// no stage asks the runtime for anything else. The real client in package
// cri satisfies it; unit tests run it against cri/fake.
type Runtime interface {
	// DialVersion is the runtime's CRI Version, asked when it was dialled.
	DialVersion() *runtimeapi.VersionResponse
	// ReadyStatus is CRI Status (verbose: with the Info map), checked for
	// RuntimeReady and, with needNetwork, NetworkReady (GatherFacts).
	ReadyStatus(ctx context.Context, needNetwork, verbose bool) (*runtimeapi.StatusResponse, error)
	// CgroupDriver is CRI RuntimeConfig's cgroup driver (GatherFacts).
	CgroupDriver(ctx context.Context) (string, error)
	// GetContainerEvents subscribes to container events (observe.go); a
	// runtime without them says so through the stream.
	GetContainerEvents(ctx context.Context) (*cri.EventStream, error)

	RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, id string) error
	RemovePodSandbox(ctx context.Context, id string) error
	PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)

	CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	StopContainer(ctx context.Context, id string, timeout int64) error
	// RemoveContainer removes one container (a pod restarted in place:
	// restartall.go); teardown removes a pod's containers with its sandbox.
	RemoveContainer(ctx context.Context, id string) error
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
	// ExecSync runs exec probes and exec lifecycle hooks (timeout 0: none).
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
	// Exec prepares an interactive `podrun exec` and returns the URL of
	// the runtime's streaming server that serves it.
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error)

	ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error)
	PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
}
