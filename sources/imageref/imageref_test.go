package imageref

import (
	"strings"
	"testing"
)

func TestParseRepository(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "busybox", want: "docker.io/library/busybox"},
		{in: "busybox:1.36", want: "docker.io/library/busybox"},
		{in: "someone/app", want: "docker.io/someone/app"},
		{in: "docker.io/app", want: "docker.io/library/app"},
		{in: "index.docker.io/someone/app:1", want: "docker.io/someone/app"},
		{in: "localhost/app", want: "localhost/app"},
		{in: "127.0.0.1:35444/private/busybox:1.0", want: "127.0.0.1:35444/private/busybox"},
		{in: "quay.io/coreos/etcd@sha256:" + strings.Repeat("a", 64), want: "quay.io/coreos/etcd"},
		{in: "Registry.Example.com/app", want: "Registry.Example.com/app"},
		{in: "[::1]:5000/app:v1", want: "[::1]:5000/app"},
		{in: "<your-private-image>", err: "invalid reference format"},
		{in: "", err: "invalid reference format"},
		{in: "Busybox", err: "must be lowercase"},
		{in: "reg.io/Team/app", err: "must be lowercase"},
		{in: strings.Repeat("a", 64), err: "cannot specify 64-byte hexadecimal strings"},
		{in: "app@sha256:abc", err: "invalid reference format"},
		{in: "app@md5:" + strings.Repeat("a", 32), err: "unsupported digest algorithm"},
		{in: "app@sha256:" + strings.Repeat("a", 63) + "A", err: "invalid checksum digest format"},
		{in: "reg.io/" + strings.Repeat("a", 250), err: "more than 255 characters"},
		{in: "app:", err: "invalid reference format"},
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		got := r.Repository
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "couldn't parse image name ") {
				t.Errorf("Parse(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
		case err != nil || got != tt.want:
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestImageWithDefaultTag(t *testing.T) {
	cases := []struct{ in, want string }{
		{"busybox", "busybox:latest"},
		{"library/busybox", "library/busybox:latest"},
		{"docker.io/library/busybox", "docker.io/library/busybox:latest"},
		{"busybox:1.36", "busybox:1.36"},
		{"127.0.0.1:5000/x", "127.0.0.1:5000/x:latest"},
		{"127.0.0.1:5000/x:v1", "127.0.0.1:5000/x:v1"},
		{"localhost:5000/team/app", "localhost:5000/team/app:latest"},
		{"busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{"busybox:1.36@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "busybox:1.36@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	}
	for _, tc := range cases {
		if got := WithDefaultTag(tc.in); got != tc.want {
			t.Errorf("WithDefaultTag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTag(t *testing.T) {
	cases := []struct{ in, want string }{
		{"busybox", "latest"},
		{"busybox:1.36", "1.36"},
		{"reg.io:5000/team/app:v1", "v1"},
		{"busybox@sha256:" + strings.Repeat("a", 64), ""},
		{"busybox:1.36@sha256:" + strings.Repeat("a", 64), "1.36"},
		{"Busybox", ""},
		{"app@sha256:abc", ""},
		{strings.Repeat("a", 64), ""},
	}
	for _, tc := range cases {
		if got := Tag(tc.in); got != tc.want {
			t.Errorf("Tag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
