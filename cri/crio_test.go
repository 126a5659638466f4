package cri_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

// TestCRIOSocketIsFoundAfterContainerd: without --runtime-endpoint podrun
// tries containerd's socket, then CRI-O's (its default listen path,
// /var/run/crio/crio.sock, is /run/crio/crio.sock where /var/run links to
// /run), then cri-dockerd's, as crictl does; on a node with only CRI-O it
// finds CRI-O and learns its name.
func TestCRIOSocketIsFoundAfterContainerd(t *testing.T) {
	i := slices.Index(cri.DefaultEndpoints, "unix:///run/crio/crio.sock")
	if i != 1 || cri.DefaultEndpoints[0] != "unix:///run/containerd/containerd.sock" {
		t.Errorf("DefaultEndpoints %q: want containerd's socket, then CRI-O's", cri.DefaultEndpoints)
	}
	dir := shortTempDir(t)
	srv, err := fake.StartAt(filepath.Join(dir, "crio.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.SetVersion("cri-o", "1.34.0")
	endpoints := slices.Clone(cri.DefaultEndpoints)
	endpoints[0] = "unix://" + filepath.Join(dir, "containerd.sock") // absent
	endpoints[1] = srv.Endpoint()
	c, err := cri.DialFirst(context.Background(), endpoints)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Endpoint() != srv.Endpoint() || c.DialVersion().GetRuntimeName() != "cri-o" {
		t.Errorf("dialled %s (%s), want CRI-O's socket", c.Endpoint(), c.DialVersion().GetRuntimeName())
	}
	if _, err := os.Stat(filepath.Join(dir, "containerd.sock")); !os.IsNotExist(err) {
		t.Errorf("containerd's socket: %v", err)
	}
}

// TestCRIORemoveOfAGoneContainerIsDone: CRI-O answers NotFound ("could not
// find container ...: ID does not exist") where containerd answers OK
// when a container to remove is gone (CRI-O removes one whose start
// failed by itself); podrun counts it as removed.
func TestCRIORemoveOfAGoneContainerIsDone(t *testing.T) {
	c, s := dial(t)
	s.ActLikeCRIO(fake.CRIOWays{RemoveNotFound: true})
	ctx := context.Background()
	conn, err := grpc.NewClient(s.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = runtimeapi.NewRuntimeServiceClient(conn).RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: "0123abcd"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("the runtime answered %v, want CRI-O's NotFound", err)
	}
	if err := c.RemoveContainer(ctx, "0123abcd"); err != nil {
		t.Errorf("RemoveContainer of a container CRI-O does not know: %v", err)
	}
}
