// Package sdnotify tells systemd how a supervised run goes (`podrun run
// --supervise` as a Type=notify service, docs/bootstrap.md), with the
// sd_notify protocol: one datagram of newline-separated VARIABLE=value
// assignments to the unix socket $NOTIFY_SOCKET names (a path, or an
// abstract socket when it starts with '@'). READY=1 once every pod of the
// run is Ready, which is when systemd counts the service started; STATUS=
// lines as pods change, which `systemctl status` shows; STOPPING=1 when
// the run winds down.
//
// A Notifier is a runner.Progress: the run reports to it as to its
// printers (runner.TeeProgress), and it depends on nothing of the
// pipeline's but that interface.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// Notifier sends a run's readiness and status to systemd.
type Notifier struct {
	mu    sync.Mutex
	conn  *net.UnixConn
	total int
	ready map[string]bool // by namespace/name
	sent  bool            // READY=1 sent
	stop  bool            // STOPPING=1 sent
}

// New connects to socket ($NOTIFY_SOCKET) for a run of pods pods. A
// socket "" is not systemd's service: New returns nil, no error.
func New(socket string, pods int) (*Notifier, error) {
	if socket == "" {
		return nil, nil
	}
	if pods == 0 {
		return nil, errors.New("sdnotify: no pods to be ready")
	}
	addr := &net.UnixAddr{Name: socket, Net: "unixgram"}
	if socket[0] == '@' {
		addr.Name = "\x00" + socket[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to systemd's NOTIFY_SOCKET %s: %w", socket, err)
	}
	return &Notifier{conn: conn, total: pods, ready: map[string]bool{}}, nil
}

// send writes one datagram; a failure is dropped, as sd_notify's callers
// drop it: systemd gone is no reason to stop the pods.
func (n *Notifier) send(state string) {
	_, _ = n.conn.Write([]byte(state))
}

// Event is a pod's event, as a STATUS line.
func (n *Notifier) Event(pod *v1.Pod, reason, message string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.send(fmt.Sprintf("STATUS=%s/%s: %s: %s", pod.Namespace, pod.Name, reason, message))
}

// PodStatus counts the pod Ready or not; once all are, it sends READY=1.
func (n *Notifier) PodStatus(pod *v1.Pod, st v1.PodStatus) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ready[pod.Namespace+"/"+pod.Name] = podReady(st)
	if n.sent || readyCount(n.ready) < n.total {
		return
	}
	n.sent = true
	n.send(fmt.Sprintf("READY=1\nSTATUS=%d of %d pods Ready", n.total, n.total))
}

// Note is a line of podrun's own, as a STATUS line.
func (n *Notifier) Note(message string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.send("STATUS=" + message)
}

// Stopping tells systemd the run is winding down (a signal, or the pods
// handed over to a kubelet), once: later calls do nothing.
func (n *Notifier) Stopping(why string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stop {
		return
	}
	n.stop = true
	n.send("STOPPING=1\nSTATUS=" + why)
}

// Close closes the socket.
func (n *Notifier) Close() error { return n.conn.Close() }

func podReady(st v1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func readyCount(m map[string]bool) int {
	n := 0
	for _, r := range m {
		if r {
			n++
		}
	}
	return n
}
