package sources

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// aliasBomb is a pod whose anchor holds a string of size bytes, referenced
// refs times in a container's args.
func aliasBomb(size, refs int) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: bomb
  annotations:
    big: &a "` + strings.Repeat("x", size) + `"
spec:
  containers:
  - name: c
    image: busybox
    args: [` + strings.TrimSuffix(strings.Repeat("*a, ", refs), ", ") + `]
`
}

func TestDecodeRefusesAliasesThatExpandBeyondTheLimit(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string
	}{
		{
			// The reproducer: 1 MiB source, 500 MiB expanded.
			name: "a 1 MiB string referenced 500 times",
			data: aliasBomb(1<<20, 500),
			want: `bomb.yaml: document 1 (Pod "bomb"): spec.containers[0].args[8]: aliases expand the source beyond the 10 MiB limit`,
		},
		{
			name: "the same with a duplicate field, which takes the lenient path",
			data: strings.Replace(aliasBomb(1<<20, 500), "  - name: c\n", "  - name: c\n    name: d\n", 1),
			want: `bomb.yaml: document 1 (Pod "bomb"): spec.containers[0].args[8]: aliases expand the source beyond the 10 MiB limit`,
		},
		{
			name: "nested anchors: a billion laughs",
			data: laughs(9, 9),
			want: `bomb.yaml: document 1: parsing: yaml: document contains excessive aliasing`,
		},
		{
			name: "nested anchors within the alias ratio but beyond the size",
			data: laughs(4, 4) + "  big: &big " + strings.Repeat("y", 64<<10) + "\n  l: [" + strings.TrimSuffix(strings.Repeat("*big, ", 200), ", ") + "]\n",
			want: `bomb.yaml: document 1 (ConfigMap "laughs"): data.l[158]: aliases expand the source beyond the 10 MiB limit`,
		},
		{
			name: "aliases as mapping keys",
			data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keys}\nx: &k " + strings.Repeat("k", 1<<20) + "\ndata:\n" + strings.Repeat("  ? *k\n  : v\n", 12),
			want: `bomb.yaml: document 1 (ConfigMap "keys"): data.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...: aliases expand the source beyond the 10 MiB limit`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = Decode("bomb.yaml", []byte(tt.data), Options{}) })
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tt.want)
			}
			// Expanded, the first case is 500 MiB of JSON and several
			// GiB of allocations.
			if limit := uint64(20*len(tt.data)) + 64<<20; alloc > limit {
				t.Errorf("decoding allocated %d MiB, want at most %d MiB", alloc>>20, limit>>20)
			}
		})
	}
}

// laughs is a ConfigMap whose data nests depth anchors, each a list of
// width aliases of the previous one.
func laughs(depth, width int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= depth; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), width), ", ")
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, refs)
	}
	return b.String()
}

func TestDecodeAcceptsAliasesWithinTheLimit(t *testing.T) {
	// 100 KiB referenced 50 times: 5 MiB expanded.
	data := strings.Replace(aliasBomb(100<<10, 50), "big: &a", "big: &a", 1)
	set, err := Decode("pod.yaml", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if args := set.Pods[0].Spec.Containers[0].Args; len(args) != 50 || len(args[49]) != 100<<10 {
		t.Errorf("got %d args", len(args))
	}
	// The usual use: a shared env list.
	data = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: a
    image: busybox
    env: &env [{name: A, value: "1"}, {name: B, value: "2"}]
  - name: b
    image: busybox
    env: *env
`
	set, err = Decode("pod.yaml", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if env := set.Pods[0].Spec.Containers[1].Env; len(env) != 2 || env[1].Value != "2" {
		t.Errorf("env of b: %v", env)
	}
}

