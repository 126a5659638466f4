//go:build e2e

package e2e

// Artifacts end to end (docs/artifacts.md): --copy-out brings back what
// an exited container wrote to its emptyDir (a subPath of it too),
// without following the symlinks it planted out of the volume; a copy
// that fails is an event, or exit 125 with --copy-out-required; podrun cp
// copies out of a running container through tar and exec, skipping
// symlinks.

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hostTree lists dir: "rel/" for dirs, "rel MODE" for files, "rel -> ..."
// for anything else; and the files' contents.
func hostTree(t *testing.T, dir string) ([]string, map[string]string) {
	t.Helper()
	var entries []string
	contents := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
		case fi.IsDir():
			entries = append(entries, rel+"/")
		case fi.Mode().IsRegular():
			entries = append(entries, rel+" "+fi.Mode().Perm().String())
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			contents[rel] = string(b)
		default:
			entries = append(entries, rel+" -> "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(entries)
	return entries, contents
}

func TestE2ECopyOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-copyout-" + randomSuffix(t)
	job := fromTemplate(t, "artifacts/job.yaml", "NAME", name)
	dir := t.TempDir()
	artifacts, reports := filepath.Join(dir, "artifacts"), filepath.Join(dir, "reports")

	r := e.runPodrun([]string{"--copy-out", "tests:/out=" + artifacts, "--copy-out", name + "/tests:/reports=" + reports, "-f", job}, "")
	expectCode(t, r, 0)
	entries, contents := hostTree(t, artifacts)
	// The subPath is a dir of the same volume.
	want := []string{"logs/", "logs/run.log -rw-------", "report.xml -rw-r--r--", "reports/", "reports/summary.txt -rw-r--r--"}
	if strings.Join(entries, ",") != strings.Join(want, ",") {
		t.Errorf("copied %q, want %q\n%s", entries, want, r)
	}
	if contents["report.xml"] != "<testsuites tests=\"1\"/>\n" || contents["logs/run.log"] != "a log line\n" {
		t.Errorf("contents %q", contents)
	}
	if _, c := hostTree(t, reports); c["summary.txt"] != "from the subpath\n" {
		t.Errorf("the subPath's copy: %q", c)
	}
	expectHasLines(t, r.stderr,
		"pod/"+name+": CopiedOut: /out of container tests into "+artifacts+": 3 files, 52 bytes; skipped 2: root (a symlink to /, not followed), shadow (a symlink to /etc/shadow, not followed)",
		"pod/"+name+": CopiedOut: /reports of container tests into "+reports+": 1 file, 17 bytes",
	)

	// A path through the symlink to / is not followed: the copy fails,
	// writes nothing, and the run still succeeds unless told otherwise.
	shadow, etc := filepath.Join(dir, "shadow"), filepath.Join(dir, "etc")
	r = e.runPodrun([]string{"--copy-out", "tests:/out/shadow=" + shadow, "--copy-out", "tests:/out/root/etc=" + etc, "-f", job}, "")
	expectCode(t, r, 0)
	expectHasLines(t, r.stderr,
		"pod/"+name+": CopyOutFailed: copying /out/shadow of container tests into "+shadow+": the path leads out of the volume through a symlink, which is not followed",
		"pod/"+name+": CopyOutFailed: copying /out/root/etc of container tests into "+etc+": the path leads out of the volume through a symlink, which is not followed",
	)
	for _, d := range []string{shadow, etc} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed copy: %v", d, err)
		}
	}

	// --copy-out-required: a failed copy fails the run.
	missing := filepath.Join(dir, "missing")
	r = e.runPodrun([]string{"-q", "--copy-out-required", "--copy-out", "tests:/out/nothing.xml=" + missing, "-f", job}, "")
	expectCode(t, r, 125)
	// The error names the pod where its manifest was read, as every error
	// about a pod does.
	if want := ": pod default/" + name + ": --copy-out tests:/out/nothing.xml=" + missing + ": copying /out/nothing.xml of container tests into " +
		missing + ": no such file or directory on the volume\n"; !strings.HasPrefix(r.stderr, "podrun: ") || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("stderr %q, want ...%q", r.stderr, want)
	}
	// Nothing of the pods is left (newEnv's cleanliness check).
}

func TestE2ECp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := "e2e-cp-" + randomSuffix(t)
	e.downOnCleanup(name)
	expectCode(t, e.runPodrun([]string{"-q", "-d", "-f", fromTemplate(t, "artifacts/web.yaml", "NAME", name)}, ""), 0)
	r := e.runPodrun([]string{"exec", name, "-c", "app", "--", "sh", "-c",
		"mkdir -p /srv/r/sub && echo hello > /srv/r/a.txt && chmod 640 /srv/r/a.txt && echo b > /srv/r/sub/b && " +
			"ln -s /etc/shadow /srv/r/shadow && ln -s ../a.txt /srv/r/sub/rel && ln /srv/r/a.txt /srv/r/hard"}, "")
	expectCode(t, r, 0)

	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	r = e.runPodrun([]string{"cp", name + ":/srv/r", out}, "")
	expectCode(t, r, 0)
	entries, contents := hostTree(t, out)
	if want := []string{"a.txt -rw-r-----", "hard -rw-r-----", "sub/", "sub/b -rw-r--r--"}; strings.Join(entries, ",") != strings.Join(want, ",") {
		t.Errorf("copied %q, want %q\n%s", entries, want, r)
	}
	if contents["a.txt"] != "hello\n" || contents["hard"] != "hello\n" || contents["sub/b"] != "b\n" {
		t.Errorf("contents %q", contents)
	}
	expectHasLines(t, r.stderr, // the warnings in tar's order
		`Defaulted container "app" out of: app, side`,
		"warning: skipped shadow (a symlink to /etc/shadow, not followed)",
		"warning: skipped sub/rel (a symlink to ../a.txt, not followed)",
	)

	// One file, of the other container, flags after the arguments: into
	// the host dir under its name.
	r = e.runPodrun([]string{"cp", "default/" + name + ":/etc/hostname", dir, "-c", "side"}, "")
	expectCode(t, r, 0)
	if b, err := os.ReadFile(filepath.Join(dir, "hostname")); err != nil || string(b) != name+"\n" {
		t.Errorf("hostname: %q, %v\n%s", b, err, r)
	}
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}

	// What tar says of a path that is not there; nothing is made.
	r = e.runPodrun([]string{"cp", "-q", name + ":/nope", filepath.Join(dir, "none")}, "")
	expectCode(t, r, 125)
	expectMatch(t, r.stderr, `^podrun: copying /nope of container app of pod default/`+name+`: tar in the container exited with code 1: tar: nope: No such file or directory`)
	if _, err := os.Lstat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("none exists after a failed copy: %v", err)
	}
	// --limit: the copy stops there.
	r = e.runPodrun([]string{"cp", "-q", name + ":/srv/r", filepath.Join(dir, "limited"), "--limit", "4"}, "")
	expectCode(t, r, 125)
	expectMatch(t, r.stderr, `over the size limit: \S+ would take the copy over 4 bytes`)
	// A pod that is not there.
	r = e.runPodrun([]string{"cp", "e2e-cp-none:/srv", dir}, "")
	expectCode(t, r, 125)
}
