package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/cni"
)

// cniCommand is `podrun cni init`: a default pod network for a fresh node.
// It does not talk to the runtime; its flags name where to write.
func cniCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:            "cni",
		Usage:           "the node's pod network (CNI) configuration",
		HideHelpCommand: true,
		OnUsageError:    func(_ *cli.Context, err error, _ bool) error { return podrunError(err) },
		Subcommands: []*cli.Command{{
			Name: "init",
			Usage: "write a default pod network config for a fresh node: a bridge with host-local IPAM and portmap for hostPorts " +
				"(" + cni.InitFileName + "; never over an existing file)",
			UsageText: "podrun cni init [--cni-conf-dir DIR] [--cni-bin-dir DIR[:DIR...]] [--subnet CIDR] [--bridge NAME]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "cni-conf-dir", Value: cni.DefaultConfDir, Usage: "where to write the config (the runtime's CNI conf dir)"},
				&cli.StringFlag{Name: "cni-bin-dir", Value: cni.DefaultBinDir, Usage: "CNI plugin dirs, colon-separated, where bridge, host-local, portmap and loopback must be"},
				&cli.StringFlag{Name: "subnet", Value: cni.DefaultSubnet, Usage: "the pods' subnet (host-local IPAM), IPv4 or IPv6 CIDR"},
				&cli.StringFlag{Name: "bridge", Value: cni.DefaultBridge, Usage: "the bridge device the pods attach to"},
			},
			OnUsageError: func(_ *cli.Context, err error, _ bool) error { return podrunError(err) },
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return podrunError(fmt.Errorf("unexpected argument %q (see podrun cni init --help)", c.Args().First()))
				}
				path, shadowedBy, err := cni.Init(c.Context, cni.InitOptions{
					ConfDir: c.String("cni-conf-dir"),
					BinDirs: cni.SplitBinDirs(c.String("cni-bin-dir")),
					Subnet:  c.String("subnet"),
					Bridge:  c.String("bridge"),
				})
				if err != nil {
					return podrunError(fmt.Errorf("cni init: %w", err))
				}
				fmt.Fprintf(stdout, "wrote %s\n", path)
				if shadowedBy != "" {
					fmt.Fprintf(stderr, "podrun: warning: %s sorts before it: the runtime uses that one\n", shadowedBy)
				}
				return nil
			},
		}},
	}
}
