package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	checkout := &debug.BuildInfo{Main: debug.Module{Path: "github.com/podrun/podrun", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/podrun/podrun", Version: "v0.4.1"}}
	cases := []struct {
		name            string
		version, commit string
		info            *debug.BuildInfo
		want            builtFrom
	}{
		{"make build: the link-time values", "v0.4.1-3-gfeed", "feedface", checkout, builtFrom{Version: "v0.4.1-3-gfeed", Commit: "feedface"}},
		{"go build in a checkout: the VCS stamp", "", "", checkout, builtFrom{Version: "dev", Commit: "0123abcd", Modified: true}},
		{"go install of a tag: the module version", "", "", installed, builtFrom{Version: "v0.4.1"}},
		{"no build info", "", "", nil, builtFrom{Version: "dev"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := buildVersion(c.version, c.commit, c.info); got != c.want {
				t.Errorf("buildVersion = %+v, want %+v", got, c.want)
			}
		})
	}
	if got := versionLine(builtFrom{Version: "dev", Commit: "0123abcd", Modified: true}); !strings.HasPrefix(got, "podrun dev (commit 0123abcd, modified; go") {
		t.Errorf("versionLine = %q", got)
	}
	if got := versionLine(builtFrom{Version: "v0.4.1"}); !strings.HasPrefix(got, "podrun v0.4.1 (commit unknown; go") {
		t.Errorf("versionLine = %q", got)
	}
}
