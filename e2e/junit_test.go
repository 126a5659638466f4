//go:build e2e

package e2e

// --junit end to end (junit.go, runner/report/junit): a run on the testbed
// writes a JUnit report however it ends — every container passing, one
// failing, a timeout, SIGINT, init containers and sidecars — and each
// report is valid against testdata/junit.xsd (xmllint, which the testbed
// installs: the tests fail without it).

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podrun/podrun/runner/report/junit/junittest"
)

// junitDoc is a report as a CI system reads it.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Timestamp string      `xml:"timestamp,attr"`
		Cases     []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitCase struct {
	Name       string  `xml:"name,attr"`
	Classname  string  `xml:"classname,attr"`
	Time       float64 `xml:"time,attr"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Failure *junitProblem `xml:"failure"`
	Error   *junitProblem `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func (c junitCase) property(name string) string {
	for _, p := range c.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// verdict is the case's outcome in a word and its type.
func (c junitCase) verdict() string {
	switch {
	case c.Failure != nil:
		return "failure " + c.Failure.Type
	case c.Error != nil:
		return "error " + c.Error.Type
	case c.Skipped != nil:
		return "skipped"
	}
	return "passed"
}

// readJUnit validates the report against the schema and decodes it; no
// temporary file of its writing may be left beside it.
func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	junittest.Validate(t, filepath.Join(repoRoot, "testdata", "junit.xsd"), path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the report: %v", err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the report: %v\n%s", err, b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the report's dir holds %d files, want the report alone", len(entries))
	}
	t.Logf("report:\n%s", b)
	return doc
}

// runJUnit runs podrun with --junit and the args in a fresh environment,
// expects its exit code, and returns the report.
func runJUnit(t *testing.T, code int, args ...string) junitDoc {
	t.Helper()
	e := newEnv(t)
	report := filepath.Join(t.TempDir(), "report.xml")
	r := e.runPodrun(append([]string{"--junit", report, "--timeout", "60s"}, args...), "")
	expectCode(t, r, code)
	return readJUnit(t, report)
}

// expectCases checks a suite's cases: their names, in order, and verdicts.
func expectCases(t *testing.T, cases []junitCase, classname string, want ...string) {
	t.Helper()
	var got []string
	for _, c := range cases {
		got = append(got, c.Name+"="+c.verdict())
		if c.Classname != classname {
			t.Errorf("case %s has classname %q, want %q", c.Name, c.Classname, classname)
		}
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		// Fatal: the callers read the cases' verdicts next.
		t.Fatalf("cases %v\nwant  %v", got, want)
	}
}

func TestE2EJUnitAllPass(t *testing.T) {
	t.Parallel()
	doc := runJUnit(t, 0, "-f", testdata("junit/pass.yaml"))
	if doc.Tests != 3 || doc.Failures+doc.Errors+doc.Skipped != 0 || len(doc.Suites) != 1 {
		t.Fatalf("report counts %+v", doc)
	}
	s := doc.Suites[0]
	if s.Name != "default/e2e-junit-pass" || s.Timestamp == "" {
		t.Errorf("suite %q at %q", s.Name, s.Timestamp)
	}
	expectCases(t, s.Cases, "default/e2e-junit-pass", "init: prepare=passed", "sidecar: helper=passed", "main=passed")
	main := s.Cases[2]
	if main.property("exitCode") != "0" || main.property("kind") != "container" || main.Time < 0.9 || main.Time > 30 {
		t.Errorf("main: exit code %q, kind %q, time %.3f s (it sleeps 1 s)", main.property("exitCode"), main.property("kind"), main.Time)
	}
	if !strings.Contains(main.SystemOut, "exit code 0 (Completed)") {
		t.Errorf("main's system-out: %q", main.SystemOut)
	}
	if s.Cases[1].property("kind") != "sidecar" || s.Cases[0].property("kind") != "init" {
		t.Errorf("kinds %q, %q", s.Cases[0].property("kind"), s.Cases[1].property("kind"))
	}
}

func TestE2EJUnitFailedContainer(t *testing.T) {
	t.Parallel()
	doc := runJUnit(t, 3, "-q", "-f", testdata("junit/fail.yaml"))
	if doc.Failures != 1 || len(doc.Suites) != 1 {
		t.Fatalf("report counts %+v", doc)
	}
	expectCases(t, doc.Suites[0].Cases, "default/e2e-junit-fail", "check=failure Error")
	c := doc.Suites[0].Cases[0]
	if c.Failure.Message != "exited with code 3 (Error)" || c.property("exitCode") != "3" {
		t.Errorf("failure %q, exitCode %q", c.Failure.Message, c.property("exitCode"))
	}
	// The last 50 lines of its log: lines 12 to 60 and the stderr line.
	text := c.Failure.Text
	for i := 12; i <= 60; i++ {
		if !strings.Contains(text, "line "+strconv.Itoa(i)+"\n") {
			t.Errorf("the failure lacks log line %d:\n%s", i, text)
			break
		}
	}
	if strings.Contains(text, "line 11\n") || !strings.Contains(text, "check failed\n") || !strings.Contains(text, "exit code: 3") {
		t.Errorf("the failure's log is not the last 50 lines with the exit code:\n%s", text)
	}
}

func TestE2EJUnitTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	report := filepath.Join(t.TempDir(), "report.xml")
	p := e.startPodrun([]string{"--junit", report, "--timeout", "8s", "-f", testdata("junit/timeout.yaml")}, "")
	p.waitStdout("started slow", 60*time.Second)
	r := p.result(90 * time.Second)
	expectCode(t, r, 124)
	doc := readJUnit(t, report)
	expectCases(t, doc.Suites[0].Cases, "default/e2e-junit-timeout", "quick=passed", "slow=error Timeout")
	slow := doc.Suites[0].Cases[1]
	if slow.Error.Message != "still running when the run timed out (--timeout)" || !strings.Contains(slow.Error.Text, "started slow") {
		t.Errorf("slow: %+v", slow.Error)
	}
	if slow.Time <= 0 {
		t.Errorf("slow ran for %.3f s", slow.Time)
	}
}

