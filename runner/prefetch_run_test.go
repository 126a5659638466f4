package runner_test

// Pulls ahead against the fake CRI (prefetch.go): the images of later
// containers are pulled while earlier ones run, yet each container's
// Pulling, Pulled and pull failures come at its turn, in the kubelet's
// order and words; a run or pod that ends cancels the pulls under way.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
)

const (
	aheadInit = "registry.test/ahead/init:1"
	aheadMain = "registry.test/ahead/main:1"
)

// lineIndex is the index of the first progress line containing s, -1 if none.
func lineIndex(progress, s string) int {
	return slices.IndexFunc(strings.Split(progress, "\n"), func(l string) bool { return strings.Contains(l, s) })
}

// expectOrder fails unless the progress has a line with each of want, in
// this order.
func expectOrder(t *testing.T, progress string, want ...string) {
	t.Helper()
	last := -1
	for _, w := range want {
		i := lineIndex(progress, w)
		if i < 0 {
			t.Errorf("progress lacks %q:\n%s", w, progress)
			return
		}
		if i < last {
			t.Errorf("%q comes before %q, want after:\n%s", w, want[slices.Index(want, w)-1], progress)
		}
		last = i
	}
}

// aheadPod runs an init container of aheadInit, then main of aheadMain.
func aheadPod(initScript string) *v1.Pod {
	init := sh("init", initScript)
	init.Image = aheadInit
	main := ctr("main", "true")
	main.Image = aheadMain
	pod := newPod("ahead", v1.RestartPolicyNever, main)
	pod.Spec.InitContainers = []v1.Container{init}
	return pod
}

// TestPullAheadKubeletOrder: main's image is pulled while the init
// container runs (its pull is held until the init container has ended),
// and each container's Pulling and Pulled come at its turn, as the
// kubelet's do.
func TestPullAheadKubeletOrder(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	release := e.srv.HoldPulls(aheadMain)
	defer release()
	done := make(chan *runner.Result, 1)
	go func() { done <- e.run(t, context.Background(), aheadPod("exit 0")) }()
	waitFor(t, "the init container to end while main's image is being pulled", runLimit, func() bool {
		return strings.Contains(e.progress.String(), "Started container init") &&
			slices.Contains(e.srv.PullsInFlight(), aheadMain)
	})
	if i := lineIndex(e.progress.String(), `Pulling image "`+aheadMain+`"`); i >= 0 {
		t.Errorf("main's Pulling was reported before its turn:\n%s", e.progress.String())
	}
	release()
	res := <-done
	if !res.Pods[0].Reached() || res.ExitCode(0) != 0 {
		t.Fatalf("outcome %s, exit %d, err %v", res.Pods[0].Outcome, res.ExitCode(0), res.Pods[0].Err)
	}
	p := e.progress.String()
	expectOrder(t, p,
		`Pulling: Pulling image "`+aheadInit+`"`, `Pulled: Successfully pulled image "`+aheadInit+`" in `,
		"Created container init", "Started container init",
		`Pulling: Pulling image "`+aheadMain+`"`, `Pulled: Successfully pulled image "`+aheadMain+`" in `,
		"Created container main", "Started container main")
	if !strings.Contains(p, "including waiting). Image size: 1048576 bytes.") {
		t.Errorf("the Pulled events lack the kubelet's words:\n%s", p)
	}
	if pulls := e.srv.Pulls(); len(pulls) != 2 {
		t.Errorf("pulls %+v, want each image pulled once", pulls)
	}
	e.assertTornDown(t)
}

