package cgroups

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process left in a pod's cgroup once the runtime has no sandbox of the
// pod (a `runc init` the runtime lost) is killed before the cgroup is
// removed, as the kubelet kills it; while a sandbox may be left, nothing
// is killed.
func TestRemovingAPodCgroupKillsWhatTheRuntimeLost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(h *Host, sys System, name string) error
		killed bool
	}{
		{"teardown, every sandbox removed", func(h *Host, _ System, name string) error { return h.RemovePodCgroup(name, true) }, true},
		{"teardown, a sandbox removal failed", func(h *Host, _ System, name string) error { return h.RemovePodCgroup(name, false) }, false},
		{"reclaim or down, from the record", func(_ *Host, sys System, name string) error { return sys.RemoveRecorded(name) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys, fsRoot := fakeSystem(t, false, false)
			h, err := NewHost(DefaultRoot, DriverCgroupfs, sys)
			if err != nil {
				t.Fatal(err)
			}
			name, err := h.EnsurePodCgroup(cgPod("-/-/-/-"))
			if err != nil {
				t.Fatal(err)
			}
			stray := exec.Command("sleep", "60")
			if err := stray.Start(); err != nil {
				t.Fatal(err)
			}
			exited, reaped := make(chan error, 1), make(chan struct{})
			go func() { exited <- stray.Wait(); close(reaped) }()
			t.Cleanup(func() { stray.Process.Kill(); <-reaped })
			// The library lists a cgroup's processes from the devices
			// hierarchy on v1, as the kernel shows them: cgroup.procs.
			procs := filepath.Join(fsRoot, "devices", name, "cgroup.procs")
			if err := os.WriteFile(procs, []byte(strconv.Itoa(stray.Process.Pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.remove(h, sys, name); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if !tc.killed {
					t.Fatalf("the process in the pod cgroup ended (%v) though a sandbox of the pod may be left", err)
				}
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("the process in the pod cgroup ended with %v, want SIGKILL", err)
				}
			case <-time.After(2 * time.Second):
				if tc.killed {
					t.Fatal("the process left in the pod cgroup still runs after its removal")
				}
			}
		})
	}
}

// Only a pod's cgroup is removed, and its processes killed: a recorded name
// that is the node's own cgroup is refused.
func TestIsPodCgroup(t *testing.T) {
	for _, tc := range []struct {
		name, driver string
		want         bool
	}{
		{"/podrun/besteffort/pod1234-abcd", DriverCgroupfs, true},
		{"/podrun/pod1234-abcd", DriverCgroupfs, true},
		{"/kubepods/burstable/pod1234-abcd", DriverCgroupfs, true},
		{"/podrun.slice/podrun-besteffort.slice/podrun-besteffort-pod1234_abcd.slice", DriverSystemd, true},
		{"/podrun.slice/podrun-pod1234_abcd.slice", DriverSystemd, true},
		{"/", DriverCgroupfs, false},
		{"", DriverCgroupfs, false},
		{"/system.slice", DriverSystemd, false},
		{"/user.slice/user-0.slice", DriverSystemd, false},
		{"/podrun/besteffort", DriverCgroupfs, false},
		{"/podrun/besteffort/pod", DriverCgroupfs, false},
		{"/podrun/besteffort/pod1/..", DriverCgroupfs, false},
		{"/podrun.slice/podrun-besteffort.slice", DriverSystemd, false},
		{"/podrun.slice/podrun-besteffort-pod1234.scope", DriverSystemd, false},
		{"/init.scope", DriverCgroupfs, false},
	} {
		if got := isPodCgroup(tc.name, tc.driver); got != tc.want {
			t.Errorf("isPodCgroup(%q, %s) = %v, want %v", tc.name, tc.driver, got, tc.want)
		}
	}
	sys, _ := fakeSystem(t, false, false)
	if err := sys.RemoveRecorded("/system"); err == nil || !strings.Contains(err.Error(), "not a pod's cgroup") {
		t.Errorf("RemoveRecorded of a node cgroup: %v, want a refusal", err)
	}
}
