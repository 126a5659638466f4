package sources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/sources/apijson"
)

// TestAPIJSONAsEncodingJSONOnManifests: every document of the kinds
// podrun decodes, in the project's test data and the shared corpus, that
// checkFields accepts is filled by apijson.Fill (not left to
// encoding/json) to what encoding/json decodes, and apijson.Marshal writes
// the object as encoding/json does, by itself.
func TestAPIJSONAsEncodingJSONOnManifests(t *testing.T) {
	n := 0
	before := apijson.LeftToJSON()
	for _, dir := range []string{"testdata", "../testdata", corpusDir} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s: %v (the corpus is ../shared beside the checkout)", dir, err)
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml") || strings.HasSuffix(path, ".json")) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, doc := range bytes.Split(b, []byte("\n---")) {
				j, err := yaml.YAMLToJSON(doc)
				if err != nil {
					continue
				}
				v, err := decodeGeneric(j)
				m, ok := v.(map[string]any)
				if err != nil || !ok {
					continue
				}
				kind, _ := m["kind"].(string)
				var target any
				if newObj, ok := objectKinds[kind]; ok {
					target = newObj()
				} else if wk, ok := workloadKinds[kind]; ok {
					target = wk.new()
				} else {
					continue
				}
				if len(checkFields(m, reflect.TypeOf(target).Elem())) > 0 {
					continue
				}
				where := fmt.Sprintf("%s, document %d (%s)", path, i+1, kind)
				want := reflect.New(reflect.TypeOf(target).Elem()).Interface()
				if err := json.Unmarshal(j, want); err != nil {
					t.Errorf("%s: encoding/json: %v", where, err)
					continue
				}
				if err := apijson.Fill(m, target); err != nil {
					t.Errorf("%s: Fill: %v", where, err)
					continue
				}
				if !reflect.DeepEqual(target, want) {
					t.Errorf("%s: Fill and encoding/json differ:\n%+v\n%+v", where, target, want)
				}
				got, err := apijson.Marshal(target)
				wantJSON, werr := json.Marshal(target)
				if err != nil || werr != nil {
					t.Fatalf("%s: Marshal: %v; encoding/json: %v", where, err, werr)
				}
				var g, w any
				if json.Unmarshal(got, &g) != nil || json.Unmarshal(wantJSON, &w) != nil || !reflect.DeepEqual(g, w) {
					t.Errorf("%s: Marshal and encoding/json differ:\n%s\n%s", where, got, wantJSON)
				}
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if left := apijson.LeftToJSON() - before; left > 0 {
		t.Errorf("Marshal left %d of them to encoding/json", left)
	}
	if n < 100 {
		t.Errorf("only %d documents compared", n)
	}
	t.Logf("%d documents filled and written as encoding/json does", n)
}

type strictEmbA struct {
	X string `json:"x"`
}

type strictEmbB struct {
	X int `json:"x"`
}

// TestCheckFieldsAmbiguous: a name two embedded structs share is refused
// with its path, not decoded into the first (encoding/json would drop
// it).
func TestCheckFieldsAmbiguous(t *testing.T) {
	// struct{ strictEmbA; strictEmbB; Y string `json:"y"` }, made at run
	// time: go vet refuses the json tag "x" the two embedded structs
	// share, which is what the test is about.
	both := reflect.StructOf([]reflect.StructField{
		{Name: "StrictEmbA", Type: reflect.TypeFor[strictEmbA](), Anonymous: true},
		{Name: "StrictEmbB", Type: reflect.TypeFor[strictEmbB](), Anonymous: true},
		{Name: "Y", Type: reflect.TypeFor[string](), Tag: `json:"y"`},
	})
	v, err := decodeGeneric([]byte(`{"x":"1","y":"2"}`))
	if err != nil {
		t.Fatal(err)
	}
	probs := checkFields(v, both)
	if len(probs) != 1 || probs[0].field != "x" || !strings.HasPrefix(probs[0].msg, "ambiguous field") {
		t.Errorf("checkFields = %+v, want x ambiguous", probs)
	}
}
