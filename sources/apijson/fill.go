// Package apijson decodes and encodes API objects (v1.Pod and the rest)
// as encoding/json does, without what encoding/json costs on first use of
// a type: it builds its decoder and encoder for every type reachable from
// it (for v1.Pod: every volume source, every probe handler, ...), which
// was the largest piece of a one-pod run's own CPU (issue 18). Fill and
// Marshal visit only the types a value holds, and leave to encoding/json
// whatever they do not mirror exactly; tests hold the two to one result.
package apijson

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Fill sets *target from v, a generic JSON value as a json.Decoder with
// UseNumber decodes it, to what json.Unmarshal of v's encoding sets,
// visiting only the types v holds.
//
// Whatever Fill does not mirror exactly (a key that names no field
// exactly, a value of another JSON type than its field's,
// encoding.TextUnmarshaler types, ",string" fields, names two embedded
// structs share, arrays, map keys that are not strings, non-empty
// interfaces, numbers an interface{} cannot hold) makes it return
// ErrNotFilled, and an UnmarshalJSON's error is returned as is; either
// way *target is untouched, for the caller to decode with encoding/json
// (Unmarshal does), which says what is wrong. TestFillAsJSON and
// FuzzFillAsJSON hold the two to the same result.
func Fill(v any, target any) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return ErrNotFilled
	}
	fresh := reflect.New(rv.Elem().Type())
	if err := (&filler{}).set(v, fresh.Elem()); err != nil {
		return err
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// ErrNotFilled: Fill leaves the value to encoding/json.
var ErrNotFilled = errors.New("left to encoding/json")

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

type filler struct{}

func (f *filler) set(v any, dst reflect.Value) error {
	t := dst.Type()
	if t.Kind() == reflect.Pointer {
		if v == nil {
			dst.SetZero() // null: a nil pointer, as encoding/json sets it
			return nil
		}
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		return f.set(v, dst.Elem())
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshalerType) {
		// Its own decoding, null included (encoding/json passes a null to
		// a non-pointer Unmarshaler too).
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b)
	}
	if pt.Implements(textUnmarshalerType) {
		return ErrNotFilled
	}
	if v == nil {
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Interface:
			dst.SetZero()
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return ErrNotFilled
		}
		fields := Fields(t)
		for k, x := range m {
			ff, ok := fields[k]
			if !ok || ff.Quoted || ff.Conflict {
				return ErrNotFilled
			}
			fv, err := fieldAlloc(dst, ff.Index)
			if err != nil {
				return err
			}
			if err := f.set(x, fv); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		kt := t.Key()
		if !ok || kt.Kind() != reflect.String || reflect.PointerTo(kt).Implements(textUnmarshalerType) {
			return ErrNotFilled
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(t, len(m)))
		}
		for k, x := range m {
			ev := reflect.New(t.Elem()).Elem()
			if err := f.set(x, ev); err != nil {
				return err
			}
			dst.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			s, ok := v.(string)
			if !ok {
				return ErrNotFilled
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return ErrNotFilled
			}
			dst.SetBytes(b)
			return nil
		}
		a, ok := v.([]any)
		if !ok {
			return ErrNotFilled
		}
		s := reflect.MakeSlice(t, len(a), len(a))
		for i, x := range a {
			if err := f.set(x, s.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(s)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return ErrNotFilled
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return ErrNotFilled
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return ErrNotFilled
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil || dst.OverflowInt(i) {
			return ErrNotFilled
		}
		dst.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(json.Number)
		if !ok {
			return ErrNotFilled
		}
		u, err := strconv.ParseUint(n.String(), 10, 64)
		if err != nil || dst.OverflowUint(u) {
			return ErrNotFilled
		}
		dst.SetUint(u)
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return ErrNotFilled
		}
		x, err := strconv.ParseFloat(n.String(), t.Bits())
		if err != nil || dst.OverflowFloat(x) {
			return ErrNotFilled
		}
		dst.SetFloat(x)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return ErrNotFilled
		}
		g, err := plainGeneric(v)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(&g).Elem())
	default:
		return ErrNotFilled
	}
	return nil
}

// plainGeneric copies a generic value decoded with UseNumber as
// encoding/json decodes into an interface{}: numbers as float64.
func plainGeneric(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(v.String(), 64)
		if err != nil {
			return nil, ErrNotFilled
		}
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			g, err := plainGeneric(x)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			g, err := plainGeneric(x)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case string, bool, nil:
		return v, nil
	}
	return nil, ErrNotFilled
}

// fieldAlloc is the field at index below struct v, allocating the nil
// embedded pointers on the way (as encoding/json does; it cannot for an
// unexported embedded pointer type, nor can Fill).
func fieldAlloc(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, ErrNotFilled
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// Field is a struct field by its JSON name, as encoding/json names it:
// its index path through inlined embedded structs and its type; Quoted
// for a ",string" field; Conflict (no index, no type) for a name two
// embedded structs give at the same depth, which encoding/json drops and
// Fill and Marshal leave to it.
type Field struct {
	Index    []int
	Type     reflect.Type
	Quoted   bool
	Conflict bool
}

// fieldsCache holds Fields' answers, by struct type.
var fieldsCache sync.Map

// Fields maps the JSON names of struct type t's fields as encoding/json
// names them: a tag's name or the field's, "-" skipped, unexported
// fields skipped, the fields of an embedded struct without a tag name
// inlined where t lacks the name (a shallower field wins; two at the same
// depth conflict).
func Fields(t reflect.Type) map[string]Field {
	if m, ok := fieldsCache.Load(t); ok {
		return m.(map[string]Field)
	}
	m := map[string]Field{}
	type emb struct {
		index int
		t     reflect.Type
	}
	var embedded []emb
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, emb{i, ft})
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		m[name] = Field{Index: []int{i}, Type: sf.Type, Quoted: hasOption(opts, "string")}
	}
	inner := map[string]Field{}
	for _, e := range embedded {
		for k, f := range Fields(e.t) {
			if _, ok := m[k]; ok {
				continue // t's own field wins
			}
			if _, dup := inner[k]; dup || f.Conflict {
				inner[k] = Field{Conflict: true}
				continue
			}
			inner[k] = Field{Index: append([]int{e.index}, f.Index...), Type: f.Type, Quoted: f.Quoted}
		}
	}
	for k, f := range inner {
		m[k] = f
	}
	fieldsCache.Store(t, m)
	return m
}

func hasOption(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
