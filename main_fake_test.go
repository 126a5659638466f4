package main

import (
	"testing"

	"github.com/podrun/podrun/cri/fake"
)

// fakeCNI gives the fake runtime a valid pod network (fake.Server.FakeCNI)
// and returns its conf and plugin dirs.
func fakeCNI(t *testing.T, s *fake.Server) (confDir, binDir string) {
	t.Helper()
	return s.FakeCNI(t)
}
