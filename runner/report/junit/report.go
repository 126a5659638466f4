package junit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources/podresources"
)

// Run is what a run's JUnit report (--junit) is made of: the run as it
// ended, after teardown gathered each pod's final status (runner.Result).
type Run struct {
	Pods      []*v1.Pod      // the run's pods; none when the manifests could not be read
	Result    *runner.Result // nil when the run never got to run the pods
	Err       error          // podrun's error, when it exits with one
	Interrupt int            // runner.ExitSIGINT, ExitSIGTERM, ExitSIGHUP or ExitSIGPIPE after a signal (or a closed output), else 0
	NodeName  string
	Start     time.Time // when podrun started
	End       time.Time // when the run ended
}

// Types of the <error>s that are podrun's rather than a container's.
const (
	typePodrunError = "PodrunError" // podrun could not run the pod (exit 125)
	typeTimeout     = "Timeout"     // --timeout expired
	typeInterrupted = "Interrupted" // SIGINT or SIGTERM
	typeStopped     = "Stopped"     // the pod's Job stopped it (it was over)
)

// Report is a run's JUnit report: one testsuite per pod, named
// namespace/name, with one testcase per container in spec order (init
// containers and sidecars first, named "init: NAME" and "sidecar: NAME"),
// each with its duration, exit code and outcome (containerCase), then one
// per pod of each Job (jobSuites). A run that read no pod has one suite
// "podrun" whose one case carries the error.
func Report(in Run) *Testsuites {
	doc := &Testsuites{Name: "podrun", Time: Seconds(in.End.Sub(in.Start))}
	if len(in.Pods) == 0 && (in.Result == nil || len(in.Result.Jobs) == 0) {
		msg := "no pod was read"
		if in.Err != nil {
			msg = in.Err.Error()
		}
		doc.Suites = []Testsuite{{
			Name: "podrun", Timestamp: Timestamp(in.Start), Hostname: in.NodeName, Time: doc.Time,
			Cases: []Testcase{{Name: "manifests", Classname: "podrun", Time: doc.Time,
				Error: &Problem{Type: errorType(in), Message: msg, Text: msg}}},
		}}
		doc.Count()
		return doc
	}
	for i, pod := range in.Pods {
		pr := runner.PodResult{Pod: pod, Outcome: runner.OutcomeError, Err: in.Err}
		if in.Result != nil && i < len(in.Result.Pods) {
			pr = in.Result.Pods[i]
		} else if in.Interrupt != 0 {
			pr.Outcome = runner.OutcomeInterrupted
		}
		doc.Suites = append(doc.Suites, podSuite(in, pr))
	}
	if in.Result != nil {
		for _, j := range in.Result.Jobs {
			doc.Suites = append(doc.Suites, jobSuites(in, j)...)
		}
	}
	doc.Count()
	return doc
}

