package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// versionCommand is `podrun version`.
func versionCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name: "version", Usage: "print podrun's version",
		UsageText: `podrun version

# podrun's version, with the Go version and platform it was built with
podrun version`,
		Action: func(c *cli.Context) error {
			fmt.Fprintf(stdout, "podrun %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
