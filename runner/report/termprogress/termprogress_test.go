package termprogress

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// screen is a fake terminal: it applies what the status writes (text, \r,
// \n, cursor up, erase below) to a grid of lines, as a terminal would.
type screen struct {
	lines    [][]rune
	row, col int
	raw      strings.Builder
}

func (s *screen) Write(b []byte) (int, error) {
	s.raw.Write(b)
	in := []rune(string(b))
	for i := 0; i < len(in); i++ {
		switch r := in[i]; r {
		case '\r':
			s.col = 0
		case '\n':
			s.row, s.col = s.row+1, 0
		case '\x1b':
			j := i + 2 // after "\x1b["
			for j < len(in) && in[j] >= '0' && in[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(string(in[i+2 : j]))
			switch in[j] {
			case 'A':
				s.row = max(s.row-max(n, 1), 0)
			case 'J':
				s.grow()
				s.lines[s.row] = s.lines[s.row][:min(s.col, len(s.lines[s.row]))]
				s.lines = s.lines[:s.row+1]
			default:
				panic(fmt.Sprintf("escape %q", string(in[i:j+1])))
			}
			i = j
		default:
			s.grow()
			for len(s.lines[s.row]) <= s.col {
				s.lines[s.row] = append(s.lines[s.row], ' ')
			}
			s.lines[s.row][s.col] = r
			s.col++
		}
	}
	return len(b), nil
}

func (s *screen) grow() {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
}

// String is the screen, one line each, without the empty line the cursor
// may be on at the end.
func (s *screen) String() string {
	var out []string
	for _, l := range s.lines {
		out = append(out, string(l))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testPod(name string, init []string, containers ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, c := range init {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: c, Image: "busybox:1.28"})
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "registry.example/" + c + ":1"})
	}
	return p
}

func waiting(name, reason string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}}
}

func running(name string, ready bool) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Ready: ready, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func terminated(name string, code int32, reason string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
}

// step is one thing that happens to the live status, at an offset from t0.
type step struct {
	at     time.Duration
	event  [2]string // reason, message
	status *v1.PodStatus
	pod    *v1.Pod // nil: the case's pod
	out    string  // container output written through Output
	note   string
}

func TestFrames(t *testing.T) {
	web := testPod("web", nil, "app")
	job := testPod("job", []string{"setup"}, "main", "helper")
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		steps []step
		at    time.Duration // when the final frame is drawn
		want  string
	}{
		{
			name: "nothing known yet: no status",
			pod:  web,
			want: "",
		},
		{
			name:  "pulling: the container, the image and for how long",
			pod:   web,
			steps: []step{{event: [2]string{"Pulling", `Pulling image "registry.example/app:1"`}}},
			at:    3 * time.Second,
			want:  "pod/web  Pending    app: pulling registry.example/app:1  3s",
		},
		{
			name: "pulled: the status says what next, its clock starts then",
			pod:  web,
			steps: []step{
				{event: [2]string{"Pulling", `Pulling image "registry.example/app:1"`}},
				{at: 2 * time.Second, event: [2]string{"Pulled", `Successfully pulled image "registry.example/app:1" in 2s`}},
				{at: 2 * time.Second, status: &v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{waiting("app", "ContainerCreating")}}},
			},
			at:   5 * time.Second,
			want: "pod/web  Pending    app: ContainerCreating  3s",
		},
		{
			name: "running, not ready: the wait for readiness",
			pod:  web,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("app", false)}}},
			},
			at:   75 * time.Second,
			want: "pod/web  Running    app: not ready  1m15s",
		},
		{
			name: "crash loop",
			pod:  web,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{waiting("app", "CrashLoopBackOff")}}},
			},
			at:   10 * time.Second,
			want: "pod/web  Running    app: CrashLoopBackOff  10s",
		},
		{
			name: "an init container first",
			pod:  job,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodPending,
					InitContainerStatuses: []v1.ContainerStatus{running("setup", false)},
					ContainerStatuses:     []v1.ContainerStatus{waiting("main", "PodInitializing"), waiting("helper", "PodInitializing")}}},
			},
			at:   time.Second,
			want: "pod/job  Pending    setup: running (init)  1s",
		},
		{
			name: "one container done, one failed",
			pod:  job,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodFailed,
					InitContainerStatuses: []v1.ContainerStatus{terminated("setup", 0, "Completed")},
					ContainerStatuses:     []v1.ContainerStatus{terminated("main", 0, "Completed"), terminated("helper", 137, "OOMKilled")}}},
			},
			want: "pod/job  Failed     helper: exited 137 (OOMKilled)  0s",
		},
		{
			name: "completed, then stopping at teardown",
			pod:  web,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{terminated("app", 0, "Completed")}}},
				{at: 4 * time.Second, event: [2]string{"Killing", "Stopping container app"}},
			},
			at:   6 * time.Second,
			want: "pod/web  Succeeded  stopping  2s",
		},
		{
			name: "detached: left running, the Detached line printed",
			pod:  web,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("app", true)}}},
				{at: time.Second, event: [2]string{"Detached", "leaving the pod running"}},
			},
			at:   3 * time.Second,
			want: "pod/web: Detached: leaving the pod running\npod/web  Running    detached, left running  2s",
		},
		{
			name: "a line per pod, names aligned",
			pod:  web,
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("app", true)}}},
				{pod: testPod("database", nil, "db"), status: &v1.PodStatus{Phase: v1.PodRunning,
					ContainerStatuses: []v1.ContainerStatus{running("db", false)}}},
			},
			at: time.Second,
			want: "pod/web       Running    running  1s\n" +
				"pod/database  Running    db: not ready  1s",
		},
		{
			name: "a long line is cut to the terminal's width",
			pod:  testPod("web", nil, "a-container-with-a-rather-long-name"),
			steps: []step{
				{status: &v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{
					waiting("a-container-with-a-rather-long-name", "CreateContainerConfigError")}}},
			},
			want: "pod/web  Pending    a-container-with-a-rather-long-name: CreateContainerConfig…",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var scr screen
			clk := &clock{t0}
			l := New(&scr, Options{Now: clk.now, Width: func() int { return 80 }})
			for _, s := range tc.steps {
				clk.t = t0.Add(s.at)
				apply(l, tc.pod, s)
			}
			clk.t = t0.Add(tc.at)
			l.Redraw()
			if got := scr.String(); got != tc.want {
				t.Errorf("screen:\n%s\nwant:\n%s\nwritten: %q", got, tc.want, scr.raw.String())
			}
		})
	}
}

