package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/podrun/podrun/runner/podref"
)

func candidateValues(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Value
	}
	return out
}

// TestCompletions: what completes where, with pods from a stub lister.
func TestCompletions(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	// logs and exec take one pod each; stand-ins where they are not (yet)
	// commands of this tree.
	for _, name := range []string{"logs", "exec"} {
		if !slices.ContainsFunc(app.Commands, func(c *cli.Command) bool { return c.Name == name }) {
			app.Commands = append(app.Commands, &cli.Command{Name: name, Usage: name})
		}
	}
	var endpoints, roots []string
	pods := func(q podQuery) []candidate {
		endpoints = append(endpoints, q.Endpoint)
		roots = append(roots, q.Scope.Root)
		return []candidate{{"default/db", "pod"}, {"db", ""}, {"web", ""}, {"default/web", "pod"}}
	}
	for _, tc := range []struct {
		name  string
		words []string
		want  []string
	}{
		{"commands", []string{"c"}, []string{"cp", "cni", "completion"}},
		{"no words", nil, candidateValues(completions(app, []string{""}, pods))},
		{"a command by prefix", []string{"d"}, []string{"down"}},
		{"below a parent", []string{"cni", ""}, []string{"init"}},
		{"nothing after a leaf command", []string{"version", ""}, nil},
		{"no pods for run", []string{"run", ""}, nil},
		{"pods for ps", []string{"ps", ""}, []string{"default/db", "db", "web", "default/web"}},
		{"pods by prefix", []string{"down", "w"}, []string{"web"}},
		{"down takes many, not twice the same", []string{"down", "web", ""}, []string{"default/db", "db", "default/web"}},
		{"logs takes one", []string{"logs", "web", ""}, nil},
		{"exec takes one", []string{"exec", "web", ""}, nil},
		{"exec: its pod", []string{"exec", ""}, []string{"default/db", "db", "web", "default/web"}},
		{"after --", []string{"exec", "web", "--", ""}, nil},
		{"a flag value is not a pod", []string{"ps", "-o", "json", ""}, []string{"default/db", "db", "web", "default/web"}},
		{"flag values", []string{"--wait", ""}, []string{"auto", "complete", "ready", "none"}},
		{"flag values by command", []string{"ps", "--output", "j"}, []string{"json"}},
		{"flag values in the same word", []string{"run", "--wait=c"}, []string{"--wait=complete"}},
		{"file names", []string{"-f", ""}, []string{completeFiles}},
		{"file names after other flags", []string{"-d", "--filename", "x"}, []string{completeFiles}},
		{"no values known", []string{"--node-name", ""}, nil},
		{"flags by prefix", []string{"down", "--all"}, []string{"--all", "--all-roots"}},
		{"a short flag", []string{"ps", "-q"}, []string{"-q"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := candidateValues(completions(app, tc.words, pods)); !slices.Equal(got, tc.want) {
				t.Errorf("completions(%q) = %q, want %q", tc.words, got, tc.want)
			}
		})
	}

	// The endpoint on the command line is the one asked.
	endpoints = nil
	completions(app, []string{"-r", "unix:///a.sock", "ps", ""}, pods)
	completions(app, []string{"ps", "--runtime-endpoint=unix:///b.sock", ""}, pods)
	completions(app, []string{"down", ""}, pods)
	if want := []string{"unix:///a.sock", "unix:///b.sock", ""}; !slices.Equal(endpoints, want) {
		t.Errorf("endpoints asked %q, want %q", endpoints, want)
	}

	// The scope: ps, down and handover complete the pods of the command
	// line's --root-dir (else the default), every root dir's with
	// --all-roots; logs and exec take a pod of any root dir.
	roots = nil
	for _, words := range [][]string{
		{"ps", ""},
		{"--root-dir", "/ci/job1", "down", ""},
		{"down", "--root-dir=/ci/job2", ""},
		{"handover", "--root-dir", "/ci/job3", "--all-roots", ""},
		{"ps", "--all-roots=false", ""},
		{"--root-dir", "/ci/job1", "logs", ""},
		{"exec", ""},
	} {
		completions(app, words, pods)
	}
	if want := []string{"/var/lib/podrun", "/ci/job1", "/ci/job2", "", "/var/lib/podrun", "", ""}; !slices.Equal(roots, want) {
		t.Errorf("root dirs asked %q, want %q", roots, want)
	}
}

func TestPodNameCandidates(t *testing.T) {
	pods := []podref.Ref{
		{Namespace: "default", Name: "web"},
		{Namespace: "default", Name: "web"}, // a second sandbox of the same pod
		{Namespace: "kube-system", Name: "etcd-node1"},
		{Namespace: "default", Name: "db"},
		{Namespace: "team", Name: "db"},
	}
	want := []string{
		"default/db\tpod",
		"default/web\tpod",
		"etcd-node1\tpod in namespace kube-system",
		"kube-system/etcd-node1\tpod",
		"team/db\tpod",
		"web\tpod in namespace default",
	}
	var got []string
	for _, c := range podNameCandidates(pods) {
		got = append(got, c.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("podNameCandidates =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCLICompletePods: podrun __complete lists the pods a detached run left
// on the (fake) runtime, by name and namespace/name, and nothing, silently,
// when no runtime answers.
func TestCLICompletePods(t *testing.T) {
	_, ep := startFake(t)
	root := t.TempDir()
	for _, m := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: c, image: 'busybox:1.28', command: [sleep, infinity]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: db, namespace: team}\nspec:\n  containers:\n  - {name: c, image: 'busybox:1.28', command: [sleep, infinity]}\n",
	} {
		if _, errOut, code := podrunAt(t, ep, "--root-dir", root, "-q", "-d", "-f", writeManifest(t, m)); code != 0 {
			t.Fatalf("podrun -d: exit %d\n%s", code, errOut)
		}
	}
	t.Cleanup(func() { podrunAt(t, ep, "--root-dir", root, "-q", "down", "--all") })

	want := "db\tpod in namespace team\nteam/db\tpod\nweb\tpod in namespace default\ndefault/web\tpod\n"
	for _, words := range [][]string{
		{"ps", "--root-dir", root, ""},
		{"--root-dir=" + root, "down", ""},
		{"handover", "--all-roots", ""},
		{"logs", ""}, // any root dir's pod
	} {
		out, errOut, code := podrunAt(t, ep, append([]string{"__complete", "--"}, words...)...)
		if code != 0 || errOut != "" {
			t.Errorf("%q: exit %d, stderr %q", words, code, errOut)
		}
		if got := sortedLines(out); got != sortedLines(want) {
			t.Errorf("%q: candidates:\n%s\nwant:\n%s", words, out, want)
		}
	}
	// The pods of another root dir (the default one here) are not down's.
	if out, _, _ := podrunAt(t, ep, "__complete", "--", "down", ""); out != "" {
		t.Errorf("down of the default root dir completes pods of another:\n%s", out)
	}

	out, errOut, code := podrunAt(t, "", "__complete", "--", "-r", "unix:///nonexistent/cri.sock", "down", "")
	if out != "" || errOut != "" || code != 0 {
		t.Errorf("without a runtime: stdout %q, stderr %q, exit %d; want nothing and 0", out, errOut, code)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
