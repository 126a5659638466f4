package fake

import (
	"path"
	"strconv"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Behavior scripts what a container does once started. The zero Behavior
// exits 0 at once, like `true`.
type Behavior struct {
	// Output is written to the container's log, in order, each line at its
	// After (since start). The container exits after its last line.
	Output []LogLine
	// ExitAfter is how long after start the container exits with ExitCode.
	ExitAfter time.Duration
	ExitCode  int32
	// UntilStopped makes the container run until it is stopped or killed,
	// like a server; ExitAfter and ExitCode are then unused.
	UntilStopped bool
	// OOMKilled makes the exit an out-of-memory kill: code 137, reason
	// "OOMKilled".
	OOMKilled bool
	// IgnoreSIGTERM makes StopContainer wait out the whole grace period
	// (or the container's own exit) and then kill it: exit code 137.
	IgnoreSIGTERM bool
	// TermExitCode is the exit code when the container stops on SIGTERM.
	// nil means 143 (128+SIGTERM), what a process killed by the signal
	// reports; Code(0) is a process that exits cleanly on SIGTERM.
	TermExitCode *int32
	// StartError makes StartContainer fail with this message; the container
	// is then exited with code 128 and reason "StartError", as in containerd.
	StartError string
	// Exec answers ExecSync in the container. nil: every command exits 0
	// with no output.
	Exec func(cmd []string) ExecResult
	// OnStop, if set, is told of each StopContainer of the running
	// container, with the request's timeout, before the stop is done.
	OnStop func(timeout int64)
}

// LogLine is one line a container writes.
type LogLine struct {
	// Stream is "stdout" (when empty) or "stderr".
	Stream string
	Text   string
	// Partial tags the line P (to be continued by the next) instead of F.
	Partial bool
	// After is when, since the container started, the line is written.
	After time.Duration
}

// ExecResult is what a scripted ExecSync returns.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int32
	// Took is how long the command runs. If it is longer than the request's
	// timeout, ExecSync fails with DeadlineExceeded after the timeout, as
	// containerd's does.
	Took time.Duration
}

// Code returns a pointer to n, for Behavior.TermExitCode.
func Code(n int32) *int32 { return &n }

const (
	exitKilled = 137 // 128+SIGKILL
	exitTermed = 143 // 128+SIGTERM
)

// SetBehavior sets the hook that scripts each container, called at
// CreateContainer with the container's config; a test keys it on the
// command line, an annotation or the name. nil restores the default,
// CommandBehavior. The hook must not call the Server.
func (s *Server) SetBehavior(hook func(cfg *runtimeapi.ContainerConfig) Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = hook
}

// CommandBehavior is the default script. It reads the container's command
// line (Command, then Args) the way a shell runs a few commands, with
// second as the length of a second:
//
//	sleep N               exit 0 after N seconds; "sleep infinity" runs until stopped
//	true, false, exit N   exit 0, 1, N
//	echo TEXT [>&2]       write TEXT to stdout (stderr), then go on
//	trap '' TERM          ignore SIGTERM
//	sh -c 'A; B && C'     the statements above in order
//
// A command line that is empty (the image's entrypoint) or has another
// command runs until stopped, like a server.
func CommandBehavior(cfg *runtimeapi.ContainerConfig, second time.Duration) Behavior {
	argv := append(append([]string{}, cfg.GetCommand()...), cfg.GetArgs()...)
	if len(argv) == 0 {
		return Behavior{UntilStopped: true}
	}
	var stmts [][]string
	switch path.Base(argv[0]) {
	case "sh", "bash", "ash", "dash":
		if len(argv) < 3 || argv[1] != "-c" {
			return Behavior{UntilStopped: true}
		}
		for _, st := range splitStatements(argv[2]) {
			stmts = append(stmts, strings.Fields(st))
		}
	default:
		stmts = [][]string{argv}
	}

	var b Behavior
	var at time.Duration
	for _, f := range stmts {
		if len(f) == 0 {
			continue
		}
		switch path.Base(f[0]) {
		case "sleep":
			if len(f) < 2 || f[1] == "infinity" {
				return Behavior{Output: b.Output, IgnoreSIGTERM: b.IgnoreSIGTERM, UntilStopped: true}
			}
			n, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "s"), 64)
			if err != nil {
				return Behavior{Output: b.Output, UntilStopped: true}
			}
			at += time.Duration(n * float64(second))
		case "echo":
			line := LogLine{Text: strings.Join(f[1:], " "), After: at}
			if t, ok := strings.CutSuffix(line.Text, ">&2"); ok {
				line.Text, line.Stream = strings.TrimSpace(t), "stderr"
			}
			line.Text = unquote(line.Text)
			b.Output = append(b.Output, line)
		case "true", ":":
			b.ExitCode = 0
		case "false":
			b.ExitCode = 1
		case "exit":
			b.ExitCode = 0
			if len(f) > 1 {
				n, _ := strconv.Atoi(f[1])
				b.ExitCode = int32(n)
			}
			b.ExitAfter = at
			return b
		case "trap":
			if strings.Contains(strings.Join(f, " "), "TERM") {
				b.IgnoreSIGTERM = true
			}
		default:
			return Behavior{Output: b.Output, IgnoreSIGTERM: b.IgnoreSIGTERM, UntilStopped: true}
		}
	}
	b.ExitAfter = at
	return b
}

// splitStatements splits a shell script on ";", "&&" and newlines, outside
// quotes.
func splitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ';' || r == '\n' || r == '&' && i+1 < len(rs) && rs[i+1] == '&':
			if r == '&' {
				i++
			}
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

// unquote strips one pair of matching quotes around s.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
