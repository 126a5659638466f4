package kubeletoracle

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// DifferencesMarker is the HTML comment that starts the machine-readable
// table of deliberate differences in docs/kubelet-differences.md: the
// first Markdown table after it is read, one difference per row.
const DifferencesMarker = "<!-- kubelet-differences -->"

// Difference is one documented, deliberate difference between podrun and
// the kubelet: the row of the table in docs/kubelet-differences.md. Rows,
// Field, Podrun and Kubelet are patterns in which `*` stands for any text
// (and nothing else is special): over the corpus row's path, the Diff's
// Path and its two values. Rows may list several patterns, separated by
// commas.
type Difference struct {
	ID      string
	Rows    string
	Field   string
	Podrun  string
	Kubelet string
}

// Matches says whether d explains diff x of corpus row row.
func (d Difference) Matches(row string, x Diff) bool {
	rowMatch := false
	for _, r := range strings.Split(d.Rows, ",") {
		rowMatch = rowMatch || glob(strings.Trim(strings.TrimSpace(r), "`"), row)
	}
	return rowMatch && glob(d.Field, x.Path) && glob(d.Podrun, x.Podrun) && glob(d.Kubelet, x.Kubelet)
}

// ParseDifferences reads the table after DifferencesMarker: columns id,
// rows, field, podrun, kubelet (cells may be in backticks). Every id must
// have a section of its own in the document, a heading "### <id>" (where
// its reason and the kubelet source it concerns are written).
func ParseDifferences(doc []byte) ([]Difference, error) {
	_, after, ok := bytes.Cut(doc, []byte(DifferencesMarker))
	if !ok {
		return nil, fmt.Errorf("parsing the differences: no %s", DifferencesMarker)
	}
	var out []Difference
	sc := bufio.NewScanner(bytes.NewReader(after))
	inTable, header := false, 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		if header < 2 { // the header row and its --- row
			header++
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			return nil, fmt.Errorf("parsing the differences: row %q has %d cells, want 5 (id, rows, field, podrun, kubelet)", line, len(cells))
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		d := Difference{ID: cells[0], Rows: cells[1], Field: cells[2], Podrun: cells[3], Kubelet: cells[4]}
		if d.ID == "" || d.Rows == "" || d.Field == "" {
			return nil, fmt.Errorf("parsing the differences: row %q lacks an id, rows or field", line)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parsing the differences: no table after %s", DifferencesMarker)
	}
	for _, d := range out {
		if !bytes.Contains(doc, []byte("\n### "+d.ID+"\n")) {
			return nil, fmt.Errorf("parsing the differences: %s has no section (### %s) with its reason", d.ID, d.ID)
		}
	}
	return out, nil
}

// Classify marks each diff of r that a documented difference explains
// with that difference's ID (the first that matches).
func Classify(row string, r Report, ds []Difference) Report {
	out := Report{Diffs: make([]Diff, len(r.Diffs))}
	for i, x := range r.Diffs {
		x.Known = ""
		for _, d := range ds {
			if d.Matches(row, x) {
				x.Known = d.ID
				break
			}
		}
		out.Diffs[i] = x
	}
	return out
}

// glob matches s against pattern, where `*` is any text.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}
