//go:build e2e

package e2e

// What killed runs of this suite left (sweepKilledRuns, from TestMain).

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// sweepKilledRuns takes what earlier runs of this suite left when their
// test process was killed: their t.TempDir cleanups never ran, so a pod a
// test's podrun had running stays in its temp root dir, with its data dir,
// mounts and pod cgroup, and nothing reruns podrun on that root dir to
// reclaim it. For each root dir of a gone test of this suite
// (<TMPDIR>/TestE2E*/NNN/root* and the kubelet tests' likewise) that holds
// pods, it runs `podrun down --all --root-dir`, which takes the
// pods still on the runtime and the data dirs, log dirs and cgroups of
// those it no longer has; the test's temp dir then goes, unless a mount is
// left in it. It does nothing while another process runs this suite's
// test binary (its tests' root dirs are alive). What it does, and what it
// could not, goes to w.
func sweepKilledRuns(w io.Writer) {
	if others := otherProcessesOf(os.Args[0]); len(others) > 0 {
		fmt.Fprintf(w, "e2e: not sweeping earlier runs' temp dirs: pids %v run this suite too\n", others)
		return
	}
	var roots []string
	for _, test := range []string{"TestE2E*", "TestKubeletConformance*", "TestKubeletControlPlane*"} {
		found, _ := filepath.Glob(filepath.Join(os.TempDir(), test, "[0-9][0-9][0-9]", "root*"))
		roots = append(roots, found...)
	}
	for _, root := range roots {
		pods, _ := os.ReadDir(filepath.Join(root, "pods"))
		if len(pods) == 0 {
			continue
		}
		fmt.Fprintf(w, "e2e: a killed run left %d pod dirs in %s: podrun down --all\n", len(pods), root)
		cmd := exec.Command(podrunBin, "down", "--all", "--root-dir", root)
		out, err := cmd.CombinedOutput()
		w.Write(out)
		if err != nil {
			fmt.Fprintf(w, "e2e: podrun down --all --root-dir %s: %v\n", root, err)
			continue
		}
		testDir := filepath.Dir(filepath.Dir(root))
		if mounted(testDir) {
			fmt.Fprintf(w, "e2e: %s still has mounts: left\n", testDir)
			continue
		}
		if err := os.RemoveAll(testDir); err != nil {
			fmt.Fprintf(w, "e2e: %v\n", err)
		}
	}
}

// otherProcessesOf are the pids, other than this one, whose command runs
// the binary named like self.
func otherProcessesOf(self string) []int {
	base := filepath.Base(self)
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(b, []byte{0})
		if filepath.Base(string(argv0)) == base {
			out = append(out, pid)
		}
	}
	return out
}

// mounted says whether a mount point is at or below dir.
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			return true
		}
	}
	return false
}
