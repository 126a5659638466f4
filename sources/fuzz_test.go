package sources

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
)

// fuzzSeeds are manifests in every form Decode reads; testdata/fuzz/FuzzDecode
// holds the inputs fuzzing found (see docs/fuzzing.md).
var fuzzSeeds = []string{
	podYAML,
	"---\n{\n  apiVersion: \"v1\",\n  kind: \"Pod\",\n  metadata: {name: \"web\", namespace: \"prod\"},\n  spec: {containers: [{name: \"app\", image: \"busybox\", args: [\"sh\", \"-c\", \"echo \\\n    hello\"]}]},\n}\n",
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}` + "\n" + `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"},"data":{"k":"dg=="}}`,
	"# c\n---\n" + podYAML + "---\n\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n",
	"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, data: {k: v}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x}]}}\n",
	"apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: c, image: x, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: a\n    image: busybox\n    env: &env [{name: A, value: \"1\"}]\n  - {name: b, image: busybox, env: *env}\n",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  uid: 6f9619ff-8b86-d011-b42d-00c04fc964ff\n  labels: {app: web}\n  annotations: {a: b}\nspec:\n  restartPolicy: OnFailure\n  initContainers: [{name: i, image: busybox, restartPolicy: Always, readinessProbe: {tcpSocket: {port: 80}}}]\n  containers: [{name: app, image: nginx, ports: [{containerPort: 80, hostPort: 8080}], livenessProbe: {httpGet: {port: http, path: /}}}]\n  volumes: [{name: v, configMap: {name: c, items: [{key: k, path: a/b}]}}, {name: e, emptyDir: {}}]\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: a, image: x, comand: [sh]}]}\n",
	`{apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: c, image: busybox}]}}` + "\nspec: {}\n",
	"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
	"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: '!!'}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: {\"a\\tb\": c}, annotations: {'k': \"\\x41\\u00e9\"}}\nspec: {containers: [{name: c, image: x, \"co\\nmand\": [sh]}]}\n",
}

// slowDecode is too long for the small inputs fuzzing makes: a slow input
// is a way to stall podrun.
const slowDecode = 2 * time.Second

