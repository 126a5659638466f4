package sources

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds the kubernetes/website examples (see its README.md): the
// shared checkout beside the clone, read in place.
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
	// Lt and Gt are the alpha TaintTolerationComparisonOperators: refused
	// with the API server's default gates, as kubelet v1.37.2 refuses it.
	"pods/pod-with-numeric-toleration.yaml": `spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"`,
	// pids is not a resource name the API knows, at pod level or in a
	// container (kubelet v1.37.2 refuses it).
	"pods/resource/pod-level-pid-limit.yaml": `spec.resources.limits[pids]: Invalid value: "pids": must be a standard resource type or fully qualified`,
	// A seccomp profile, not a Kubernetes object.
	"pods/security/seccomp/profiles/violation.json": "document 1: kind: Required value",
}

// corpusChecks look closer at a few corpus files that load.
var corpusChecks = map[string]func(t *testing.T, s *Set){
	"pods/pod-rs.yaml": func(t *testing.T, s *Set) {
		if got := strings.Join(podNames(s), " "); got != "pod1 pod2" {
			t.Errorf("pods %q, want pod1 pod2", got)
		}
	},
	"configmap/configmaps.yaml": func(t *testing.T, s *Set) {
		if len(s.ConfigMaps) != 2 || s.ConfigMaps[0].Data["special.how"] != "very" || s.ConfigMaps[1].Origin.Doc != 2 {
			t.Errorf("configmaps %+v", s.ConfigMaps)
		}
	},
	"pods/config/example-redis-config.yaml": func(t *testing.T, s *Set) {
		if got, want := s.ConfigMaps[0].Data["redis-config"], "maxmemory 2mb\nmaxmemory-policy allkeys-lru\n"; got != want {
			t.Errorf("redis-config %q, want %q", got, want)
		}
	},
	"admin/logging/two-files-counter-pod.yaml": func(t *testing.T, s *Set) {
		args := s.Pods[0].Spec.Containers[0].Args
		if len(args) != 3 || !strings.HasPrefix(args[2], "i=0; while true; do\n  echo") || !strings.HasSuffix(args[2], "done\n") {
			t.Errorf("args %q", args)
		}
	},
	"pods/emptydir-volume-mode.yaml": func(t *testing.T, s *Set) {
		v := s.Pods[0].Spec.Volumes[0].EmptyDir
		if v == nil || v.Mode == nil || *v.Mode != 0o1777 {
			t.Errorf("emptyDir %+v, want mode 01777", v)
		}
	},
	"pods/inject/secret.yaml": func(t *testing.T, s *Set) {
		if got := string(s.Secrets[0].Data["password"]); got != "39528$vdg7Jb" {
			t.Errorf("password %q", got)
		}
	},
	"pods/private-reg-pod.yaml": func(t *testing.T, s *Set) {
		// An unparsable image is the runtime's problem (InvalidImageName).
		if got := s.Pods[0].Spec.Containers[0].ImagePullPolicy; got != "IfNotPresent" {
			t.Errorf("imagePullPolicy %s", got)
		}
	},
}

func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		abs, _ := filepath.Abs(corpusDir)
		t.Fatalf("the corpus is not at %s: %v\n"+
			"It is the shared checkout beside the clone (../shared/corpus/website from the repo root), as CI has it; put it there.", abs, err)
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
			if check := corpusChecks[rel]; check != nil {
				check(t, set)
			}
		})
	}
	for rel := range corpusFailures {
		if !seen[rel] {
			t.Errorf("expected failure %s is not in the corpus", rel)
		}
	}
	for rel := range corpusChecks {
		if !seen[rel] {
			t.Errorf("checked file %s is not in the corpus", rel)
		}
	}
}
