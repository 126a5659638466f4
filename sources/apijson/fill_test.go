package apijson

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// viaJSON is what encoding/json makes of generic value v for target's
// type: a new value, or the error.
func viaJSON(t *testing.T, v any, target any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := reflect.New(reflect.TypeOf(target).Elem()).Interface()
	if err := json.Unmarshal(b, out); err != nil {
		return err
	}
	return out
}

// generic decodes JSON text with UseNumber, as the sources package does.
func generic(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := unmarshalNumbers([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// probe has a field of every kind Fill and Marshal handle, and of the
// kinds they leave to encoding/json.
type probe struct {
	inline  `json:",inline"`
	*PtrEmb `json:",inline"`
	S       string                                `json:"s"`
	B       bool                                  `json:"b,omitempty"`
	I8      int8                                  `json:"i8"`
	I       int                                   `json:"i,omitempty"`
	U16     uint16                                `json:"u16"`
	F32     float32                               `json:"f32"`
	F       float64                               `json:"f,omitempty"`
	Bytes   []byte                                `json:"bytes"`
	Strs    []string                              `json:"strs,omitempty"`
	Ptr     *int32                                `json:"ptr"`
	PtrS    *inner                                `json:"ptrS,omitempty"`
	Named   map[v1.ResourceName]resource.Quantity `json:"named,omitempty"`
	Q       resource.Quantity                     `json:"q"`
	QP      *resource.Quantity                    `json:"qp,omitempty"`
	IOS     intstr.IntOrString                    `json:"ios"`
	Time    metav1.Time                           `json:"time"`
	TimeP   *metav1.Time                          `json:"timeP,omitempty"`
	Any     any                                   `json:"any"`
	Anys    []any                                 `json:"anys"`
	Map     map[string]any                        `json:"map,omitempty"`
	NoTag   string
	Skipped string               `json:"-"`
	Nested  []map[string][]inner `json:"nested,omitempty"`
	Outer   string               `json:"outer"`
	Quoted  int                  `json:"quoted,string,omitempty"`
	Text    *text                `json:"text,omitempty"`
	TimeZ   metav1.Time          `json:"timeZ,omitzero"`
	Zero    *inner               `json:"zero,omitzero"`
	Arr     *[2]int              `json:"arr,omitempty"`
	unexp   string
}

type inline struct {
	Inline string `json:"inline,omitempty"`
	Outer  string `json:"outer"` // loses to probe's own
}

// PtrEmb is exported: encoding/json cannot allocate an embedded pointer
// to an unexported struct.
type PtrEmb struct {
	Deep string `json:"deep"`
}

type inner struct {
	Name string `json:"name"`
	N    int64  `json:"n"`
}

// text decodes and encodes through encoding.TextUnmarshaler and
// TextMarshaler, which Fill and Marshal leave to encoding/json.
type text struct{ s string }

func (x *text) UnmarshalText(b []byte) error { x.s = "text:" + string(b); return nil }
func (x text) MarshalText() ([]byte, error)  { return []byte(x.s), nil }

func TestFillAsJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		filled   bool // Fill sets it, not encoding/json
	}{
		{"scalars", `{"s":"x","b":true,"i8":-128,"i":42,"u16":65535,"f32":1.5,"f":-2e-3,"NoTag":"n"}`, true},
		{"bytes", `{"bytes":"aGVsbG8="}`, true},
		{"empty bytes", `{"bytes":""}`, true},
		{"empty and null arrays", `{"strs":[],"anys":null}`, true},
		{"pointers", `{"ptr":7,"ptrS":{"name":"a","n":9007199254740993}}`, true},
		{"null pointers", `{"ptr":null,"ptrS":null,"qp":null,"timeP":null}`, true},
		{"unmarshalers", `{"q":"1500m","qp":"2Gi","ios":"http","time":"2024-01-02T03:04:05Z","timeP":"2024-01-02T03:04:05+02:00"}`, true},
		{"unmarshalers' null", `{"q":null,"ios":null,"time":null}`, true},
		{"int or string as int", `{"ios":8080}`, true},
		{"named keys", `{"named":{"cpu":"1","memory":"64Mi"}}`, true},
		{"interfaces hold float64", `{"any":{"a":[1,2.5,"x",true,null,{"b":3}]},"anys":[1,{"c":[2]}],"map":{"n":12345678901234567890}}`, true},
		{"inlined and embedded pointer", `{"inline":"i","deep":"d","outer":"o"}`, true},
		{"nested", `{"nested":[{"a":[{"name":"x","n":1}],"b":[]},{}]}`, true},
		{"null scalars and maps", `{"s":null,"i":null,"map":null,"named":null,"nested":null}`, true},
		{"quoted number", `{"quoted":"12"}`, false},
		{"text unmarshaler", `{"text":"hi"}`, false},
		{"number an interface cannot hold", `{"any":1e400}`, false},
		{"a key in another case", `{"S":"x"}`, false},
		{"an unknown key", `{"nope":1}`, false},
		{"a string for a number", `{"i":"1"}`, false},
		{"a number out of range", `{"i8":128}`, false},
		{"a bad quantity", `{"q":"1x"}`, false},
		{"an array", `{"arr":[1,2]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := generic(t, tc.in)
			want := viaJSON(t, v, &probe{})
			got := &probe{}
			err := Fill(v, got)
			switch {
			case tc.filled && err != nil:
				t.Fatalf("Fill: %v", err)
			case !tc.filled && err == nil:
				t.Fatalf("Fill set %+v, want it left to encoding/json (which gives %+v)", got, want)
			case err == nil && !reflect.DeepEqual(any(got), want):
				t.Errorf("Fill:\n%+v\nencoding/json:\n%+v", got, want)
			case err != nil && !reflect.DeepEqual(got, &probe{}):
				t.Errorf("Fill left %+v behind when it gave up", got)
			}
			// Unmarshal gives encoding/json's result either way.
			u := &probe{}
			uerr := Unmarshal([]byte(tc.in), u)
			if werr, isErr := want.(error); isErr {
				if uerr == nil || uerr.Error() != werr.Error() {
					t.Errorf("Unmarshal: error %v, want encoding/json's %v", uerr, werr)
				}
			} else if uerr != nil || !reflect.DeepEqual(any(u), want) {
				t.Errorf("Unmarshal: %+v, %v\nencoding/json:\n%+v", u, uerr, want)
			}
		})
	}
}

func TestUnmarshalRefusesWhatJSONRefuses(t *testing.T) {
	for _, in := range []string{``, `{`, `{"s":"x"} {}`, `{"s":"x"}x`, `[1]`, `"x"`} {
		var a, b probe
		ea, eb := Unmarshal([]byte(in), &a), json.Unmarshal([]byte(in), &b)
		if (ea == nil) != (eb == nil) || ea != nil && ea.Error() != eb.Error() {
			t.Errorf("Unmarshal(%q): %v; encoding/json: %v", in, ea, eb)
		}
	}
}

var fuzzSeeds = []string{
	`{"s":"x","any":{"a":[1,2.5]},"named":{"cpu":"1"},"ios":80,"deep":"d","quoted":"1"}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}},"livenessProbe":{"httpGet":{"port":"http"}}}],"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}}]}}`,
	`{"metadata":{"creationTimestamp":null,"deletionGracePeriodSeconds":30},"spec":{"securityContext":{"runAsUser":0},"overhead":null}}`,
	"kind: Pod\nspec:\n  containers:\n  - name: c\n    env: [{name: A, value: \"1\"}]\n",
}

