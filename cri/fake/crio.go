package fake

import (
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CRIOWays are CRI-O's ways, where they differ from containerd's
// (docs/cri-o.md): each is a field a test turns on for the difference it
// checks (ActLikeCRIO). Off, the server answers as containerd does.
type CRIOWays struct {
	// EndEvents makes GetContainerEvents end at once with no error and
	// no event while EnableEvents is on, as CRI-O does unless its
	// enable_pod_events option is set (server/container_events.go).
	EndEvents bool
	// SandboxEvents makes running and stopping a sandbox send container
	// events about its infra container, whose ID is the sandbox's, as
	// CRI-O does (generateCRIEvent(sb.InfraContainer(), ...) in
	// sandbox_run_linux.go and sandbox_stop_linux.go; the removal's event
	// is dropped, the sandbox being gone by then); containerd sends
	// events about containers only.
	SandboxEvents bool
	// RemoveFailedStarts makes a container whose start fails (Behavior
	// StartError) go away, as CRI-O removes it (server/container_start.go),
	// instead of staying exited with code 128 and reason StartError as in
	// containerd.
	RemoveFailedStarts bool
	// RemoveNotFound makes RemoveContainer of an unknown ID fail with
	// codes.NotFound and CRI-O's words (server/container_remove.go), where
	// containerd answers OK.
	RemoveNotFound bool
	// PullWording makes pulls fail in CRI-O's words, those of
	// containers/image with codes.Unknown: a missing image (SetMissing) is
	// "manifest unknown", refused credentials (RequireAuth) "unable to
	// retrieve auth token: invalid username/password: unauthorized:
	// authentication required". Credentials count as CRI-O reads them
	// (server/image_pull.go): username and password, or Auth; identity and
	// registry tokens are ignored, so a pull with only a token is
	// anonymous.
	PullWording bool
	// LogDirs makes the log directories as CRI-O does: RunPodSandbox
	// creates the sandbox's LogDirectory (0700,
	// server/sandbox_run_linux.go), and CreateContainer fails when the
	// directory of the container's log file (LogDirectory joined with the
	// container's LogPath) does not exist: CRI-O does not create it, and
	// conmon, which CRI-O starts at create, cannot open the log file there
	// ("Failed to open log file: No such file or directory" in CRI-O's
	// log) and exits with 1. containerd creates that directory itself (the
	// fake, at StartContainer); the kubelet makes it before every
	// CreateContainer.
	LogDirs bool
}

// ActLikeCRIO sets which of CRI-O's ways the server follows, all at once:
// the fields not set go back to containerd's.
func (s *Server) ActLikeCRIO(w CRIOWays) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crio = w
}

// SetVersion makes Version report the runtime name and version: CRI-O
// reports "cri-o" (server/version.go), which the kubelet puts in front of
// container IDs ("cri-o://…").
func (s *Server) SetVersion(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.versionName, s.version = name, version
}

// crioNoLogDir is CRI-O's answer to a CreateContainer whose log file's
// directory is missing: conmon's exit status, as a real CRI-O 1.37 run
// answered (issue 14), with codes.Unknown, the code of an error no gRPC
// status was made for.
func crioNoLogDir() error {
	return status.Error(codes.Unknown, "exit status 1")
}

// crioMakeLogDir creates a sandbox's log directory as CRI-O does when
// CRIOWays.LogDirs is on. Called with s.mu held.
func (s *Server) crioMakeLogDir(dir string) error {
	if !s.crio.LogDirs || dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return status.Errorf(codes.Unknown, "create sandbox log directory: %v", err)
	}
	return nil
}

// crioMissing and crioUnauthorized are CRI-O's pull errors for n.
func crioMissing(n string) error {
	return status.Errorf(codes.Unknown, "initializing source docker://%s: reading manifest %s in %s: manifest unknown", n, tagOf(n), repoOf(n))
}

func crioUnauthorized(n string) error {
	return status.Errorf(codes.Unknown, "initializing source docker://%s: unable to retrieve auth token: invalid username/password: unauthorized: authentication required", n)
}

// tagOf and repoOf split a normalized reference.
func tagOf(n string) string {
	_, tag := splitRef(n)
	return tag
}

func repoOf(n string) string {
	repo, _ := splitRef(n)
	return repo
}

func splitRef(n string) (repo, tag string) {
	for i := len(n) - 1; i >= 0 && n[i] != '/'; i-- {
		if n[i] == ':' || n[i] == '@' {
			return n[:i], n[i+1:]
		}
	}
	return n, "latest"
}

// authorized reports whether a pull with got may fetch an image that
// wants the credentials in want: authMatches, or with CRIOWays.PullWording as CRI-O
// reads credentials (server/image_pull.go): a username and password (from
// Auth when set), tokens ignored, and no username an anonymous pull.
// Called with s.mu held.
func (s *Server) authorized(want, got *runtimeapi.AuthConfig) bool {
	if !s.crio.PullWording {
		return authMatches(want, got)
	}
	userPass := func(a *runtimeapi.AuthConfig) *runtimeapi.AuthConfig {
		return &runtimeapi.AuthConfig{Username: a.GetUsername(), Password: a.GetPassword(), Auth: a.GetAuth()}
	}
	g := userPass(got)
	if g.Username == "" && g.Auth == "" {
		return false
	}
	return authMatches(userPass(want), g)
}

// emitSandbox sends an event about the infra container of sandbox p when
// SandboxEvents is on. Called with s.mu held.
func (s *Server) emitSandbox(p *sandbox, typ runtimeapi.ContainerEventType) {
	if !s.crio.SandboxEvents || len(s.subs) == 0 {
		return
	}
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        p.id,
		ContainerEventType: typ,
		CreatedAt:          time.Now().UnixNano(),
		PodSandboxStatus:   s.sandboxStatus(p),
		ContainersStatuses: s.containerStatuses(p.id),
	}
	for ch := range s.subs {
		select {
		case ch <- clone(ev):
		default:
		}
	}
}

// crioRemoveNotFound is CRI-O's answer to removing an unknown container.
func crioRemoveNotFound(id string) error {
	return status.Error(codes.NotFound, fmt.Sprintf("could not find container %q: container with ID starting with %s not found: ID does not exist", id, id))
}