func apply(l *Live, pod *v1.Pod, s step) {
	if s.pod != nil {
		pod = s.pod
	}
	if s.event[0] != "" {
		l.Event(pod, s.event[0], s.event[1])
	}
	if s.status != nil {
		l.PodStatus(pod, *s.status)
	}
	if s.out != "" {
		l.Output(discardOnScreen{l}).Write([]byte(s.out))
	}
	if s.note != "" {
		l.Note(s.note)
	}
}

// discardOnScreen writes container output to the status's own terminal,
// as when stdout and stderr are the same terminal.
type discardOnScreen struct{ l *Live }

func (d discardOnScreen) Write(b []byte) (int, error) { return d.l.term.Write(b) }

// TestScreen: output lines and printed events stay whole above the status,
// whatever comes in between.
func TestScreen(t *testing.T) {
	web := testPod("web", nil, "app")
	runningStatus := &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("app", false)}}
	for _, tc := range []struct {
		name  string
		steps []step
		stop  bool
		want  string
	}{
		{
			name: "an output line goes above the status",
			steps: []step{
				{status: runningStatus},
				{at: time.Second, out: "hello\n"},
			},
			want: "hello\npod/web  Running    app: not ready  1s",
		},
		{
			name: "output lines in a burst: the status is drawn again after the gap",
			steps: []step{
				{status: runningStatus},
				{at: time.Second, out: "one\n"},
				{at: time.Second + 10*time.Millisecond, out: "two\n"},
				{at: time.Second + 20*time.Millisecond, out: "three\n"},
				{at: 2 * time.Second},
			},
			want: "one\ntwo\nthree\npod/web  Running    app: not ready  2s",
		},
		{
			name: "routine events change the status only; others are lines",
			steps: []step{
				{event: [2]string{"Pulling", `Pulling image "registry.example/app:1"`}},
				{event: [2]string{"Failed", `Failed to pull image "registry.example/app:1": not reachable`}},
				{event: [2]string{"Started", "Started container app"}},
				{status: runningStatus},
				{event: [2]string{"Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503"}},
			},
			want: "pod/web: Failed: Failed to pull image \"registry.example/app:1\": not reachable\n" +
				"pod/web: Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503\n" +
				"pod/web  Running    app: not ready  0s",
		},
		{
			name: "a line printed while an output line is unfinished waits for its end",
			steps: []step{
				{status: runningStatus},
				{out: "[pod/web/app] "},
				{event: [2]string{"BackOff", "Back-off restarting failed container app in pod web_default(u)"}},
				{out: "half a line, then the rest\n"},
			},
			want: "[pod/web/app] half a line, then the rest\n" +
				"pod/web: BackOff: Back-off restarting failed container app in pod web_default(u)\n" +
				"pod/web  Running    app: not ready  0s",
		},
		{
			name: "stopped: the status is gone, lines stay, notes are plain lines",
			steps: []step{
				{status: runningStatus},
				{out: "hello\n"},
				{at: time.Second, event: [2]string{"Warning", "MissingClusterDNS"}},
			},
			stop: true,
			want: "hello\npod/web: Warning: MissingClusterDNS\npod/web: Succeeded (phase Succeeded)",
		},
		{
			name: "several status lines are erased and drawn again in place",
			steps: []step{
				{status: runningStatus},
				{pod: testPod("db", nil, "db"), status: &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("db", true)}}},
				{at: time.Second, note: "podrun: reclaiming pod default/old left by podrun pid 1 (run x)"},
				{at: 3 * time.Second},
			},
			want: "podrun: reclaiming pod default/old left by podrun pid 1 (run x)\n" +
				"pod/web  Running    app: not ready  3s\n" +
				"pod/db   Running    running  3s",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var scr screen
			clk := &clock{t0}
			l := New(&scr, Options{Now: clk.now, Width: func() int { return 80 }})
			for _, s := range tc.steps {
				clk.t = t0.Add(s.at)
				apply(l, web, s)
				if s.event[0] == "" && s.status == nil && s.out == "" && s.note == "" {
					l.Redraw()
				}
			}
			if tc.stop {
				l.Stop()
				l.Note("pod/web: Succeeded (phase Succeeded)")
				l.PodStatus(web, v1.PodStatus{})
			}
			if got := scr.String(); got != tc.want {
				t.Errorf("screen:\n%s\nwant:\n%s\nwritten: %q", got, tc.want, scr.raw.String())
			}
		})
	}
}

