// Package junittest checks JUnit reports against the project's schema of
// the format (testdata/junit.xsd) with xmllint, Debian's libxml2-utils,
// which the testbed installs. A test that needs it fails without it: it
// never skips.
package junittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Validate fails the test unless the report at path is valid against the
// schema at schema (xmllint --schema).
func Validate(t testing.TB, schema, path string) {
	t.Helper()
	if err := Check(schema, path); err != nil {
		t.Errorf("%v", err)
	}
}

// ValidateBytes is Validate of a report held in memory.
func ValidateBytes(t testing.TB, schema string, report []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(path, report, 0o644); err != nil {
		t.Fatal(err)
	}
	Validate(t, schema, path)
}

// Check is nil when the file at path is valid against schema, else an
// error with xmllint's words (or why xmllint could not run: missing, it is
// an error too).
func Check(schema, path string) error {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		return &Error{Path: path, Output: "xmllint is missing: install libxml2-utils (bash hack/testbed.sh packages does): " + err.Error()}
	}
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", schema, path).CombinedOutput()
	if err != nil {
		return &Error{Path: path, Output: string(out) + err.Error()}
	}
	return nil
}

// Error is a report that does not validate.
type Error struct {
	Path, Output string
}

func (e *Error) Error() string {
	return "JUnit report " + e.Path + " does not validate against the schema:\n" + e.Output
}
