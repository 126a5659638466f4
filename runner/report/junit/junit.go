// Package junit is the JUnit XML report format as CI systems read it
// (Jenkins' junit plugin, GitLab's unit test reports, the GitHub actions
// that publish test results): one <testsuites> of <testsuite>s of
// <testcase>s, a testcase passing, or carrying a <failure>, an <error> or
// <skipped>, with <properties> and <system-out>/<system-err>. There is no
// formal standard; the structure here is the de-facto one those readers
// share (Ant's JUnit task wrote it first), which testdata/junit.xsd
// captures and the tests check reports against.
//
// The package is podrun's one place for JUnit: the format's shape and its
// encoding (this file: Marshal, WriteFile), and a run's report (report.go:
// Report, from the run's runner.Result). It is a report beside the
// pipeline: it reads runner's results, and runner does not import it.
// The --junit flag's wiring (when the report is written, and podrun's exit
// status when it cannot be) is package main's junit.go.
package junit

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Testsuites is the report's root.
type Testsuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Name     string      `xml:"name,attr,omitempty"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     Seconds     `xml:"time,attr"`
	Suites   []Testsuite `xml:"testsuite"`
}

// Testsuite is a group of testcases (podrun: a pod).
type Testsuite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       Seconds     `xml:"time,attr"`
	Timestamp  Timestamp   `xml:"timestamp,attr,omitempty"`
	Hostname   string      `xml:"hostname,attr,omitempty"`
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Testcase  `xml:"testcase"`
	SystemOut  *Text       `xml:"system-out,omitempty"`
	SystemErr  *Text       `xml:"system-err,omitempty"`
}

// Testcase is one test (podrun: a container). At most one of Skipped,
// Error and Failure is set; none means it passed.
type Testcase struct {
	Name       string      `xml:"name,attr"`
	Classname  string      `xml:"classname,attr"`
	Time       Seconds     `xml:"time,attr"`
	Properties *Properties `xml:"properties,omitempty"`
	Skipped    *Skipped    `xml:"skipped,omitempty"`
	Error      *Problem    `xml:"error,omitempty"`
	Failure    *Problem    `xml:"failure,omitempty"`
	SystemOut  *Text       `xml:"system-out,omitempty"`
	SystemErr  *Text       `xml:"system-err,omitempty"`
}

// Properties are name-value pairs of a suite or a case.
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is one name-value pair.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Problem is a <failure> (the test ran and failed) or an <error> (it could
// not run as meant): its message, its type and a text body.
type Problem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// Text is the text of an element, written as CDATA so that a container's
// log keeps its lines as they were.
type Text struct {
	Value string `xml:",cdata"`
}

// NewText is s as an element's text; nil (no element) when s is empty.
func NewText(s string) *Text {
	if s == "" {
		return nil
	}
	return &Text{Value: s}
}

// Skipped is a test that did not run.
type Skipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// Seconds is a duration as the format writes it: decimal seconds.
type Seconds time.Duration

// MarshalXMLAttr writes the duration in seconds with millisecond
// precision, never negative.
func (s Seconds) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	d := max(time.Duration(s), 0)
	return xml.Attr{Name: name, Value: fmt.Sprintf("%.3f", d.Seconds())}, nil
}

// Timestamp is a time as the format writes it: ISO 8601 without a zone
// (the strictest readers take no other), in UTC.
type Timestamp time.Time

// MarshalXMLAttr writes the time in UTC, to the second; a zero time is
// left out.
func (t Timestamp) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	if time.Time(t).IsZero() {
		return xml.Attr{}, nil
	}
	return xml.Attr{Name: name, Value: time.Time(t).UTC().Format("2006-01-02T15:04:05")}, nil
}

// Count sets the counts of every suite from its cases, and the root's from
// its suites: tests, failures, errors and skipped.
func (r *Testsuites) Count() {
	r.Tests, r.Failures, r.Errors, r.Skipped = 0, 0, 0, 0
	for i := range r.Suites {
		s := &r.Suites[i]
		s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		r.Tests += s.Tests
		r.Failures += s.Failures
		r.Errors += s.Errors
		r.Skipped += s.Skipped
	}
}

// Marshal encodes the report as an indented UTF-8 XML document. Text that
// XML cannot hold (control characters from a container's log, invalid
// UTF-8) becomes U+FFFD: in attributes as encoding/xml escapes them, in
// the CDATA texts by validText, which it applies to r's texts.
func Marshal(r *Testsuites) ([]byte, error) {
	clean := func(t *Text) {
		if t != nil {
			t.Value = validText(t.Value)
		}
	}
	for i := range r.Suites {
		s := &r.Suites[i]
		clean(s.SystemOut)
		clean(s.SystemErr)
		for j := range s.Cases {
			c := &s.Cases[j]
			clean(c.SystemOut)
			clean(c.SystemErr)
			for _, p := range []*Problem{c.Error, c.Failure} {
				if p != nil {
					p.Text = validText(p.Text)
				}
			}
		}
	}
	b, err := xml.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	out := append([]byte(xml.Header), b...)
	return append(out, '\n'), nil
}

// WriteFile writes the report to path atomically: to a temporary file
// beside path, then renamed over it, so a reader never sees half a report.
func WriteFile(path string, r *Testsuites) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	err = errors.Join(err, f.Chmod(0o644), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// validText is s with every rune XML 1.0 cannot hold (its Char production:
// tab, newline, carriage return, and U+0020 up, less the surrogates and
// U+FFFE, U+FFFF) and every invalid UTF-8 byte replaced by U+FFFD.
func validText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE || r == 0xFFFF:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
