package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/podrun/podrun/cri"
)

// statusInfoFile is the Info of a verbose CRI Status recorded in
// testdata (the runtime's JSON answer, as crictl info prints it).
// status-containerd-1.6.json and -2.4.json are real answers of containerd
// 1.6.20 and 2.4.2 (cni/testdata); -1.6-systemd.json is the 1.6 one with
// SystemdCgroup = true in the runc runtime's options.
func statusInfoFile(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Info map[string]string }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Info
}

// withConfig is info with its "config" edited by replacing old with new
// (old must be there).
func withConfig(t *testing.T, info map[string]string, old, new string) map[string]string {
	t.Helper()
	if !strings.Contains(info["config"], old) {
		t.Fatalf("config has no %s", old)
	}
	out := map[string]string{}
	for k, v := range info {
		out[k] = v
	}
	out["config"] = strings.Replace(info["config"], old, new, 1)
	return out
}

// unimplemented is RuntimeConfig's error on containerd 1.6 and 1.7, as the
// cri client returns it.
var unimplemented = fmt.Errorf("getting runtime config: %w", errors.Join(cri.ErrUnimplemented, status.Error(codes.Unimplemented, "unknown method RuntimeConfig")))

func crioInfo(manager string) map[string]string {
	return map[string]string{"config": `{"sandboxImage":"registry.k8s.io/pause:3.10.1","crio":{"SELinux":false,"DefaultRuntime":"crun","CgroupManagerName":"` + manager + `","LogToJournald":false}}`}
}

