package sources

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxExpandedSize bounds the YAML documents of a source once their aliases
// are expanded: the cap on a source's bytes holds for what they expand to
// as well, all documents together (each one under the cap, 100 of them
// would still be 100 times the cap).
const maxExpandedSize = maxManifestSize

// errExpanded is the problem of the document whose aliases expand its
// source beyond maxExpandedSize.
var errExpanded = fmt.Sprintf("aliases expand the source beyond the %d MiB limit", maxExpandedSize>>20)

// precheckYAML looks at one YAML document before it is converted to JSON,
// which expands every alias in full: a 1 MiB anchor referenced 500 times
// would become 500 MiB of JSON and gigabytes of allocations. The document
// is parsed once without conversion (aliases then share their strings),
// its expanded size is taken from budget, what is left of
// maxExpandedSize for its source, and it is refused when:
//   - its expanded size passes the budget: the problem names the field
//     where it does, v is the object's kind and name, and the budget is
//     left below zero (the source's later documents are not read);
//   - text follows the document (yaml.v2 reads the first document of its
//     input and ignores the rest, so a field after a flow-style
//     document's closing "}" would be dropped silently): the problem
//     says where.
//
// A document the parser rejects passes, so that the conversion reports
// its error as before.
func precheckYAML(chunk []byte, budget *int) (v any, probs []problem) {
	dec := yamlv2.NewDecoder(bytes.NewReader(chunk))
	var doc any
	var ms yamlv2.MapSlice
	if dec.Decode(&ms) == nil {
		doc = ms
	} else {
		// Not a mapping (or not valid): decode it as anything.
		dec = yamlv2.NewDecoder(bytes.NewReader(chunk))
		if dec.Decode(&doc) != nil {
			return nil, nil
		}
	}
	s := sizer{left: *budget}
	over := s.walk(doc)
	*budget = s.left
	if over {
		return typeMetaOf(doc), []problem{{field: s.path(), msg: errExpanded}}
	}
	var next any
	nerr := dec.Decode(&next)
	switch {
	case errors.Is(nerr, io.EOF):
		return nil, nil
	case nerr == nil:
		nerr = errors.New("a second document")
	}
	return typeMetaOf(doc), []problem{{msg: trailingText(chunk, nerr)}}
}

// typeMetaOf returns a generic object holding only the kind and
// metadata.name of a decoded YAML document, for naming it in errors.
func typeMetaOf(doc any) map[string]any {
	m := map[string]any{}
	ms, _ := doc.(yamlv2.MapSlice)
	for _, it := range ms {
		switch it.Key {
		case "kind":
			m["kind"] = it.Value
		case "metadata":
			md, _ := it.Value.(yamlv2.MapSlice)
			for _, mit := range md {
				if mit.Key == "name" {
					m["metadata"] = map[string]any{"name": mit.Value}
				}
			}
		}
	}
	return m
}

// sizer adds up a decoded document's size as JSON would spell it out,
// at least: every scalar's bytes plus one per node, each alias counted in
// full. Without aliases this is no more than the document's own length.
type sizer struct {
	left  int
	trail []any // on passing the limit, the path there, innermost first
}

// walk counts v and reports whether the limit is passed.
func (s *sizer) walk(v any) bool {
	s.left--
	if str, ok := v.(string); ok {
		s.left -= len(str)
	}
	if s.left < 0 {
		return true
	}
	switch v := v.(type) {
	case yamlv2.MapSlice:
		for _, it := range v {
			if s.walk(it.Key) || s.walk(it.Value) {
				s.trail = append(s.trail, it.Key)
				return true
			}
		}
	case map[any]any:
		// Sorted, so that the path reported is always the same.
		keys := make([]any, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			if s.walk(k) || s.walk(v[k]) {
				s.trail = append(s.trail, k)
				return true
			}
		}
	case []any:
		for i, e := range v {
			if s.walk(e) {
				s.trail = append(s.trail, i)
				return true
			}
		}
	}
	return false
}

// path renders the trail as a field path. Every key reads as a field
// (the document is not decoded into its type yet, so keys of maps such as
// data[key] are not told apart): it shows where the expansion happens.
func (s *sizer) path() string {
	var p *field.Path
	for i := len(s.trail) - 1; i >= 0; i-- {
		switch e := s.trail[i].(type) {
		case int:
			p = index(p, e)
		default:
			k := fmt.Sprint(e)
			if len(k) > 40 {
				k = k[:37] + "..."
			}
			p = child(p, k)
		}
	}
	return pathString(p)
}

// trailingText says where the text after a document starts: for a
// flow-style document (JSON or KYAML), the line and the text after its
// closing bracket; otherwise the parser's error.
func trailingText(chunk []byte, perr error) string {
	const msg = "text after the end of the document"
	end := flowEnd(chunk)
	if end < 0 {
		return fmt.Sprintf("%s: %v", msg, perr)
	}
	rest := skipBlank(chunk, end)
	if rest >= len(chunk) {
		return fmt.Sprintf("%s: %v", msg, perr)
	}
	line := 1 + bytes.Count(chunk[:rest], []byte("\n"))
	text, _, _ := bytes.Cut(chunk[rest:], []byte("\n"))
	text = bytes.TrimRight(text, " \t\r")
	if len(text) > 40 {
		text = append(slices.Clip(text[:37]), "..."...)
	}
	return fmt.Sprintf("line %d: %s: %q", line, msg, text)
}

// skipBlank returns the offset of the first byte from i on that is not
// whitespace or part of a comment.
func skipBlank(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		case '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// flowEnd returns the offset just past the bracket that closes a document
// written as one flow collection ("{...}" or "[...]", after blank lines,
// comments and a "---" line), or -1. Brackets in quoted strings and
// comments do not count. It only locates text for an error message: the
// parser decides whether there is any.
func flowEnd(b []byte) int {
	i := skipBlank(b, 0)
	if bytes.HasPrefix(b[i:], []byte("---")) {
		i = skipBlank(b, i+3)
	}
	if i >= len(b) || (b[i] != '{' && b[i] != '[') {
		return -1
	}
	depth := 0
	prev := byte(' ')
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case c == '#' && isSpace(prev):
			for i < len(b) && b[i] != '\n' {
				i++
			}
			c = '\n'
		case (c == '"' || c == '\'') && startsScalar(prev):
			i = quotedEnd(b, i)
			if i < 0 {
				return -1
			}
		}
		prev = c
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// startsScalar tells whether a quote after c opens a quoted scalar (in
// "it's" it does not).
func startsScalar(c byte) bool {
	return isSpace(c) || c == '{' || c == '[' || c == ',' || c == ':'
}

// quotedEnd returns the offset of the quote that closes the scalar opened
// at b[i], or -1: in double quotes a backslash escapes the next byte, in
// single quotes ” is a quote.
func quotedEnd(b []byte, i int) int {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch {
		case q == '"' && b[j] == '\\':
			j++
		case b[j] == q:
			if q == '\'' && j+1 < len(b) && b[j+1] == '\'' {
				j++
				continue
			}
			return j
		}
	}
	return -1
}
