package main

import (
	"io"
	"strings"
	"testing"
)

// interspersed moves the flags of the commands that take PODs that follow
// POD in front of it, up to "--", and leaves every other command alone.
func TestInterspersed(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	cases := []struct{ in, want string }{
		{"podrun logs web -f --tail 3", "podrun logs -f --tail 3 web"},
		{"podrun logs web --tail=3 app", "podrun logs --tail=3 web app"},
		{"podrun --root-dir /r logs web -c app", "podrun --root-dir /r logs -c app web"},
		{"podrun -r unix:///s --root-dir /r exec web -it -c app -- sh -c 'x' -f", "podrun -r unix:///s --root-dir /r exec -it -c app web -- sh -c 'x' -f"},
		{"podrun exec -i web -- cat -", "podrun exec -i web -- cat -"},
		{"podrun logs web --tail -1", "podrun logs --tail -1 web"},
		{"podrun ps web -o wide", "podrun ps -o wide web"},
		{"podrun ps web -w shop/db", "podrun ps -w web shop/db"},
		{"podrun down web --all", "podrun down --all web"},
		{"podrun down web -q db", "podrun down -q web db"},
		{"podrun handover etcd-node1 --timeout 5m", "podrun handover --timeout 5m etcd-node1"},
		{"podrun ps -- -x", "podrun ps -- -x"},
		// Other commands, and the run's -f, are left as they are.
		{"podrun -f pod.yaml extra", "podrun -f pod.yaml extra"},
		{"podrun run -f logs", "podrun run -f logs"},
		{"podrun", "podrun"},
	}
	for _, tc := range cases {
		if got := strings.Join(interspersed(app, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("interspersed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
