package main

import (
	"reflect"
	"testing"
)

func TestExecArgs(t *testing.T) {
	cases := []struct {
		args []string
		pod  string
		cmd  []string
		err  string
	}{
		{args: []string{"web", "--", "sh", "-c", "exit 3"}, pod: "web", cmd: []string{"sh", "-c", "exit 3"}},
		{args: []string{"shop/web", "--", "--", "x"}, pod: "shop/web", cmd: []string{"--", "x"}},
		{args: nil, err: "name the pod to run the command in (NAME, NAMESPACE/NAME or UID), then -- COMMAND"},
		{args: []string{"web"}, err: "you must specify at least one command for the container: podrun exec POD -- COMMAND [ARG...]"},
		{args: []string{"web", "ls", "/"}, err: "the command goes after --: podrun exec web -- ls /"},
		{args: []string{"web", "--"}, err: "you must specify at least one command for the container after --"},
	}
	for _, tc := range cases {
		pod, cmd, err := execArgs(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("execArgs(%q): err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || pod != tc.pod || !reflect.DeepEqual(cmd, tc.cmd) {
			t.Errorf("execArgs(%q) = %q %q %v", tc.args, pod, cmd, err)
		}
	}
}
