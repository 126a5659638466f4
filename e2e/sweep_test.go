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
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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
// left in it. A root dir without pods (its podruns, signalled with the
// test, tore their pods down) has its temp dir removed too. It does
// nothing while another process runs this suite's test binary (its tests'
// root dirs are alive). What it does, and what it could not, goes to w.
func sweepKilledRuns(w io.Writer) {
	if others := otherProcessesOf(os.Args[0]); len(others) > 0 {
		fmt.Fprintf(w, "e2e: not sweeping earlier runs' temp dirs: pids %v run this suite too\n", others)
		return
	}
	sweepKilledRunsIn(w, os.TempDir())
}

// sweepKilledRunsIn is sweepKilledRuns of the test dirs in tmpDir, with
// no test of them running.
func sweepKilledRunsIn(w io.Writer, tmpDir string) {
	var roots []string
	for _, test := range []string{"TestE2E*", "TestKubeletConformance*", "TestKubeletControlPlane*"} {
		found, _ := filepath.Glob(filepath.Join(tmpDir, test, "[0-9][0-9][0-9]", "root*"))
		roots = append(roots, found...)
	}
	failed := map[string]bool{} // test dirs with a root down could not clear
	var testDirs []string
	for _, root := range roots {
		testDir := filepath.Dir(filepath.Dir(root))
		if !slices.Contains(testDirs, testDir) {
			testDirs = append(testDirs, testDir)
		}
		pods, _ := os.ReadDir(filepath.Join(root, "pods"))
		if len(pods) == 0 {
			continue // its podruns, signalled with the test, tore their pods down
		}
		fmt.Fprintf(w, "e2e: a killed run left %d pod dirs in %s: podrun down --all\n", len(pods), root)
		cmd := exec.Command(podrunBin, "down", "--all", "--root-dir", root)
		out, err := cmd.CombinedOutput()
		w.Write(out)
		if err != nil {
			fmt.Fprintf(w, "e2e: podrun down --all --root-dir %s: %v\n", root, err)
			failed[testDir] = true
		}
	}
	for _, testDir := range testDirs {
		if failed[testDir] {
			continue
		}
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

// The temp dir of a killed run whose podruns tore their pods down goes; one
// with a mount left in it stays.
func TestE2ESweepTakesTheTempDirsOfKilledRuns(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	torn := filepath.Join(base, "TestKubeletConformancedebugcounter-pod.yaml3264636718")
	mountedDir := filepath.Join(base, "TestE2EVolumes123")
	for _, d := range []string{torn, mountedDir} {
		for _, sub := range []string{"001/root/pods", "001/tmp", "002/logs"} {
			if err := os.MkdirAll(filepath.Join(d, sub), 0o750); err != nil {
				t.Fatal(err)
			}
		}
	}
	mnt := filepath.Join(mountedDir, "002", "logs")
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	var out bytes.Buffer
	sweepKilledRunsIn(&out, base)
	if _, err := os.Stat(torn); err == nil {
		t.Errorf("the temp dir of a killed run without pods is left: %s\n%s", torn, out.String())
	}
	if _, err := os.Stat(mnt); err != nil {
		t.Errorf("the temp dir with a mount was removed (%v)\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), mountedDir+" still has mounts: left") {
		t.Errorf("the sweep did not say it left %s:\n%s", mountedDir, out.String())
	}
}