// FuzzFillAsJSON: for any document, Fill either leaves it to encoding/json
// untouched or sets what encoding/json sets, into a Pod and a probe.
func FuzzFillAsJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return
		}
		var v any
		if unmarshalNumbers(j, &v) != nil {
			return
		}
		for _, target := range []any{&v1.Pod{}, &probe{}} {
			want := viaJSON(t, v, target)
			err := Fill(v, target)
			if err != nil {
				if zero := reflect.New(reflect.TypeOf(target).Elem()).Interface(); !reflect.DeepEqual(target, zero) {
					t.Fatalf("Fill gave up (%v) but left %+v", err, target)
				}
				continue
			}
			if werr, isErr := want.(error); isErr {
				t.Fatalf("Fill set %+v where encoding/json fails: %v", target, werr)
			}
			if !reflect.DeepEqual(target, want) {
				t.Fatalf("Fill and encoding/json differ:\n%+v\n%+v", target, want)
			}
		}
	})
}

func TestFillLeavesTargetOnError(t *testing.T) {
	p := &probe{S: "kept"}
	if err := Fill(generic(t, `{"s":"x","i":"bad"}`), p); !errors.Is(err, ErrNotFilled) {
		t.Fatalf("Fill: %v, want ErrNotFilled", err)
	}
	if p.S != "kept" {
		t.Errorf("Fill changed the target before giving up: %+v", p)
	}
}
