// Command cricount counts the CRI calls a command makes: it runs a gRPC
// proxy on a temporary unix socket in front of the runtime, runs the
// command with CONTAINER_RUNTIME_ENDPOINT pointing at the proxy, and when
// the command exits prints, per CRI method, the calls, the calls per pod
// (-pods) and the time the runtime took to answer them (for a stream, its
// whole life).
//
//	go run ./hack/cricount -pods 10 -- ./bin/podrun -q --root-dir /tmp/r -f pods.yaml
//
// The proxy forwards every call unchanged, unary or streaming, as raw
// bytes; the command must take the endpoint from the environment (podrun
// and hack/cribare do when no flag names one). The command's exit status
// is cricount's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

var (
	endpoint = flag.String("endpoint", os.Getenv("CONTAINER_RUNTIME_ENDPOINT"), "the runtime's CRI endpoint; default $CONTAINER_RUNTIME_ENDPOINT")
	pods     = flag.Int("pods", 1, "pods the command runs, for the per-pod column")
	timeline = flag.Bool("timeline", false, "also print every call in the order they came: its start after the command's, the runtime's time to answer, the method")
)

// frame is one gRPC message, forwarded as it came.
type frame struct{ b []byte }

// rawCodec passes frames through without decoding them.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.(*frame).b, nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	v.(*frame).b = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

type tally struct {
	mu    sync.Mutex
	calls map[string]int
	took  map[string]time.Duration
	t0    time.Time // the command's start
	log   []call    // every call, for -timeline
}

// call is one CRI call: when it came, after the command's start, and how
// long the runtime took to answer it.
type call struct {
	method      string
	start, took time.Duration
}

func main() {
	flag.Parse()
	if flag.NArg() == 0 || *endpoint == "" || *pods < 1 {
		fmt.Fprintln(os.Stderr, "usage: cricount [-endpoint unix:///runtime.sock] [-pods N] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	code, err := run(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "cricount:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, fmt.Errorf("connect %s: %w", *endpoint, err)
	}
	defer conn.Close()
	dir, err := os.MkdirTemp("", "cricount-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "cri.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return 0, err
	}
	t := &tally{calls: map[string]int{}, took: map[string]time.Duration{}}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(t.forward(conn)))
	go srv.Serve(ln)
	defer srv.Stop()

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "CONTAINER_RUNTIME_ENDPOINT=unix://"+sock)
	t.t0 = time.Now()
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return 0, err
		}
		code = ee.ExitCode()
	}
	t.print(os.Stderr)
	if *timeline {
		t.printTimeline(os.Stderr, time.Since(t.t0))
	}
	return code, nil
}

// forward proxies one call of any method to conn and counts it.
func (t *tally) forward(conn *grpc.ClientConn) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(ss)
		start := time.Now()
		defer func() {
			t.mu.Lock()
			t.calls[method]++
			t.took[method] += time.Since(start)
			t.log = append(t.log, call{method: method, start: start.Sub(t.t0), took: time.Since(start)})
			t.mu.Unlock()
		}()
		ctx, cancel := context.WithCancel(ss.Context())
		defer cancel()
		cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
		if err != nil {
			return err
		}
		go func() {
			for {
				var f frame
				if err := ss.RecvMsg(&f); err != nil {
					if errors.Is(err, io.EOF) {
						_ = cs.CloseSend()
					} else {
						cancel()
					}
					return
				}
				if err := cs.SendMsg(&f); err != nil {
					return
				}
			}
		}()
		for {
			var f frame
			if err := cs.RecvMsg(&f); err != nil {
				ss.SetTrailer(cs.Trailer())
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if err := ss.SendMsg(&f); err != nil {
				return err
			}
		}
	}
}

func (t *tally) print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	methods := make([]string, 0, len(t.calls))
	total := 0
	for m, n := range t.calls {
		methods = append(methods, m)
		total += n
	}
	slices.SortFunc(methods, func(a, b string) int {
		if d := t.calls[b] - t.calls[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "CRI method\tcalls\tper pod\truntime time\t\n")
	for _, m := range methods {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%v\t\n", m[strings.LastIndex(m, "/")+1:], t.calls[m],
			float64(t.calls[m])/float64(*pods), t.took[m].Round(100*time.Microsecond))
	}
	fmt.Fprintf(tw, "total\t%d\t%.1f\t\t\n", total, float64(total)/float64(*pods))
	tw.Flush()
}

// printTimeline prints every call in the order they came: its start after
// the command's, the runtime's time to answer, the method; then the
// command's exit.
func (t *tally) printTimeline(w io.Writer, exit time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	log := slices.Clone(t.log)
	slices.SortFunc(log, func(a, b call) int { return int(a.start - b.start) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "at ms	took ms	CRI method	\n")
	for _, c := range log {
		fmt.Fprintf(tw, "%.1f	%.1f	%s	\n", ms(c.start), ms(c.took), c.method[strings.LastIndex(c.method, "/")+1:])
	}
	fmt.Fprintf(tw, "%.1f		the command exits	\n", ms(exit))
	tw.Flush()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
