package junit_test

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/runner/artifacts"
	"github.com/podrun/podrun/runner/report/junit"
	"github.com/podrun/podrun/runner/report/junit/junittest"
)

// t0 is when the JUnit tests' runs start; they end 10 s later.
var t0 = time.Date(2024, 5, 6, 7, 0, 0, 0, time.UTC)

func at(s float64) metav1.Time {
	return metav1.NewTime(t0.Add(time.Duration(s * float64(time.Second))))
}

func ended(code int32, reason, msg string, from, to float64) v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: msg,
		StartedAt: at(from), FinishedAt: at(to)}}
}

func runningSince(from float64) v1.ContainerState {
	return v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at(from)}}
}

func waitingFor(reason, msg string) v1.ContainerState {
	return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason, Message: msg}}
}

// junitPod is a pod with an init container "setup", a sidecar "logger"
// and a container "web".
func junitPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default", UID: "app-uid"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "setup", Image: "busybox"}, {Name: "logger", Image: "busybox", RestartPolicy: &always}},
			Containers:     []v1.Container{{Name: "web", Image: "busybox"}},
		},
	}
}

// statuses are the pod's status with setup, logger and web in these states.
func statuses(setup, logger, web v1.ContainerState) v1.PodStatus {
	return v1.PodStatus{
		StartTime: &metav1.Time{Time: t0.Add(time.Second)},
		InitContainerStatuses: []v1.ContainerStatus{
			{Name: "setup", State: setup}, {Name: "logger", State: logger},
		},
		ContainerStatuses: []v1.ContainerStatus{{Name: "web", State: web}},
	}
}

// pastDeadline is st of a pod whose activeDeadlineSeconds passed.
func pastDeadline(st v1.PodStatus) v1.PodStatus {
	st.Phase, st.Reason, st.Message = v1.PodFailed, runner.ReasonDeadlineExceeded, "Pod was active on the node longer than the specified deadline"
	return st
}

// caseVerdict is a testcase's outcome in a word and its type or message.
func caseVerdict(c junit.Testcase) string {
	switch {
	case c.Failure != nil:
		return "failure " + c.Failure.Type + ": " + c.Failure.Message
	case c.Error != nil:
		return "error " + c.Error.Type + ": " + c.Error.Message
	case c.Skipped != nil:
		return "skipped: " + c.Skipped.Message
	}
	return "passed"
}