// FuzzDecode decodes arbitrary bytes as a manifest and checks what Decode
// promises:
//   - it never panics nor takes seconds, and decoding the same bytes twice gives the same
//     objects and the same errors;
//   - every error is an *Error on one line that starts with the source;
//   - every object it returns is valid: names, UIDs (labels, since they
//     name paths), the config annotations, and a pod validates again;
//   - what it returns decodes again, as JSON, to the same objects: the
//     defaults are a fixed point and nothing is dropped or invented.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	// The corpus of real manifests, when it is beside the checkout.
	filepath.WalkDir(corpusDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(path); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{NodeName: "node1"}
		start := time.Now()
		set, err := Decode("fuzz.yaml", data, opts)
		if d := time.Since(start); d > slowDecode {
			t.Fatalf("decoding %d bytes took %v", len(data), d)
		}
		set2, err2 := Decode("fuzz.yaml", data, opts)
		if errString(err) != errString(err2) {
			t.Fatalf("two decodes, two errors:\n%v\n%v", err, err2)
		}
		if err != nil {
			checkErrors(t, err)
			return
		}
		if !equality.Semantic.DeepEqual(set, set2) {
			t.Fatalf("two decodes, two results:\n%s\n%s", describeSet(set), describeSet(set2))
		}
		checkObjects(t, set)
		again, err := Decode("fuzz.yaml", reencode(t, set), opts)
		if err != nil {
			t.Fatalf("decoded objects do not decode again: %v\nthey were:\n%s", err, reencode(t, set))
		}
		for i := range set.Pods {
			if !equality.Semantic.DeepEqual(set.Pods[i].Pod, again.Pods[i].Pod) {
				t.Fatalf("pod %d changed on a second decode:\n%s\n%s", i, mustJSON(set.Pods[i].Pod), mustJSON(again.Pods[i].Pod))
			}
		}
		for i := range set.ConfigMaps {
			if !equality.Semantic.DeepEqual(set.ConfigMaps[i].ConfigMap, again.ConfigMaps[i].ConfigMap) {
				t.Fatalf("configmap %d changed on a second decode:\n%s\n%s", i, mustJSON(set.ConfigMaps[i].ConfigMap), mustJSON(again.ConfigMaps[i].ConfigMap))
			}
		}
		for i := range set.Secrets {
			if !equality.Semantic.DeepEqual(set.Secrets[i].Secret, again.Secrets[i].Secret) {
				t.Fatalf("secret %d changed on a second decode:\n%s\n%s", i, mustJSON(set.Secrets[i].Secret), mustJSON(again.Secrets[i].Secret))
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkErrors checks that err is one *Error, or several joined, each on
// one line naming the source.
func checkErrors(t *testing.T, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var se *Error
		if !errors.As(e, &se) || se != e {
			t.Fatalf("error %T %q is not an *Error", e, e)
		}
		msg := e.Error()
		if strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("error is not one line: %q", msg)
		}
		if !strings.HasPrefix(msg, "fuzz.yaml: ") {
			t.Fatalf("error does not start with its source: %q", msg)
		}
	}
}

// checkObjects checks what every decoded object must be.
func checkObjects(t *testing.T, set *Set) {
	t.Helper()
	for _, p := range set.Pods {
		if p.Origin.Source != "fuzz.yaml" || p.Origin.Doc < 1 {
			t.Fatalf("pod %s: origin %+v", p.Name, p.Origin)
		}
		if msgs := validation.IsDNS1123Label(string(p.UID)); len(msgs) > 0 {
			t.Fatalf("pod %s: uid %q: %v", p.Name, p.UID, msgs)
		}
		if p.Annotations[ConfigSourceAnnotationKey] != configSourceFile || p.Annotations[ConfigHashAnnotationKey] != string(p.UID) {
			t.Fatalf("pod %s: annotations %v", p.Name, p.Annotations)
		}
		if p.Spec.NodeName == "" || p.Namespace == "" {
			t.Fatalf("pod %s: not defaulted: nodeName %q namespace %q", p.Name, p.Spec.NodeName, p.Namespace)
		}
		if errs := validatePod(p.Pod); len(errs) > 0 {
			t.Fatalf("pod %s does not validate again: %v", p.Name, errs)
		}
	}
	for _, c := range set.ConfigMaps {
		if msgs := validation.IsDNS1123Label(string(c.UID)); len(msgs) > 0 || c.Namespace == "" {
			t.Fatalf("configmap %s: uid %q namespace %q", c.Name, c.UID, c.Namespace)
		}
		if errs := validateConfigMap(c.ConfigMap); len(errs) > 0 {
			t.Fatalf("configmap %s does not validate again: %v", c.Name, errs)
		}
	}
	for _, s := range set.Secrets {
		if msgs := validation.IsDNS1123Label(string(s.UID)); len(msgs) > 0 || s.Namespace == "" {
			t.Fatalf("secret %s: uid %q namespace %q", s.Name, s.UID, s.Namespace)
		}
		if len(s.StringData) > 0 {
			t.Fatalf("secret %s: stringData left unmerged", s.Name)
		}
		if errs := validateSecret(s.Secret); len(errs) > 0 {
			t.Fatalf("secret %s does not validate again: %v", s.Name, errs)
		}
	}
}

// reencode writes a set's objects as a stream of JSON documents, in the
// order Decode returns them.
func reencode(t *testing.T, set *Set) []byte {
	t.Helper()
	var b []byte
	add := func(kind string, obj any) {
		m := map[string]any{}
		if err := json.Unmarshal(mustJSON(obj), &m); err != nil {
			t.Fatal(err)
		}
		m["apiVersion"], m["kind"] = "v1", kind
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, j...), '\n')
	}
	for _, p := range set.Pods {
		add("Pod", p.Pod)
	}
	for _, c := range set.ConfigMaps {
		add("ConfigMap", c.ConfigMap)
	}
	for _, s := range set.Secrets {
		add("Secret", s.Secret)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
