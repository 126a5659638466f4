package sources

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Error is every load, decode and validation error. It names the source,
// the document, the object and the field path, each when known:
//
//	pod.yaml: document 2 (Pod "web"): spec.containers[0].comand: unknown field
//
// Several problems of one run are returned together with errors.Join, one
// *Error (one line) each.
type Error struct {
	Origin Origin
	// Kind and Name of the object, when known. The object is shown only
	// when its name is known.
	Kind, Name string
	// Field is the field path, e.g. spec.containers[0].name; may be empty.
	Field string
	// Msg says what is wrong; when Err is set too, it is appended.
	Msg string
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Origin.String())
	if e.Name != "" {
		kind := e.Kind
		if kind == "" {
			kind = "object"
		}
		fmt.Fprintf(&b, " (%s %q)", printable(kind), e.Name)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(printable(e.Field))
		b.WriteString(": ")
	}
	msg := e.Msg
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	b.WriteString(oneLine(msg))
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// String renders the origin as "source: document D, item I".
func (o Origin) String() string {
	s := printable(o.Source)
	if o.Doc > 0 {
		s += fmt.Sprintf(": document %d", o.Doc)
		if o.Item > 0 {
			s += fmt.Sprintf(", item %d", o.Item)
		}
	}
	return s
}

// printable returns s, quoted as a Go string if it holds a newline or
// another character that is not printable: names, kinds and field paths
// come from the input, and an error stays one line that no input can
// forge more lines into.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// oneLine folds multi-line messages (YAML parser errors) into one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var b strings.Builder
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
