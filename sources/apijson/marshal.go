package apijson

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
)

// Unmarshal is json.Unmarshal(data, target) through Fill: data decoded
// to a generic value, then filled in; encoding/json decodes what Fill
// leaves to it, and data that is not one JSON value.
func Unmarshal(data []byte, target any) error {
	var v any
	if unmarshalNumbers(data, &v) == nil && Fill(v, target) == nil {
		return nil
	}
	leftToJSON.Add(1)
	return json.Unmarshal(data, target)
}

// Marshal is json.Marshal(v) but for the order of object keys: sorted
// here, where encoding/json writes a struct's fields in their order. It
// makes a generic value of v (objects as maps), visiting only the types
// v holds, and has encoding/json write that. Whatever it does not mirror
// exactly (encoding.TextMarshaler types, names two embedded structs
// share, arrays, map keys that are not
// strings, floats encoding/json refuses, a ",string" field it writes) v
// is left to json.Marshal whole. TestMarshalAsJSON and FuzzMarshalAsJSON hold the two to one
// result.
func Marshal(v any) ([]byte, error) {
	g, err := (&marshaler{}).generic(reflect.ValueOf(v))
	if err != nil {
		leftToJSON.Add(1)
		return json.Marshal(v)
	}
	return json.Marshal(g)
}

// leftToJSON counts the values Unmarshal and Marshal left to
// encoding/json whole (LeftToJSON).
var leftToJSON atomic.Int64

// LeftToJSON is how many values Unmarshal and Marshal have left to
// encoding/json whole in this process: for tests that hold real objects
// to the fast path.
func LeftToJSON() int64 { return leftToJSON.Load() }

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type marshaler struct {
	fields map[reflect.Type][]marshalField // by struct type
}

// marshalField is a struct field encoding/json writes: its JSON name, its
// index path through inlined embedded structs, omitempty.
type marshalField struct {
	name        string
	index       []int
	omitEmpty   bool
	omitZero    func(reflect.Value) bool // nil without ",omitzero"
	quoted      bool                     // ",string": left to encoding/json unless omitted
	unsupported bool                     // a name two embedded structs share
}

// generic is v as a generic value: maps, slices, strings, bools,
// json.Number, json.RawMessage (a MarshalJSON's output, which
// encoding/json compacts as it does any Marshaler's) and nil.
func (m *marshaler) generic(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	// encoding/json: a type's own MarshalJSON (a nil pointer is null);
	// a pointer receiver's only where the value is addressable.
	if t.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	if t.Implements(marshalerType) {
		if t.Kind() == reflect.Interface && v.IsNil() {
			return nil, nil
		}
		return marshalJSON(v.Interface().(json.Marshaler))
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType) && v.CanAddr() {
		return marshalJSON(v.Addr().Interface().(json.Marshaler))
	}
	if t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return nil, ErrNotFilled
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return m.generic(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		for _, f := range m.jsonFields(t) {
			if f.unsupported {
				return nil, ErrNotFilled
			}
			fv, ok := fieldOf(v, f.index)
			if !ok || f.omitEmpty && isEmptyValue(fv) || f.omitZero != nil && f.omitZero(fv) {
				continue
			}
			if f.quoted {
				return nil, ErrNotFilled
			}
			g, err := m.generic(fv)
			if err != nil {
				return nil, err
			}
			out[f.name] = g
		}
		return out, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textMarshalerType) {
			return nil, ErrNotFilled
		}
		if v.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			g, err := m.generic(iter.Value())
			if err != nil {
				return nil, err
			}
			out[iter.Key().String()] = g
		}
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		et := t.Elem()
		if et.Kind() == reflect.Uint8 {
			pet := reflect.PointerTo(et)
			if pet.Implements(marshalerType) || pet.Implements(textMarshalerType) {
				return nil, ErrNotFilled
			}
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		out := make([]any, v.Len())
		for i := range out {
			g, err := m.generic(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		// encoding/json's own formatting (and its refusal of NaN and
		// the infinities, which leaves v to it).
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, ErrNotFilled
		}
		return json.Number(b), nil
	}
	return nil, ErrNotFilled
}

// marshalJSON is a Marshaler's output, for encoding/json to compact.
func marshalJSON(m json.Marshaler) (any, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, ErrNotFilled // encoding/json says what is wrong
	}
	return json.RawMessage(b), nil
}

// fieldOf is the field at index below struct v; false where an embedded
// pointer on the way is nil (encoding/json then writes none of its
// fields).
func fieldOf(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// jsonFields lists the fields encoding/json writes for a struct type, by
// Fields, with ",omitempty" and ",omitzero"; a conflicting name is marked
// unsupported.
func (m *marshaler) jsonFields(t reflect.Type) []marshalField {
	if fs, ok := m.fields[t]; ok {
		return fs
	}
	var fs []marshalField
	for name, ff := range Fields(t) {
		f := marshalField{name: name, index: ff.Index, quoted: ff.Quoted, unsupported: ff.Conflict}
		if !f.unsupported {
			opts := fieldOptions(t, ff.Index)
			f.omitEmpty = hasOption(opts, "omitempty")
			if hasOption(opts, "omitzero") {
				f.omitZero = isZeroFunc(ff.Type)
			}
		}
		fs = append(fs, f)
	}
	if m.fields == nil {
		m.fields = map[reflect.Type][]marshalField{}
	}
	m.fields[t] = fs
	return fs
}

// fieldOptions are the json tag's options of the field at index below
// struct type t.
func fieldOptions(t reflect.Type, index []int) string {
	var sf reflect.StructField
	for i, x := range index {
		if i > 0 && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		sf = t.Field(x)
		t = sf.Type
	}
	_, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return opts
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// isZeroFunc is encoding/json's test for ",omitzero" on a field of type
// t: its IsZero method where it has one, else reflect's.
func isZeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// unmarshalNumbers decodes one JSON value into v with UseNumber.
func unmarshalNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.Decode(new(any)) != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
