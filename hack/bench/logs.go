package main

// The log throughput table (issue 19): one pod printing -log-bytes bytes of
// 2-byte lines, left to the runtime alone (cribare) and streamed by podrun
// to a file.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// logSample is one side's run: its own wall time and CPU, and the
// runtime's CPU meanwhile (-1: unknown).
type logSample struct {
	sample
	runtimeCPU time.Duration
}

// logsTable measures the log throughput on every testbed, prints its
// table and returns its verdicts.
func logsTable(targets []target) []string {
	script := fmt.Sprintf("yes | head -c %d", *logBytes)
	fmt.Printf("log throughput: one pod printing %d bytes of 2-byte lines (%s), podrun's output to a file; %d rounds per runtime, no warm-up, sides alternating; loadavg before: %s\n",
		*logBytes, script, *logRounds, loadavg())
	manifest := filepath.Join(tmp, "logs.yaml")
	if err := os.WriteFile(manifest, []byte(logManifest(script)), 0o644); err != nil {
		fail(err.Error())
	}
	type row struct {
		t          *target
		bare, prun []logSample
	}
	var rows []*row
	for i := range targets {
		rw := &row{t: &targets[i]}
		rows = append(rows, rw)
		for r := range *logRounds {
			sides := []func(){
				func() { rw.bare = append(rw.bare, measureLogs(rw.t, bareLogsCmd(rw.t, script), "", "")) },
				func() {
					out := filepath.Join(tmp, "logs.out")
					root := filepath.Join(tmp, "root")
					kept := filepath.Join(tmp, "logs")
					cmd := podrunCmd(rw.t, root, manifest)
					cmd.Args = append(cmd.Args, "--pod-logs-dir", kept)
					rw.prun = append(rw.prun, measureLogs(rw.t, cmd, out, kept))
					os.RemoveAll(root)
					os.RemoveAll(kept)
					os.Remove(out)
				},
			}
			if r%2 == 1 {
				slices.Reverse(sides)
			}
			for _, side := range sides {
				side()
			}
			fmt.Fprintf(os.Stderr, "bench: log throughput, %s: round %d/%d done (loadavg %s)\n", rw.t.name, r+1, *logRounds, loadavg())
		}
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "runtime\tbare s (min-max)\tpodrun s (min-max)\tpodrun/bare\tgoal\tpodrun CPU s (min-max)\truntime CPU s, bare\truntime CPU s, podrun\t")
	var verdicts []string
	for _, rw := range rows {
		bw, pw := logWalls(rw.bare), logWalls(rw.prun)
		ratio := float64(median(pw)) / float64(median(bw))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", rw.t.name, spreadS(bw), spreadS(pw), ratio, logGoal,
			spreadS(sorted(rw.prun, func(s logSample) time.Duration { return s.cpu })),
			runtimeCPU(rw.bare), runtimeCPU(rw.prun))
		v := "meets the goal"
		if ratio > logGoal {
			v = fmt.Sprintf("MISSES: ratio %.2f > %.2f", ratio, logGoal)
		}
		verdicts = append(verdicts, fmt.Sprintf("%s, log throughput: %s", rw.t.name, v))
	}
	tw.Flush()
	return verdicts
}

// logManifest is the log throughput pod.
func logManifest(script string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: bench-logs
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", %q]
`, script)
}

func bareLogsCmd(t *target, script string) *exec.Cmd {
	return exec.Command(*cribarePath, "-endpoint", t.endpoint, "-image", "busybox", "-sh", script, "-timeout", "30m")
}

// measureLogs runs one side to completion, its stdout to the file out
// when not "" (which must then hold what the runtime wrote to the log
// kept in the dir kept: -log-bytes bytes, or fewer where the runtime drops
// some), and aborts the benchmark if it fails.
func measureLogs(t *target, cmd *exec.Cmd, out, kept string) logSample {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			fail(err.Error())
		}
		defer f.Close()
		cmd.Stdout = f
	} else {
		cmd.Stdout = &stderr
	}
	rtBefore := runtimeCPUNow(t)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	rtAfter := runtimeCPUNow(t)
	if err != nil {
		fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes()))
	}
	if out != "" {
		// What the runtime wrote of the container's output to its log,
		// which --pod-logs-dir kept: containerd 1.6 drops the last 100-odd
		// KB at the exit; podrun's output must hold what it wrote.
		wrote := keptLogBytes(kept)
		if wrote != int64(*logBytes) {
			fmt.Fprintf(os.Stderr, "bench: %s: the runtime wrote %d of the container's %d bytes to its log\n", t.name, wrote, *logBytes)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() != wrote {
			fail(fmt.Sprintf("%s: its stdout holds %v bytes (%v), want the %d the runtime wrote to the log", strings.Join(cmd.Args, " "), sizeOf(fi), err, wrote))
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := logSample{sample: sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), maxRSSKiB: ru.Maxrss}, runtimeCPU: -1}
	if rtBefore >= 0 && rtAfter >= rtBefore {
		s.runtimeCPU = rtAfter - rtBefore
	}
	return s
}

func sizeOf(fi os.FileInfo) any {
	if fi == nil {
		return "no"
	}
	return fi.Size()
}

// runtimeCPUNow is the CPU (user+sys) the runtime's process has used so
// far, from the pid file the testbed keeps (DIR/run/containerd.pid); -1
// when unknown. The shims and containers are not in it.
func runtimeCPUNow(t *target) time.Duration {
	if t.dir == "" {
		return -1
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(filepath.Join(t.dir, "run", "containerd.pid"))))
	if err != nil {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return -1
	}
	// After "pid (comm)": field 3 (state) on; utime and stime are fields
	// 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// runtimeCPU is the median runtime CPU of samples with min-max, in s, or
// "-" when unknown.
func runtimeCPU(s []logSample) string {
	d := sorted(s, func(x logSample) time.Duration { return x.runtimeCPU })
	if len(d) == 0 || d[0] < 0 {
		return "-"
	}
	return spreadS(d)
}

func logWalls(s []logSample) []time.Duration {
	return sorted(s, func(x logSample) time.Duration { return x.wall })
}

// spreadS is "median (min-max)" in seconds of a sorted slice.
func spreadS(d []time.Duration) string {
	return fmt.Sprintf("%.1f (%.1f-%.1f)", median(d).Seconds(), d[0].Seconds(), d[len(d)-1].Seconds())
}

// keptLogBytes is how many bytes of text the CRI log files under dir (a
// --pod-logs-dir) hold: each record's text, with its newline unless it is
// partial (P).
func keptLogBytes(dir string) int64 {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.log"))
	if len(files) == 0 {
		fail("no log kept in " + dir)
	}
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fail(err.Error())
		}
		for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			fields := bytes.SplitN(l, []byte(" "), 4)
			if len(fields) != 4 {
				fail(fmt.Sprintf("%s: not a CRI log record: %q", f, l))
			}
			n += int64(len(fields[3]))
			if string(fields[2]) != "P" {
				n++
			}
		}
	}
	return n
}
