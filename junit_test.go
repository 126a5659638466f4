package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podrun/podrun/runner/report/junit/junittest"
)

var junitSchema = filepath.Join("testdata", "junit.xsd")

// --junit writes the report of a run whatever its end: a failed container,
// a runtime that does not answer; atomically, leaving no temporary file.
func TestCLIJUnit(t *testing.T) {
	_, ep := startFake(t)
	m := writeManifest(t, strings.Replace(jobPod, "echo hello", "echo hello; echo bye >&2", 1))
	for _, tc := range []struct {
		name     string
		endpoint string
		code     int
		want     []string
	}{
		{"a failed container", ep, 7, []string{
			`<testsuites name="podrun" tests="1" failures="1" errors="0" skipped="0"`,
			`<testcase name="app" classname="default/job"`,
			`<property name="exitCode" value="7">`,
			`<failure message="exited with code 7 (Error)" type="Error">`,
			"last lines of the log:\nhello\nbye\n",
		}},
		{"no runtime", "unix:///no/such/runtime.sock", 125, []string{
			`<error message="not started: connecting to unix:///no/such/runtime.sock`,
			`type="PodrunError"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			report := filepath.Join(dir, "report.xml")
			_, errOut, code := podrunAt(t, tc.endpoint, "--root-dir", t.TempDir(), "--junit", report, "-f", m)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, errOut)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			junittest.Validate(t, junitSchema, report)
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("report lacks %q:\n%s", w, b)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the report's dir holds %v, want the report alone", entries)
			}
		})
	}
}

// The report's dir must exist before the run starts.
func TestCLIJUnitDirMissing(t *testing.T) {
	_, ep := startFake(t)
	root := t.TempDir()
	_, errOut, code := podrunAt(t, ep, "--root-dir", root, "--junit", filepath.Join(t.TempDir(), "absent", "r.xml"), "-f", writeManifest(t, jobPod))
	if code != 125 || !strings.Contains(errOut, "--junit ") || !strings.Contains(errOut, "no such file or directory") {
		t.Errorf("exit %d, stderr %q; want 125 naming --junit", code, errOut)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the run started: %v", entries)
	}
}
