package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version and commit are set at build time by `make build` and `make
// release` (-ldflags "-X main.version=... -X main.commit=..."). Left
// empty, as under `go install github.com/podrun/podrun@VERSION`, they
// come from the module's build info (buildVersion).
var version, commit string

// versionCommand is `podrun version`.
func versionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name: "version", Usage: "print podrun's version and the commit it was built from",
		UsageText: `podrun version

# podrun's version and commit, with the Go version and platform it was built with
podrun version`,
		Action: func(c *cli.Context) error {
			info, _ := debug.ReadBuildInfo()
			fmt.Fprintln(stdout, versionLine(buildVersion(version, commit, info)))
			return nil
		},
	}
}

// builtFrom is what podrun was built from.
type builtFrom struct {
	Version  string // a tag (v0.3.0), a git describe, or "dev"
	Commit   string // "" when unknown
	Modified bool   // built from a tree with changes not committed
}

// buildVersion is the version and commit given at link time, else what
// the Go toolchain recorded in the binary: the module's version (a `go
// install` of a tag or pseudo-version) and the VCS revision of a build in
// a checkout ("(devel)" is no version: "dev").
func buildVersion(version, commit string, info *debug.BuildInfo) builtFrom {
	b := builtFrom{Version: version, Commit: commit}
	if info == nil {
		if b.Version == "" {
			b.Version = "dev"
		}
		return b
	}
	if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	if b.Commit == "" {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// versionLine is `podrun version`'s output.
func versionLine(b builtFrom) string {
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	}
	if b.Modified {
		commit += ", modified"
	}
	return fmt.Sprintf("podrun %s (commit %s; %s %s/%s)", b.Version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
