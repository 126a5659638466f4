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
		Name:  "cni",
		Usage: "the node's pod network (CNI) configuration",
		UsageText: `podrun cni COMMAND [flags]

# write the default pod network config of a fresh node
podrun cni init`,
		Subcommands: []*cli.Command{{
			Name: "init",
			Usage: "write a default pod network config for a fresh node: a bridge with host-local IPAM and portmap for hostPorts " +
				"(" + cni.InitFileName + "; never over an existing file)",
			UsageText: `podrun cni init [--cni-conf-dir DIR] [--cni-bin-dir DIR[:DIR...]] [--subnet CIDR] [--bridge NAME]

# a bridge cni0 for pods on 10.88.0.0/16, in /etc/cni/net.d
podrun cni init
# another subnet and bridge
podrun cni init --subnet 10.42.0.0/16 --bridge podrun0`,
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "cni-conf-dir", Value: cni.DefaultConfDir, Category: catNetwork, TakesFile: true, Usage: "`DIR` to write the config to (the runtime's CNI conf dir)"},
				&cli.StringFlag{Name: "cni-bin-dir", Value: cni.DefaultBinDir, Category: catNetwork, TakesFile: true, Usage: "CNI plugin `DIRS`, colon-separated, where bridge, host-local, portmap and loopback must be"},
				&cli.StringFlag{Name: "subnet", Value: cni.DefaultSubnet, Category: catNetwork, Usage: "the pods' subnet (host-local IPAM), IPv4 or IPv6 `CIDR`"},
				&cli.StringFlag{Name: "bridge", Value: cni.DefaultBridge, Category: catNetwork, Usage: "`NAME` of the bridge device the pods attach to"},
			},
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