// TestPullAheadHeadStart: the ahead pulls are sent in the order the
// containers need them, each PullHeadStart after the one before it, so a
// runtime whose download slots all pulls share serves the first-needed
// image's layers first.
func TestPullAheadHeadStart(t *testing.T) {
	const aheadSidecar = "registry.test/ahead/sidecar:1"
	for _, tc := range []struct {
		name    string
		present []string
		want    []string // the pulls, in the order sent
		gaps    []bool   // whether the gap before each later pull must be a head start
	}{
		{name: "all cold", want: []string{aheadInit, aheadSidecar, aheadMain}, gaps: []bool{true, true}},
		{name: "the first image present", present: []string{aheadInit}, want: []string{aheadSidecar, aheadMain}, gaps: []bool{true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			isolateNodeCredentials(t)
			e.srv.AddImages(tc.present...)
			for _, img := range tc.want {
				defer e.srv.HoldPulls(img)()
			}
			pod := aheadPod("exit 0")
			side := ctr("sidecar", "sleep 60")
			side.Image = aheadSidecar
			always := v1.ContainerRestartPolicyAlways
			side.RestartPolicy = &always
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, side)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan *runner.Result, 1)
			go func() { done <- e.run(t, ctx, pod) }()
			waitFor(t, "every cold image's pull to be under way", runLimit, func() bool {
				return len(e.srv.PullsInFlight()) == len(tc.want)
			})
			cancel()
			<-done
			pulls := e.srv.Pulls()
			var got []string
			for _, p := range pulls {
				got = append(got, p.Image)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("pulls sent %q, want %q", got, tc.want)
			}
			// The fake stamps each pull when it arrives, which trails
			// podrun's send by the RPC's transit; on a loaded machine the
			// earlier pull's transit can outlast the later one's, and the
			// gap seen here falls short of the head start by that much
			// (CI once saw 149.85 ms). Without a head start the gap is
			// a millisecond or two, so a third off still tells them apart.
			const transit = runner.PullHeadStart / 3
			for i, headStart := range tc.gaps {
				gap := pulls[i+1].At.Sub(pulls[i].At)
				if headStart && gap < runner.PullHeadStart-transit {
					t.Errorf("%s sent %v after %s, want at least %v less the RPCs' transit (%v)", pulls[i+1].Image, gap, pulls[i].Image, runner.PullHeadStart, transit)
				}
			}
			e.assertTornDown(t)
		})
	}
}

// TestPullAheadLaterImageMissing: the image of main does not exist; its
// ahead pull fails at once, yet the init container runs to its end first
// and main then fails with ErrImagePull, as on a kubelet (exit 125).
func TestPullAheadLaterImageMissing(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.AddImages(aheadInit)
	e.srv.SetMissing(aheadMain)
	res := e.run(t, context.Background(), aheadPod("sleep 2; echo init done"))
	r := res.Pods[0]
	if r.Outcome != runner.OutcomeError || res.ExitCode(0) != runner.ExitPodrunError {
		t.Fatalf("outcome %s, exit %d; want error, 125", r.Outcome, res.ExitCode(0))
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), "ErrImagePull") || !strings.Contains(r.Err.Error(), aheadMain) {
		t.Errorf("err = %v, want ErrImagePull naming %s", r.Err, aheadMain)
	}
	if term := r.Status.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 {
		t.Errorf("init container %+v, want it run to its end", r.Status.InitContainerStatuses[0].State)
	}
	if w := r.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" {
		t.Errorf("main %+v, want waiting with ErrImagePull", r.Status.ContainerStatuses[0].State)
	}
	if !strings.Contains(e.stdout.String(), "init done\n") {
		t.Errorf("stdout %q, want the init container's output", e.stdout.String())
	}
	expectOrder(t, e.progress.String(), `Container image "`+aheadInit+`" already present on machine`,
		"Started container init", `Pulling: Pulling image "`+aheadMain+`"`, "ErrImagePull")
	e.assertTornDown(t)
}

// TestPullAheadTransientFailureBacksOff: a failed ahead pull that may
// succeed later is reported at the container's turn as the kubelet's
// failed pull (Failed, ErrImagePull), then retried after the back-off.
func TestPullAheadTransientFailureBacksOff(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.AddImages(aheadInit)
	e.srv.FailPulls(aheadMain, 1, nil)
	e.opts.Timeout = 1 * time.Second
	res := e.run(t, context.Background(), aheadPod("exit 0"))
	expectOrder(t, e.progress.String(), "Started container init", `Pulling: Pulling image "`+aheadMain+`"`,
		`Failed: Failed to pull image "`+aheadMain+`"`, "Failed: Error: ErrImagePull", `BackOff: Back-off pulling image "`+aheadMain+`"`)
	// The failed ahead pull was main's pull: no second one before the
	// back-off (10 s) ends, and the run times out waiting.
	if pulls := e.srv.Pulls(); len(pulls) != 1 {
		t.Errorf("pulls %+v, want the one ahead", pulls)
	}
	if r := res.Pods[0]; r.Outcome != runner.OutcomeTimeout {
		t.Errorf("outcome %s, want timeout", r.Outcome)
	} else if w := r.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Errorf("main %+v, want waiting with ImagePullBackOff", r.Status.ContainerStatuses[0].State)
	}
	e.assertTornDown(t)
}

