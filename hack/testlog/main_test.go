package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, c := range []struct {
		name, in string
		code     int
		want     []string
		not      []string
	}{
		{
			name: "a failed subtest's messages are repeated at the end",
			in: `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: only a log\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    b_test.go:4: bad thing\n"}
{"Action":"output","Package":"p","Test":"TestB/sub","Output":"        line2\n"}
{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    --- FAIL: TestB/sub (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestB/sub"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.003s\n"}
{"Action":"fail","Package":"p"}
`,
			code: 1,
			want: []string{"--- PASS: TestA", "==== TestB/sub\n    b_test.go:4: bad thing\n        line2\n", "==== failed: TestB/sub TestB"},
			not:  []string{"only a log", "=== RUN"},
		},
		{
			name: "all passed",
			in: `{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.003s\n"}
{"Action":"pass","Package":"p"}
`,
			code: 0,
			want: []string{"--- PASS: TestA", "ok  \tp"},
			not:  []string{"===="},
		},
		{
			name: "no package result (killed) is a failure; non-JSON passes through",
			in:   "# p\n./a.go:1: syntax error\n",
			code: 1,
			want: []string{"./a.go:1: syntax error"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, full strings.Builder
			if code := run(strings.NewReader(c.in), &out, &full); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range c.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
