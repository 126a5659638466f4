package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/go-logr/logr"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	crilogs "k8s.io/cri-client/pkg/logs"
	"k8s.io/klog/v2"
)

// The CRI log decoder. Every reader of a container's log — `podrun logs`,
// the FallbackToLogsOnError termination message, logTail, the end of a
// run's logs — decodes it with k8s.io/cri-client's ReadLogs, the reader of
// the kubelet and crictl: the CRI and docker-json formats, partial ("P")
// lines, --since, --tail, timestamps, and following a file (inotify on its
// directory) until the container stops running. A run's live output is
// the one exception: its tailers (logfollow.go) decode as the log grows,
// with criStream below (held to ReadLogs' output by FuzzCRILog), without
// the inotify watch that makes the runtime pay for every line it writes.

// logOptions are the decoder's options (TailLines, Since, Follow,
// Timestamp, LimitBytes), as the kubelet's ReadLogs takes them.
type logOptions = crilogs.LogOptions

// runningFunc tells a follower whether the container still runs, so that
// it keeps waiting for output; a follow ends once it says no and the file
// is read to its end.
type runningFunc func(ctx context.Context, containerID string) (bool, error)

// readLog decodes the CRI log at path into stdout and stderr, each decoded
// chunk in one Write: a full line ends with "\n", a partial one does not
// and the next chunk continues it. With opts.Follow it waits for more
// until running says the container has stopped. ReadLogs logs through
// klog; podrun's log reading stays silent and reports what matters as
// errors.
func readLog(ctx context.Context, path, containerID string, opts *logOptions, running runningFunc, stdout, stderr io.Writer) error {
	ctx = klog.NewContext(ctx, logr.Discard())
	var rs internalapi.RuntimeService
	if running != nil {
		rs = statusService{running: running}
	}
	return crilogs.ReadLogs(ctx, path, containerID, opts, rs, stdout, stderr)
}

// statusService is the runtime service ReadLogs asks, while following,
// whether the container still runs: its ContainerStatus only, answered by
// a runningFunc (podrun's own CRI client, or a run that knows when an
// instance is done). ReadLogs calls nothing else; the embedded interface
// is nil and any other method would panic.
type statusService struct {
	internalapi.RuntimeService
	running runningFunc
}

func (s statusService) ContainerStatus(ctx context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	ok, err := s.running(ctx, id)
	if err != nil {
		return nil, err
	}
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if ok {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id, State: state}}, nil
}

// logTail is the text of the last lines of a container's CRI log (both
// streams, in order, partial lines joined), cut to its last maxBytes bytes
// when maxBytes > 0: what the kubelet reads for a FallbackToLogsOnError
// termination message (readLastStringFromContainerLogs, 80 lines into a
// 2 KiB ring) and what a report shows of a failed container. An incomplete
// last line is read but does not count as a line.
func logTail(path string, lines int64, maxBytes int) (string, error) {
	buf := &tailBuffer{max: maxBytes}
	if err := readLog(context.Background(), path, "", &logOptions{TailLines: &lines}, nil, buf, buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// tailBuffer keeps the last max bytes written to it (all of them when max
// is 0), as the kubelet's circular buffer.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if t.max > 0 && len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.max > 0 && len(t.b) > t.max {
		return string(t.b[len(t.b)-t.max:])
	}
	return string(t.b)
}

// criStream decodes a container log, CRI or docker json, written to it
// in chunks as the file grows, into stdout and stderr: the text of each
// record in one write, as ReadLogs writes it with no options. The first
// line tells the format (CRI, else docker json; a file that is neither
// gives nothing); a line that does not parse is skipped, and so is one
// stamped before year 1 (before any --since, even none); a partial ("P")
// record's text loses its newline; a docker json record of another stream
// ends the decoding, as ReadLogs ends with an error. end decodes an
// unterminated last line, as ReadLogs does at the end of a file it does
// not follow.
type criStream struct {
	stdout, stderr io.Writer
	format         logFormat
	ended          bool // ReadLogs would have stopped: nothing more is decoded
	lines          lineSplitter
}

type logFormat int

const (
	formatUnknown logFormat = iota // no line yet
	formatCRI
	formatDockerJSON
)

// write decodes the whole lines of p and keeps an unfinished last one.
func (d *criStream) write(p []byte) { d.lines.split(p, d.line) }

// end decodes the unterminated last line, if any.
func (d *criStream) end() { d.lines.rest(d.line) }

// lineSplitter cuts what is written in chunks into whole lines, each with
// its newline, and keeps the start of a line whose end has not come yet:
// criStream decodes the lines of a log as it grows, lineWriter hands the
// decoded text to the log sink a line at a time.
type lineSplitter struct {
	carry []byte // the start of a line whose end is not read yet
}

// split hands each whole line of p to line, the first joined to the start
// kept from before, and keeps an unfinished last one.
func (s *lineSplitter) split(p []byte, line func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.carry = append(s.carry, p...)
			return
		}
		l := p[:i+1]
		if len(s.carry) > 0 {
			s.carry = append(s.carry, l...)
			l = s.carry
		}
		line(l)
		s.drop()
		p = p[i+1:]
	}
}