func TestE2EJUnitInterrupted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	report := filepath.Join(t.TempDir(), "report.xml")
	p := e.startPodrun([]string{"--junit", report, "-f", testdata("junit/sigint.yaml")}, "")
	p.waitStdout("serving", 60*time.Second)
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("a report exists before the run ended: %v", err)
	}
	p.signal(syscall.SIGINT)
	r := p.result(60 * time.Second)
	expectCode(t, r, 130)
	doc := readJUnit(t, report)
	expectCases(t, doc.Suites[0].Cases, "default/e2e-junit-sigint", "server=error Interrupted")
	if m := doc.Suites[0].Cases[0].Error.Message; m != "still running when podrun was interrupted (SIGINT)" {
		t.Errorf("message %q", m)
	}
}

func TestE2EJUnitInitContainersAndSidecars(t *testing.T) {
	t.Parallel()
	doc := runJUnit(t, 4, "-q", "-f", testdata("junit/init.yaml"))
	if len(doc.Suites) != 2 || doc.Tests != 6 || doc.Failures != 1 || doc.Skipped != 2 {
		t.Fatalf("report counts %+v", doc)
	}
	expectCases(t, doc.Suites[0].Cases, "default/e2e-junit-init-ok", "init: migrate=passed", "sidecar: proxy=passed", "main=passed")
	expectCases(t, doc.Suites[1].Cases, "default/e2e-junit-init-fail", "init: migrate=failure Error", "sidecar: proxy=skipped", "main=skipped")
	failed := doc.Suites[1].Cases[0]
	if failed.property("exitCode") != "4" || !strings.Contains(failed.Failure.Text, "migration failed") {
		t.Errorf("the failed init container: exit code %q, text %q", failed.property("exitCode"), failed.Failure.Text)
	}
	if m := doc.Suites[1].Cases[2].Skipped.Message; m != "not started: the pod failed first" {
		t.Errorf("skipped: %q", m)
	}
}
