package cri_test

import (
	"context"
	"testing"
)

func TestRemoveImage(t *testing.T) {
	c, s := dial(t)
	ctx := context.Background()
	s.AddImages("registry.test/app:1")
	if img, err := c.ImageStatus(ctx, "registry.test/app:1"); err != nil || img == nil {
		t.Fatalf("ImageStatus before = %v, %v", img, err)
	}
	if err := c.RemoveImage(ctx, "registry.test/app:1"); err != nil {
		t.Fatalf("RemoveImage: %v", err)
	}
	if img, err := c.ImageStatus(ctx, "registry.test/app:1"); err != nil || img != nil {
		t.Fatalf("ImageStatus after = %v, %v; want nil, nil", img, err)
	}
	// An image the runtime does not have counts as removed.
	if err := c.RemoveImage(ctx, "registry.test/app:1"); err != nil {
		t.Fatalf("RemoveImage of an absent image: %v", err)
	}
}
