package kubeletoracle

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDecodeCRILog(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"stdout, then stderr, each in its order",
			"2026-11-23T20:00:00.1Z stderr F two\n2026-11-23T20:00:00.2Z stdout F one\nt stderr F three\nt stdout F four\n",
			"one\nfour\n(stderr) two\n(stderr) three\n"},
		{"partial chunks join the next full line of their stream",
			"t stdout P ab\nt stderr F err\nt stdout F cd\n",
			"abcd\n(stderr) err\n"},
		{"partial chunks of both streams at the end",
			"t stderr P e\nt stdout P o\n", "o\n(stderr) e\n"},
		{"a partial chunk at the end is a line of its own",
			"t stdout P tail", "tail\n"},
		{"an empty line", "t stdout F \nt stdout F\n", "\n\n"},
		{"tags with more fields after a colon", "t stdout F:x y\n", "y\n"},
		{"a line not in CRI format is kept", "garbage\n", "garbage\n"},
		{"text keeps its spaces", "t stdout F a  b c\n", "a  b c\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecodeCRILog([]byte(tc.in)); got != tc.want {
				t.Errorf("DecodeCRILog(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestReadPodLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), PodLogDir("", "default", "web", "u1"))
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/0.log", "t stdout F first run\n")
	write("app/2.log", "t stdout F third run\n")
	write("app/10.log", "t stdout F eleventh run\n") // numeric, not lexical order
	write("app/notes.txt", "ignored\n")
	write("init/0.log", "t stderr F boom\n")
	if err := os.MkdirAll(filepath.Join(dir, "never-started"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPodLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"app": "eleventh run\n", "init": "(stderr) boom\n"}
	if len(got) != len(want) {
		t.Fatalf("ReadPodLogs = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ReadPodLogs[%q] = %q, want %q", k, got[k], v)
		}
	}

	missing, err := ReadPodLogs(filepath.Join(dir, "nope"))
	if err != nil || len(missing) != 0 {
		t.Errorf("ReadPodLogs(missing dir) = %q, %v; want empty, nil", missing, err)
	}
}
