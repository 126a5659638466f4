package main

import (
	"context"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
)

func TestCgroupDriverFlagAndRuntimeDefault(t *testing.T) {
	srv, ep := startFake(t)
	rt, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	check := func(flag, want string) {
		t.Helper()
		got, err := cgroupDriver(ctx, rt, flag)
		if err != nil || got != want {
			t.Errorf("cgroupDriver(%q) = %q, %v; want %q", flag, got, err, want)
		}
	}
	check("", "cgroupfs") // no RuntimeConfig, as on containerd 1.6
	check("systemd", "systemd")
	srv.SetCgroupDriver(runtimeapi.CgroupDriver_SYSTEMD)
	check("", "systemd")
	check("cgroupfs", "cgroupfs")
	if _, err := cgroupDriver(ctx, rt, "cgroupv2"); err == nil || !strings.Contains(err.Error(), `invalid --cgroup-driver "cgroupv2"`) {
		t.Errorf("cgroupDriver(cgroupv2) = %v, want invalid", err)
	}

	_, errOut, code := podrunAt(t, ep, "--root-dir", t.TempDir(), "--cgroup-driver", "bogus", "-f", writeManifest(t, jobPod))
	if code != 125 || !strings.Contains(errOut, `invalid --cgroup-driver "bogus"`) {
		t.Errorf("--cgroup-driver bogus: code %d, stderr %q", code, errOut)
	}
}
