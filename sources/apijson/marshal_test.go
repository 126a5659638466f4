package apijson

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// sameJSON says whether two JSON texts hold the same value (object keys
// in any order, numbers as written).
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := unmarshalNumbers(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := unmarshalNumbers(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestMarshalAsJSON(t *testing.T) {
	i32 := int32(-7)
	q := resource.MustParse("2Gi")
	when := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, tc := range []struct {
		name string
		v    any
		fast bool // Marshal writes it itself, not json.Marshal
	}{
		{"zero probe", &probe{}, true},
		{"scalars and omitempty", &probe{S: "<x&y>", B: true, I8: -128, I: 42, U16: 65535, F32: 1.1, F: 1e21, NoTag: "n", Skipped: "no"}, true},
		{"bytes, empty and nil slices", &probe{Bytes: []byte("hello"), Strs: []string{}, Anys: []any{}}, true},
		{"pointers", &probe{Ptr: &i32, PtrS: &inner{Name: "a", N: 1 << 60}, QP: &q, TimeP: &when}, true},
		{"marshalers", &probe{Q: resource.MustParse("1500m"), IOS: intstr.FromString("http"), Time: when}, true},
		{"int or string as int", &probe{IOS: intstr.FromInt32(8080)}, true},
		{"named keys", &probe{Named: map[v1.ResourceName]resource.Quantity{"cpu": resource.MustParse("1"), "memory": resource.MustParse("64Mi")}}, true},
		{"interfaces", &probe{Any: map[string]any{"a": []any{1.0, 2.5, "x", true, nil}}, Map: map[string]any{"n": float32(0.1)}}, true},
		{"inlined and embedded pointer", &probe{inline: inline{Inline: "i", Outer: "hidden"}, PtrEmb: &PtrEmb{Deep: "d"}, Outer: "o"}, true},
		{"nested", &probe{Nested: []map[string][]inner{{"a": {{Name: "x"}}, "b": nil}, nil}}, true},
		{"a probe by value", probe{S: "v", Q: resource.MustParse("1")}, true},
		{"a pod", &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i", Ports: []v1.ContainerPort{{ContainerPort: 80}},
				Resources: v1.ResourceRequirements{Limits: v1.ResourceList{"cpu": resource.MustParse("1")}}}}}}, true},
		{"quoted number", &probe{Quoted: 12}, false},
		{"text marshaler", &probe{Text: &text{"hi"}}, false},
		{"omitzero: reflect's zero", &probe{Zero: &inner{}}, true},
		{"omitzero: an IsZero method", &probe{TimeZ: when}, true},
		{"omitzero: an IsZero method, by value", probe{TimeZ: when}, true},
		{"an array", &probe{Arr: &[2]int{1, 2}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, werr := json.Marshal(tc.v)
			if werr != nil {
				t.Fatal(werr)
			}
			got, err := Marshal(tc.v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !sameJSON(t, got, want) {
				t.Errorf("Marshal:\n%s\nencoding/json:\n%s", got, want)
			}
			_, gerr := (&marshaler{}).generic(reflect.ValueOf(tc.v))
			if fast := gerr == nil; fast != tc.fast {
				t.Errorf("written by Marshal itself: %t (%v), want %t", fast, gerr, tc.fast)
			}
		})
	}
}

func TestMarshalFailsAsJSON(t *testing.T) {
	for _, v := range []any{&probe{F: math.NaN()}, &probe{Any: math.Inf(1)}, &probe{Any: make(chan int)}} {
		_, err := Marshal(v)
		_, werr := json.Marshal(v)
		if err == nil || werr == nil || err.Error() != werr.Error() {
			t.Errorf("Marshal(%+v): %v; encoding/json: %v", v, err, werr)
		}
	}
}

// FuzzMarshalAsJSON: whatever encoding/json decodes into a Pod or a
// probe, Marshal encodes to what encoding/json encodes it to.
func FuzzMarshalAsJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return
		}
		for _, target := range []any{&v1.Pod{}, &probe{}} {
			if json.Unmarshal(j, target) != nil {
				continue
			}
			want, werr := json.Marshal(target)
			got, err := Marshal(target)
			if (err == nil) != (werr == nil) {
				t.Fatalf("Marshal: %v; encoding/json: %v", err, werr)
			}
			if err == nil && !sameJSON(t, got, want) {
				t.Fatalf("Marshal:\n%s\nencoding/json:\n%s", got, want)
			}
		}
	})
}

type embA struct {
	X string `json:"x"`
	A string `json:"a"`
}

type embB struct {
	X string `json:"x"`
}

// twoEmbedded is struct{ embA; embB; Own string `json:"a"` }, made at run
// time: go vet refuses the json tag "x" the two embedded structs share,
// which is what the test is about.
var twoEmbedded = reflect.StructOf([]reflect.StructField{
	{Name: "EmbA", Type: reflect.TypeFor[embA](), Anonymous: true},
	{Name: "EmbB", Type: reflect.TypeFor[embB](), Anonymous: true},
	{Name: "Own", Type: reflect.TypeFor[string](), Tag: `json:"a"`}, // wins over embA's
})

// TestFieldsConflict: a name two embedded structs share conflicts (and
// encoding/json drops it); the outer struct's own field wins.
func TestFieldsConflict(t *testing.T) {
	fs := Fields(twoEmbedded)
	if f := fs["x"]; !f.Conflict || f.Index != nil {
		t.Errorf(`Fields["x"] = %+v, want a conflict`, f)
	}
	if f := fs["a"]; f.Conflict || !reflect.DeepEqual(f.Index, []int{2}) {
		t.Errorf(`Fields["a"] = %+v, want the outer field`, f)
	}
	v := reflect.New(twoEmbedded)
	v.Elem().Field(0).Set(reflect.ValueOf(embA{X: "1", A: "hidden"}))
	v.Elem().Field(1).Set(reflect.ValueOf(embB{X: "2"}))
	v.Elem().Field(2).SetString("own")
	got, err := Marshal(v.Interface())
	want, _ := json.Marshal(v.Interface())
	if err != nil || !sameJSON(t, got, want) || string(want) != `{"a":"own"}` {
		t.Errorf("Marshal: %s, %v; encoding/json: %s", got, err, want)
	}
	if err := Fill(generic(t, `{"x":"1"}`), reflect.New(twoEmbedded).Interface()); err == nil {
		t.Error("Fill set a conflicting field")
	}
}
