package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/podrun/podrun/sources"
)

// cliReference is the generated CLI reference.
const cliReference = "docs/cli.md"

// regenerateCLIReference is the command that writes docs/cli.md anew.
const regenerateCLIReference = "go test -run TestCLIReference . -update"

// TestCLIReference fails when docs/cli.md is not what the CLI definition
// gives now; with -update it writes it.
func TestCLIReference(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var b strings.Builder
	writeReference(&b, describeApp(app))
	want := b.String()
	if *updateScripts {
		if err := os.WriteFile(cliReference, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(cliReference)
	if err != nil || string(got) != want {
		t.Errorf("%s is stale (or missing: %v): the CLI changed. Regenerate it with\n\t%s\nand commit it.", cliReference, err, regenerateCLIReference)
	}
}

// writeReference renders the CLI reference as Markdown: podrun, then every
// command (hidden ones left out), each with its synopsis, examples and
// flags by category.
func writeReference(w io.Writer, root commandDoc) {
	fmt.Fprintf(w, "# podrun command line reference\n\n")
	fmt.Fprintf(w, "<!-- Generated from the CLI definition (main.go, cmd_*.go) by `%s`. Do not edit: TestCLIReference fails when it is stale. -->\n\n", regenerateCLIReference)
	fmt.Fprintf(w, "%s: %s.\n\n", root.Path, root.Usage)
	docs := append([]commandDoc{root}, root.Commands...)
	for _, d := range docs {
		fmt.Fprintf(w, "- [`%s`](#%s): %s\n", d.Path, anchor(d.Path), d.Usage)
	}
	fmt.Fprintf(w, "\nExit statuses: [exit-status.md](exit-status.md).\n")
	var takePods []string
	for _, d := range root.Commands {
		if _, ok := podArgCommands[strings.TrimPrefix(d.Path, "podrun ")]; ok {
			takePods = append(takePods, fmt.Sprintf("[`%s`](#%s)", d.Path, anchor(d.Path)))
		}
	}
	fmt.Fprintf(w, "\nCommands that take pods (POD: NAME, NAMESPACE/NAME or UID): %s. Their flags may come before "+
		"or after POD, as kubectl's do, and `podrun completion` completes POD with the names of podrun's pods.\n",
		strings.Join(takePods, ", "))
	for _, d := range docs {
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n```\n%s\n```\n", d.Path, d.Usage, strings.Join(d.Synopsis, "\n"))
		if d.Description != "" && d.Path != "podrun" {
			fmt.Fprintf(w, "\n%s\n", docLinks(d.Description))
		}
		if len(d.Examples) > 0 {
			fmt.Fprintf(w, "\nExamples:\n\n```sh\n")
			for i, l := range d.Examples {
				if i > 0 && strings.HasPrefix(l, "#") && !strings.HasPrefix(d.Examples[i-1], "#") {
					fmt.Fprintln(w)
				}
				fmt.Fprintln(w, l)
			}
			fmt.Fprintf(w, "```\n")
		}
		for _, g := range d.Flags {
			fmt.Fprintf(w, "\n### %s flags\n\n| flag | default | meaning |\n|---|---|---|\n", g.Category)
			for _, f := range g.Flags {
				def := ""
				if f.Default != "" {
					def = "`" + f.Default + "`"
				}
				usage := docLinks(mdCell(f.Usage))
				if len(f.Env) > 0 {
					usage += " (env: `$" + strings.Join(f.Env, "`, `$") + "`)"
				}
				fmt.Fprintf(w, "| `%s` | %s | %s |\n", f.Synopsis, def, usage)
			}
		}
	}
}

// docPath is a mention of a page of docs/ in help text.
var docPath = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)\b`)

// docLinks makes the mentions of docs/ pages links, relative to cli.md.
func docLinks(s string) string { return docPath.ReplaceAllString(s, "[$1]($1)") }

// anchor is the GitHub anchor of a "## TITLE" heading.
func anchor(title string) string {
	return strings.ReplaceAll(strings.ToLower(title), " ", "-")
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_").Replace(s)
}

// TestREADMEExamples: the README's manifest decodes and validates as
// podrun would run it, and its podrun command lines name commands and
// flags that exist.
func TestREADMEExamples(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, rest, ok := strings.Cut(readme, "```yaml\n")
	manifest, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```yaml block")
	}
	path := writeManifest(t, manifest)
	set, err := sources.Load(context.Background(), []string{path}, sources.Options{NodeName: "node1"})
	if err != nil || len(set.Pods) != 1 {
		t.Fatalf("the README's manifest: %v (%d pods)", err, len(set.Pods))
	}
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	n := 0
	for _, line := range strings.Split(readme, "\n") {
		line = strings.TrimSpace(line)
		if line, _, _ = strings.Cut(line, "#"); !strings.HasPrefix(line, "podrun ") {
			continue
		}
		n++
		if err := checkExample(app, line); err != nil {
			t.Errorf("README.md: %q: %v", line, err)
		}
	}
	if n < 4 {
		t.Errorf("README.md has %d podrun command lines, want its CI step and bootstrap examples", n)
	}
}
