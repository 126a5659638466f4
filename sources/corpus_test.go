package sources

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds the kubernetes/website examples (see its README.md).
const corpusDir = "../../shared/corpus/website"

// corpusFailures are the corpus files that must not load, each with a
// string the error must contain. Every other file must load.
var corpusFailures = map[string]string{
	// Historical revision: a TAB before a duplicate env key.
	"pods/inject/pod-multiple-secret-env-variable.yaml": "document 1: parsing: yaml:",
	// Historical revision without apiVersion.
	"pods/inject/pod-single-secret-env-variable.yaml": `(Pod "secret-envars-test-pod"): apiVersion: Required value`,
	// Historical revision: required node affinity written as a list.
	"pods/pod-with-node-affinity.yaml": "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: expected object, got array",
	// cgroupOptions is not in k8s.io/api v0.37.
	"pods/security/security-context-7.yaml": `(Pod "security-context-demo-7"): spec.containers[0].securityContext.cgroupOptions: unknown field`,
	// ephemeralContainers cannot be set on create.
	"pods/security/seccomp/fields.yaml": "spec.ephemeralContainers: Forbidden: cannot be set on create",
	// A seccomp profile, not a Kubernetes object.
	"pods/security/seccomp/profiles/violation.json": "document 1: kind: Required value",
}

func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var files []string
	err := filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d corpus files", len(files))
	}
	seen := map[string]bool{}
	for _, path := range files {
		rel, _ := filepath.Rel(corpusDir, path)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		t.Run(rel, func(t *testing.T) {
			set, err := Load(context.Background(), []string{path}, Options{NodeName: "node1"})
			want, mustFail := corpusFailures[rel]
			switch {
			case mustFail && err == nil:
				t.Fatalf("loaded, want an error containing %q", want)
			case mustFail && !strings.Contains(err.Error(), want):
				t.Fatalf("error %q does not contain %q", err, want)
			case !mustFail && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case !mustFail && set.len() == 0:
				t.Fatal("no objects")
			}
		})
	}
	for rel := range corpusFailures {
		if !seen[rel] {
			t.Errorf("expected failure %s is not in the corpus", rel)
		}
	}
}
