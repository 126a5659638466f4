package main

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
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

// TestIsSetIsUrfaves: isSet answers as urfave's IsSet for every flag of
// every context, the app's and the command's, whether the flag was given
// under its name or an alias, on the app or the command, or came from its
// environment variable.
func TestIsSetIsUrfaves(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{"-f", "pod.yaml"}},
		{args: []string{"-r", "unix:///x.sock", "run", "-f", "pod.yaml", "--timeout", "3s", "-q"}},
		{args: []string{"run", "--filename", "pod.yaml", "--runtime-endpoint", "unix:///y.sock"}},
		{args: []string{"--root-dir", "/r", "ps", "-r", "unix:///x.sock"}, env: map[string]string{"CONTAINER_RUNTIME_ENDPOINT": "unix:///env.sock"}},
		{args: []string{"logs", "--since", "5m", "web"}},
		{args: []string{"-f", "pod.yaml"}, env: map[string]string{"CONTAINER_RUNTIME_ENDPOINT": "unix:///env.sock"}},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		app := newApp(strings.NewReader(""), io.Discard, io.Discard)
		checked := 0
		compare := func(c *cli.Context) error {
			for _, ctx := range c.Lineage() {
				for _, f := range append(appFlags(ctx), commandFlags(ctx)...) {
					for _, n := range f.Names() {
						checked++
						if got, want := isSet(ctx, n), ctx.IsSet(n); got != want {
							t.Errorf("%v: isSet(%q) in the context of %q = %v, urfave's IsSet %v", tc.args, n, ctxName(ctx), got, want)
						}
					}
				}
			}
			return nil
		}
		app.Action = compare
		for _, cmd := range app.Commands {
			cmd.Action = compare
		}
		if err := app.Run(append([]string{"podrun"}, tc.args...)); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if checked == 0 {
			t.Fatalf("%v: no flag compared", tc.args)
		}
		for k := range tc.env {
			os.Unsetenv(k)
		}
	}
}

func commandFlags(ctx *cli.Context) []cli.Flag {
	if ctx.Command == nil {
		return nil
	}
	return ctx.Command.Flags
}

func appFlags(ctx *cli.Context) []cli.Flag {
	if ctx.App == nil {
		return nil
	}
	return slices.Clone(ctx.App.Flags)
}

func ctxName(ctx *cli.Context) string {
	if ctx.Command == nil || ctx.Command.Name == "" {
		return "podrun"
	}
	return ctx.Command.Name
}