func TestJUnitReport(t *testing.T) {
	logs := map[string]string{"setup": "set up\n", "logger": "", "web": "line 1\nline 2 \x1b[1mbold\n"}
	for _, tc := range []struct {
		name      string
		outcome   runner.Outcome
		status    v1.PodStatus
		err       error
		interrupt int
		want      []string // per container: setup, logger, web
		times     []string
	}{
		{"all passed, the sidecar stopped with the pod", runner.OutcomeReached,
			statuses(ended(0, "Completed", "", 1, 2), ended(143, "Error", "", 1.5, 9), ended(0, "Completed", "", 2, 4.25)), nil, 0,
			[]string{"passed", "passed", "passed"}, []string{"1.000", "7.500", "2.250"}},
		{"a failed container carries its exit code, message and log", runner.OutcomeFailed,
			statuses(ended(0, "Completed", "", 1, 2), ended(143, "Error", "", 1.5, 9), ended(3, "Error", "it broke", 2, 3)), nil, 0,
			[]string{"passed", "passed", "failure Error: exited with code 3 (Error): it broke"}, nil},
		{"an OOM kill", runner.OutcomeFailed,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), ended(137, "OOMKilled", "", 2, 3)), nil, 0,
			[]string{"passed", "passed", "failure OOMKilled: exited with code 137 (OOMKilled)"}, nil},
		{"a failed init container: the rest never started", runner.OutcomeFailed,
			statuses(ended(1, "Error", "", 1, 2), waitingFor("PodInitializing", ""), waitingFor("PodInitializing", "")), nil, 0,
			[]string{"failure Error: exited with code 1 (Error)", "skipped: not started: the pod failed first", "skipped: not started: the pod failed first"}, nil},
		{"timed out while running", runner.OutcomeTimeout,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), runningSince(2)), nil, 0,
			[]string{"passed", "passed", "error Timeout: still running when the run timed out (--timeout)"}, []string{"1.000", "8.500", "8.000"}},
		{"timed out before starting", runner.OutcomeTimeout,
			statuses(runningSince(1), waitingFor("PodInitializing", ""), waitingFor("PodInitializing", "")), nil, 0,
			[]string{"error Timeout: still running when the run timed out (--timeout)", "skipped: not started: the run timed out (--timeout)", "skipped: not started: the run timed out (--timeout)"}, nil},
		{"interrupted by SIGTERM", runner.OutcomeInterrupted,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), runningSince(2)), nil, runner.ExitSIGTERM,
			[]string{"passed", "passed", "error Interrupted: still running when podrun was interrupted (SIGTERM)"}, nil},
		{"interrupted by SIGHUP", runner.OutcomeInterrupted,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), runningSince(2)), nil, runner.ExitSIGHUP,
			[]string{"passed", "passed", "error Interrupted: still running when podrun was interrupted (SIGHUP)"}, nil},
		{"stopped by a closed stdout", runner.OutcomeInterrupted,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), runningSince(2)), nil, runner.ExitSIGPIPE,
			[]string{"passed", "passed", "error Interrupted: still running when podrun was interrupted (its output closed)"}, nil},
		{"crash loop back-off", runner.OutcomeTimeout,
			func() v1.PodStatus {
				st := statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), waitingFor("CrashLoopBackOff", "back-off 10s restarting failed container=web"))
				st.ContainerStatuses[0].LastTerminationState = ended(2, "Error", "", 3, 4)
				st.ContainerStatuses[0].RestartCount = 3
				return st
			}(), nil, 0,
			[]string{"passed", "passed", "failure Error: exited with code 2 (Error); then CrashLoopBackOff: back-off 10s restarting failed container=web"}, nil},
		{"past its deadline: the running container killed at it fails as DeadlineExceeded, whatever its exit code", runner.OutcomeFailed,
			pastDeadline(statuses(ended(0, "Completed", "", 1, 2), ended(143, "Error", "", 1.5, 9), ended(137, "Error", "", 2, 6))), nil, 0,
			[]string{"passed", "passed", "failure DeadlineExceeded: killed when the pod's activeDeadlineSeconds (3 s) passed: exited with code 137 (Error)"}, nil},
		{"past its deadline: one that exited 0 on SIGTERM fails too, one that ended before passes", runner.OutcomeFailed,
			pastDeadline(statuses(ended(0, "Completed", "", 1, 2), ended(143, "Error", "", 1.5, 9), ended(0, "Completed", "", 2, 5))), nil, 0,
			[]string{"passed", "passed", "failure DeadlineExceeded: killed when the pod's activeDeadlineSeconds (3 s) passed: exited with code 0 (Completed)"}, nil},
		{"past its deadline in the init container: the rest never started", runner.OutcomeFailed,
			pastDeadline(statuses(ended(137, "Error", "", 1, 6), waitingFor("PodInitializing", ""), waitingFor("PodInitializing", ""))), nil, 0,
			[]string{"failure DeadlineExceeded: killed when the pod's activeDeadlineSeconds (3 s) passed: exited with code 137 (Error)",
				"skipped: not started: the pod's activeDeadlineSeconds passed first (DeadlineExceeded)",
				"skipped: not started: the pod's activeDeadlineSeconds passed first (DeadlineExceeded)"}, nil},
		{"an image that cannot be pulled", runner.OutcomeError,
			statuses(ended(0, "Completed", "", 1, 2), runningSince(1.5), waitingFor("ErrImagePull", "not found")), errors.New("ErrImagePull: not found"), 0,
			[]string{"passed", "passed", "error ErrImagePull: ErrImagePull: not found"}, nil},
		{"rejected by the node", runner.OutcomeError,
			v1.PodStatus{Phase: v1.PodFailed, Reason: "OutOfcpu", Message: "Pod was rejected: Node didn't have enough resource: cpu"},
			&admission.Error{Namespace: "default", Name: "app", Reason: "OutOfcpu", Message: "Pod was rejected: Node didn't have enough resource: cpu"}, 0,
			[]string{
				"error OutOfcpu: not started: pod default/app: Pod was rejected: Node didn't have enough resource: cpu (reason OutOfcpu)",
				"error OutOfcpu: not started: pod default/app: Pod was rejected: Node didn't have enough resource: cpu (reason OutOfcpu)",
				"error OutOfcpu: not started: pod default/app: Pod was rejected: Node didn't have enough resource: cpu (reason OutOfcpu)",
			}, []string{"0.000", "0.000", "0.000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := junitPod()
			if tc.status.Reason == runner.ReasonDeadlineExceeded {
				three := int64(3) // from the start at 1 s: the deadline passes at 4 s
				pod.Spec.ActiveDeadlineSeconds = &three
			}
			res := &runner.Result{Pods: []runner.PodResult{{Pod: pod, Status: tc.status, Outcome: tc.outcome, Err: tc.err, Logs: logs}}}
			doc := junit.Report(junit.Run{Pods: []*v1.Pod{pod}, Result: res, Interrupt: tc.interrupt,
				NodeName: "node1", Start: t0, End: t0.Add(10 * time.Second)})
			checkJUnit(t, doc)
			s := doc.Suites[0]
			if s.Name != "default/app" || s.Hostname != "node1" || len(s.Cases) != 3 {
				t.Fatalf("suite %s on %s with %d cases", s.Name, s.Hostname, len(s.Cases))
			}
			for i, name := range []string{"init: setup", "sidecar: logger", "web"} {
				c := s.Cases[i]
				if c.Name != name || c.Classname != "default/app" {
					t.Errorf("case %d is %q of %q, want %q of default/app", i, c.Name, c.Classname, name)
				}
				if got := caseVerdict(c); got != tc.want[i] {
					t.Errorf("%s: %s\nwant %s", name, got, tc.want[i])
				}
				if tc.times != nil {
					if got := formatSeconds(c.Time); got != tc.times[i] {
						t.Errorf("%s: time %s, want %s", name, got, tc.times[i])
					}
				}
			}
			if f := s.Cases[2].Failure; f != nil {
				if !strings.Contains(f.Text, "last lines of the log:\nline 1\nline 2") || !strings.Contains(f.Text, "exit code: ") {
					t.Errorf("the failure's text lacks the exit code or the log:\n%s", f.Text)
				}
				if exitCode(s.Cases[2]) == "" {
					t.Errorf("the failed case has no exitCode property")
				}
			}
		})
	}
}

