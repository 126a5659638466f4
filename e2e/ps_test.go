//go:build e2e

package e2e

// `podrun ps` end to end (cmd_ps.go, runner/listpods.go, runner/report/podlist):
// the kubectl-shaped table of detached pods (Running with the IP the pod
// answers on, Completed, Init:0/1, NAMESPACE across namespaces), -o wide's
// NODE, RUN and OWNER, -o json's v1.List with the live status, pods named
// by NAME, NAMESPACE/NAME and UID, a crash loop while its podrun runs it,
// a detached container that exits and stays exited, and -w printing a row
// per change.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// psTable splits ps's table output into its header and its rows: cells
// are at least 3 spaces apart, and hold at most single spaces.
func psTable(t *testing.T, out string) (header []string, rows [][]string) {
	t.Helper()
	sep := regexp.MustCompile(` {3,}`)
	for i, l := range lines(out) {
		cells := sep.Split(strings.TrimRight(l, " "), -1)
		if i == 0 {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d:\n%s", l, len(cells), len(header), out)
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// psRow is the row of pod name (the NAME column, wherever it is).
func psRow(t *testing.T, out, name string) map[string]string {
	t.Helper()
	header, rows := psTable(t, out)
	for _, r := range rows {
		row := map[string]string{}
		for i, h := range header {
			row[h] = r[i]
		}
		if row["NAME"] == name {
			return row
		}
	}
	t.Fatalf("no row of %s:\n%s", name, out)
	return nil
}

// psUntil runs ps with args until check accepts its output, or fails the
// test after timeout.
func psUntil(t *testing.T, e *env, timeout time.Duration, check func(out string) error, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := e.runPodrun(append([]string{"ps"}, args...), "")
		expectCode(t, r, 0)
		err := check(r.stdout)
		if err == nil {
			return r.stdout
		}
		if time.Now().After(deadline) {
			t.Fatalf("podrun ps %s: %v\n%s", strings.Join(args, " "), err, r)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// rowIs checks a row's READY, STATUS and RESTARTS (a regexp).
func rowIs(row map[string]string, ready, status, restarts string) error {
	if row["READY"] != ready || row["STATUS"] != status || !regexp.MustCompile("^("+restarts+")$").MatchString(row["RESTARTS"]) {
		return fmt.Errorf("READY %s STATUS %s RESTARTS %s, want %s %s %s", row["READY"], row["STATUS"], row["RESTARTS"], ready, status, restarts)
	}
	return nil
}

// watchPrints waits until a `ps -w` has printed a line matching re, or
// fails the test after timeout.
func watchPrints(t *testing.T, watch *proc, re string, timeout time.Duration) {
	t.Helper()
	line := regexp.MustCompile("(?m)" + re)
	deadline := time.Now().Add(timeout)
	for !line.MatchString(watch.stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("ps -w printed no line matching %s:\n%s\nstderr:\n%s", re, watch.stdout.String(), watch.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// changedCells is what of a wide row a watch prints again on: all but
// NAME, AGE and the age of the last restart.
func changedCells(row []string) string {
	restarts, _, _ := strings.Cut(row[3], " ")
	return strings.Join(append([]string{row[1], row[2], restarts}, row[5:]...), "|")
}

func podCondition(p *v1.Pod, ct v1.PodConditionType) v1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == ct {
			return c
		}
	}
	return v1.PodCondition{}
}

// Detached pods in ps: a web server 1/1 Running with the IP it answers on,
// its status in -o json, its readiness no longer probed; a job Completed
// and a pod held by its init container Init:0/1, in another namespace;
// -o wide; names.
func TestE2EPsDetached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sfx := randomSuffix(t)
	web, job, initPod, ns := "e2e-ps-web-"+sfx, "e2e-ps-job-"+sfx, "e2e-ps-init-"+sfx, "e2e-ps-"+sfx
	e.downOnCleanup(web, job, initPod)
	r := e.runPodrun([]string{"-d", "-q", "-f", fromTemplate(t, "ps/web.yaml", "NAME", web)}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"-d", "-q", "--wait=none", "-f", fromTemplate(t, "ps/job.yaml", "NAME", job),
		"-f", fromTemplate(t, "ps/init.yaml", "NAME", initPod, "NAMESPACE", ns)}, "")
	expectCode(t, r, 0)

	// The table of the web server, by NAME.
	r = e.runPodrun([]string{"ps", web}, "")
	expectCode(t, r, 0)
	header, _ := psTable(t, r.stdout)
	if got := strings.Join(header, " "); got != "NAME READY STATUS RESTARTS AGE IP" {
		t.Errorf("header %q, want kubectl's NAME READY STATUS RESTARTS AGE and IP", got)
	}
	row := psRow(t, r.stdout, web)
	if err := rowIs(row, "1/1", "Running", "0"); err != nil {
		t.Errorf("%s: %v\n%s", web, err, r)
	}
	ip := row["IP"]
	if net.ParseIP(ip) == nil || !regexp.MustCompile(`^\d+s$`).MatchString(row["AGE"]) {
		t.Fatalf("IP %q AGE %q\n%s", ip, row["AGE"], r)
	}
	// The IP is the pod's: its server answers there.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + net.JoinHostPort(ip, "8080") + "/index.html")
	if err != nil {
		t.Errorf("the pod does not answer on the IP ps shows: %v", err)
	} else {
		resp.Body.Close()
	}

	// -o json: a v1.List of the manifest that ran with the live status.
	r = e.runPodrun([]string{"ps", "-o", "json"}, "")
	expectCode(t, r, 0)
	var p *v1.Pod
	for _, q := range parseList(t, r.stdout) {
		if q.Name == web {
			p = q
		}
	}
	if p == nil {
		t.Fatalf("ps -o json lacks %s\n%s", web, r)
	}
	if p.Status.PodIP != ip || len(p.Status.PodIPs) == 0 || p.Status.PodIPs[0].IP != ip || p.Status.Phase != v1.PodRunning ||
		p.Status.HostIP == "" || p.Status.StartTime == nil {
		t.Errorf("status podIP %q (table %q), phase %s, hostIP %q, startTime %v", p.Status.PodIP, ip, p.Status.Phase, p.Status.HostIP, p.Status.StartTime)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("container statuses %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.Name != "web" || cs.RestartCount != 0 || cs.State.Running == nil || !cs.Ready {
		t.Errorf("container status %+v", cs)
	}
	// The container's ID and image as the runtime has them, as a kubelet
	// shows them: the image ID is the runtime's ImageRef of the container
	// (its repo digest; on the testbed one digest has many names, and
	// CRI-O names the first of them, docker.io/library/alpine@sha256:...
	// for busybox).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st, err := rtClient.ContainerStatus(ctx, containerIDOf(t, cs)); err != nil {
		t.Errorf("the runtime's status of container %s: %v", cs.ContainerID, err)
	} else if cs.ImageID == "" || cs.ImageID != st.GetImageRef() {
		t.Errorf("imageID %q, want the runtime's ImageRef %q", cs.ImageID, st.GetImageRef())
	}
	if rp := p.Spec.Containers[0].ReadinessProbe; rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/index.html" || p.Spec.NodeName == "" {
		t.Errorf("the spec is not the manifest that ran: %+v", p.Spec)
	}
	// Nothing probes the detached pod: its readiness is the last result
	// podrun recorded, and says so.
	ready := podCondition(p, v1.PodReady)
	if ready.Status != v1.ConditionTrue || ready.Reason != "ReadinessNotProbed" || ready.LastProbeTime.IsZero() ||
		!strings.Contains(ready.Message, "web: Success at") {
		t.Errorf("Ready condition %+v, want True, ReadinessNotProbed, the last result and its time", ready)
	}
	if !strings.Contains(p.Status.Message, "left the pod running") || !strings.Contains(p.Status.Message, "nothing probes its containers or restarts them") {
		t.Errorf("status message %q", p.Status.Message)
	}

	// -o wide by NAMESPACE/NAME and by UID: NODE, RUN, OWNER.
	for _, arg := range []string{"default/" + web, string(p.UID)} {
		r = e.runPodrun([]string{"ps", "-o", "wide", arg}, "")
		expectCode(t, r, 0)
		header, rows := psTable(t, r.stdout)
		if got := strings.Join(header, " "); got != "NAME READY STATUS RESTARTS AGE IP NODE RUN OWNER" {
			t.Errorf("wide header %q", got)
		}
		if len(rows) != 1 {
			t.Fatalf("ps -o wide %s: %d rows, want 1\n%s", arg, len(rows), r)
		}
		row := psRow(t, r.stdout, web)
		if row["NODE"] != p.Spec.NodeName || row["RUN"] != p.Annotations["io.podrun.run"] || row["OWNER"] != "detached" || row["IP"] != ip {
			t.Errorf("ps -o wide %s: NODE %s RUN %s OWNER %s; want %s, %s, detached\n%s", arg, row["NODE"], row["RUN"], row["OWNER"],
				p.Spec.NodeName, p.Annotations["io.podrun.run"], r)
		}
	}

	// The job completes on its own; the init container holds the other
	// pod. Two namespaces: a NAMESPACE column.
	out := psUntil(t, e, 60*time.Second, func(out string) error {
		return rowIs(psRow(t, out, job), "0/1", "Completed", "0")
	}, "-o", "wide", job, ns+"/"+initPod)
	header, _ = psTable(t, out)
	if header[0] != "NAMESPACE" {
		t.Errorf("pods of two namespaces without a NAMESPACE column:\n%s", out)
	}
	initRow := psRow(t, out, initPod)
	if err := rowIs(initRow, "0/1", "Init:0/1", "0"); err != nil || initRow["NAMESPACE"] != ns {
		t.Errorf("%s: %v, namespace %s\n%s", initPod, err, initRow["NAMESPACE"], out)
	}
	if jobRow := psRow(t, out, job); jobRow["RUN"] != initRow["RUN"] || jobRow["RUN"] == p.Annotations["io.podrun.run"] {
		t.Errorf("RUN: job %s, init %s, web %s; want the first two alike, the web server's apart", jobRow["RUN"], initRow["RUN"], p.Annotations["io.podrun.run"])
	}
	r = e.runPodrun([]string{"ps", "-o", "yaml", job}, "")
	expectCode(t, r, 0)
	jp := parsePod(t, r.stdout)
	if jc := jp.Status.ContainerStatuses[0]; jp.Status.Phase != v1.PodSucceeded || jc.State.Terminated == nil || jc.State.Terminated.ExitCode != 0 || jc.State.Terminated.Reason != "Completed" {
		t.Errorf("job: phase %s, state %+v", jp.Status.Phase, jc.State)
	}

	// A name that names no pod: the others printed, then 125 naming it.
	r = e.runPodrun([]string{"ps", web, "e2e-ps-nosuch-" + sfx}, "")
	expectCode(t, r, 125)
	if !strings.Contains(r.stderr, `no podrun pod "e2e-ps-nosuch-`+sfx+`"`) {
		t.Errorf("stderr does not name the unknown pod\n%s", r)
	}
	psRow(t, r.stdout, web)

	r = e.runPodrun([]string{"down", "-q", web, job, ns + "/" + initPod}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"ps", web}, "")
	expectCode(t, r, 125)
}

// A crash loop in ps while its podrun runs it: CrashLoopBackOff, RESTARTS
// with the last restart's age, OWNER the podrun's pid, the waiting state
// and the last termination in -o json; `ps -w` prints the header once and
// a row per change, the restart after the back-off among them.
func TestE2EPsCrashLoopAndWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-ps-crash-" + randomSuffix(t)
	e.downOnCleanup(name)
	// Never ready (its readiness probe fails): --wait=ready never ends.
	run := e.startPodrun([]string{"-q", "--wait=ready", "-f", fromTemplate(t, "ps/crash.yaml", "NAME", name, "SLEEP", "1")}, "")
	pid := run.cmd.Process.Pid
	psUntil(t, e, 60*time.Second, func(out string) error {
		if !strings.Contains(out, name) {
			return fmt.Errorf("not listed yet")
		}
		return nil
	}, "-o", "wide")
	watch := e.startPodrun([]string{"ps", "-w", "-o", "wide", name}, "")

	out := psUntil(t, e, 60*time.Second, func(out string) error {
		return rowIs(psRow(t, out, name), "0/1", "CrashLoopBackOff", `[1-9]\d* \(\d+s ago\)`)
	}, "-o", "wide", name)
	if row := psRow(t, out, name); row["OWNER"] != "pid "+strconv.Itoa(pid) {
		t.Errorf("OWNER %q, want pid %d", row["OWNER"], pid)
	}
	r := e.runPodrun([]string{"ps", "-o", "json", name}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount < 1 || cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" ||
		!strings.Contains(cs.State.Waiting.Message, "back-off") || cs.LastTerminationState.Terminated == nil ||
		cs.LastTerminationState.Terminated.ExitCode != 3 || cs.LastTerminationState.Terminated.Reason != "Error" {
		t.Errorf("container status %+v", cs)
	}
	if p.Status.Phase != v1.PodRunning || p.Status.Message != "" || p.Annotations["io.podrun.owner"] != "pid "+strconv.Itoa(pid) {
		t.Errorf("phase %s, message %q, owner %q", p.Status.Phase, p.Status.Message, p.Annotations["io.podrun.owner"])
	}

	// The back-off (10 s) ends, podrun starts the container again: the
	// watch prints a row with RESTARTS 2 or more.
	watchPrints(t, watch, `^`+name+`\s+0/1\s+\S+\s+([2-9]|\d\d+) \(`, 60*time.Second)
	watch.signal(syscall.SIGINT)
	wr := watch.result(30 * time.Second)
	expectCode(t, wr, 130)
	header, rows := psTable(t, wr.stdout)
	if header[0] != "NAME" || strings.Count(wr.stdout, "READY") != 1 {
		t.Errorf("the watch's header is not printed once at the top:\n%s", wr.stdout)
	}
	statuses := map[string]bool{}
	for i, row := range rows {
		if row[0] != name {
			t.Errorf("row %d is of %s", i, row[0])
		}
		// Only a change prints a row: READY, STATUS, the restart count,
		// IP, NODE, RUN or OWNER differ from the row before.
		if i > 0 && changedCells(rows[i-1]) == changedCells(row) {
			t.Errorf("row %d repeats the row before it: %q", i, row)
		}
		statuses[row[2]] = true
	}
	for _, s := range []string{"Running", "CrashLoopBackOff"} {
		if !statuses[s] {
			t.Errorf("the watch printed no %s row:\n%s", s, wr.stdout)
		}
	}

	stopNow(t, run)
	r = e.runPodrun([]string{"ps", name}, "")
	expectCode(t, r, 125)
}

// A detached pod whose container exits: nothing restarts it, ps says
// Error with no restart and the pod is over; `ps -w` prints the change.
func TestE2EPsDetachedCrashAndWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-ps-dcrash-" + randomSuffix(t)
	e.downOnCleanup(name)
	// It runs 5 s: the watch sees it run, then exit.
	r := e.runPodrun([]string{"-d", "-q", "--wait=none", "-f", fromTemplate(t, "ps/crash.yaml", "NAME", name, "SLEEP", "5")}, "")
	expectCode(t, r, 0)
	watch := e.startPodrun([]string{"ps", "-w", name}, "")
	out := psUntil(t, e, 60*time.Second, func(out string) error {
		return rowIs(psRow(t, out, name), "0/1", "Error", "0")
	}, "-o", "wide", name)
	if row := psRow(t, out, name); row["OWNER"] != "detached" {
		t.Errorf("OWNER %q, want detached", row["OWNER"])
	}
	// Nothing restarts it: a while later, still Error with no restart.
	time.Sleep(3 * time.Second)
	// Flags after the pod, as kubectl takes them.
	r = e.runPodrun([]string{"ps", name, "-o", "json"}, "")
	expectCode(t, r, 0)
	p := parsePod(t, r.stdout)
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 3 || p.Status.Phase != v1.PodFailed ||
		!strings.Contains(p.Status.Message, "nothing probes its containers or restarts them") {
		t.Errorf("restartCount %d, state %+v, phase %s, message %q", cs.RestartCount, cs.State, p.Status.Phase, p.Status.Message)
	}
	// --no-headers: the row alone, as kubectl get --no-headers.
	r = e.runPodrun([]string{"ps", "--no-headers", name}, "")
	expectCode(t, r, 0)
	if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], name+" ") {
		t.Errorf("ps --no-headers %s: stdout %q, want its row alone", name, r.stdout)
	}
	// logs reads it as ps shows it: the instance that exited is the
	// current one, and there is none before it (kubectl logs --previous of
	// a container with no lastState).
	r = e.runPodrun([]string{"logs", name}, "")
	expectCode(t, r, 0)
	r = e.runPodrun([]string{"logs", "--previous", name}, "")
	expectCode(t, r, 125)
	if want := "podrun: previous terminated container \"app\" in pod \"" + name + "\" not found\n"; r.stderr != want {
		t.Errorf("logs --previous of a detached pod's exited container: stderr %q, want %q", r.stderr, want)
	}

	// The watch saw it go from Running (or ContainerCreating) to Error.
	watchPrints(t, watch, `^`+name+`\s+0/1\s+Error\s+0\s`, 30*time.Second)
	watch.signal(syscall.SIGINT)
	wr := watch.result(30 * time.Second)
	expectCode(t, wr, 130)
	if _, rows := psTable(t, wr.stdout); len(rows) < 2 {
		t.Errorf("ps -w printed %d rows, want the first state and the Error row:\n%s", len(rows), wr.stdout)
	}
	r = e.runPodrun([]string{"down", name, "-q"}, "")
	expectCode(t, r, 0)
	if r.stderr != "" {
		t.Errorf("down NAME -q: stderr %q, want nothing", r.stderr)
	}
}
