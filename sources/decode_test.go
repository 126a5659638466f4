package sources

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// podYAML is a minimal valid pod in block style.
const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: nginx:1.29
`

func TestDecodeFormats(t *testing.T) {
	tests := []struct {
		name string
		data string
		// want lists "Kind namespace/name @doc.item" for every object, in
		// Set order: pods, then ConfigMaps, then Secrets.
		want []string
	}{
		{
			name: "block YAML",
			data: podYAML,
			want: []string{"Pod default/web @1.0"},
		},
		{
			name: "KYAML flow style with comments and trailing commas",
			data: `---
{
  apiVersion: "v1",
  kind: "Pod", # a comment
  metadata: {
    name: "web",
    namespace: "prod",
  },
  spec: {
    containers: [{
      name: "app",
      image: "busybox",
      args: ["sh", "-c", "echo \
        hello"],
    }],
  },
}
`,
			want: []string{"Pod prod/web @1.0"},
		},
		{
			name: "JSON object",
			data: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`,
			want: []string{"Pod default/web @1.0"},
		},
		{
			name: "JSON stream counts each value",
			data: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
			want: []string{"ConfigMap default/a @1.0", "ConfigMap default/b @2.0"},
		},
		{
			name: "multi-document YAML skips empty documents without counting them",
			data: "# leading comment\n---\n" + podYAML + "---\n# only a comment\n---\n\n---\n" +
				"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n---\n",
			want: []string{"Pod default/web @1.0", "Secret default/s @2.0"},
		},
		{
			name: "v1.List with mixed kinds",
			data: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cfg}
- apiVersion: v1
  kind: Pod
  metadata: {name: web}
  spec:
    containers: [{name: app, image: nginx}]
`,
			want: []string{"Pod default/web @1.2", "ConfigMap default/cfg @1.1"},
		},
		{
			name: "PodList items without kind and apiVersion",
			data: `apiVersion: v1
kind: PodList
metadata: {resourceVersion: "1"}
items:
- metadata: {name: a}
  spec: {containers: [{name: app, image: nginx}]}
- metadata: {name: b}
  spec: {containers: [{name: app, image: nginx}]}
`,
			want: []string{"Pod default/a @1.1", "Pod default/b @1.2"},
		},
		{
			name: "ConfigMapList and SecretList",
			data: `{"apiVersion":"v1","kind":"ConfigMapList","items":[{"metadata":{"name":"c"}}]}
---
kind: SecretList
apiVersion: v1
items: [{metadata: {name: s, namespace: ns}}]
`,
			want: []string{"ConfigMap default/c @1.1", "Secret ns/s @2.1"},
		},
		{
			name: "RuntimeClass, its namespace cleared, in a RuntimeClassList and a v1.List",
			data: `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: a, namespace: ignored}
handler: runc
---
apiVersion: node.k8s.io/v1
kind: RuntimeClassList
items:
- metadata: {name: b}
  handler: kata
  overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
  scheduling:
    nodeSelector: {sandbox: kata}
    tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
---
apiVersion: v1
kind: List
items:
- {apiVersion: node.k8s.io/v1, kind: RuntimeClass, metadata: {name: c}, handler: crun}
`,
			want: []string{"RuntimeClass /a handler runc @1.0", "RuntimeClass /b handler kata @2.1", "RuntimeClass /c handler crun @3.1"},
		},
		{
			name: "empty input",
			data: "\n# nothing\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Decode("pod.yaml", []byte(tt.data), Options{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := describeSet(set); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func describeSet(s *Set) []string {
	var out []string
	for _, p := range s.Pods {
		out = append(out, "Pod "+p.Namespace+"/"+p.Name+" @"+at(p.Origin))
	}
	for _, c := range s.ConfigMaps {
		out = append(out, "ConfigMap "+c.Namespace+"/"+c.Name+" @"+at(c.Origin))
	}
	for _, c := range s.Secrets {
		out = append(out, "Secret "+c.Namespace+"/"+c.Name+" @"+at(c.Origin))
	}
	for _, rc := range s.RuntimeClasses {
		out = append(out, "RuntimeClass "+rc.Namespace+"/"+rc.Name+" handler "+rc.Handler+" @"+at(rc.Origin))
	}
	return out
}

func at(o Origin) string { return fmt.Sprintf("%d.%d", o.Doc, o.Item) }

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		source string
		data   string
		want   []string // every line of the joined error, in order
	}{
		{
			name:   "unknown field with its full path",
			source: "pod.yaml",
			data: podYAML + `---
apiVersion: v1
kind: Pod
metadata: {name: web2}
spec:
  containers:
  - name: app
    image: nginx
    comand: [sh]
