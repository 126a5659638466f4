package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastLogLines(t *testing.T) {
	var many []string
	for i := 1; i <= 5000; i++ {
		many = append(many, fmt.Sprintf("stdout F line %d %s", i, strings.Repeat("x", 500)))
	}
	for _, tc := range []struct {
		name string
		log  string
		n    int
		want string
	}{
		{"both streams, in order", criLog("stdout F one", "stderr F two", "stdout F three"), 2, "two\nthree\n"},
		{"fewer lines than asked", criLog("stdout F one"), 50, "one\n"},
		{"a partial line joins the next", criLog("stdout F before", "stdout P to be ", "stdout F continued"), 2, "to be continued\n"},
		// As the kubelet's tail counts, a partial line is a line of the file.
		{"the end of a split line", criLog("stdout P to be ", "stdout F continued"), 1, "continued\n"},
		{"the end of a log larger than what is read", criLog(many...), 2,
			"line 4999 " + strings.Repeat("x", 500) + "\nline 5000 " + strings.Repeat("x", 500) + "\n"},
		{"an empty log", "", 5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0.log")
			if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := lastLogLines(path, tc.n)
			if err != nil || got != tc.want {
				t.Errorf("lastLogLines = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// cri-client's reader does not wrap the error, so its text says why.
	if _, err := lastLogLines(filepath.Join(t.TempDir(), "absent.log"), 5); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing log: %v, want an error saying there is no such file", err)
	}
}
