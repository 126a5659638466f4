package main

import (
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestManPage: podrun(1) holds every visible command and flag of the CLI,
// as roff that no line of text can turn into a request: every line that
// starts with '.' or '\” is one of the page's own macros.
func TestManPage(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	root := describeApp(app)
	var b strings.Builder
	writeMan(&b, root, "podrun v1.2.3 (commit abc)")
	page := b.String()
	if !strings.HasPrefix(page, `.TH PODRUN 1 "" "podrun v1.2.3 (commit abc)" "User Commands"`+"\n") {
		t.Errorf("title line: %q", strings.SplitN(page, "\n", 2)[0])
	}
	macro := regexp.MustCompile(`^\.(TH|SH|SS|TP|PP|nf|fi)( |$)`)
	for i, l := range strings.Split(page, "\n") {
		if (strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'")) && !macro.MatchString(l) {
			t.Errorf("line %d is a roff request the page did not mean: %q", i+1, l)
		}
	}
	for _, want := range []string{".SH NAME\npodrun \\- ", ".SH SYNOPSIS", ".SH COMMANDS", ".SH OPTIONS", ".SH EXAMPLES", ".SH \"EXIT STATUS\"", "  125      podrun could not run"} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	docs := append([]commandDoc{root}, root.Commands...)
	for _, d := range docs {
		if d.Path != "podrun" && !strings.Contains(page, `.SH "`+strings.ToUpper(manText(d.Path))+`"`) {
			t.Errorf("no section for %s", d.Path)
		}
		for _, g := range d.Flags {
			for _, f := range g.Flags {
				if !strings.Contains(page, "\\fB"+manText(f.Synopsis)+"\\fR") {
					t.Errorf("%s: no %s", d.Path, f.Synopsis)
				}
			}
		}
	}
	if strings.Contains(page, `.SH "PODRUN MAN"`) {
		t.Errorf("the hidden man command has a section")
	}
}
