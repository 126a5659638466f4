package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	crilogs "k8s.io/cri-client/pkg/logs"
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

// writeDockerLog writes records as docker's json-file log: one JSON
// object per line, the text with its newline unless the record is partial.
func writeDockerLog(records []criRecord) []byte {
	var b bytes.Buffer
	for i, r := range records {
		text := r.text
		if r.tag == "F" {
			text += "\n"
		}
		line, _ := json.Marshal(map[string]string{"log": text, "stream": r.stream,
			"time": fmt.Sprintf("2026-01-02T03:04:%02d.%09dZ", i%60, i)})
		b.Write(append(line, '\n'))
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

// outputOf is what a run prints of records: each stream on its own, a
// partial record continued by the next of its stream, a line left open by
// a last partial one ended with a newline (an empty partial record opens
// nothing). text maps a record's text (docker json coerces it to UTF-8).
func outputOf(records []criRecord, text func(string) string) (stdout, stderr string) {
	want := map[string]*strings.Builder{"stdout": {}, "stderr": {}}
	pending := map[string]bool{}
	for _, r := range records {
		t := text(r.text)
		want[r.stream].WriteString(t)
		if r.tag == "F" {
			want[r.stream].WriteByte('\n')
			pending[r.stream] = false
		} else if t != "" {
			pending[r.stream] = true
		}
	}
	for s, p := range pending {
		if p {
			want[s].WriteByte('\n')
		}
	}
	return want["stdout"].String(), want["stderr"].String()
}

// jsonText is what a docker json log gives back of a text.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// writeLog writes data as the log file dir/0.log and returns its path.
func writeLog(t *testing.T, dir string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, "0.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tail runs a run's tailer over a log file holding data until it has read
// all of it, and returns what it wrote to stdout and stderr.
func tail(t *testing.T, dir string, data []byte) (stdout, stderr string) {
	t.Helper()
	var out, errb syncBuffer
	startTailer(writeLog(t, dir, data), "", &logSink{stdout: &out, stderr: &errb}).finish(false)
	return out.String(), errb.String()
}

// decode reads a log file holding data once (no follow), as `podrun logs`
// and the end of a run do, and returns what it wrote.
func decode(t *testing.T, dir string, data []byte) (stdout, stderr string) {
	t.Helper()
	var out, errb syncBuffer
	_ = copyLog(context.Background(), writeLog(t, dir, data), &logSink{stdout: &out, stderr: &errb}, "")
	return out.String(), errb.String()
}

// checkCRITime fails the test unless criTime takes ts as ReadLogs does:
// time.Parse(RFC3339NanoLenient), a time before year 1 being early.
func checkCRITime(t *testing.T, ts []byte) {
	t.Helper()
	early, ok := criTime(ts)
	parsed, err := time.Parse(crilogs.RFC3339NanoLenient, string(ts))
	if ok != (err == nil) || ok && early != parsed.Before(time.Time{}) {
		t.Fatalf("criTime(%q) = early %v, ok %v; time.Parse: %v, %v", ts, early, ok, parsed, err)
	}
}

// decodeRaw is what ReadLogs writes of a log file holding data, each
// stream's writes joined.
func decodeRaw(t *testing.T, dir string, data []byte) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	_ = readLog(context.Background(), writeLog(t, dir, data), "", &logOptions{}, nil, &out, &errb)
	return out.String(), errb.String()
}

// streamDecode is what criStream writes of data handed to it in chunks of
// size bytes, then ended.
func streamDecode(data []byte, size int) (stdout, stderr string) {
	var out, errb bytes.Buffer
	d := &criStream{stdout: &out, stderr: &errb}
	for len(data) > 0 {
		n := min(size, len(data))
		d.write(data[:n])
		data = data[n:]
	}
	d.end()
	return out.String(), errb.String()
}

// stamped puts a real timestamp in place of a line's first field when it
// is "t", so that short seeds and corpus entries reach the CRI parser.
func stamped(data []byte) []byte {
	ls := bytes.Split(data, []byte("\n"))
	for i, l := range ls {
		if bytes.HasPrefix(l, []byte("t ")) {
			ls[i] = append([]byte("2026-01-02T03:04:05.000000001Z"), l[1:]...)
		}
	}
	return bytes.Join(ls, []byte("\n"))
}

// criLogModel is the CRI format as the kubelet's reader decodes it, written
// out as a scan over lines to compare with the decoder: "<RFC3339 time>
// <stdout|stderr> <tag>[:extras] <text>"; a line that does not parse is
// skipped, and so is one from before year 1; an F line's text keeps its newline, a P line's does not, an
// unterminated last line is read as it is. ok is false when the first line
// is not CRI (the decoder then tries docker json, or refuses the file).
func criLogModel(data []byte) (stdout, stderr string, ok bool) {
	out := map[string]*strings.Builder{"stdout": {}, "stderr": {}}
	first := true
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		f := bytes.SplitN(line, []byte(" "), 4)
		parsed := len(f) == 4
		var ts time.Time
		if parsed {
			var err error
			ts, err = time.Parse(crilogs.RFC3339NanoLenient, string(f[0]))
			parsed = err == nil && (string(f[1]) == "stdout" || string(f[1]) == "stderr")
		}
		if first && !parsed {
			return "", "", false
		}
		first = false
		if !parsed || ts.Before(time.Time{}) {
			continue // a time before year 1 is before any --since, even none
		}
		text := f[3]
		if tag, _, _ := strings.Cut(string(f[2]), ":"); tag == "P" {
			text = bytes.TrimSuffix(text, []byte("\n"))
		}
		out[string(f[1])].Write(text)
	}
	end := func(s string) string {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n" // the run ends a line the log left unfinished
		}
		return s
	}
	return end(out["stdout"].String()), end(out["stderr"].String()), true
}

