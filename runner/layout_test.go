package runner

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunnerImportsNoPrinter: the pipeline depends on no printer
// (docs/architecture.md, Printers beside the pipeline). No file of runner,
// of a package under it but runner/report, or of the packages the pipeline
// rests on (sources, cri, cni, volumes) imports a package of runner/report;
// the printers read runner's results, never the other way. Test files may:
// a test reads a pod's row to check the status it built.
func TestRunnerImportsNoPrinter(t *testing.T) {
	const report = "github.com/podrun/podrun/runner/report"
	for _, root := range []string{".", "../sources", "../cri", "../cni", "../volumes"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (path == "report" || d.Name() == "testdata"):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == report || strings.HasPrefix(p, report+"/") {
					t.Errorf("%s imports %s: the pipeline imports no printer", path, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