func TestJUnitReportOfARunThatNeverRan(t *testing.T) {
	// The manifests could not be read: one case says why.
	doc := junit.Report(junit.Run{Err: errors.New(`pod.yaml: document 1: spec.containers[0].comand: unknown field`),
		Start: t0, End: t0.Add(time.Second)})
	checkJUnit(t, doc)
	if len(doc.Suites) != 1 || doc.Errors != 1 || !strings.Contains(caseVerdict(doc.Suites[0].Cases[0]), "error PodrunError: pod.yaml: document 1") {
		t.Errorf("report %+v", doc)
	}
	// The runtime did not answer: every container is in error.
	doc = junit.Report(junit.Run{Pods: []*v1.Pod{junitPod()}, Err: errors.New("connecting to unix:///none.sock: no such file"),
		Start: t0, End: t0.Add(time.Second)})
	checkJUnit(t, doc)
	if doc.Errors != 3 || caseVerdict(doc.Suites[0].Cases[2]) != "error PodrunError: not started: connecting to unix:///none.sock: no such file" {
		t.Errorf("report %+v", doc.Suites[0].Cases[2])
	}
	// A signal while dialling.
	doc = junit.Report(junit.Run{Pods: []*v1.Pod{junitPod()}, Err: errors.New("interrupted: connecting"), Interrupt: runner.ExitSIGINT,
		Start: t0, End: t0.Add(time.Second)})
	checkJUnit(t, doc)
	if doc.Skipped != 3 || caseVerdict(doc.Suites[0].Cases[0]) != "skipped: not started: podrun was interrupted (SIGINT)" {
		t.Errorf("report %+v", doc.Suites[0].Cases[0])
	}
}

// checkJUnit validates the report against the schema and its counts
// against its cases.
func checkJUnit(t *testing.T, doc *junit.Testsuites) {
	t.Helper()
	b, err := junit.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	junittest.ValidateBytes(t, schema, b)
	n := 0
	for _, s := range doc.Suites {
		n += len(s.Cases)
	}
	if doc.Tests != n {
		t.Errorf("tests=%d for %d cases", doc.Tests, n)
	}
}

func formatSeconds(s junit.Seconds) string {
	a, _ := s.MarshalXMLAttr(xml.Name{Local: "time"})
	return a.Value
}

