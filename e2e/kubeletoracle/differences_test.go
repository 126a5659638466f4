package kubeletoracle

import (
	"reflect"
	"strings"
	"testing"
)

const differencesDoc = "# Differences\n\nIntro.\n\n" + DifferencesMarker + `
| id | rows | field | podrun | kubelet |
|---|---|---|---|---|
| strict | ` + "`pods/a.yaml`" + ` | ` + "`outcome`" + ` | refused | ` + "`ran (*)`" + ` |
| names | * | output[*] line * | * | * |

Text after the table.

### strict
Why.

### names
Why.
`

func TestParseDifferences(t *testing.T) {
	got, err := ParseDifferences([]byte(differencesDoc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{
		{ID: "strict", Rows: "pods/a.yaml", Field: "outcome", Podrun: "refused", Kubelet: "ran (*)"},
		{ID: "names", Rows: "*", Field: "output[*] line *", Podrun: "*", Kubelet: "*"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseDifferences = %+v, want %+v", got, want)
	}
	for name, doc := range map[string]string{
		"no marker":     "| a | b | c | d | e |\n",
		"no table":      DifferencesMarker + "\ntext\n",
		"four cells":    DifferencesMarker + "\n| h |\n|-|\n| a | b | c | d |\n",
		"no section":    strings.Replace(differencesDoc, "### names\n", "### other\n", 1),
		"an empty id":   DifferencesMarker + "\n| h |\n|-|\n|  | b | c | d | e |\n",
		"an empty rows": DifferencesMarker + "\n| h |\n|-|\n| a |  | c | d | e |\n",
	} {
		if _, err := ParseDifferences([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestClassify(t *testing.T) {
	ds, err := ParseDifferences([]byte(differencesDoc))
	if err != nil {
		t.Fatal(err)
	}
	r := Report{Diffs: []Diff{
		{Path: "outcome", Podrun: "refused", Kubelet: "ran (Running)"},
		{Path: "output[app] line 2", Podrun: "a", Kubelet: "b"},
		{Path: "status.phase", Podrun: "Failed", Kubelet: "Pending"},
	}}
	got := Classify("pods/a.yaml", r, ds)
	known := []string{"strict", "names", ""}
	for i, d := range got.Diffs {
		if d.Known != known[i] {
			t.Errorf("diff %s: known %q, want %q", d.Path, d.Known, known[i])
		}
	}
	if u := got.Undocumented(); len(u) != 1 || u[0].Path != "status.phase" {
		t.Errorf("Undocumented = %+v, want status.phase only", u)
	}
	// Another row: the row pattern of strict no longer matches.
	if got := Classify("pods/b.yaml", r, ds); got.Diffs[0].Known != "" {
		t.Errorf("strict matched pods/b.yaml")
	}
	// Several row patterns, in backticks each.
	two := Difference{ID: "two", Rows: "`pods/a.yaml`, `admin/*`", Field: "*", Podrun: "*", Kubelet: "*"}
	for row, want := range map[string]bool{"pods/a.yaml": true, "admin/x.yaml": true, "pods/b.yaml": false} {
		if got := two.Matches(row, r.Diffs[2]); got != want {
			t.Errorf("rows %q match %s: %v, want %v", two.Rows, row, got, want)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"*", "", true},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"a*c", "ac", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"ab*ba", "aba", false},
		{"status.containerStatuses[*].ready", "status.containerStatuses[app].ready", true},
		{"status.containerStatuses[*].ready", "status.containerStatuses[app].started", false},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
