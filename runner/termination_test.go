package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestWithTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logPath := write("0.log", criLog("stdout F from the log"))
	status := func(file string, policy string, code int32) *runtimeapi.ContainerStatus {
		st := &runtimeapi.ContainerStatus{
			ExitCode: code,
			LogPath:  logPath,
			Annotations: map[string]string{
				annotationTerminationMessagePath:   "/dev/termination-log",
				annotationTerminationMessagePolicy: policy,
			},
		}
		if file != "" {
			st.Mounts = []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: file}}
		}
		return st
	}
	msgFile := write("msg", "bye")
	empty := write("empty", "")
	big := write("big", strings.Repeat("a", 1000)+strings.Repeat("b", 4096))
	cases := []struct {
		name string
		st   *runtimeapi.ContainerStatus
		want string
	}{
		{"the file's content", status(msgFile, "File", 0), "bye"},
		{"the last 4096 bytes of a longer file", status(big, "File", 1), strings.Repeat("b", 4096)},
		{"File: an empty file gives no message", status(empty, "File", 1), ""},
		{"FallbackToLogsOnError: the file wins", status(msgFile, "FallbackToLogsOnError", 1), "bye"},
		{"FallbackToLogsOnError: an empty file and a failure give the log", status(empty, "FallbackToLogsOnError", 1), "from the log\n"},
		{"FallbackToLogsOnError: a missing file and a failure give the log", status(filepath.Join(dir, "gone"), "FallbackToLogsOnError", 2), "from the log\n"},
		{"FallbackToLogsOnError: success gives no log", status(empty, "FallbackToLogsOnError", 0), ""},
		{"FallbackToLogsOnError: no mount and a failure give the log", status("", "FallbackToLogsOnError", 1), "from the log\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := withTerminationMessage(tc.st); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("the runtime's message comes first", func(t *testing.T) {
		st := status(msgFile, "File", 137)
		st.Message = "OOM"
		if got := withTerminationMessage(st); got != "OOM: bye" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("a container that could not run has no logs to fall back to", func(t *testing.T) {
		st := status(empty, "FallbackToLogsOnError", 128)
		st.Reason = reasonContainerCannotRun
		if got := withTerminationMessage(st); got != "" {
			t.Errorf("got %q", got)
		}
	})
}
