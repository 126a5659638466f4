package fake

import (
	"reflect"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestCommandBehavior(t *testing.T) {
	const sec = 10 * time.Millisecond
	for _, tc := range []struct {
		name    string
		command []string
		args    []string
		want    Behavior
	}{
		{"image entrypoint", nil, nil, Behavior{UntilStopped: true}},
		{"server", []string{"nginx", "-g", "daemon off;"}, nil, Behavior{UntilStopped: true}},
		{"true", []string{"true"}, nil, Behavior{}},
		{"false", []string{"/bin/false"}, nil, Behavior{ExitCode: 1}},
		{"sleep in args", []string{"sleep"}, []string{"3"}, Behavior{ExitAfter: 3 * sec}},
		{"sleep infinity", []string{"sleep", "infinity"}, nil, Behavior{UntilStopped: true}},
		{"script", []string{"/bin/sh", "-c"}, []string{"echo hello world; sleep 2 && echo 'bye' >&2; exit 3"}, Behavior{
			Output: []LogLine{
				{Text: "hello world"},
				{Text: "bye", Stream: "stderr", After: 2 * sec},
			},
			ExitAfter: 2 * sec,
			ExitCode:  3,
		}},
		{"quoted separator", []string{"sh", "-c", "echo 'a;b'"}, nil, Behavior{Output: []LogLine{{Text: "a;b"}}}},
		{"trap then serve", []string{"sh", "-c", "trap '' TERM; sleep infinity"}, nil, Behavior{IgnoreSIGTERM: true, UntilStopped: true}},
		{"unknown statement", []string{"sh", "-c", "echo start; exec myserver"}, nil, Behavior{Output: []LogLine{{Text: "start"}}, UntilStopped: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CommandBehavior(&runtimeapi.ContainerConfig{Command: tc.command, Args: tc.args}, sec)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CommandBehavior(%q %q) =\n%+v\nwant\n%+v", tc.command, tc.args, got, tc.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                        "docker.io/library/busybox:latest",
		"busybox:1.36":                   "docker.io/library/busybox:1.36",
		"library/busybox":                "docker.io/library/busybox:latest",
		"docker.io/library/busybox:1.36": "docker.io/library/busybox:1.36",
		"quay.io/coreos/etcd":            "quay.io/coreos/etcd:latest",
		"localhost:5000/app:v1":          "localhost:5000/app:v1",
		"localhost/app":                  "localhost/app:latest",
		"busybox@sha256:abc":             "docker.io/library/busybox@sha256:abc",
		"sha256:abc":                     "sha256:abc",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
