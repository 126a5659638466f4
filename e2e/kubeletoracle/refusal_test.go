package kubeletoracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusalReason(t *testing.T) {
	const file = "/k/manifests/oracle-a-1.yaml"
	for _, tc := range []struct {
		name, log, want string
	}{
		{"the watch event's form",
			`E1123 22:13:56.079255    2069 file.go:107] "Unable to process watch event" err="can't process config file \"/k/manifests/oracle-a-1.yaml\": static pods may not reference secrets"` + "\n",
			"static pods may not reference secrets"},
		{"the rescan's form, with quotes in the reason",
			`E1123 22:13:53.953568    2069 file.go:186] "Could not process manifest file" err="invalid pod: [spec.tolerations[0].operator: Unsupported value: \"Gt\"]" path="/k/manifests/oracle-a-1.yaml"` + "\n",
			`invalid pod: [spec.tolerations[0].operator: Unsupported value: "Gt"]`},
		{"another file's refusal",
			`E1123 22:13:53.953568    2069 file.go:186] "Could not process manifest file" err="bad" path="/k/manifests/oracle-b-1.yaml"` + "\n",
			""},
		{"the file named without a refusal",
			`I1123 22:13:53.953568    2069 file.go:200] "Reading config file" path="/k/manifests/oracle-a-1.yaml"` + "\n",
			""},
	} {
		if got := refusalReason(strings.NewReader(tc.log), file); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRefusalIn(t *testing.T) {
	log := filepath.Join(t.TempDir(), "kubelet.log")
	old := `E0 file.go:186] "Could not process manifest file" err="old" path="/m/f.yaml"` + "\n"
	if err := os.WriteFile(log, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	from := logSize(log)
	if got := refusalIn(log, from, "/m/f.yaml"); got != "" {
		t.Errorf("before the offset: %q", got)
	}
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`E1 file.go:186] "Could not process manifest file" err="new" path="/m/f.yaml"` + "\n")
	f.Close()
	if got := refusalIn(log, from, "/m/f.yaml"); got != "new" {
		t.Errorf("after the offset: %q, want new", got)
	}
	if got := refusalIn(filepath.Join(t.TempDir(), "none"), 0, "/m/f.yaml"); got != "" {
		t.Errorf("no log: %q", got)
	}
}
