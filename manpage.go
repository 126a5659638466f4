package main

// podrun(1), the manual page the Debian package installs
// (hack/release.sh), rendered from the same description of the CLI as
// help and docs/cli.md (describeApp), by the hidden command `podrun man`.

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// manCommand is `podrun man`: podrun(1) in roff on stdout. Hidden: a
// packaging step, not a user's command.
func manCommand(stdout io.Writer) *cli.Command {
	return &cli.Command{
		Name: "man", Hidden: true, Usage: "print the podrun(1) manual page (roff), as the Debian package installs it",
		UsageText: `podrun man

# read it without installing it
podrun man | man -l -`,
		Action: func(c *cli.Context) error {
			writeMan(stdout, describeApp(c.App), versionLine(buildVersion(version, commit, nil)))
			return nil
		},
	}
}

// writeMan writes root, podrun and its commands, as a man page of section
// 1; source is the footer's source line (podrun's version).
func writeMan(w io.Writer, root commandDoc, source string) {
	fmt.Fprintf(w, ".TH PODRUN 1 \"\" %s \"User Commands\"\n", manQuote(source))
	fmt.Fprintf(w, ".SH NAME\npodrun \\- %s\n", manText(root.Usage))
	fmt.Fprintf(w, ".SH SYNOPSIS\n.nf\n")
	for _, s := range root.Synopsis {
		fmt.Fprintln(w, manText(s))
	}
	fmt.Fprintf(w, ".fi\n")
	fmt.Fprintf(w, ".SH COMMANDS\n")
	for _, c := range root.Commands {
		fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", manText(c.Path), manText(c.Usage))
	}
	fmt.Fprintf(w, ".SH OPTIONS\n")
	writeManFlags(w, root.Flags)
	manExamples(w, ".SH EXAMPLES", root.Examples)
	for _, c := range root.Commands {
		fmt.Fprintf(w, ".SH %s\n%s\n", manQuote(strings.ToUpper(c.Path)), manText(c.Usage))
		fmt.Fprintf(w, ".PP\n.nf\n")
		for _, s := range c.Synopsis {
			fmt.Fprintln(w, manText(s))
		}
		fmt.Fprintf(w, ".fi\n")
		writeManFlags(w, c.Flags)
		manExamples(w, ".SS Examples", c.Examples)
	}
	// podrun's description is its exit statuses (exitStatusHelp), laid out.
	fmt.Fprintf(w, ".SH \"EXIT STATUS\"\n.nf\n%s\n.fi\n", manText(strings.TrimPrefix(root.Description, "Exit status:\n")))
	fmt.Fprintf(w, ".SH \"SEE ALSO\"\nkubectl(1), crictl(1), kubelet(8), systemd.service(5); docs/ in podrun's source: https://github.com/podrun/podrun\n")
}

// writeManFlags writes flag groups as tagged paragraphs under a
// subsection per category.
func writeManFlags(w io.Writer, groups []flagGroup) {
	for _, g := range groups {
		fmt.Fprintf(w, ".SS %s\n", manQuote(g.Category+" flags"))
		for _, f := range g.Flags {
			usage := f.Usage
			if f.Default != "" {
				usage += " (default: " + f.Default + ")"
			}
			if len(f.Env) > 0 {
				usage += " [$" + strings.Join(f.Env, ", $") + "]"
			}
			fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", manText(f.Synopsis), manText(usage))
		}
	}
}

// manExamples writes examples, a "# comment" line above its command, as
// an unfilled block under heading.
func manExamples(w io.Writer, heading string, examples []string) {
	if len(examples) == 0 {
		return
	}
	fmt.Fprintf(w, "%s\n.nf\n", heading)
	for _, e := range examples {
		fmt.Fprintln(w, manText(e))
	}
	fmt.Fprintf(w, ".fi\n")
}

// manText escapes text for roff: backslashes, hyphens (as minus signs,
// which option names need to be copied from a terminal), and lines that
// would start with a control character.
func manText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// manQuote is s as one roff argument.
func manQuote(s string) string {
	return `"` + strings.ReplaceAll(manText(s), `"`, `""`) + `"`
}
