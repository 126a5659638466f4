package junit_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podrun/podrun/runner/report/junit"
	"github.com/podrun/podrun/runner/report/junit/junittest"
)

var schema = filepath.Join("..", "..", "..", "testdata", "junit.xsd")

// The schema takes the format's documents and refuses what readers refuse:
// a test of the schema itself, so that a report passing it means something.
func TestSchema(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   string
		valid bool
	}{
		{"a minimal report", `<testsuites/>`, true},
		{"one suite as the root", `<testsuite name="s" tests="1"><testcase name="c"/></testsuite>`, true},
		{"everything", `<testsuites name="r" tests="4" failures="1" errors="1" skipped="1" time="1.5">
			<testsuite name="s" tests="4" failures="1" errors="1" skipped="1" time="1.5" timestamp="2024-05-06T07:08:09" hostname="h">
			<properties><property name="k" value="v"/></properties>
			<testcase name="ok" classname="ns/pod" time="0.1"><properties><property name="exitCode" value="0"/></properties><system-out>out</system-out></testcase>
			<testcase name="bad" classname="ns/pod" time="0"><failure message="m" type="Error"><![CDATA[log]]></failure><system-out>o</system-out><system-err>e</system-err></testcase>
			<testcase name="err" classname="ns/pod"><error message="m" type="Timeout">x</error></testcase>
			<testcase name="skip" classname="ns/pod"><skipped message="why"/></testcase>
			<system-out>o</system-out><system-err>e</system-err>
			</testsuite></testsuites>`, true},
		{"a testcase without a name", `<testsuites><testsuite name="s" tests="1"><testcase classname="c"/></testsuite></testsuites>`, false},
		{"a testsuite without tests", `<testsuites><testsuite name="s"/></testsuites>`, false},
		{"a negative time", `<testsuites><testsuite name="s" tests="1"><testcase name="c" time="-1"/></testsuite></testsuites>`, false},
		{"a time that is no number", `<testsuites><testsuite name="s" tests="1"><testcase name="c" time="1s"/></testsuite></testsuites>`, false},
		{"a timestamp with a zone", `<testsuites><testsuite name="s" tests="0" timestamp="2024-05-06T07:08:09Z"/></testsuites>`, false},
		{"a failure outside a testcase", `<testsuites><testsuite name="s" tests="0"><failure message="m"/></testsuite></testsuites>`, false},
		{"an unknown element in a testcase", `<testsuites><testsuite name="s" tests="1"><testcase name="c"><exitCode>1</exitCode></testcase></testsuite></testsuites>`, false},
		{"a property without a value", `<testsuites><testsuite name="s" tests="0"><properties><property name="k"/></properties></testsuite></testsuites>`, false},
		{"system-out before the failure", `<testsuites><testsuite name="s" tests="1"><testcase name="c"><system-out>o</system-out><failure/></testcase></testsuite></testsuites>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.xml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			err := junittest.Check(schema, path)
			if _, invalid := err.(*junittest.Error); err != nil && !invalid {
				t.Fatal(err)
			}
			switch {
			case tc.valid && err != nil:
				t.Errorf("refused: %v", err)
			case !tc.valid && err == nil:
				t.Errorf("the schema accepts it")
			case !tc.valid && strings.Contains(err.Error(), "xmllint is missing"):
				t.Errorf("%v", err)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	start := time.Date(2024, 5, 6, 7, 8, 9, 500, time.FixedZone("x", 3600))
	doc := &junit.Testsuites{Name: "podrun", Time: junit.Seconds(1500 * time.Millisecond), Suites: []junit.Testsuite{{
		Name: "default/web", Timestamp: junit.Timestamp(start), Time: junit.Seconds(-time.Second),
		Cases: []junit.Testcase{
			{Name: "ok", Classname: "default/web", Time: junit.Seconds(1234567 * time.Microsecond)},
			{Name: "bad", Classname: "default/web", Failure: &junit.Problem{Type: "Error", Message: "exit \x1b[31m1",
				Text: "colour \x1b[0m, a NUL \x00, bad UTF-8 \xff, and ]]> inside\nsecond line\n"}},
			{Name: "skipped", Classname: "default/web", Skipped: &junit.Skipped{Message: "not started"}},
			{Name: "error", Classname: "default/web", Error: &junit.Problem{Type: "Timeout"}, SystemOut: junit.NewText("o\n")},
		},
	}}}
	doc.Count()
	b, err := junit.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	junittest.ValidateBytes(t, schema, b)
	out := string(b)
	for _, want := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>`,
		`<testsuites name="podrun" tests="4" failures="1" errors="1" skipped="1" time="1.500">`,
		`<testsuite name="default/web" tests="4" failures="1" errors="1" skipped="1" time="0.000" timestamp="2024-05-06T06:08:09">`,
		`<testcase name="ok" classname="default/web" time="1.235">`,
		"colour \uFFFD[0m, a NUL \uFFFD, bad UTF-8 \uFFFD, and ]]]]><![CDATA[> inside\nsecond line\n",
		`message="exit ` + "\uFFFD" + `[31m1"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	var back struct {
		Suites []struct {
			Cases []struct {
				Failure *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Suites[0].Cases[1].Failure.Text; !strings.HasSuffix(got, "and ]]> inside\nsecond line\n") {
		t.Errorf("the failure's text reads back as %q", got)
	}
	if junit.NewText("") != nil {
		t.Errorf("NewText of nothing is an element")
	}
}