func TestManyPods(t *testing.T) {
	var scr screen
	l := New(&scr, Options{Now: func() time.Time { return t0 }})
	for i := range 10 {
		l.PodStatus(testPod(fmt.Sprintf("p%d", i), nil, "c"), v1.PodStatus{Phase: v1.PodPending})
	}
	lines := strings.Split(scr.String(), "\n")
	if len(lines) != maxPodLines || lines[maxPodLines-1] != "... and 3 more pods" || !strings.HasPrefix(lines[0], "pod/p0  Pending    starting") {
		t.Errorf("screen:\n%s", scr.String())
	}
}

func TestTicker(t *testing.T) {
	var scr syncScreen
	l := New(&scr, Options{Interval: 10 * time.Millisecond})
	l.PodStatus(testPod("web", nil, "app"), v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{running("app", false)}})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(scr.String(), "not ready  1s") {
		if time.Now().After(deadline) {
			t.Fatalf("the clock was not redrawn after 1s:\n%q", scr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.Stop()
	l.Stop()
	if got := scr.String(); got != "" {
		t.Errorf("after Stop the screen holds %q, want nothing", got)
	}
}

func TestWanted(t *testing.T) {
	for _, tc := range []struct {
		tty      bool
		ci, term string
		want     bool
	}{
		{true, "", "xterm-256color", true},
		{false, "", "xterm", false},
		{true, "true", "xterm", false},
		{true, "", "dumb", false},
		{true, "", "", false},
	} {
		if got := Wanted(tc.tty, tc.ci, tc.term); got != tc.want {
			t.Errorf("Wanted(%v, %q, %q) = %v, want %v", tc.tty, tc.ci, tc.term, got, tc.want)
		}
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1500 * time.Millisecond: "1s", 65 * time.Second: "1m05s", 2*time.Hour + 3*time.Minute: "2h03m", -time.Second: "0s",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%s) = %q, want %q", d, got, want)
		}
	}
}

// syncScreen is a screen that a ticker writes to while the test reads it.
type syncScreen struct {
	mu sync.Mutex
	s  screen
}

func (s *syncScreen) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Write(b)
}

func (s *syncScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.String()
}