// FuzzCRILog checks the CRI log decoders (ReadLogs under `podrun logs`,
// logTail and the end of a run; criStream under the run's tailer):
//   - on any file, the run's tailer (criStream) writes what ReadLogs
//     writes, whatever chunks it reads the file in;
//   - on any file it ends, writing at most what docker json's UTF-8
//     coercion can make of what it read (3 bytes per byte) and the
//     newlines it adds to unfinished lines;
//   - on a CRI file it decodes as the model of the format says (lines
//     that do not parse skipped, tags with colon-separated extras, partial
//     lines, an unterminated last line);
//   - a log written the way the runtime writes it, in CRI or docker json,
//     gives back exactly the output through the run's tailer, each stream
//     on its own, partial ("P") chunks joined;
//   - logTail of such a log is the text of its last lines, cut to its
//     last bytes.
func FuzzCRILog(f *testing.F) {
	f.Add([]byte("2026-01-02T03:04:05.123456789Z stdout F hello\n2026-01-02T03:04:05Z stderr P pa\n2026-01-02T03:04:05Z stderr F rt\n"))
	f.Add([]byte("t stdout P a\nt stderr F b\nt stdout P c\nplain output\nt stdout F:x d"))
	f.Add([]byte("\x00out line\n\x01err line\n\x02part\x03\n\x00end\n"))
	f.Add([]byte("t stdin F x\n\n \n  stdout  F\nt stdout F"))
	f.Add([]byte(`{"log":"a\n","stream":"stdout","time":"2026-01-02T03:04:05Z"}` + "\n{\"log\":\"\xff\"}\n"))
	// A line longer than a read of the file.
	f.Add([]byte("t stdout P " + strings.Repeat("x", 40<<10) + "\nt stdout F y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range bytes.Split(data, []byte("\n")) {
			ts, _, _ := bytes.Cut(l, []byte(" "))
			checkCRITime(t, ts)
		}
		dir := t.TempDir()
		for _, in := range [][]byte{data, stamped(data)} {
			stdout, stderr := decode(t, dir, in)
			if n, limit := len(stdout)+len(stderr), 3*len(in)+2; n > limit {
				t.Fatalf("decoded %d bytes from %d: %q %q", n, len(in), stdout, stderr)
			}
			if wantOut, wantErr, ok := criLogModel(in); ok && (stdout != wantOut || stderr != wantErr) {
				t.Fatalf("decoding %q\ngave stdout %q stderr %q\nwant stdout %q stderr %q", in, stdout, stderr, wantOut, wantErr)
			}
			if gotOut, gotErr := tail(t, dir, in); gotOut != stdout || gotErr != stderr {
				t.Fatalf("the run's tailer on %q\ngave stdout %q stderr %q\nReadLogs stdout %q stderr %q", in, gotOut, gotErr, stdout, stderr)
			}
			rawOut, rawErr := decodeRaw(t, dir, in)
			for _, size := range []int{1, 2, 7, 64} {
				if gotOut, gotErr := streamDecode(in, size); gotOut != rawOut || gotErr != rawErr {
					t.Fatalf("criStream in chunks of %d of %q\ngave stdout %q stderr %q\nReadLogs stdout %q stderr %q", size, in, gotOut, gotErr, rawOut, rawErr)
				}
			}
		}

		// The round trips, through the run's tailer.
		records := recordsOf(data)
		wantOut, wantErr := outputOf(records, func(s string) string { return s })
		stdout, stderr := tail(t, dir, writeCRILog(records))
		if stdout != wantOut || stderr != wantErr {
			t.Fatalf("CRI log of %q\ngave stdout %q stderr %q\nwant stdout %q stderr %q", records, stdout, stderr, wantOut, wantErr)
		}
		wantOut, wantErr = outputOf(records, jsonText)
		stdout, stderr = tail(t, dir, writeDockerLog(records))
		if stdout != wantOut || stderr != wantErr {
			t.Fatalf("docker json log of %q\ngave stdout %q stderr %q\nwant stdout %q stderr %q", records, stdout, stderr, wantOut, wantErr)
		}

		// The last lines.
		const n, maxBytes = 3, 16
		var last strings.Builder
		for _, r := range records[max(0, len(records)-n):] {
			last.WriteString(r.text)
			if r.tag == "F" {
				last.WriteByte('\n')
			}
		}
		path := writeLog(t, dir, writeCRILog(records))
		got, err := logTail(path, n, 0)
		if err != nil || got != last.String() {
			t.Fatalf("logTail(%d) of %q = %q, %v; want %q", n, records, got, err, last.String())
		}
		want := last.String()
		want = want[max(0, len(want)-maxBytes):]
		if got, err := logTail(path, n, maxBytes); err != nil || got != want {
			t.Fatalf("logTail(%d, %d bytes) of %q = %q, %v; want %q", n, maxBytes, records, got, err, want)
		}
	})
}
