// Command testlog reads `go test -json` on stdin and keeps a CI log short
// but useful: it prints each test's result line as it comes, writes the
// whole verbose output to -log, and at the end prints, for every failed
// test, everything that test wrote (its t.Error and t.Log lines), so a log
// that shows only its tail still says why a test failed. It exits 1 when a
// test or package failed or the input ended without a package result.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of test2json output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	logPath := flag.String("log", "", "write the full verbose output to this file")
	flag.Parse()
	var full io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testlog:", err)
			os.Exit(2)
		}
		defer f.Close()
		full = f
	}
	os.Exit(run(os.Stdin, os.Stdout, full))
}

func run(in io.Reader, out, full io.Writer) int {
	output := map[string]*strings.Builder{} // test name → what it printed
	var failed []string
	pkgDone, pkgFailed := false, false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not test2json (a build error, a panic before the first
			// event): pass it through.
			fmt.Fprintln(out, sc.Text())
			fmt.Fprintln(full, sc.Text())
			continue
		}
		switch e.Action {
		case "output":
			io.WriteString(full, e.Output)
			if e.Test == "" {
				// Package-level lines: ok/FAIL, panics, TestMain output.
				if !strings.HasPrefix(e.Output, "=== ") && strings.TrimSpace(e.Output) != "PASS" {
					io.WriteString(out, e.Output)
				}
				continue
			}
			b := output[e.Test]
			if b == nil {
				b = &strings.Builder{}
				output[e.Test] = b
			}
			if !strings.HasPrefix(e.Output, "=== ") {
				b.WriteString(e.Output)
			}
			if strings.HasPrefix(strings.TrimSpace(e.Output), "--- ") {
				io.WriteString(out, e.Output)
			}
		case "fail":
			if e.Test != "" {
				failed = append(failed, e.Test)
			} else {
				pkgDone, pkgFailed = true, true
			}
		case "pass", "skip":
			if e.Test == "" {
				pkgDone = true
			}
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(out, "\n==== %d failed test(s); their output follows\n", len(failed))
		for _, t := range failed {
			fmt.Fprintf(out, "\n==== %s\n", t)
			if b := output[t]; b != nil {
				io.WriteString(out, b.String())
			}
		}
		fmt.Fprintf(out, "\n==== failed: %s\n", strings.Join(failed, " "))
	}
	if pkgFailed || len(failed) > 0 || !pkgDone {
		return 1
	}
	return 0
}
