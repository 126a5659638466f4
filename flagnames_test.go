package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Every flag of every command keeps its names once, and is to the library
// what the flag inside it is: the same names, the same interfaces, the same
// help line.
func TestFlagsKeepTheirNames(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(path string, flags []cli.Flag, cmds []*cli.Command)
	n := 0
	walk = func(path string, flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			n++
			inner := unwrapFlag(f)
			if inner == f {
				t.Errorf("%s: flag %v (%T) does not keep its names", path, f.Names(), f)
				continue
			}
			if got, want := f.Names(), inner.Names(); !slices.Equal(got, want) {
				t.Errorf("%s: names %v, the library's %v", path, got, want)
			}
			if got, want := f.String(), inner.String(); got != want {
				t.Errorf("%s %v: help line %q, the library's %q", path, f.Names(), got, want)
			}
			for _, is := range []struct {
				name string
				of   func(cli.Flag) bool
			}{
				{"ActionableFlag", func(f cli.Flag) bool { _, ok := f.(cli.ActionableFlag); return ok }},
				{"RequiredFlag", func(f cli.Flag) bool { _, ok := f.(cli.RequiredFlag); return ok }},
				{"VisibleFlag", func(f cli.Flag) bool { _, ok := f.(cli.VisibleFlag); return ok }},
				{"CategorizableFlag", func(f cli.Flag) bool { _, ok := f.(cli.CategorizableFlag); return ok }},
				{"DocGenerationFlag", func(f cli.Flag) bool { _, ok := f.(cli.DocGenerationFlag); return ok }},
			} {
				if is.of(f) != is.of(inner) {
					t.Errorf("%s %v: %s %v, the library's flag %v", path, f.Names(), is.name, is.of(f), is.of(inner))
				}
			}
			// The category: podrun's help's, hidden from the library's
			// Setup (flagnames.go).
			if cf, ok := inner.(cli.CategorizableFlag); !ok || flagCategory(f) != cf.GetCategory() || flagCategory(f) == "" {
				t.Errorf("%s %v: category %q, the library's flag's %v", path, f.Names(), flagCategory(f), inner)
			}
			if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() != "" {
				t.Errorf("%s %v: the library sees the category %q: App.Setup renders the flag's help line on every run", path, f.Names(), cf.GetCategory())
			}
			if takesValue(f) != takesValue(inner) {
				t.Errorf("%s %v: takes a value %v, the library's flag %v", path, f.Names(), takesValue(f), takesValue(inner))
			}
		}
		for _, c := range cmds {
			walk(path+" "+c.Name, c.Flags, c.Subcommands)
		}
	}
	walk("podrun", app.Flags, app.Commands)
	if n < 100 {
		t.Errorf("walked %d flags; podrun's commands have more", n)
	}
}

// The names are the library's at the time of wrapping, aliases included.
func TestWithNamesOnce(t *testing.T) {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "tty", Aliases: []string{"t"}},
		&cli.StringFlag{Name: "root-dir"},
		&cli.StringSliceFlag{Name: "filename", Aliases: []string{"f"}},
		&cli.DurationFlag{Name: "timeout"},
		&cli.Int64Flag{Name: "tail"},
		&cli.GenericFlag{Name: "output", Aliases: []string{"o"}, Value: new(dryRunValue)},
		dryRunFlag(),
		&cli.IntFlag{Name: "n"}, // a kind not wrapped: left as it is
	}
	got := withNamesOnce(flags)
	want := [][]string{{"tty", "t"}, {"root-dir"}, {"filename", "f"}, {"timeout"}, {"tail"}, {"output", "o"}, {"dry-run"}, {"n"}}
	for i, f := range got {
		if !slices.Equal(f.Names(), want[i]) {
			t.Errorf("flag %d: names %v, want %v", i, f.Names(), want[i])
		}
		if wrapped := unwrapFlag(f) != f; wrapped != (i < 7) {
			t.Errorf("flag %d (%T): wrapped %v", i, f, wrapped)
		}
	}
	if takesValue(got[6]) {
		t.Errorf("--dry-run takes a value once wrapped; alone it does not")
	}
	// Wrapping twice changes nothing.
	again := withNamesOnce(got)
	for i := range got {
		if again[i] != got[i] {
			t.Errorf("flag %d wrapped again", i)
		}
	}
}