func exitCode(c junit.Testcase) string {
	for _, p := range c.Properties.Property {
		if p.Name == "exitCode" {
			return p.Value
		}
	}
	return ""
}

// A container's --copy-outs: those made in its system-out, those that
// failed in its system-err.
func TestJUnitReportCopyOuts(t *testing.T) {
	pod := junitPod()
	st := statuses(ended(0, "Completed", "", 1, 2), runningSince(2), ended(0, "Completed", "", 2, 5))
	spec := func(s string) artifacts.Spec {
		sp, err := artifacts.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	res := &runner.Result{Pods: []runner.PodResult{{Pod: pod, Status: st, Outcome: runner.OutcomeReached, CopyOuts: []runner.CopyOutResult{
		{Spec: spec("web:/out=/tmp/artifacts"), Files: 2, Bytes: 120, Skipped: []string{"shadow (a symlink to /etc/shadow, not followed)"}},
		{Spec: spec("web:/out/report.xml=/tmp/r"), Err: errors.New("copying /out/report.xml of container web into /tmp/r: no such file or directory on the volume")},
	}}}}
	doc := junit.Report(junit.Run{Pods: []*v1.Pod{pod}, Result: res, Start: t0, End: t0.Add(10 * time.Second)})
	checkJUnit(t, doc)
	web := doc.Suites[0].Cases[2]
	if web.SystemOut == nil || !strings.HasSuffix(web.SystemOut.Value, "copied out /out into /tmp/artifacts: 2 files, 120 bytes, 1 entries skipped (symlinks, devices: not copied)\n") {
		t.Errorf("system-out %+v", web.SystemOut)
	}
	if want := "--copy-out web:/out/report.xml=/tmp/r failed: copying /out/report.xml of container web into /tmp/r: no such file or directory on the volume\n"; web.SystemErr == nil || web.SystemErr.Value != want {
		t.Errorf("system-err %+v, want %q", web.SystemErr, want)
	}
	if doc.Failures != 0 || doc.Errors != 0 || doc.Suites[0].Cases[0].SystemErr != nil {
		t.Errorf("report %+v", doc)
	}
}

func TestJUnitReportOfAJob(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default"}}
	attempt := func(name string, code int32) runner.PodResult {
		pod := junitPod()
		pod.Name = name
		st := statuses(ended(0, "Completed", "", 1, 2), ended(143, "Error", "", 1.5, 9), ended(code, "Error", "", 2, 3))
		o := runner.OutcomeReached
		if code != 0 {
			o = runner.OutcomeFailed
		}
		return runner.PodResult{Pod: pod, Status: st, Outcome: o}
	}
	for _, tc := range []struct {
		name    string
		outcome runner.Outcome
		want    string // the first pod's web case
	}{
		{"a Job that completed: a pod it replaced is skipped", runner.OutcomeReached,
			"skipped: failed (exited with code 1 (Error)), then the Job default/pi made another pod and completed"},
		{"a Job that failed: its pods' failures stand", runner.OutcomeFailed, "failure Error: exited with code 1 (Error)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &runner.Result{Jobs: []runner.JobResult{{Job: job, Outcome: tc.outcome,
				Pods: []runner.PodResult{attempt("pi-a", 1), attempt("pi-b", 0)}}}}
			doc := junit.Report(junit.Run{Result: res, NodeName: "node1", Start: t0, End: t0.Add(10 * time.Second)})
			checkJUnit(t, doc)
			if len(doc.Suites) != 2 || doc.Suites[0].Name != "default/pi-a" || doc.Suites[1].Name != "default/pi-b" {
				t.Fatalf("suites %+v, want default/pi-a and default/pi-b", doc.Suites)
			}
			if got := caseVerdict(doc.Suites[0].Cases[2]); got != tc.want {
				t.Errorf("the first pod's web: %s\nwant %s", got, tc.want)
			}
			if got := caseVerdict(doc.Suites[1].Cases[2]); got != "passed" {
				t.Errorf("the second pod's web: %s, want passed", got)
			}
			props := map[string]string{}
			for _, p := range doc.Suites[0].Properties.Property {
				props[p.Name] = p.Value
			}
			if props["job"] != "default/pi" || props["jobOutcome"] != tc.outcome.String() {
				t.Errorf("properties %v, want job default/pi, jobOutcome %s", props, tc.outcome)
			}
		})
	}
}
