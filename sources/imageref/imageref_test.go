package imageref

import (
	"regexp"
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

// referenceRegexp is distribution/reference's grammar as a regular
// expression: the model the hand-written split is checked against.
var referenceRegexp = func() *regexp.Regexp {
	const (
		component = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
		label     = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain    = `(?:` + label + `(?:\.` + label + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
		name      = `(?:` + domain + `/)?` + component + `(?:/` + component + `)*`
		tag       = `[\w][\w.-]{0,127}`
		digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(` + name + `)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
}()

var identifierRegexp = regexp.MustCompile(`^[a-f0-9]{64}$`)

// checkSplit compares split and isIdentifier with the regular expressions.
func checkSplit(t *testing.T, s string) {
	t.Helper()
	name, tag, digest, ok := split(s)
	m := referenceRegexp.FindStringSubmatch(s)
	if ok != (m != nil) || ok && (name != m[1] || tag != m[2] || digest != m[3]) {
		t.Errorf("split(%q) = %q, %q, %q, %v; the grammar's expression finds %q", s, name, tag, digest, ok, m)
	}
	if got, want := isIdentifier(s), identifierRegexp.MatchString(s); got != want {
		t.Errorf("isIdentifier(%q) = %v, want %v", s, got, want)
	}
}

var splitSeeds = []string{
	"docker.io/library/busybox", "docker.io/library/busybox:1.36", "a", "a:b", "a@sha256:" + strings.Repeat("a", 64),
	"a:b@sha256:" + strings.Repeat("F", 32), "127.0.0.1:35444/private/busybox:1.0", "[::1]:5000/app:v1", "[::1]/app",
	"[]/app", "[::1]:/app", "host:/app", "Registry.Example.com/app", "reg-1.io/a/b/c", "-reg.io/a", "reg-.io/a",
	"a..b/c", "a/b__c", "a/b___c", "a/b--c", "a/b-", "a/_b", "a/b.c_d-e", "a/b/", "/a", "a//b", "a:b/c", "a/b:c/d",
	"a:" + strings.Repeat("t", 128), "a:" + strings.Repeat("t", 129), "a:.t", "a:_t", "a:t.-_", "a@", "a@sha256:",
	"a@sha256:" + strings.Repeat("g", 32), "a@sha256:" + strings.Repeat("a", 31), "a@s-h.a+2_5:" + strings.Repeat("a", 32),
	"a@-s:" + strings.Repeat("a", 32), "a@s-:" + strings.Repeat("a", 32), "a@1s:" + strings.Repeat("a", 32), "a@b@c",
	"A", "a:b:c", "reg:5000:6000/a", "reg.io:50a/a", strings.Repeat("a", 64), strings.Repeat("A", 64), "",
}

func TestSplitMatchesTheGrammar(t *testing.T) {
	for _, s := range splitSeeds {
		checkSplit(t, s)
	}
}

// FuzzSplit checks the hand-written reference parser against the grammar
// as a regular expression, on any string.
func FuzzSplit(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add(s)
	}
	f.Fuzz(checkSplit)
}
