package runner

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

func TestIdlePollDelay(t *testing.T) {
	for _, tc := range []struct {
		since, want time.Duration
	}{
		{0, pollInterval},                                  // just changed: fast
		{60 * time.Millisecond, pollInterval},              // a quarter is below the floor
		{200 * time.Millisecond, 50 * time.Millisecond},    // a quarter of the quiet time
		{800 * time.Millisecond, maxIdlePollInterval},      // at the cap
		{time.Hour, maxIdlePollInterval},                   // a long quiet run: the cap
		{time.Since(time.Unix(0, 0)), maxIdlePollInterval}, // never changed: the cap
	} {
		if got := idlePollDelay(tc.since); got != tc.want {
			t.Errorf("idlePollDelay(%v) = %v, want %v", tc.since, got, tc.want)
		}
	}
}

func TestPollDelay(t *testing.T) {
	for _, tc := range []struct {
		sinceChange, sinceAct, want time.Duration
	}{
		{0, 0, actPollDelay}, // just acted
		{5 * time.Millisecond, 40 * time.Millisecond, actPollDelay},           // within the act's window
		{0, actPollWindow, pollInterval},                                      // the window over, a change just seen
		{800 * time.Millisecond, 800 * time.Millisecond, maxIdlePollInterval}, // quiet since the act
		{time.Hour, time.Since(time.Unix(0, 0)), maxIdlePollInterval},         // never acted, long quiet
	} {
		if got := pollDelay(tc.sinceChange, tc.sinceAct); got != tc.want {
			t.Errorf("pollDelay(%v, %v) = %v, want %v", tc.sinceChange, tc.sinceAct, got, tc.want)
		}
	}
}

// noEvents is a runtime without a container event stream (containerd
// 1.6): onChangesPaced asks it for nothing else.
type noEvents struct{ Runtime }

func (noEvents) GetContainerEvents(context.Context) (*cri.EventStream, error) {
	return nil, errors.New("unimplemented")
}

// TestKickRearmsThePoll: on a runtime without events, an act of podrun's
// (observer.acted's kick) re-arms the poll timer with the pace asked
// anew, instead of leaving it armed with the idle delay of before. The
// pace here is an hour before the kick and a millisecond after it, so
// the poll comes only if the kick re-armed the timer (without it, a
// container started after a quiet spell had its exit seen up to
// maxIdlePollInterval late).
func TestKickRearmsThePoll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var kicked atomic.Bool
	pace := func() time.Duration {
		if kicked.Load() {
			return time.Millisecond
		}
		return time.Hour
	}
	kick := make(chan struct{}, 1)
	fired := make(chan struct{}, 1)
	go onChangesPaced(ctx, noEvents{}, nil, time.Hour, pace, kick, nil, func(bool) {
		select {
		case fired <- struct{}{}:
		default:
		}
	})
	// No stream: the timer is armed with the pace, an hour.
	time.Sleep(50 * time.Millisecond)
	kicked.Store(true)
	kick <- struct{}{}
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("no poll within 10s of the kick: the timer kept the hour it was armed with")
	}
}

