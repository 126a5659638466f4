package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeRefs writes s so that expand leaves it as it is: every "$" doubled.
func escapeRefs(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// expandModel is the $(VAR) syntax of the kubelet's expansion package,
// written as a scan over tokens rather than by cursor and checkpoint as
// expand is, to compare the two: "$$" is "$"; "$(NAME)" with a non-empty
// NAME in vals is its value; any other "$" is kept, and so is an unclosed
// "$(" (what follows it is scanned on).
func expandModel(s string, vals map[string]string) string {
	var out strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			out.WriteString(s)
			break
		}
		out.WriteString(s[:i])
		s = s[i:] // "$" and at least one more byte
		switch {
		case s[1] == '$':
			out.WriteByte('$')
			s = s[2:]
		case s[1] == '(':
			name, rest, closed := strings.Cut(s[2:], ")")
			if !closed {
				out.WriteString("$(")
				s = s[2:]
				break
			}
			if v, ok := vals[name]; ok && name != "" {
				out.WriteString(v)
			} else {
				out.WriteString("$(" + name + ")")
			}
			s = rest
		default:
			out.WriteByte('$')
			s = s[1:]
		}
	}
	return out.String()
}

// FuzzExpand checks expand, the $(VAR) expansion of env values, command
// and args:
//   - it gives what an independent reading of the kubelet's syntax gives;
//   - escaped text ("$" doubled) comes out as it went in, whatever is
//     defined;
//   - a defined reference between escaped texts is always replaced by its
//     value, and one that is not defined stays as written: nothing it
//     should have resolved is left in the output;
//   - text without "$" is unchanged.
func FuzzExpand(f *testing.F) {
	for _, seed := range [][5]string{
		{"x-$(A)-y", "A", "alpha", "pre", "post"},
		{"$$(A) $$$(A) $(A $ $B $", "A", "", "$", "$("},
		{"$(NOPE) and $()", "B", "b)", "a$$b", "$(B)"},
		{"cost: $$5$", "X Y", "$(X Y)", "", ""},
		{"no refs", "N", "v", "(x)", ")"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	f.Fuzz(func(t *testing.T, s, name, value, a, b string) {
		vals := map[string]string{name: value, "A": "alpha", "EMPTY": ""}
		if got, want := expand(s, vals), expandModel(s, vals); got != want {
			t.Fatalf("expand(%q, %q) = %q, want %q", s, vals, got, want)
		}
		if got := expand(escapeRefs(s), vals); got != s {
			t.Fatalf("expand of escaped %q = %q", s, got)
		}
		if !strings.Contains(s, "$") {
			if got := expand(s, vals); got != s {
				t.Fatalf("expand(%q) = %q, want it unchanged", s, got)
			}
		}
		ref := escapeRefs(a) + "$(" + name + ")" + escapeRefs(b)
		if name != "" && !strings.Contains(name, ")") {
			if got, want := expand(ref, vals), a+value+b; got != want {
				t.Fatalf("expand(%q) with %s=%q = %q, want %q", ref, name, value, got, want)
			}
			delete(vals, name)
			if name != "A" && name != "EMPTY" {
				if got, want := expand(ref, vals), a+"$("+name+")"+b; got != want {
					t.Fatalf("expand(%q) without %s = %q, want %q", ref, name, got, want)
				}
			}
		}
	})
}

// writeCRILog writes records as a CRI log: "<time> <stream> <tag> <text>\n".
func writeCRILog(records []criRecord) []byte {
	var b bytes.Buffer
	for i, r := range records {
		fmt.Fprintf(&b, "2026-01-02T03:04:%02d.%09dZ %s %s %s\n", i%60, i, r.stream, r.tag, r.text)
	}
	return b.Bytes()
}

type criRecord struct{ stream, tag, text string }

// recordsOf turns fuzz bytes into CRI log records, one per line: the
// line's first byte chooses the stream (bit 0) and the tag (bit 1: P).
func recordsOf(data []byte) []criRecord {
	var out []criRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		r := criRecord{stream: "stdout", tag: "F", text: string(line[1:])}
		if line[0]&1 != 0 {
			r.stream = "stderr"
		}
		if line[0]&2 != 0 {
			r.tag = "P"
		}
		out = append(out, r)
	}
	return out
}

// tail runs a tailer over a log file holding data until it has read all
// of it, and returns what it wrote to stdout and stderr.
func tail(t *testing.T, dir string, data []byte) (stdout, stderr string) {
	t.Helper()
	p := filepath.Join(dir, "0.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb syncBuffer
	startTailer(p, "", &logSink{stdout: &out, stderr: &errb}).finish()
	return out.String(), errb.String()
}

// FuzzCRILog checks the CRI log decoder (the tailer and parseCRILogLine):
//   - on any file it never writes more than it read, but for the newline
//     it adds to an unterminated last line;
//   - a parsed line's text is the end of that line, its stream stdout or
//     stderr, its tag without the colon-separated extras;
//   - a log written the way the runtime writes it gives back exactly the
//     output, each stream on its own, partial ("P") chunks joined.
func FuzzCRILog(f *testing.F) {
	f.Add([]byte("2026-01-02T03:04:05.123456789Z stdout F hello\n2026-01-02T03:04:05Z stderr P pa\n2026-01-02T03:04:05Z stderr F rt\n"))
	f.Add([]byte("t stdout P a\nt stderr F b\nt stdout P c\nplain output\nt stdout F:x d"))
	f.Add([]byte("\x00out line\n\x01err line\n\x02part\x03\n\x00end\n"))
	f.Add([]byte("t stdin F x\n\n \n  stdout  F\nt stdout F"))
	// A line longer than the tailer's 32 KiB read.
	f.Add([]byte("t stdout P " + strings.Repeat("x", 40<<10) + "\nt stdout F y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		stdout, stderr := tail(t, dir, data)
		if n, limit := len(stdout)+len(stderr), len(data)+1; n > limit {
			t.Fatalf("decoded %d bytes from %d: %q %q", n, len(data), stdout, stderr)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			stream, tag, text, ok := parseCRILogLine(line)
			if !ok {
				continue
			}
			if stream != "stdout" && stream != "stderr" || strings.Contains(tag, ":") ||
				!bytes.HasSuffix(line, text) || !bytes.HasPrefix(line[bytes.IndexByte(line, ' ')+1:], []byte(stream+" ")) {
				t.Fatalf("parseCRILogLine(%q) = %q %q %q", line, stream, tag, text)
			}
		}

		// The round trip.
		records := recordsOf(data)
		want := map[string]*strings.Builder{"stdout": {}, "stderr": {}}
		pending := map[string]bool{}
		for _, r := range records {
			want[r.stream].WriteString(r.text)
			pending[r.stream] = r.tag == "P"
			if r.tag == "F" {
				want[r.stream].WriteByte('\n')
			}
		}
		for s, p := range pending {
			if p {
				want[s].WriteByte('\n')
			}
		}
		stdout, stderr = tail(t, dir, writeCRILog(records))
		if stdout != want["stdout"].String() || stderr != want["stderr"].String() {
			t.Fatalf("log of %q\ngave stdout %q stderr %q\nwant stdout %q stderr %q", records, stdout, stderr, want["stdout"], want["stderr"])
		}
	})
}
