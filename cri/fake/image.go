package fake

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Pull is one PullImage call the fake saw.
type Pull struct {
	Image string                 // as requested
	Auth  *runtimeapi.AuthConfig // nil for an anonymous pull
	At    time.Time              // when the call came
}

// AddImages puts images in the runtime's store, as if already pulled.
func (s *Server) AddImages(refs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range refs {
		s.storeImage(r)
	}
}

// SetMissing makes pulls of these images fail as a registry without them
// does (codes.NotFound, containerd's wording).
func (s *Server) SetMissing(refs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range refs {
		s.missing[normalize(r)] = true
	}
}

type pullFailure struct {
	times int // failures left; < 0: every pull fails
	err   error
}

// FailPulls makes the next n pulls of ref fail with err (n < 0: every
// pull), as a registry that is down or overloaded does; a nil err gives
// containerd's "connection refused" wording.
func (s *Server) FailPulls(ref string, n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n0 := normalize(ref)
	if err == nil {
		err = status.Errorf(codes.Unknown,
			"failed to pull and unpack image %q: failed to resolve reference %q: failed to do request: Head \"https://registry.test/v2/x/manifests/1\": dial tcp 10.0.0.9:443: connect: connection refused", n0, n0)
	}
	s.pullErr[n0] = &pullFailure{times: n, err: err}
}

// RequireAuth makes pulls of ref fail with containerd's "authorization
// failed" error unless the request's AuthConfig carries the same username
// and password (directly or base64 in Auth) or the same identity or
// registry token.
func (s *Server) RequireAuth(ref string, auth *runtimeapi.AuthConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auths[normalize(ref)] = clone(auth)
}

// Pulls returns the PullImage calls seen so far, in order.
func (s *Server) Pulls() []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Pull, len(s.pulls))
	for i, p := range s.pulls {
		out[i] = Pull{Image: p.Image, Auth: clone(p.Auth), At: p.At}
	}
	return out
}

// normalize spells an image reference the way containerd stores it:
// "busybox" is "docker.io/library/busybox:latest".
func normalize(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	name, rest := ref, ""
	if i := strings.IndexAny(ref, "@"); i >= 0 {
		name, rest = ref[:i], ref[i:]
	}
	if rest == "" {
		if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
			name, rest = name[:i], name[i:]
		} else {
			rest = ":latest"
		}
	}
	first, _, hasSlash := strings.Cut(name, "/")
	switch {
	case !hasSlash:
		name = "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		name = "docker.io/" + name
	}
	return name + rest
}

// storeImage adds ref to the store and returns it. Called with s.mu held.
func (s *Server) storeImage(ref string) *runtimeapi.Image {
	n := normalize(ref)
	if img := s.images[n]; img != nil {
		return img
	}
	sum := sha256.Sum256([]byte(n))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	repo := n
	if i := strings.LastIndexAny(n, ":@"); i > strings.LastIndex(n, "/") {
		repo = n[:i]
	}
	img := &runtimeapi.Image{
		Id:          digest,
		RepoDigests: []string{repo + "@" + digest},
		Size:        1 << 20,
		Spec:        &runtimeapi.ImageSpec{Image: digest},
	}
	if !strings.Contains(n, "@") {
		img.RepoTags = []string{n}
	}
	s.images[n] = img
	return img
}

// lookupImage finds an image by reference or ID. Called with s.mu held.
func (s *Server) lookupImage(ref string) *runtimeapi.Image {
	if ref == "" {
		return nil
	}
	if img := s.images[normalize(ref)]; img != nil {
		return img
	}
	for _, img := range s.images {
		if img.Id == ref || slices.Contains(img.RepoDigests, ref) {
			return img
		}
	}
	return nil
}

func (i *imageServer) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	s := i.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return &runtimeapi.ImageStatusResponse{Image: clone(s.lookupImage(req.GetImage().GetImage()))}, nil
}

func (i *imageServer) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	s := i.s
	s.mu.Lock()
	defer s.mu.Unlock()
	want := req.GetFilter().GetImage().GetImage()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range s.images {
			if !yield(k) {
				return
			}
		}
	})
	resp := &runtimeapi.ListImagesResponse{}
	for _, k := range keys {
		img := s.images[k]
		if want != "" && s.lookupImage(want) != img {
			continue
		}
		resp.Images = append(resp.Images, clone(img))
	}
	return resp, nil
}

// HoldPulls makes pulls of ref wait, as pulls from a slow registry do,
// until release is called (the pull then goes on as it would) or the
// caller gives up (the pull fails as cancelled, and PullsCancelled
// names it). Release is idempotent.
func (s *Server) HoldPulls(ref string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.held[normalize(ref)] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			close(ch)
			delete(s.held, normalize(ref))
		})
	}
}

// PullsInFlight returns the images (as requested) of the pulls that a
// HoldPulls holds now.
func (s *Server) PullsInFlight() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inFlight)
}

// PullsCancelled returns the images (as requested) of the held pulls
// whose callers gave up, in order.
func (s *Server) PullsCancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancelled)
}

func (i *imageServer) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	s := i.s
	ref := req.GetImage().GetImage()
	n := normalize(ref)
	s.mu.Lock()
	s.pulls = append(s.pulls, Pull{Image: ref, Auth: clone(req.GetAuth()), At: time.Now()})
	hold := s.held[n]
	if hold != nil {
		s.inFlight = append(s.inFlight, ref)
	}
	s.mu.Unlock()
	if hold != nil {
		var err error
		select {
		case <-hold:
		case <-ctx.Done():
			err = status.FromContextError(ctx.Err()).Err()
		}
		s.mu.Lock()
		if k := slices.Index(s.inFlight, ref); k >= 0 {
			s.inFlight = slices.Delete(s.inFlight, k, k+1)
		}
		if err != nil {
			s.cancelled = append(s.cancelled, ref)
		}
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.pullErr[n]; f != nil && f.times != 0 {
		f.times--
		return nil, f.err
	}
	if s.missing[n] {
		if s.crio.PullWording {
			return nil, crioMissing(n)
		}
		return nil, status.Errorf(codes.NotFound,
			"failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", n, n, n)
	}
	if want := s.auths[n]; want != nil && !s.authorized(want, req.GetAuth()) {
		if s.crio.PullWording {
			return nil, crioUnauthorized(n)
		}
		return nil, status.Errorf(codes.Unknown,
			"failed to pull and unpack image %q: failed to resolve reference %q: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed", n, n)
	}
	return &runtimeapi.PullImageResponse{ImageRef: s.storeImage(ref).Id}, nil
}

// authMatches reports whether got carries the credentials in want.
func authMatches(want, got *runtimeapi.AuthConfig) bool {
	if got == nil {
		return false
	}
	user, pass := got.GetUsername(), got.GetPassword()
	if got.GetAuth() != "" {
		if b, err := base64.StdEncoding.DecodeString(got.GetAuth()); err == nil {
			user, pass, _ = strings.Cut(string(b), ":")
		}
	}
	switch {
	case want.GetIdentityToken() != "":
		return got.GetIdentityToken() == want.GetIdentityToken()
	case want.GetRegistryToken() != "":
		return got.GetRegistryToken() == want.GetRegistryToken()
	}
	return user == want.GetUsername() && pass == want.GetPassword()
}

// RemoveImage removes an image; an unknown image is no error.
func (i *imageServer) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s := i.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if img := s.lookupImage(req.GetImage().GetImage()); img != nil {
		for k, v := range s.images {
			if v == img {
				delete(s.images, k)
			}
		}
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}