`,
			want: []string{`pod.yaml: document 2 (Pod "web2"): spec.containers[0].comand: unknown field`},
		},
		{
			name:   "the example from the brief",
			source: "pod.yaml",
			data:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: app, image: nginx, comand: [sh]}\n",
			want:   []string{`pod.yaml: document 2 (Pod "web"): spec.containers[0].comand: unknown field`},
		},
		{
			name:   "every unknown field, sorted, in nested maps and inline structs",
			source: "pod.yaml",
			data: `apiVersion: v1
kind: Pod
metadata: {name: web, labelz: {a: b}}
spek: {}
spec:
  volumes:
  - name: v
    configMap: {name: c, itemz: []}
  containers:
  - name: app
    image: nginx
    resources: {limits: {cpu: 1}, requets: {}}
    livenessProbe: {httpGet: {port: 80, paht: /}}
`,
			want: []string{
				`pod.yaml: document 1 (Pod "web"): metadata.labelz: unknown field`,
				`pod.yaml: document 1 (Pod "web"): spec.containers[0].livenessProbe.httpGet.paht: unknown field`,
				`pod.yaml: document 1 (Pod "web"): spec.containers[0].resources.requets: unknown field`,
				`pod.yaml: document 1 (Pod "web"): spec.volumes[0].configMap.itemz: unknown field`,
				`pod.yaml: document 1 (Pod "web"): spek: unknown field`,
			},
		},
		{
			name:   "field names are case-sensitive",
			source: "pod.yaml",
			data:   "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app, Image: nginx}]\n",
			want:   []string{`pod.yaml: document 1 (Pod "web"): spec.containers[0].Image: unknown field`},
		},
		{
			name:   "type errors with their paths",
			source: "pod.yaml",
			data: `apiVersion: v1
kind: Pod
metadata: {name: web, labels: {version: 1}}
spec:
  terminationGracePeriodSeconds: "30"
  containers:
  - name: app
    image: nginx
    ports: [{containerPort: 80.5}]
    resources: {limits: {memory: lots}}
    env: [{name: A, value: yes}]
