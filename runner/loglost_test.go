package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogsLost: a log file that ends mid-line is output the runtime could
// not write; whole lines, empty files and a log dir that was never made are
// not. (A full filesystem, the other sign, is tested end to end:
// e2e TestE2EFaultLogDirFull.)
func TestLogsLost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // path below the log dir → content; nil: no log dir
		want  string            // in the error; "" for none
	}{
		{name: "no log dir (no container started)"},
		{name: "whole lines", files: map[string]string{
			"c/0.log": "2024-01-01T00:00:00.000000000Z stdout F one\n2024-01-01T00:00:00.000000000Z stdout P two\n",
			"c/1.log": "",
		}},
		{name: "a file cut mid-line", files: map[string]string{
			"c/0.log":    "2024-01-01T00:00:00.000000000Z stdout F one\n",
			"side/0.log": "2024-01-01T00:00:00.000000000Z stdout F one\n2024-01-01T00:00:0",
		}, want: "(side/0.log ends mid-line)"},
		{name: "not a log file", files: map[string]string{"c/0.log.tmp": "partial"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "default_web_uid")
			for rel, content := range tc.files {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			err := logsLost(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("logsLost: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir)):
				t.Errorf("logsLost: %v, want an error naming %s and %q", err, dir, tc.want)
			}
		})
	}
}
