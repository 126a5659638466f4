package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func criLog(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("2024-01-01T00:00:00.000000000Z " + l + "\n")
	}
	return b.String()
}

// logTail is the kubelet's read of the last lines of a log, through the
// one decoder.
func TestLogTail(t *testing.T) {
	var many []string
	for i := 1; i <= 100; i++ {
		many = append(many, fmt.Sprintf("stdout F line %d", i))
	}
	var wantMany strings.Builder
	for i := 21; i <= 100; i++ {
		fmt.Fprintf(&wantMany, "line %d\n", i)
	}
	cases := []struct {
		name string
		log  string
		want string
	}{
		{"full lines of both streams end with a newline", criLog("stdout F one", "stderr F two"), "one\ntwo\n"},
		{"partial lines join the next", criLog("stdout P par", "stdout F tial"), "partial\n"},
		{"only the last 80 lines", criLog(many...), wantMany.String()},
		{"lines that do not parse are skipped", criLog("stdout F a") + "garbage\n" + criLog("stderr F b"), "a\nb\n"},
		{"an incomplete last line does not count but is read, as it is", criLog("stdout F a") + "2024-01-01T00:00:00Z stdout F b", "a\nb"},
		{"docker json lines", `{"log":"a\n","stream":"stdout","time":"2024-01-01T00:00:00Z"}` + "\n" +
			`{"log":"b\n","stream":"stderr","time":"2024-01-01T00:00:00Z"}` + "\n", "a\nb\n"},
		{"an empty log", "", ""},
	}
	tailOf := func(t *testing.T, log string, lines int64, max int) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "0.log")
		if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := logTail(path, lines, max)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tailOf(t, tc.log, 80, 2048); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	long := criLog("stdout F " + strings.Repeat("x", 3000) + "END")
	if got := tailOf(t, long, 80, 2048); len(got) != 2048 || !strings.HasSuffix(got, "xEND\n") {
		t.Errorf("a long line: got %d bytes ending %q, want the last 2048", len(got), got[len(got)-5:])
	}
	if got := tailOf(t, criLog(many...), 2, 0); got != "line 99\nline 100\n" {
		t.Errorf("the last 2 lines, no byte limit: got %q", got)
	}
	if _, err := logTail(filepath.Join(t.TempDir(), "missing.log"), 80, 0); err == nil {
		t.Errorf("logTail of a missing file: no error")
	}
}

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
