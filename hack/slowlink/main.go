// Command slowlink is a TCP relay that holds every chunk of data for a
// fixed delay in each direction, and may limit each connection's rate: the
// bench's slow registry link (hack/testbed.sh slow-registry). The kernels
// this testbed runs on have no netem qdisc (CONFIG_NET_SCH_NETEM is not
// set), so the delay is added here; tc's tbf limits the rate of the veth
// pair as a whole (all connections together), -rate each connection's.
//
//	slowlink -listen 10.254.53.2:5443 -to 127.0.0.1:5000 -delay 20ms [-rate 8MB]
//
// Each accepted connection gets its own connection to -to. Data read on
// one side is stamped and written to the other side -delay later, in
// order; reading goes on meanwhile (up to -queue chunks in flight per
// direction), so the delay adds latency to every round trip (TCP and TLS
// handshakes through it, each HTTP request and its answer) without
// lowering the throughput of a long transfer. An end of stream is passed
// on (as a half-close) after the data before it.
//
// With -rate, each direction of each relayed connection has a token bucket
// of its own (-burst bytes deep): a chunk read is let on only when the
// bucket has paid for it, and only then stamped for its delay, so a
// connection's throughput is at most -rate however many connections there
// are (the way a remote registry's CDN or a long round trip limits each
// connection while the machine's link is much faster). While the relay
// waits it reads no more, so the sender meets TCP's own back-pressure.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"time"
)

var (
	listen = flag.String("listen", "", "address to listen on (required)")
	to     = flag.String("to", "", "address to relay to (required)")
	delay  = flag.Duration("delay", 20*time.Millisecond, "delay of every chunk, each direction")
	queue  = flag.Int("queue", 4096, "chunks in flight per direction")
	rateS  = flag.String("rate", "0", "each connection's rate, each direction, in bytes a second (8MB, 512KiB, 64mbit); 0: no limit")
	burstS = flag.String("burst", "64KB", "each connection's token bucket depth, with -rate")

	rate, burst int64
)

func main() {
	flag.Parse()
	var err, err2 error
	rate, err = parseRate(*rateS)
	burst, err2 = parseRate(*burstS)
	if *listen == "" || *to == "" || *delay < 0 || *queue < 1 || err != nil || err2 != nil {
		for _, e := range []error{err, err2} {
			if e != nil {
				fmt.Fprintln(os.Stderr, "slowlink:", e)
			}
		}
		fmt.Fprintln(os.Stderr, "usage: slowlink -listen ADDR -to ADDR [-delay 20ms] [-rate 8MB [-burst 64KB]] [-queue N]")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go relay(c.(*net.TCPConn))
	}
}

// relay joins c to a new connection to -to, delaying both directions.
func relay(c *net.TCPConn) {
	time.Sleep(*delay) // the SYN's way in: the client's handshake takes a round trip more
	u, err := net.Dial("tcp", *to)
	if err != nil {
		log.Printf("dial %s: %v", *to, err)
		c.Close()
		return
	}
	up := u.(*net.TCPConn)
	done := make(chan struct{}, 2)
	go func() { pump(up, c); done <- struct{}{} }()
	go func() { pump(c, up); done <- struct{}{} }()
	<-done
	<-done
	c.Close()
	up.Close()
}

type chunk struct {
	at  time.Time
	buf []byte
}

// pump copies src to dst, each chunk written delay after it was read, and
// half-closes dst after src's end; with -rate, each chunk only once this
// direction's bucket has paid for it.
func pump(dst, src *net.TCPConn) {
	q := make(chan chunk, *queue)
	b := newBucket(rate, burst, time.Now())
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				if wait := b.take(n, time.Now()); wait > 0 {
					time.Sleep(wait)
				}
				q <- chunk{time.Now().Add(*delay), buf[:n]}
			}
			if err != nil {
				if err != io.EOF {
					src.Close()
				}
				return
			}
		}
	}()
	failed := false
	for ch := range q {
		if failed {
			continue // drain, so that the reader ends
		}
		time.Sleep(time.Until(ch.at))
		if _, err := dst.Write(ch.buf); err != nil {
			failed = true
			src.Close()
		}
	}
	if !failed {
		dst.CloseWrite()
	}
}
