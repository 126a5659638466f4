package sdnotify

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// listen is a stand-in for systemd's notify socket: it returns the
// socket's name and what it receives, one datagram per string.
func listen(t *testing.T, abstract bool) (string, func() []string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "notify")
	addr := &net.UnixAddr{Name: name, Net: "unixgram"}
	if abstract {
		name = "@podrun-test-" + filepath.Base(t.TempDir())
		addr.Name = "\x00" + name[1:]
	}
	conn, err := net.ListenUnixgram("unixgram", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return name, func() []string {
		var got []string
		buf := make([]byte, 4096)
		for {
			conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			n, err := conn.Read(buf)
			if err != nil {
				return got
			}
			got = append(got, string(buf[:n]))
		}
	}
}

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}}
}

func status(ready bool) v1.PodStatus {
	s := v1.ConditionFalse
	if ready {
		s = v1.ConditionTrue
	}
	return v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: s}}}
}

func TestReadyOnceEveryPodIsReady(t *testing.T) {
	for _, abstract := range []bool{false, true} {
		socket, received := listen(t, abstract)
		n, err := New(socket, 2)
		if err != nil {
			t.Fatal(err)
		}
		etcd, api := pod("etcd-n1"), pod("kube-apiserver-n1")
		n.PodStatus(etcd, status(true))
		n.PodStatus(api, status(false))
		n.Event(api, "Started", "Started container kube-apiserver")
		n.PodStatus(etcd, status(false)) // not Ready for a while: no READY
		n.PodStatus(api, status(true))
		n.PodStatus(etcd, status(true)) // now both
		n.PodStatus(etcd, status(true)) // sent once
		n.Stopping("stopping: SIGTERM")
		n.Stopping("stopping the pods") // sent once
		n.Close()
		want := []string{
			"STATUS=kube-system/kube-apiserver-n1: Started: Started container kube-apiserver",
			"READY=1\nSTATUS=2 of 2 pods Ready",
			"STOPPING=1\nSTATUS=stopping: SIGTERM",
		}
		if got := received(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("abstract %v: received %q, want %q", abstract, got, want)
		}
	}
}

func TestNoSocketNoNotifier(t *testing.T) {
	n, err := New("", 3)
	if n != nil || err != nil {
		t.Errorf("New(\"\") = %v, %v; want nil, nil", n, err)
	}
	if _, err := New(filepath.Join(t.TempDir(), "none"), 1); err == nil || !strings.Contains(err.Error(), "NOTIFY_SOCKET") {
		t.Errorf("a socket nobody listens on: %v", err)
	}
}
