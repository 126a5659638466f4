package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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

func TestStopTurns(t *testing.T) {
	regular := func(name string) stoppingContainer { return stoppingContainer{Name: name, Sidecar: -1} }
	side := func(name string, i int) stoppingContainer { return stoppingContainer{Name: name, Sidecar: i} }
	for _, c := range []struct {
		name string
		cs   []stoppingContainer
		want [][]int
	}{
		{"regular containers stop at once", []stoppingContainer{regular("a"), regular("b")}, [][]int{nil, nil}},
		{"a sidecar waits for the regular containers", []stoppingContainer{side("s", 0), regular("a"), regular("b")}, [][]int{{1, 2}, nil, nil}},
		{"sidecars stop in reverse order", []stoppingContainer{side("s0", 0), side("s1", 1), regular("a")}, [][]int{{1, 2}, {2}, nil}},
		{"only sidecars: the last declared goes first", []stoppingContainer{side("s2", 2), side("s0", 0)}, [][]int{nil, {0}}},
		{"nothing", nil, [][]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := stopTurns(c.cs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("stopTurns = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRestoreContainer: what containerAnnotations records, restoreContainer
// reads back; a broken annotation is left out.
func TestRestoreContainer(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	preStop := &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo bye"}}}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{
				{Name: "init"},
				{Name: "side", RestartPolicy: &always, Lifecycle: &v1.Lifecycle{PreStop: preStop}},
			},
			Containers: []v1.Container{{Name: "main", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: v1.ProtocolTCP}}}},
		},
	}
	restore := func(c *v1.Container, annotations map[string]string) stoppingContainer {
		if annotations == nil {
			annotations = containerAnnotations(pod, c, 0)
		}
		return restoreContainer(&runtimeapi.Container{Id: "id-" + c.Name, Labels: map[string]string{labelContainerName: c.Name}, Annotations: annotations})
	}
	side := restore(&pod.Spec.InitContainers[1], nil)
	if side.Sidecar != 1 || !reflect.DeepEqual(side.PreStop, preStop) || side.Name != "side" || side.ID != "id-side" {
		t.Errorf("sidecar restored as %+v", side)
	}
	main := restore(&pod.Spec.Containers[0], nil)
	if main.Sidecar != -1 || main.PreStop != nil || !reflect.DeepEqual(main.Ports, pod.Spec.Containers[0].Ports) {
		t.Errorf("main restored as %+v", main)
	}
	if ini := restore(&pod.Spec.InitContainers[0], nil); ini.Sidecar != -1 {
		t.Errorf("a regular init container restored as a sidecar: %+v", ini)
	}
	broken := restore(&pod.Spec.Containers[0], map[string]string{annotationPreStopHandler: "{", annotationSidecar: "x"})
	if broken.PreStop != nil || broken.Sidecar != -1 {
		t.Errorf("broken annotations restored as %+v", broken)
	}
}

// TestGraceDuration: a grace period (or a sleep hook's seconds) becomes a
// time.Duration without wrapping around: validation lets
// terminationGracePeriodSeconds up to MaxInt64 through, as the API server
// does, and time.Duration(s)*time.Second wrapped it into -1 s (a kill at
// once) or some other short wait.
func TestGraceDuration(t *testing.T) {
	const maxDuration = time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		seconds int64
		want    time.Duration
	}{
		{0, 0},
		{2, 2 * time.Second},
		{30, 30 * time.Second},
		{-1, -time.Second},
		{maxGraceSeconds, time.Duration(maxGraceSeconds) * time.Second},
		{maxGraceSeconds + 1, time.Duration(maxGraceSeconds) * time.Second},
		{1 << 62, time.Duration(maxGraceSeconds) * time.Second},       // wrapped: 0
		{math.MaxInt64, time.Duration(maxGraceSeconds) * time.Second}, // wrapped: -1 s
		{math.MinInt64, -time.Duration(maxGraceSeconds) * time.Second},
	} {
		got := graceDuration(tc.seconds)
		if got != tc.want {
			t.Errorf("graceDuration(%d) = %v, want %v", tc.seconds, got, tc.want)
		}
		if tc.seconds > 0 && (got <= 0 || got > maxDuration) {
			t.Errorf("graceDuration(%d) = %v, not a wait", tc.seconds, got)
		}
	}
	// Within a second of the longest time.Duration: about 292 years.
	if d := maxDuration - graceDuration(math.MaxInt64); d < 0 || d >= time.Second {
		t.Errorf("graceDuration(MaxInt64) is %v short of the longest time.Duration", d)
	}
}

func TestKillGracePeriod(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	pod := &v1.Pod{Spec: v1.PodSpec{TerminationGracePeriodSeconds: i64(30)}}
	c := &v1.Container{LivenessProbe: &v1.Probe{TerminationGracePeriodSeconds: i64(5)}, StartupProbe: &v1.Probe{}}
	for _, tt := range []struct {
		name   string
		reason killReason
		want   int64
	}{
		{"a liveness kill takes the probe's grace period", killLivenessProbe, 5},
		{"a startup kill without one takes the pod's", killStartupProbe, 30},
		{"any other kill takes the pod's", "", 30},
	} {
		if got := killGracePeriod(pod, c, tt.reason); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	pod.DeletionGracePeriodSeconds = i64(1)
	if got := killGracePeriod(pod, c, killLivenessProbe); got != 1 {
		t.Errorf("the deletion grace period wins: got %d", got)
	}
}

// TestRuntimeCutShort: only the runtime's own DeadlineExceeded or
// Unavailable, while the caller's context still runs, makes a sandbox stop
// worth asking again.
func TestRuntimeCutShort(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("stopping pod sandbox %q: %w", "abc", err) }
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"containerd's deadline inside the call", live, wrap(status.Error(codes.DeadlineExceeded, `failed to stop sandbox "abc": failed to stop sandbox container "abc" in "SANDBOX_READY" state: failed to get pod sandbox container: context deadline exceeded`)), true},
		{"the runtime went away", live, wrap(status.Error(codes.Unavailable, "error reading from server: EOF")), true},
		{"the caller's own context ended", done, wrap(status.Error(codes.DeadlineExceeded, "context deadline exceeded")), false},
		{"a CNI teardown that failed", live, wrap(status.Error(codes.Unknown, `failed to destroy network for sandbox "abc": boom`)), false},
		{"not a gRPC error", live, wrap(context.DeadlineExceeded), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runtimeCutShort(tc.ctx, tc.err); got != tc.want {
				t.Errorf("runtimeCutShort(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