// rest hands the unfinished last line kept, if any, to line.
func (s *lineSplitter) rest(line func([]byte)) {
	if len(s.carry) > 0 {
		line(s.carry)
		s.drop()
	}
}

func (s *lineSplitter) drop() {
	if cap(s.carry) > 4*readSize {
		s.carry = nil // the room of one huge line is not kept
	} else {
		s.carry = s.carry[:0]
	}
}

// line decodes one line, with its newline when it has one.
func (d *criStream) line(l []byte) {
	if d.ended {
		return
	}
	if d.format == formatUnknown {
		// ReadLogs' getParseFunc: the first format whose parser takes the
		// first line.
		if _, _, _, ok := parseCRILine(l); ok {
			d.format = formatCRI
		} else if _, _, _, ok := parseDockerJSONLine(l); ok {
			d.format = formatDockerJSON
		} else {
			d.ended = true
			return
		}
	}
	parse := parseCRILine
	if d.format == formatDockerJSON {
		parse = parseDockerJSONLine
	}
	stream, text, early, ok := parse(l)
	if !ok || early {
		return
	}
	switch runtimeapi.LogStreamType(stream) {
	case runtimeapi.Stdout:
		d.stdout.Write(text)
	case runtimeapi.Stderr:
		d.stderr.Write(text)
	default:
		d.ended = true
	}
}

// parseCRILine is ReadLogs' parseCRILog: "<time> <stream> <tag> <text>",
// the time RFC 3339 with optional fractional seconds, the stream stdout or
// stderr, the tag P (partial) or another, with colon-separated extras. A
// partial record's text loses its newline. early says the time is before
// year 1.
func parseCRILine(l []byte) (stream string, text []byte, early, ok bool) {
	i := bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	if early, ok = criTime(l[:i]); !ok {
		return "", nil, false, false
	}
	l = l[i+1:]
	i = bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	switch s := l[:i]; string(s) {
	case string(runtimeapi.Stdout):
		stream = string(runtimeapi.Stdout)
	case string(runtimeapi.Stderr):
		stream = string(runtimeapi.Stderr)
	default:
		return "", nil, false, false
	}
	l = l[i+1:]
	i = bytes.IndexByte(l, ' ')
	if i < 0 {
		return "", nil, false, false
	}
	tag := l[:i]
	if c := bytes.IndexByte(tag, runtimeapi.LogTagDelimiter[0]); c >= 0 {
		tag = tag[:c]
	}
	if string(tag) == string(runtimeapi.LogTagPartial) && l[len(l)-1] == '\n' {
		l = l[:len(l)-1]
	}
	return stream, l[i+1:], early, true
}

// criTime checks a CRI record's time as ReadLogs parses it
// (time.Parse(RFC3339NanoLenient)), and says whether it is before year 1.
// The runtimes' own form is checked here without time.Parse, which costs
// more than the rest of a short line's decoding.
func criTime(ts []byte) (early, ok bool) {
	if rfc3339Plain(ts) {
		return false, true
	}
	t, err := time.Parse(crilogs.RFC3339NanoLenient, string(ts))
	if err != nil {
		return false, false
	}
	return t.Before(time.Time{}), true
}

// rfc3339Plain reports whether ts is "2006-01-02T15:04:05[.digits]Z" or
// with a "±07:00" zone, each field in its range, the year from 2 on: what
// time.Parse's RFC 3339 fast path takes (parseRFC3339), so that Parse
// takes it too, and which can be no time before year 1. False says only
// that time.Parse must decide.
func rfc3339Plain(ts []byte) bool {
	if len(ts) < 20 || ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' {
		return false
	}
	year, ok1 := digits(ts[0:4])
	month, ok2 := digits(ts[5:7])
	day, ok3 := digits(ts[8:10])
	hour, ok4 := digits(ts[11:13])
	minute, ok5 := digits(ts[14:16])
	sec, ok6 := digits(ts[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || year < 2 || month < 1 || month > 12 ||
		day < 1 || day > daysInMonth(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	rest := ts[19:]
	if len(rest) >= 2 && rest[0] == '.' && isDigit(rest[1]) {
		n := 2
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		rest = rest[n:]
	}
	if len(rest) == 1 && rest[0] == 'Z' {
		return true
	}
	if len(rest) != len("-07:00") || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	zh, ok1 := digits(rest[1:3])
	zm, ok2 := digits(rest[4:6])
	return ok1 && ok2 && zh <= 23 && zm <= 59
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func daysInMonth(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// dockerJSONRecord is a line of docker's json-file log, as ReadLogs reads it.
type dockerJSONRecord struct {
	Log     string    `json:"log,omitempty"`
	Stream  string    `json:"stream,omitempty"`
	Created time.Time `json:"time"`
}

// parseDockerJSONLine is ReadLogs' parseDockerJSONLog: any JSON object,
// its stream not checked here.
func parseDockerJSONLine(l []byte) (stream string, text []byte, early, ok bool) {
	r := &dockerJSONRecord{}
	if err := json.Unmarshal(l, r); err != nil {
		return "", nil, false, false
	}
	return r.Stream, []byte(r.Log), r.Created.Before(time.Time{}), true
}