// TestKickPollsSoon: after a kick the poll comes within actPollDelay
// even when the pace asks for an hour (an act: the container started may
// change at once).
func TestKickPollsSoon(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kick := make(chan struct{}, 1)
	fired := make(chan bool, 1)
	go onChangesPaced(ctx, noEvents{}, nil, time.Hour, func() time.Duration { return time.Hour }, kick, nil, func(paced bool) {
		select {
		case fired <- paced:
		default:
		}
	})
	kick <- struct{}{}
	select {
	case paced := <-fired:
		if !paced {
			t.Error("a tick of the pace without events was fired as not paced")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no poll within 10s of the kick: it was re-armed with the pace's hour, not actPollDelay")
	}
}

// TestRefreshKicks: refresh (the re-read after an act) records the act
// as a change and kicks the poll timer.
func TestRefreshKicks(t *testing.T) {
	o := newObserver(noEvents{}, nil)
	before := time.Now()
	if err := o.refresh(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(0, o.lastChange.Load()); got.Before(before) {
		t.Errorf("lastChange %v, before the refresh (%v)", got, before)
	}
	select {
	case <-o.kick:
	default:
		t.Error("refresh did not kick the poll timer")
	}
}

// listsRuntime answers a poll's calls from fixed lists and logs them.
type listsRuntime struct {
	noEvents
	sbs   []*runtimeapi.PodSandbox
	ctrs  []*runtimeapi.Container
	calls []string
}

func (r *listsRuntime) ListPodSandbox(context.Context, *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	r.calls = append(r.calls, "ListPodSandbox")
	return r.sbs, nil
}

func (r *listsRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	r.calls = append(r.calls, "ListContainers")
	return r.ctrs, nil
}

func (r *listsRuntime) ContainerStatus(_ context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	r.calls = append(r.calls, "ContainerStatus")
	for _, c := range r.ctrs {
		if c.Id == id {
			return &runtimeapi.ContainerStatus{Id: id, State: c.State, Labels: c.Labels, Metadata: c.Metadata}, nil
		}
	}
	return nil, errors.New("not found")
}

// TestPollAfterAct: a poll in the act window lists the containers, and
// the sandboxes only when a container is new, gone or in another state;
// a pod is woken only then.
func TestPollAfterAct(t *testing.T) {
	labels := func(uid string) map[string]string { return map[string]string{labelPodUID: uid} }
	ctr := func(id, uid string, st runtimeapi.ContainerState) *runtimeapi.Container {
		return &runtimeapi.Container{Id: id, State: st, Labels: labels(uid), Metadata: &runtimeapi.ContainerMetadata{Name: id}}
	}
	sb := &runtimeapi.PodSandbox{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY, Labels: labels("pod")}
	running := ctr("c1", "pod", runtimeapi.ContainerState_CONTAINER_RUNNING)
	for _, tc := range []struct {
		name   string
		listed []*runtimeapi.Container
		calls  []string
		woken  bool
	}{
		{"nothing changed", []*runtimeapi.Container{running}, []string{"ListContainers"}, false},
		{"the container exited", []*runtimeapi.Container{ctr("c1", "pod", runtimeapi.ContainerState_CONTAINER_EXITED)},
			[]string{"ListContainers", "ListPodSandbox", "ContainerStatus"}, true},
		{"the container is gone", nil, []string{"ListContainers", "ListPodSandbox"}, true},
		{"a container is new", []*runtimeapi.Container{running, ctr("c2", "pod", runtimeapi.ContainerState_CONTAINER_CREATED)},
			[]string{"ListContainers", "ListPodSandbox", "ContainerStatus"}, true},
		{"a forgotten pod's container", []*runtimeapi.Container{running, ctr("c3", "gone", runtimeapi.ContainerState_CONTAINER_EXITED)},
			[]string{"ListContainers"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &listsRuntime{sbs: []*runtimeapi.PodSandbox{sb}, ctrs: []*runtimeapi.Container{running}}
			o := newObserver(rt, nil)
			woken := o.subscribe("pod")
			o.done["gone"] = true
			if err := o.poll(context.Background()); err != nil { // the view: sb and c1 running
				t.Fatal(err)
			}
			<-woken
			rt.calls, rt.ctrs = nil, tc.listed
			if err := o.pollAfterAct(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rt.calls, tc.calls) {
				t.Errorf("calls %q, want %q", rt.calls, tc.calls)
			}
			select {
			case <-woken:
				if !tc.woken {
					t.Error("the pod was woken, nothing of it changed")
				}
			default:
				if tc.woken {
					t.Error("the pod was not woken")
				}
			}
			if tc.woken && len(o.runtimeStatus("pod", nil).Containers) != len(tc.listed) {
				t.Errorf("the view has %d containers of the pod, the runtime %d", len(o.runtimeStatus("pod", nil).Containers), len(tc.listed))
			}
		})
	}
}

func TestPollKindFor(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name                string
		acted, paced        bool
		sinceAct, sinceFull time.Duration
		want                pollKind
	}{
		{"before the first act, a tick", false, true, time.Hour, 10 * ms, pollNothing},
		{"before the first act, the stream ended", false, false, time.Hour, 10 * ms, pollNothing},
		{"a tick just after an act", true, true, 10 * ms, 50 * ms, pollContainersFirst},
		{"a tick after the window", true, true, actPollWindow, 50 * ms, pollBoth},
		{"in the window, the sandboxes listed long ago", true, true, 10 * ms, maxIdlePollInterval, pollBoth},
		{"an event in the window", true, false, 10 * ms, 50 * ms, pollBoth},
	} {
		if got := pollKindFor(tc.acted, tc.paced, tc.sinceAct, tc.sinceFull); got != tc.want {
			t.Errorf("%s: pollKindFor(%v, %v, %v, %v) = %v, want %v", tc.name, tc.acted, tc.paced, tc.sinceAct, tc.sinceFull, got, tc.want)
		}
	}
}