// jobSuites are the testsuites of a Job's pods, in the order it made
// them, each with the job and its outcome as properties. The failures of
// the pods of a Job that completed in the end are skipped cases, saying
// that the Job made another pod: the Job, not each pod, passed or failed,
// as podrun's exit status says.
func jobSuites(in Run, j runner.JobResult) []Testsuite {
	var out []Testsuite
	name := j.Job.Namespace + "/" + j.Job.Name
	for _, pr := range j.Pods {
		s := podSuite(in, pr)
		s.Properties.Property = append(s.Properties.Property, properties("job", name, "jobOutcome", j.Outcome.String()).Property...)
		if j.Reached() {
			for i := range s.Cases {
				if f := s.Cases[i].Failure; f != nil {
					s.Cases[i].Failure = nil
					s.Cases[i].Skipped = &Skipped{Message: fmt.Sprintf("failed (%s), then the Job %s made another pod and completed", f.Message, name)}
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// errorType is the type of an error of the run as a whole.
func errorType(in Run) string {
	if in.Interrupt != 0 {
		return typeInterrupted
	}
	return typePodrunError
}

// podSuite is one pod's testsuite: its time from the pod's start (the
// run's, when it never started) to the run's end, its status as
// properties, and podrun's error about it as system-err.
func podSuite(in Run, pr runner.PodResult) Testsuite {
	pod, st := pr.Pod, pr.Status
	start := in.Start
	if st.StartTime != nil && !st.StartTime.IsZero() {
		start = st.StartTime.Time
	}
	s := Testsuite{
		Name: pod.Namespace + "/" + pod.Name, Time: Seconds(in.End.Sub(start)),
		Timestamp: Timestamp(start), Hostname: in.NodeName,
		Properties: properties(
			"uid", string(pod.UID),
			"outcome", pr.Outcome.String(),
			"phase", string(st.Phase),
			"reason", st.Reason,
			"message", st.Message,
			"qosClass", string(podresources.QOSClass(pod)),
		),
	}
	if pr.Err != nil {
		s.SystemErr = NewText(pr.Err.Error() + "\n")
	}
	statuses := append(append([]v1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...)
	for _, c := range runner.PodContainers(pod) {
		var cs *v1.ContainerStatus
		for i := range statuses {
			if statuses[i].Name == c.Name {
				cs = &statuses[i]
			}
		}
		s.Cases = append(s.Cases, containerCase(in, pr, c, cs))
	}
	return s
}

// containerCase decides a container's testcase from its final status cs (nil
// when the run has none) and how its pod's run ended:
//
//   - never started: an <error> typed with the waiting reason when that is
//     an error (ErrImagePull, CreateContainerConfigError, ...) or when
//     podrun could not run the pod (rejected: the kubelet's reason, e.g.
//     OutOfcpu; else PodrunError); else <skipped>, saying why (timeout,
//     signal, the pod failed first).
//   - ended (or waiting to restart after it ended) with exit code 0, or a
//     sidecar however it ended (stopped with the pod, as the kubelet's
//     phase ignores it): passed.
//   - ended with a non-zero exit code: a <failure> typed with the reason
//     (Error, OOMKilled, ...), with the exit code, the message and the last
//     lines of its log.
//   - killed when the pod's activeDeadlineSeconds passed (the pod failed
//     with reason DeadlineExceeded, and the container, not a sidecar, ran
//     until the deadline or after it): a <failure> typed DeadlineExceeded,
//     whatever its exit code, with the pod's message and the last lines
//     of its log. One that never started is skipped, saying so.
//   - running, or waiting to restart, when the run timed out or was
//     interrupted (a sidecar excepted): an <error> typed Timeout or
//     Interrupted, with the last lines of its log; otherwise passed.
//
// Its time is the last instance's, from startedAt to finishedAt, or to the
// run's end while it runs; 0 when it never started.
func containerCase(in Run, pr runner.PodResult, c runner.PodContainer, cs *v1.ContainerStatus) Testcase {
	tc := Testcase{Name: caseName(c), Classname: pr.Pod.Namespace + "/" + pr.Pod.Name}
	var term *v1.ContainerStateTerminated
	var running *v1.ContainerStateRunning
	var waiting *v1.ContainerStateWaiting
	var restarts int32
	if cs != nil {
		term, running, waiting, restarts = cs.State.Terminated, cs.State.Running, cs.State.Waiting, cs.RestartCount
		if term == nil && running == nil {
			term = cs.LastTerminationState.Terminated // waiting to start again
		}
	}
	props := []string{"kind", string(c.Kind), "image", c.Image, "restartCount", strconv.Itoa(int(restarts))}
	var out strings.Builder
	switch {
	case running != nil:
		tc.Time = Seconds(in.End.Sub(running.StartedAt.Time))
		fmt.Fprintf(&out, "running since %s\n", running.StartedAt.UTC().Format(time.RFC3339))
	case term != nil:
		tc.Time = Seconds(term.FinishedAt.Sub(term.StartedAt.Time))
		props = append(props, "exitCode", strconv.Itoa(int(term.ExitCode)), "reason", term.Reason)
		fmt.Fprintf(&out, "exit code %d (%s), started %s, finished %s\n", term.ExitCode, term.Reason,
			term.StartedAt.UTC().Format(time.RFC3339), term.FinishedAt.UTC().Format(time.RFC3339))
	}
	if waiting != nil && waiting.Reason != "" {
		props = append(props, "waitingReason", waiting.Reason)
		fmt.Fprintf(&out, "waiting: %s\n", waitingText(waiting))
	}
	fmt.Fprintf(&out, "restarts: %d\n", restarts)
	copied, failed := copyOutLines(pr, c.Name)
	out.WriteString(copied)
	tc.Properties = properties(props...)
	tc.SystemOut = NewText(out.String())
	tc.SystemErr = NewText(failed)

	logs := logSection(pr, c.Name)
	signal := map[int]string{runner.ExitSIGHUP: "SIGHUP", runner.ExitSIGTERM: "SIGTERM", runner.ExitSIGPIPE: "its output closed"}[in.Interrupt]
	if signal == "" {
		signal = "SIGINT"
	}
	cutShort := map[runner.Outcome]*Problem{
		runner.OutcomeTimeout:     {Type: typeTimeout, Message: "the run timed out (--timeout)"},
		runner.OutcomeInterrupted: {Type: typeInterrupted, Message: "podrun was interrupted (" + signal + ")"},
		runner.OutcomeStopped:     {Type: typeStopped, Message: "its Job stopped the pod"},
	}[pr.Outcome]
	deadline := deadlinePassed(pr)
	killedAtDeadline := !deadline.IsZero() && c.Kind != runner.KindSidecar &&
		(running != nil || term != nil && !term.FinishedAt.Time.Before(deadline))

	switch {
	case running == nil && term == nil: // never started
		switch {
		case waiting != nil && !startingReason(waiting.Reason):
			tc.Error = &Problem{Type: waiting.Reason, Message: waitingText(waiting)}
			tc.Error.Text = tc.Error.Message + "\n"
		case pr.Outcome == runner.OutcomeError:
			tc.Error = &Problem{Type: typePodrunError, Message: "not started: podrun could not run the pod"}
			if pr.Status.Reason != "" {
				tc.Error.Type = pr.Status.Reason // rejected by admission
			}
			if pr.Err != nil {
				tc.Error.Message = "not started: " + pr.Err.Error()
			}
			tc.Error.Text = tc.Error.Message + "\n"
		case cutShort != nil:
			tc.Skipped = &Skipped{Message: "not started: " + cutShort.Message}
		case !deadline.IsZero():
			tc.Skipped = &Skipped{Message: "not started: the pod's activeDeadlineSeconds passed first (" + runner.ReasonDeadlineExceeded + ")"}
		case pr.Outcome == runner.OutcomeFailed:
			tc.Skipped = &Skipped{Message: "not started: the pod failed first"}
		default:
			tc.Skipped = &Skipped{Message: "not started when the wait ended"}
		}
	case killedAtDeadline:
		what, text := "still running", ""
		if term != nil {
			what = fmt.Sprintf("exited with code %d (%s)", term.ExitCode, orError(term.Reason))
			text = fmt.Sprintf("exit code: %d\n", term.ExitCode)
		}
		tc.Failure = &Problem{Type: runner.ReasonDeadlineExceeded,
			Message: fmt.Sprintf("killed when the pod's activeDeadlineSeconds (%d s) passed: %s", *pr.Pod.Spec.ActiveDeadlineSeconds, what),
			Text:    fmt.Sprintf("reason: %s\nmessage: %s\n", pr.Status.Reason, pr.Status.Message) + text + logs}
	case term != nil && term.ExitCode != 0 && c.Kind != runner.KindSidecar:
		typ := orError(term.Reason)
		msg := fmt.Sprintf("exited with code %d (%s)", term.ExitCode, typ)
		if term.Message != "" {
			msg += ": " + term.Message
		}
		if running == nil && waiting != nil && waiting.Reason != "" {
			msg += "; then " + waitingText(waiting)
		}
		text := fmt.Sprintf("reason: %s\nexit code: %d\n", typ, term.ExitCode)
		if term.Message != "" {
			text += "message: " + term.Message + "\n"
		}
		tc.Failure = &Problem{Type: typ, Message: msg, Text: text + logs}
	case cutShort != nil && c.Kind != runner.KindSidecar && (running != nil || waiting != nil):
		what := "still running"
		if running == nil {
			what = "waiting to restart (" + waitingText(waiting) + ")"
		}
		tc.Error = &Problem{Type: cutShort.Type, Message: what + " when " + cutShort.Message}
		tc.Error.Text = tc.Error.Message + "\n" + logs
	}
	return tc
}

// orError is a terminated container's reason, Error when it has none.
func orError(reason string) string {
	if reason == "" {
		return "Error"
	}
	return reason
}

// deadlinePassed is when the pod's activeDeadlineSeconds passed, when the
// pod failed by it (reason DeadlineExceeded); else the zero time.
func deadlinePassed(pr runner.PodResult) time.Time {
	st := pr.Status
	if pr.Outcome != runner.OutcomeFailed || st.Reason != runner.ReasonDeadlineExceeded || st.StartTime == nil {
		return time.Time{}
	}
	return runner.ActiveDeadline(pr.Pod.Spec.ActiveDeadlineSeconds, st.StartTime.Time)
}

// copyOutLines are the container's --copy-outs: those made, for its
// system-out, and those that failed, for its system-err (a failed copy is
// the pod's error, in its suite's system-err, only with
// --copy-out-required).
func copyOutLines(pr runner.PodResult, name string) (copied, failed string) {
	var ok, bad strings.Builder
	for _, co := range pr.CopyOuts {
		if co.Spec.Container != name {
			continue
		}
		if co.Err != nil {
			fmt.Fprintf(&bad, "--copy-out %s failed: %v\n", co.Spec, co.Err)
			continue
		}
		fmt.Fprintf(&ok, "copied out %s into %s: %d files, %d bytes", co.Spec.Path, co.Spec.HostDir, co.Files, co.Bytes)
		if n := len(co.Skipped); n > 0 {
			fmt.Fprintf(&ok, ", %d entries skipped (symlinks, devices: not copied)", n)
		}
		ok.WriteString("\n")
	}
	return ok.String(), bad.String()
}

// caseName names a container's testcase: init containers and sidecars
// say what they are first, so that a CI page listing the cases shows it.
func caseName(c runner.PodContainer) string {
	if c.Kind == runner.KindContainer {
		return c.Name
	}
	return string(c.Kind) + ": " + c.Name
}

// The kubelet's waiting reasons before a container's first start.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
)

// startingReason tells whether a waiting reason is the ordinary wait before
// a first start rather than an error.
func startingReason(reason string) bool {
	return reason == "" || reason == reasonContainerCreating || reason == reasonPodInitializing
}

func waitingText(w *v1.ContainerStateWaiting) string {
	if w.Message == "" {
		return w.Reason
	}
	return w.Reason + ": " + w.Message
}

// logSection is the end of the container's log as a failure's body shows it.
func logSection(pr runner.PodResult, name string) string {
	text, ok := pr.Logs[name]
	if !ok {
		return "\n(no log was read)\n"
	}
	if text == "" {
		return "\n(the log is empty)\n"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return "\nlast lines of the log:\n" + text
}

// properties makes a <properties> of name, value pairs, leaving out
// empty values.
func properties(kv ...string) *Properties {
	p := &Properties{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			p.Property = append(p.Property, Property{Name: kv[i], Value: kv[i+1]})
		}
	}
	return p
}
