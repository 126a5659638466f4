package runner

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// containerState is the runtime state of one container instance.
type containerState int

const (
	stateUnknown containerState = iota
	stateCreated
	stateRunning
	stateExited
)

func (s containerState) String() string {
	return [...]string{"unknown", "created", "running", "exited"}[s]
}

// containerStatus is what the runtime says about one container instance,
// like the kubelet's kubecontainer.Status.
type containerStatus struct {
	ID           string
	Name         string
	State        containerState
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	ExitCode     int32
	Reason       string
	Message      string
	RestartCount int
	Image        string
	ImageRef     string
	LogPath      string // absolute
	// User is the process identity the runtime reports (CRI
	// ContainerStatus.user; nil when it reports none).
	User *v1.ContainerUser
}

// sandboxStatus is what the runtime says about one pod sandbox.
type sandboxStatus struct {
	ID        string
	Attempt   uint32
	Ready     bool
	IP        string
	IPs       []string
	CreatedAt time.Time
}

// runtimeStatus is the observed runtime state of a pod: every sandbox and every
// container instance podrun created for it, newest first.
type runtimeStatus struct {
	Sandboxes  []*sandboxStatus
	Containers []*containerStatus
}

// sortNewestFirst orders sandboxes and containers newest first, as the
// kubelet's FindContainerStatusByName expects.
func (s *runtimeStatus) sortNewestFirst() {
	sort.SliceStable(s.Sandboxes, func(i, j int) bool {
		a, b := s.Sandboxes[i], s.Sandboxes[j]
		if a.Attempt != b.Attempt {
			return a.Attempt > b.Attempt
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
	sort.SliceStable(s.Containers, func(i, j int) bool {
		a, b := s.Containers[i], s.Containers[j]
		if a.RestartCount != b.RestartCount {
			return a.RestartCount > b.RestartCount
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
}

// latest returns the newest instance of the named container, or nil.
func (s *runtimeStatus) latest(name string) *containerStatus {
	for _, c := range s.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// previous returns the instance before the newest one of the named container, or nil.
func (s *runtimeStatus) previous(name string) *containerStatus {
	seen := false
	for _, c := range s.Containers {
		if c.Name == name {
			if seen {
				return c
			}
			seen = true
		}
	}
	return nil
}
