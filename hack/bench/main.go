// Command bench compares podrun with the bare CRI call sequence on the
// testbed, for a one-container pod that runs /bin/true:
//
//   - bare:   hack/cribare (RunPodSandbox, CreateContainer, StartContainer,
//     poll until exit, StopPodSandbox, RemovePodSandbox; nothing else);
//   - podrun: podrun -q --root-dir FRESH -f MANIFEST, the same pod as a
//     manifest (busybox, imagePullPolicy IfNotPresent, restartPolicy Never).
//
// Two cases: one pod, and ten pods at once (cribare -n 10 against one podrun
// invocation with a ten-document manifest). Each side is a child process;
// its wall time runs from start to exit, and its CPU time (user+sys) and
// peak RSS come from the child's rusage.
//
// The sides alternate within every round, and the order flips every other
// round, so that drift (other load on the two shared cores, containerd
// warming up or slowing down) hits both sides equally. Medians are reported
// with min and max (bare CPU for comparison with podrun's), and podrun's
// ratio over bare is checked against the project's goal of 1.10. The verdict
// is printed, not enforced: the command exits non-zero only when a side
// failed to run.
//
//	go run ./hack/bench -podrun ./bin/podrun   (or: make bench)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

const goal = 1.10

var (
	podrunPath  = flag.String("podrun", "", "podrun binary to measure (required)")
	cribarePath = flag.String("cribare", "", "cribare binary; default: build ./hack/cribare into a temp dir once")
	endpoint    = flag.String("endpoint", os.Getenv("CONTAINER_RUNTIME_ENDPOINT"), "CRI endpoint; default $CONTAINER_RUNTIME_ENDPOINT")
	rounds1     = flag.Int("rounds", 15, "measured rounds for the one-pod case")
	rounds10    = flag.Int("rounds10", 7, "measured rounds for the ten-pod case")
	warmup      = flag.Int("warmup", 2, "rounds run first and not counted, per case")
)

// tmp holds cribare, the manifests and the podrun root dirs; fail removes it.
var tmp string

// sample is one run of one side.
type sample struct {
	wall, cpu time.Duration
	maxRSSKiB int64
}

// benchCase is one line of the table.
type benchCase struct {
	name     string
	pods     int
	rounds   int
	manifest string
}

func main() {
	flag.Parse()
	if *podrunPath == "" || *rounds1 < 1 || *rounds10 < 1 || *warmup < 0 {
		fail("usage: bench -podrun PATH [-cribare PATH] [-endpoint E] [-rounds N] [-rounds10 N] [-warmup N]")
	}
	var err error
	if tmp, err = os.MkdirTemp("", "podrun-bench-"); err != nil {
		fail(err.Error())
	}
	defer os.RemoveAll(tmp)

	if *cribarePath == "" {
		*cribarePath = filepath.Join(tmp, "cribare")
		if out, err := exec.Command("go", "build", "-o", *cribarePath, "./hack/cribare").CombinedOutput(); err != nil {
			fail(fmt.Sprintf("building cribare: %v\n%s", err, out))
		}
	}
	if abs, err := filepath.Abs(*podrunPath); err == nil {
		*podrunPath = abs
	}

	cases := []benchCase{
		{name: "1 pod", pods: 1, rounds: *rounds1},
		{name: "10 pods", pods: 10, rounds: *rounds10},
	}
	for i := range cases {
		c := &cases[i]
		c.manifest = filepath.Join(tmp, fmt.Sprintf("pods-%d.yaml", c.pods))
		if err := os.WriteFile(c.manifest, []byte(manifest(c.pods)), 0o644); err != nil {
			fail(err.Error())
		}
	}

	fmt.Printf("loadavg before: %s\n", loadavg())
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tbare median\t(min-max)\tpodrun median\t(min-max)\tratio\tpodrun CPU\t(min-max)\tpodrun maxRSS\tbare CPU\t")
	var verdicts []string
	runs := 0
	for _, c := range cases {
		var bare, pr []sample
		for r := 0; r < *warmup+c.rounds; r++ {
			var b, p sample
			runs++
			root := filepath.Join(tmp, fmt.Sprintf("root-%d", runs))
			sides := []func(){
				func() { b = measure(bareCmd(c.pods)) },
				func() { p = measure(podrunCmd(root, c.manifest)); os.RemoveAll(root) },
			}
			if r%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			sides[0]()
			sides[1]()
			if r >= *warmup {
				bare = append(bare, b)
				pr = append(pr, p)
			}
		}
		bw, pw, pc, bc := walls(bare), walls(pr), cpus(pr), cpus(bare)
		ratio := float64(median(pw)) / float64(median(bw))
		var rss int64
		for _, s := range pr {
			rss = max(rss, s.maxRSSKiB)
		}
		fmt.Fprintf(tw, "%s\t%s\t(%s-%s)\t%s\t(%s-%s)\t%.3f\t%s\t(%s-%s)\t%.1f MiB\t%s\t\n", c.name,
			ms(median(bw)), ms(bw[0]), ms(bw[len(bw)-1]),
			ms(median(pw)), ms(pw[0]), ms(pw[len(pw)-1]), ratio,
			ms(median(pc)), ms(pc[0]), ms(pc[len(pc)-1]), float64(rss)/1024, ms(median(bc)))
		verdict := "PASS"
		if ratio > goal {
			verdict = "FAIL"
		}
		verdicts = append(verdicts, fmt.Sprintf("%s %s (%.3f vs %.2f)", c.name, verdict, ratio, goal))
	}
	tw.Flush()
	fmt.Printf("loadavg after:  %s\n", loadavg())
	fmt.Println(strings.Join(verdicts, "; "))
}

// manifest is n one-container /bin/true pods as one multi-document manifest.
func manifest(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata:
  name: bench-%d
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox
    imagePullPolicy: IfNotPresent
    command: ["/bin/true"]
`, i)
	}
	return b.String()
}

func bareCmd(pods int) *exec.Cmd {
	args := []string{"-n", fmt.Sprint(pods), "-image", "busybox", "-cmd", "/bin/true"}
	if *endpoint != "" {
		args = append(args, "-endpoint", *endpoint)
	}
	return exec.Command(*cribarePath, args...)
}

func podrunCmd(root, manifest string) *exec.Cmd {
	args := []string{"-q", "--root-dir", root, "-f", manifest}
	if *endpoint != "" {
		args = append(args, "--runtime-endpoint", *endpoint)
	}
	return exec.Command(*podrunPath, args...)
}

// measure runs cmd to completion and aborts the benchmark if it fails.
func measure(cmd *exec.Cmd) sample {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		fail(fmt.Sprintf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.Bytes()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{
		wall:      wall,
		cpu:       time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		maxRSSKiB: ru.Maxrss, // KiB on Linux
	}
}

func walls(s []sample) []time.Duration {
	return sorted(s, func(x sample) time.Duration { return x.wall })
}
func cpus(s []sample) []time.Duration {
	return sorted(s, func(x sample) time.Duration { return x.cpu })
}

func sorted(s []sample, f func(sample) time.Duration) []time.Duration {
	d := make([]time.Duration, len(s))
	for i, x := range s {
		d[i] = f(x)
	}
	slices.Sort(d)
	return d
}

// median of a sorted slice.
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(b))
}

func fail(msg string) {
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	fmt.Fprintln(os.Stderr, "bench:", msg)
	os.Exit(1)
}