// TestPullAheadCancelledWithTheRun: a run interrupted while main's image
// is being pulled ahead (the init container still running) cancels the
// pull; Run returns with nothing pulled, nothing left, and main never had
// a turn.
func TestPullAheadCancelledWithTheRun(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.AddImages(aheadInit)
	release := e.srv.HoldPulls(aheadMain)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *runner.Result, 1)
	go func() { done <- e.run(t, ctx, aheadPod("sleep 100000")) }()
	waitFor(t, "main's image pulled ahead while init runs", runLimit, func() bool {
		return strings.Contains(e.progress.String(), "Started container init") && slices.Contains(e.srv.PullsInFlight(), aheadMain)
	})
	cancel()
	res := <-done
	if o := res.Pods[0].Outcome; o != runner.OutcomeInterrupted {
		t.Errorf("outcome %s, want interrupted", o)
	}
	if got := e.srv.PullsCancelled(); !slices.Equal(got, []string{aheadMain}) {
		t.Errorf("cancelled pulls %v, want main's", got)
	}
	if got := e.srv.PullsInFlight(); len(got) != 0 {
		t.Errorf("pulls %v still under way after Run returned", got)
	}
	if lineIndex(e.progress.String(), `Pulling image "`+aheadMain+`"`) >= 0 {
		t.Errorf("main had a turn:\n%s", e.progress.String())
	}
	e.assertTornDown(t)
}

// TestPullAheadCancelledWithThePod: an init container that fails ends
// the pod (restartPolicy Never); the pull of main's image, which only
// that pod needed, is cancelled when the pod stops, not left to run.
func TestPullAheadCancelledWithThePod(t *testing.T) {
	e := newEnv(t)
	isolateNodeCredentials(t)
	e.srv.AddImages(aheadInit)
	release := e.srv.HoldPulls(aheadMain)
	defer release()
	res := e.run(t, context.Background(), aheadPod("sleep 1; exit 3"))
	if r := res.Pods[0]; r.Outcome != runner.OutcomeFailed || res.ExitCode(0) != 3 {
		t.Errorf("outcome %s, exit %d; want failed, 3", r.Outcome, res.ExitCode(0))
	}
	if got := e.srv.PullsCancelled(); !slices.Equal(got, []string{aheadMain}) {
		t.Errorf("cancelled pulls %v, want main's", got)
	}
	e.assertTornDown(t)
}

// TestPullAheadJobLaterPodsPullAtTheirTurn: the run pulls ahead for a
// Job's first pod; its retry, made later, pulls at its own turn (Always:
// a pull of its own), as a kubelet's would.
func TestPullAheadJobLaterPodsPullAtTheirTurn(t *testing.T) {
	defer runner.SetJobBackOff(300*time.Millisecond, time.Second)()
	e := newEnv(t)
	isolateNodeCredentials(t)
	failFirst(e, 1)
	const img = "registry.test/ahead/job:1"
	j := newJob("pj", v1.RestartPolicyNever, 1, "exit 1")
	mk := j.NewPod
	j.NewPod = func(n, index int) *v1.Pod {
		p := mk(n, index)
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = img, v1.PullAlways
		return p
	}
	res := e.runJobs(t, context.Background(), j)
	if jr := res.Jobs[0]; jr.Outcome != runner.OutcomeReached || len(jr.Pods) != 2 {
		t.Fatalf("outcome %s, %d pods (err %v); want reached after one retry", jr.Outcome, len(jr.Pods), jr.Err)
	}
	if pulls := e.srv.Pulls(); len(pulls) != 2 {
		t.Errorf("pulls %+v, want one ahead for the first pod, one at the retry's turn", pulls)
	}
	for _, pod := range []string{"pj-0", "pj-1"} {
		expectOrder(t, e.progress.String(), "pod/"+pod+`: Pulling: Pulling image "`+img+`"`, "pod/"+pod+`: Pulled: Successfully pulled image "`+img+`"`)
	}
	e.assertTornDown(t)
}