`,
			want: []string{
				`pod.yaml: document 1 (Pod "web"): metadata.labels[version]: expected string, got number 1`,
				`pod.yaml: document 1 (Pod "web"): spec.containers[0].env[0].value: expected string, got boolean true`,
				`pod.yaml: document 1 (Pod "web"): spec.containers[0].ports[0].containerPort: expected 32-bit integer, got number 80.5`,
				`pod.yaml: document 1 (Pod "web"): spec.containers[0].resources.limits[memory]: invalid value string "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
				`pod.yaml: document 1 (Pod "web"): spec.terminationGracePeriodSeconds: expected integer, got string "30"`,
			},
		},
		{
			name:   "duplicate YAML field",
			source: "pod.yaml",
			data:   "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    image: nginx\n    image: busybox\n",
			want:   []string{`pod.yaml: document 1 (Pod "web"): spec.containers[0].image: duplicate field`},
		},
		{
			name:   "duplicate JSON field",
			source: "pod.json",
			data:   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","name":"x"},"spec":{"containers":[]}}`,
			want:   []string{`pod.json: document 1 (Pod "x"): metadata.name: duplicate field`},
		},
		{
			name:   "YAML syntax error names the document",
			source: "pod.yaml",
			data:   podYAML + "---\nkind: [\n",
			want:   []string{`pod.yaml: document 2: parsing: yaml: line 1: did not find expected node content`},
		},
		{
			name:   "unsupported kind",
			source: "-",
			data:   "apiVersion: v1\nkind: Service\nspec: {}\n",
			want:   []string{`stdin: document 1: kind Service is not supported: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects`},
		},
		{
			name:   "unsupported kind with a name",
			source: "d.yaml",
			data:   "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
			want:   []string{`d.yaml: document 1 (Service "x"): kind Service is not supported: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects`},
		},
		{
			name:   "missing kind",
			source: "p.yaml",
			data:   "apiVersion: v1\nmetadata: {name: x}\n",
			want:   []string{`p.yaml: document 1 (object "x"): kind: Required value: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects`},
		},
		{
			name:   "wrong apiVersion",
			source: "p.yaml",
			data:   "apiVersion: apps/v1\nkind: Pod\nmetadata: {name: x}\n",
			want:   []string{`p.yaml: document 1 (Pod "x"): apiVersion: Unsupported value: "apps/v1": supported values: "v1"`},
		},
		{
			name:   "missing apiVersion",
			source: "p.yaml",
			data:   "kind: Secret\nmetadata: {name: x}\n",
			want:   []string{`p.yaml: document 1 (Secret "x"): apiVersion: Required value: must be "v1" for kind Secret`},
		},
		{
			name:   "RuntimeClass of another apiVersion",
			source: "rc.yaml",
			data:   "apiVersion: node.k8s.io/v1beta1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n",
			want:   []string{`rc.yaml: document 1 (RuntimeClass "kata"): apiVersion: Unsupported value: "node.k8s.io/v1beta1": supported values: "node.k8s.io/v1"`},
		},
		{
			name:   "RuntimeClass without apiVersion",
			source: "rc.yaml",
			data:   "kind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n",
			want:   []string{`rc.yaml: document 1 (RuntimeClass "kata"): apiVersion: Required value: must be "node.k8s.io/v1" for kind RuntimeClass`},
		},
		{
			name:   "RuntimeClass of apiVersion v1",
			source: "rc.yaml",
			data:   "apiVersion: v1\nkind: RuntimeClassList\nitems: []\n",
			want:   []string{`rc.yaml: document 1: apiVersion: Unsupported value: "v1": supported values: "node.k8s.io/v1"`},
		},
		{
			name:   "RuntimeClass fields checked strictly and validated as the API server does",
			source: "rc.yaml",
			data: `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: a}
handler: kata
runtimeHandler: kata
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: b}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: c}
handler: Kata_Containers
overhead: {podFixed: {cpu: "-1", gpu: "1"}}
scheduling:
  nodeSelector: {"bad key!": x}
  tolerations: [{key: k, operator: Exists}, {key: k, operator: Exists, tolerationSeconds: 5, effect: NoExecute}, {key: k, operator: Exists}]
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: d}
handler: runc
---
{apiVersion: node.k8s.io/v1, kind: RuntimeClass, metadata: {name: d, namespace: other}, handler: runc}
`,
			want: []string{
				`rc.yaml: document 1 (RuntimeClass "a"): runtimeHandler: unknown field`,
				`rc.yaml: document 2 (RuntimeClass "b"): handler: Required value`,
				`rc.yaml: document 3 (RuntimeClass "c"): handler: Invalid value: "Kata_Containers": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				`rc.yaml: document 3 (RuntimeClass "c"): overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
				`rc.yaml: document 3 (RuntimeClass "c"): overhead.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified`,
				`rc.yaml: document 3 (RuntimeClass "c"): scheduling.nodeSelector: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`rc.yaml: document 3 (RuntimeClass "c"): scheduling.tolerations[2]: Duplicate value: {"key":"k","operator":"Exists"}`,
				`rc.yaml: document 5 (RuntimeClass "d"): metadata.name: Duplicate value: "d": RuntimeClass d is also defined in rc.yaml: document 4`,
			},
		},
		{
			name:   "not an object",
			source: "p.yaml",
			data:   "- a\n- b\n",
			want:   []string{`p.yaml: document 1: expected an object, got array`},
		},
		{
			name:   "list item errors name the item",
			source: "list.yaml",
			data: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: ok}}
- {apiVersion: v1, kind: Service, metadata: {name: d}}
- {apiVersion: v1, kind: PodList, items: []}
- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: x, comand: []}]}}
`,
			want: []string{
				`list.yaml: document 1, item 2 (Service "d"): kind Service is not supported: podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects`,
				`list.yaml: document 1, item 3: kind PodList may not be nested in a list`,
				`list.yaml: document 1, item 4 (Pod "p"): spec.containers[0].comand: unknown field`,
			},
		},
		{
			name:   "typed list with a foreign item",
			source: "list.yaml",
			data:   "apiVersion: v1\nkind: PodList\nitems: [{kind: Secret, metadata: {name: s}}]\nextra: 1\n",
			want:   []string{`list.yaml: document 1: extra: unknown field`},
		},
		{
			name:   "typed list item of another kind",
			source: "list.yaml",
			data:   "apiVersion: v1\nkind: PodList\nitems: [{kind: Secret, metadata: {name: s}}]\n",
			want:   []string{`list.yaml: document 1, item 1 (Secret "s"): kind: Invalid value: "Secret": a PodList holds Pod objects`},
		},
		{
			name:   "bad base64 in secret data",
			source: "s.yaml",
			data:   "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {k: '!!'}\n",
			want:   []string{`s.yaml: document 1 (Secret "s"): data[k]: invalid base64 data: illegal base64 data at input byte 0`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.source, []byte(tt.data), Options{})
			if err == nil {
				t.Fatal("Decode succeeded, want an error")
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not an *Error", err)
			}
		})
	}
}
