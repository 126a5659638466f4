package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// criTime takes a record's time as ReadLogs' time.Parse does, the
// runtimes' own form without it.
func TestCRITime(t *testing.T) {
	for _, ts := range []string{
		"2026-01-02T03:04:05.123456789Z", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.1+05:30",
		"2026-01-02T03:04:05.123-23:59", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2000-02-29T23:59:59Z",
		"1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-12-31T23:59:60Z", "2026-13-01T00:00:00Z",
		"0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-01T00:30:00+01:00", "0002-01-01T00:00:00.5Z",
		"2026-01-02T03:04:05.Z", "2026-01-02T03:04:05,5Z", "2026-01-02T3:04:05Z", "2026-01-02t03:04:05Z",
		"2026-01-02T03:04:05z", "2026-01-02T03:04:05+0530", "2026-01-02T03:04:05+24:00", "2026-01-02T03:04:05.5.5Z",
		"2026-01-02T03:04:05.0000000000001Z", "2026-01-02 03:04:05Z", "+026-01-02T03:04:05Z", "", "t",
	} {
		checkCRITime(t, []byte(ts))
	}
}