func TestDecodeRefusesDeepNesting(t *testing.T) {
	const depth = 20000
	nestedFlow := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: {x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}\n"
	// "- - - x" is [[[x]]] in block style.
	nestedBlock := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x:\n  " + strings.Repeat("- ", depth) + "x\n"
	nestedJSON := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}}"
	tests := []struct{ name, data, want string }{
		{"flow sequences", nestedFlow, `deep.yaml: document 1: parsing: yaml: line 4: exceeded max depth of 10000`},
		{"block sequences", nestedBlock, `deep.yaml: document 1: parsing: yaml: line 6: exceeded max depth of 10000`},
		{"JSON arrays", nestedJSON, `deep.yaml: document 1: parsing: yaml: exceeded max depth of 10000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("deep.yaml", []byte(tt.data), Options{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestDecodeRefusesTextAfterAFlowDocument(t *testing.T) {
	const pod = `{apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c, image: busybox}]}}`
	tests := []struct{ name, data, want string }{
		{
			name: "a misspelled field on the next line",
			data: pod + "\nspec: {containers: [{name: c, image: busybox, comand: [x]}]}\n",
			want: `k.yaml: document 1 (Pod "x"): line 2: text after the end of the document: "spec: {containers: [{name: c, image: ..."`,
		},
		{
			name: "KYAML with a field after the closing brace",
			data: "---\n{\n  apiVersion: \"v1\",\n  kind: \"Pod\", # a comment with a } in it\n  metadata: {name: \"x\"},\n  spec: {containers: [{name: \"c\", image: \"busybox\", args: [\"}\", '}]']}]},\n}\n  comand: [\"x\"],\n",
			want: `k.yaml: document 1 (Pod "x"): line 7: text after the end of the document: "comand: [\"x\"],"`,
		},
		{
			name: "text on the same line",
			data: pod + " junk\n",
			want: `k.yaml: document 1 (Pod "x"): line 1: text after the end of the document: "junk"`,
		},
		{
			name: "an extra closing brace",
			data: pod + "\n}\n",
			want: `k.yaml: document 1 (Pod "x"): line 2: text after the end of the document: "}"`,
		},
		{
			name: "JSON with trailing text",
			data: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"busybox"}]}} # ok` + "\n, \"x\": 1}\n",
			want: `k.yaml: document 1 (Pod "x"): line 2: text after the end of the document: ", \"x\": 1}"`,
		},
		{
			name: "a flow sequence",
			data: "[a, b]\n- c\n",
			want: `k.yaml: document 1: line 2: text after the end of the document: "- c"`,
		},
		{
			name: "a block document with an explicit end",
			data: podYAML + "...\nspec: {}\n",
			want: `k.yaml: document 1 (Pod "web"): text after the end of the document: yaml: line 9: did not find expected <document start>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("k.yaml", []byte(tt.data), Options{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
	// What may follow: comments, whitespace and an explicit document end.
	for _, ok := range []string{pod + "\n", pod + "  # done\n\n# more\n", pod + "\n...\n", "---\n" + pod + "\n---\n"} {
		if _, err := Decode("k.yaml", []byte(ok), Options{}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestDecodeValidatesMetadataUID(t *testing.T) {
	const label = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	const long = `must be no more than 63 characters`
	for _, tt := range []struct{ uid, shown, msg string }{
		{".", `"."`, label},
		{"..", `".."`, label},
		{"a/b", `"a/b"`, label},
		{"a_b", `"a_b"`, label},
		{`"abc\ndef"`, `"abc\ndef"`, label},
		{strings.Repeat("a", 300), `"` + strings.Repeat("a", 300) + `"`, long},
		{"6F9619FF-8B86-D011-B42D-00C04FC964FF", `"6F9619FF-8B86-D011-B42D-00C04FC964FF"`, label},
		{"'{6f9619ff-8b86-d011-b42d-00c04fc964ff}'", `"{6f9619ff-8b86-d011-b42d-00c04fc964ff}"`, label},
	} {
		for _, kind := range []string{"Pod", "ConfigMap", "Secret"} {
			data := "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: web\n  uid: " + tt.uid + "\n"
			if kind == "Pod" {
				data += "spec: {containers: [{name: c, image: busybox}]}\n"
			}
			_, err := Decode("uid.yaml", []byte(data), Options{})
			want := `uid.yaml: document 1 (` + kind + ` "web"): metadata.uid: Invalid value: ` + tt.shown + `: ` + tt.msg
			if err == nil || err.Error() != want {
				t.Errorf("uid %q:\n%v\nwant:\n%s", tt.uid, err, want)
			}
		}
	}
	// An API server's UID (a mirror pod copied with kubectl get -o yaml),
	// a kubelet's static pod UID and a name of one's own are kept.
	for _, uid := range []string{"6f9619ff-8b86-d011-b42d-00c04fc964ff", "6f9619ff8b86d011b42d00c04fc964ff", "etcd-1"} {
		set, err := Decode("uid.yaml", []byte(strings.Replace(podYAML, "name: web\n", "name: web\n  uid: "+uid+"\n", 1)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(set.Pods[0].UID); got != uid {
			t.Errorf("uid %q, want %q", got, uid)
		}
	}
}

func TestErrorsStayOneLine(t *testing.T) {
	// Found by FuzzDecode's "one line" property; in its corpus too.
	for _, tt := range []struct{ data, want string }{
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n\"sp\\nec\": 1\n",
			`e.yaml: document 1 (Pod "x"): "sp\nec": unknown field`},
		{"apiVersion: v1\nkind: \"Po\\nd\"\nmetadata: {name: x}\n",
			`e.yaml: document 1 ("Po\nd" "x"): kind "Po\nd" is not supported: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects`},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {\"a\\rb\": [1]}\n",
			`e.yaml: document 1 (ConfigMap "x"): "data[a\rb]": expected string, got array`},
	} {
		_, err := Decode("e.yaml", []byte(tt.data), Options{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("error:\n%v\nwant:\n%s", err, tt.want)
		}
	}
	// A source name too.
	e := &Error{Origin: Origin{Source: "a\nb.yaml", Doc: 1}, Msg: "bad"}
	if got, want := e.Error(), `"a\nb.yaml": document 1: bad`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

func TestDecodeRefusesNULInPaths(t *testing.T) {
	data := `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  volumes: [{name: v, configMap: {name: c, items: [{key: k, path: "a\0b"}]}}]
  containers: [{name: c, image: busybox, volumeMounts: [{name: v, mountPath: /v, subPath: "x\0"}]}]
`
	want := `nul.yaml: document 1 (Pod "web"): spec.volumes[0].configMap.items[0].path: Invalid value: "a\x00b": must not contain a NUL byte` + "\n" +
		`nul.yaml: document 1 (Pod "web"): spec.containers[0].volumeMounts[0].subPath: Invalid value: "x\x00": must not contain a NUL byte`
	if _, err := Decode("nul.yaml", []byte(data), Options{}); err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestDecodeBoundsAliasesAcrossTheDocumentsOfASource(t *testing.T) {
	// Each document expands to 6.4 MiB, under the limit, but 100 of them
	// would be 640 MiB from one 6.4 MiB source.
	doc := strings.Replace(aliasBomb(64<<10, 100), "name: bomb", "name: bomb-N", 1)
	var b strings.Builder
	for i := range 100 {
		b.WriteString("---\n" + strings.Replace(doc, "bomb-N", fmt.Sprintf("bomb-%d", i), 1))
	}
	var err error
	alloc := allocated(func() { _, err = Decode("bombs.yaml", []byte(b.String()), Options{}) })
	want := `bombs.yaml: document 2 (Pod "bomb-1"): spec.containers[0].args[57]: aliases expand the source beyond the 10 MiB limit`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%.300v\nwant:\n%s", err, want)
	}
	if limit := uint64(20*b.Len()) + 64<<20; alloc > limit {
		t.Errorf("decoding allocated %d MiB, want at most %d MiB", alloc>>20, limit>>20)
	}
}

// TestDecodeRefusesProjectedItemPathsOutOfTheVolume: a projected volume's
// item paths are checked as the API server checks them, like those of the
// volume types it projects (they were first caught only when the volume
// was planned, without the file and document), and so is a subPathExpr as
// written (it was caught only when the container was created).
func TestDecodeRefusesProjectedItemPathsOutOfTheVolume(t *testing.T) {
	data := `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  volumes:
  - name: v
    projected:
      sources:
      - configMap: {name: c, items: [{key: k, path: ../x}]}
      - secret: {name: s, items: [{key: k, path: /x}]}
      - downwardAPI: {items: [{path: a/../../y, fieldRef: {fieldPath: metadata.name}}, {path: ok, fieldRef: {fieldPath: spec.nodeName}}]}
      - serviceAccountToken: {path: /token}
  containers:
  - name: c
    image: busybox
    volumeMounts: [{name: v, mountPath: /a, subPathExpr: "$(X)/../y"}, {name: v, mountPath: /b, subPathExpr: /$(X)}]
`
	want := `projected.yaml: document 1 (Pod "web"): spec.volumes[0].projected.sources[0].configMap.items[0].path: Invalid value: "../x": must not contain '..'` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.volumes[0].projected.sources[1].secret.items[0].path: Invalid value: "/x": must be a relative path` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.volumes[0].projected.sources[2].downwardAPI.items[0].path: Invalid value: "a/../../y": must not contain '..'` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.volumes[0].projected.sources[2].downwardAPI.items[1].fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations"` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.volumes[0].projected.sources[3].serviceAccountToken.path: Invalid value: "/token": must be a relative path` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(X)/../y": must not contain '..'` + "\n" +
		`projected.yaml: document 1 (Pod "web"): spec.containers[0].volumeMounts[1].subPathExpr: Invalid value: "/$(X)": must be a relative path`
	if _, err := Decode("projected.yaml", []byte(data), Options{}); err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