// The driver, in order: --cgroup-driver, RuntimeConfig, the runtime's
// config in its status info, else cgroupfs assumed; each with its source.
func TestDecideCgroupDriver(t *testing.T) {
	ctd16 := statusInfoFile(t, "status-containerd-1.6.json")
	ctd16systemd := statusInfoFile(t, "status-containerd-1.6-systemd.json")
	ctd24 := statusInfoFile(t, "status-containerd-2.4.json")
	runcOptions := `"options":{"BinaryName":"","CriuImagePath":"","CriuPath":"","CriuWorkPath":"","IoGid":0,"IoUid":0,"NoNewKeyring":false,"NoPivotRoot":false,"Root":"","ShimCgroup":"","SystemdCgroup":false}`
	for _, tc := range []struct {
		name       string
		in         cgroupDriverInput
		want       string
		wantSource string
	}{
		{"the flag wins over the runtime",
			cgroupDriverInput{Flag: "cgroupfs", RuntimeConfig: "systemd", StatusInfo: ctd16systemd},
			"cgroupfs", "from --cgroup-driver"},
		{"the flag, on a runtime that says nothing",
			cgroupDriverInput{Flag: "systemd"},
			"systemd", "from --cgroup-driver"},
		{"RuntimeConfig wins over the status info (containerd 2.x, CRI-O ≥ 1.28)",
			cgroupDriverInput{RuntimeConfig: "systemd", StatusInfo: ctd24},
			"systemd", "from the runtime's CRI RuntimeConfig"},
		{"RuntimeConfig cgroupfs",
			cgroupDriverInput{RuntimeConfig: "cgroupfs", StatusInfo: crioInfo("systemd")},
			"cgroupfs", "from the runtime's CRI RuntimeConfig"},
		{"containerd 1.6 with SystemdCgroup = true",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: ctd16systemd},
			"systemd", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true`},
		{"containerd 1.6 with SystemdCgroup = false",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: ctd16},
			"cgroupfs", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = false`},
		{"containerd 1.6, the runc runtime's options null: false",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16, runcOptions, `"options":null`)},
			"cgroupfs", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = false`},
		{"containerd 1.6, options without SystemdCgroup: false",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16, runcOptions, `"options":{"BinaryName":"/usr/bin/runc"}`)},
			"cgroupfs", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = false`},
		{"containerd 1.6, the old runtime type takes the top-level systemdCgroup",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, withConfig(t, ctd16,
				`"runtimeType":"io.containerd.runc.v2"`, `"runtimeType":"io.containerd.runtime.v1.linux"`),
				`"systemdCgroup":false`, `"systemdCgroup":true`)},
			"systemd", `from the runtime's status info: containerd's default runtime "runc" is io.containerd.runtime.v1.linux: systemd_cgroup = true`},
		{"containerd 1.6, another default runtime: its options decide",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, withConfig(t, ctd16systemd,
				`"defaultRuntimeName":"runc"`, `"defaultRuntimeName":"crun"`),
				`"runtimes":{"runc":`, `"runtimes":{"crun":{"runtimeType":"io.containerd.runc.v2","options":{"BinaryName":"crun"}},"runc":`)},
			"cgroupfs", `from the runtime's status info: containerd's default runtime "crun": SystemdCgroup = false`},
		{"containerd 2.4's status (which also answers RuntimeConfig) read the same way",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd24, `"SystemdCgroup":false`, `"SystemdCgroup":true`)},
			"systemd", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = true`},
		{"RuntimeConfig without a Linux config: the status info",
			cgroupDriverInput{StatusInfo: ctd24},
			"cgroupfs", `from the runtime's status info: containerd's default runtime "runc": SystemdCgroup = false`},
		{"CRI-O's cgroup_manager systemd",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: crioInfo("systemd")},
			"systemd", `from the runtime's status info: CRI-O's cgroup_manager = "systemd"`},
		{"CRI-O's cgroup_manager cgroupfs",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: crioInfo("cgroupfs")},
			"cgroupfs", `from the runtime's status info: CRI-O's cgroup_manager = "cgroupfs"`},
		{"nothing said: cgroupfs, assumed",
			cgroupDriverInput{RuntimeConfigErr: unimplemented},
			"cgroupfs", "assumed: the runtime did not say"},
		{"a status info without a config (cri-dockerd): assumed",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: map[string]string{"cniconfig": "{}"}},
			"cgroupfs", "assumed: the runtime did not say"},
		{"a default runtime that is not runc (kata) says nothing",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16systemd,
				`"runtimeType":"io.containerd.runc.v2"`, `"runtimeType":"io.containerd.kata.v2"`)},
			"cgroupfs", "assumed: the runtime did not say"},
		{"a config that is no JSON is unreadable, not a guess",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: map[string]string{"config": "{"}},
			"cgroupfs", "assumed: the runtime did not say; its status info was unreadable: config: unexpected end of JSON input"},
		{"SystemdCgroup that is no bool is unreadable",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16, `"SystemdCgroup":false`, `"SystemdCgroup":"yes"`)},
			"cgroupfs", `assumed: the runtime did not say; its status info was unreadable: containerd's default runtime "runc": SystemdCgroup is "yes", want true or false`},
		{"a default runtime that is not among the runtimes is unreadable",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16systemd, `"defaultRuntimeName":"runc"`, `"defaultRuntimeName":"gone"`)},
			"cgroupfs", `assumed: the runtime did not say; its status info was unreadable: containerd's default runtime "gone" is not among its runtimes`},
		{"options that are no object are unreadable",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: withConfig(t, ctd16, runcOptions, `"options":"SystemdCgroup"`)},
			"cgroupfs", `assumed: the runtime did not say; its status info was unreadable: containerd's default runtime "runc": options: json: cannot unmarshal string into Go value of type map[string]json.RawMessage`},
		{"a CRI-O cgroup_manager podrun does not know is unreadable",
			cgroupDriverInput{RuntimeConfigErr: unimplemented, StatusInfo: crioInfo("")},
			"cgroupfs", `assumed: the runtime did not say; its status info was unreadable: CRI-O's config: cgroup_manager "", want systemd or cgroupfs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, src, err := decideCgroupDriver(tc.in)
			if err != nil || got != tc.want || src.String() != tc.wantSource {
				t.Errorf("decideCgroupDriver = %q, %q, %v;\nwant %q, %q", got, src, err, tc.want, tc.wantSource)
			}
		})
	}
}

// An invalid flag, and a RuntimeConfig that fails otherwise than
// Unimplemented, are errors (the kubelet's too), not a fallback.
func TestDecideCgroupDriverErrors(t *testing.T) {
	if _, _, err := decideCgroupDriver(cgroupDriverInput{Flag: "cgroupv2"}); err == nil || !strings.Contains(err.Error(), `invalid --cgroup-driver "cgroupv2"`) {
		t.Errorf("bad flag: %v", err)
	}
	boom := errors.New("getting runtime config: deadline exceeded")
	if _, _, err := decideCgroupDriver(cgroupDriverInput{RuntimeConfigErr: boom, StatusInfo: crioInfo("systemd")}); !errors.Is(err, boom) {
		t.Errorf("RuntimeConfig failing: %v, want its error", err)
	}
}

// When the runtime refuses the pod cgroup for being of the other driver's
// kind, the error says which driver podrun used, why, and the flag that
// fixes it; any other error, or a refusal that agrees with podrun's driver,
// gets nothing.
func TestCgroupDriverHint(t *testing.T) {
	assumed := CgroupDriverSource{From: DriverAssumed}
	fromInfo := CgroupDriverSource{From: DriverFromStatusInfo, Said: `CRI-O's cgroup_manager = "cgroupfs"`}
	runc := `rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/podrun/burstable/pod1234/5678" instead: unknown`
	crioSystemd := `rpc error: code = Unknown desc = cri-o configured with systemd cgroup manager, but did not receive slice as parent: /podrun/burstable/pod1234`
	crioCgroupfs := `rpc error: code = Unknown desc = cri-o configured with cgroupfs cgroup manager, but received systemd slice as parent: /podrun.slice/podrun-burstable.slice/podrun-burstable-pod1234.slice`
	for _, tc := range []struct {
		name, msg, driver string
		src               CgroupDriverSource
		want              string
	}{
		{"runc with systemd cgroups refuses a cgroupfs path (containerd 1.6, SystemdCgroup = true)", runc, "cgroupfs", assumed,
			"podrun named the pod cgroup for the cgroupfs cgroup driver (assumed: the runtime did not say), and the runtime uses systemd: run podrun with --cgroup-driver=systemd"},
		{"CRI-O with systemd refuses a cgroupfs parent", crioSystemd, "cgroupfs", CgroupDriverSource{From: DriverFromFlag},
			"podrun named the pod cgroup for the cgroupfs cgroup driver (from --cgroup-driver), and the runtime uses systemd: run podrun with --cgroup-driver=systemd"},
		{"CRI-O with cgroupfs refuses a slice", crioCgroupfs, "systemd", fromInfo,
			`podrun named the pod cgroup for the systemd cgroup driver (from the runtime's status info: CRI-O's cgroup_manager = "cgroupfs"), and the runtime uses cgroupfs: run podrun with --cgroup-driver=cgroupfs`},
		{"a refusal that agrees with podrun's driver", runc, "systemd", assumed, ""},
		{"another cgroup error", "OCI runtime create failed: runc create failed: unable to apply cgroup configuration: mkdir /sys/fs/cgroup/podrun: read-only file system", "cgroupfs", assumed, ""},
		{"another error", "failed to pull image", "cgroupfs", assumed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cgroupDriverHint(tc.msg, tc.driver, tc.src); got != tc.want {
				t.Errorf("cgroupDriverHint = %q\nwant %q", got, tc.want)
			}
		})
	}
}
