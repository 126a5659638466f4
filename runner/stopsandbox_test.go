package runner

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestGoneMeanwhile: only a stop whose network teardown found the pod's
// interface deleted under it counts as another stop having got there
// first.
func TestGoneMeanwhile(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("stopping pod sandbox %q: %w", "abc", err) }
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"containerd: the bridge plugin's delete of a vanished eth0",
			wrap(status.Error(codes.Unknown, `failed to destroy network for sandbox "abc": plugin type="bridge" name="podrun" failed (delete): failed to delete "eth0": no such device`)), true},
		{"the ptp plugin's words, another interface name",
			wrap(status.Error(codes.Unknown, `failed to destroy network for sandbox "abc": plugin type="ptp" failed (delete): failed to delete "net1": no such device`)), true},
		{"a lookup that failed otherwise", wrap(status.Error(codes.Unknown, `plugin type="bridge" failed (delete): failed to lookup "eth0": permission denied`)), false},
		{"a delete refused", wrap(status.Error(codes.Unknown, `plugin type="bridge" failed (delete): failed to delete "eth0": operation not permitted`)), false},
		{"no such device elsewhere", wrap(status.Error(codes.Unknown, `failed to set up sandbox: open /dev/kvm: no such device`)), false},
		{"podrun's own wrapping is not read", fmt.Errorf(`failed to delete "eth0": no such device: %w`, status.Error(codes.Unknown, "boom")), false},
		{"not a gRPC error", errors.New(`failed to delete "eth0": no such device`), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := goneMeanwhile(tc.err); got != tc.want {
				t.Errorf("goneMeanwhile(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
