package sources

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podrun/podrun/sources/apijson"
)

// problem is a decoding problem at a field path.
type problem struct {
	field string
	msg   string
}

// checkFields walks a generic JSON value (as decoded with UseNumber)
// against the Go type it will be decoded into, the way encoding/json
// would, and reports every unknown field and every type mismatch with its
// full field path. encoding/json's own errors name neither the list
// indexes nor all fields at once.
//
// Field names match case-sensitively, as in the API server's strict
// decoding. Types with their own UnmarshalJSON (resource.Quantity,
// intstr.IntOrString, metav1.Time, runtime.RawExtension, ...) are
// checked by calling it on the value.
func checkFields(v any, t reflect.Type) []problem {
	var w walker
	w.walk(v, t, nil)
	return w.problems
}

type walker struct {
	problems []problem
}

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func (w *walker) add(p *field.Path, format string, args ...any) {
	w.problems = append(w.problems, problem{field: pathString(p), msg: fmt.Sprintf(format, args...)})
}

func (w *walker) walk(v any, t reflect.Type, p *field.Path) {
	if v == nil {
		return // null leaves the zero value, as in encoding/json
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
		b, err := json.Marshal(v)
		if err == nil {
			err = reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(b)
		}
		if err != nil {
			w.add(p, "invalid value %s: %v", describe(v), err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			w.add(p, "expected object, got %s", describe(v))
			return
		}
		fields := apijson.Fields(t)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			switch {
			case !ok:
				w.add(child(p, k), "unknown field")
			case f.Conflict:
				w.add(child(p, k), "ambiguous field (two embedded structs of %s have it)", t)
			default:
				w.walk(m[k], f.Type, child(p, k))
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			w.add(p, "expected object, got %s", describe(v))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			w.walk(m[k], t.Elem(), key(p, k))
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			s, ok := v.(string)
			if !ok {
				w.add(p, "expected base64 string, got %s", describe(v))
			} else if _, err := base64.StdEncoding.DecodeString(s); err != nil {
				w.add(p, "invalid base64 data: %v", err)
			}
			return
		}
		a, ok := v.([]any)
		if !ok {
			w.add(p, "expected array, got %s", describe(v))
			return
		}
		for i, e := range a {
			w.walk(e, t.Elem(), index(p, i))
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			w.add(p, "expected string, got %s", describe(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			w.add(p, "expected boolean, got %s", describe(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.number(v, p, "integer", fmt.Sprintf("%d-bit integer", t.Bits()), func(s string) error {
			_, err := strconv.ParseInt(s, 10, t.Bits())
			return err
		})
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.number(v, p, "unsigned integer", fmt.Sprintf("%d-bit unsigned integer", t.Bits()), func(s string) error {
			_, err := strconv.ParseUint(s, 10, t.Bits())
			return err
		})
	case reflect.Float32, reflect.Float64:
		w.number(v, p, "number", "number", func(s string) error {
			_, err := strconv.ParseFloat(s, t.Bits())
			return err
		})
	case reflect.Interface:
		// Anything goes.
	default:
		w.add(p, "cannot decode into Go type %s", t)
	}
}

// number checks a JSON number for a Go numeric field: a number (what),
// that parse takes (inRange: what the type holds).
func (w *walker) number(v any, p *field.Path, what, inRange string, parse func(string) error) {
	n, ok := v.(json.Number)
	if !ok {
		w.add(p, "expected %s, got %s", what, describe(v))
		return
	}
	if parse(n.String()) != nil {
		w.add(p, "expected %s, got %s", inRange, describe(v))
	}
}

// describe names a generic JSON value's type (and short value) for errors.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + v.String()
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// child, key and index extend a field path that may still be the root
// (nil).
func child(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

func key(p *field.Path, k string) *field.Path {
	if p == nil {
		return field.NewPath("").Key(k)
	}
	return p.Key(k)
}

func index(p *field.Path, i int) *field.Path {
	if p == nil {
		return field.NewPath("").Index(i)
	}
	return p.Index(i)
}

func pathString(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}
