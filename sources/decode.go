package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	yamlv2 "go.yaml.in/yaml/v2"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/podrun/podrun/sources/apijson"
)

// Values of the kubernetes.io/config.source annotation.
const (
	configSourceFile  = "file"
	configSourceHTTP  = "http"
	configSourceStdin = "stdin"
)

// Annotation keys the kubelet sets on static pods
// (pkg/kubelet/types/pod_update.go).
const (
	ConfigSourceAnnotationKey    = "kubernetes.io/config.source"
	ConfigHashAnnotationKey      = "kubernetes.io/config.hash"
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
)

// configSeenLayout is the kubelet's layout of config.seen (its
// kubetypes.Timestamp.GetString: RFC 3339 with nanoseconds, always nine
// digits, in the node's local time).
const configSeenLayout = "2006-01-02T15:04:05.000000000Z07:00"

// supportedMsg ends the error for any kind podrun does not run.
const supportedMsg = "podrun runs Pod, ConfigMap, Secret and RuntimeClass objects and the pods of Job, CronJob, Deployment, ReplicaSet, StatefulSet and DaemonSet objects"

// nodeAPIVersion is the apiVersion of RuntimeClass (and RuntimeClassList):
// node.k8s.io/v1, the only version an API server of v1.25 or later serves.
const nodeAPIVersion = "node.k8s.io/v1"

// listItemKind says whether kind is a list kind podrun unwraps and the
// kind of its items ("" for v1.List, whose items may be of any supported
// kind).
func listItemKind(kind string) (string, bool) {
	item, ok := map[string]string{"List": "", "PodList": "Pod", "ConfigMapList": "ConfigMap", "SecretList": "Secret",
		"RuntimeClassList": "RuntimeClass"}[kind]
	return item, ok
}

// decodeInto decodes document m of kind into target, a pointer to the
// kind's type, refusing the fields the type lacks (checkFields); false
// when it recorded an error instead. apijson.Fill sets target where it
// can, as encoding/json would; encoding/json decodes the rest (and says
// what is wrong).
func (d *decoder) decodeInto(o Origin, kind, name string, m map[string]any, target any) bool {
	if probs := checkFields(m, reflect.TypeOf(target).Elem()); len(probs) > 0 {
		d.problems(o, kind, name, probs)
		return false
	}
	if apijson.Fill(m, target) == nil {
		return true
	}
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, target)
	}
	if err != nil {
		d.errs = append(d.errs, &Error{Origin: o, Kind: kind, Name: name, Msg: "decoding", Err: err})
		return false
	}
	return true
}

// objectKinds are the kinds of the objects a run takes besides
// workloads (workloadKinds): a new object of each kind's type.
var objectKinds = map[string]func() any{
	"Pod":          func() any { return &v1.Pod{} },
	"ConfigMap":    func() any { return &v1.ConfigMap{} },
	"Secret":       func() any { return &v1.Secret{} },
	"RuntimeClass": func() any { return &nodev1.RuntimeClass{} },
}

// kindAPIVersion is the apiVersion an object or list of kind must have:
// node.k8s.io/v1 for RuntimeClass and RuntimeClassList, v1 for the rest.
func kindAPIVersion(kind string) string {
	if kind == "RuntimeClass" || kind == "RuntimeClassList" {
		return nodeAPIVersion
	}
	return "v1"
}

// source describes one input: how errors show it, what identifies it in
// UIDs, and the config.source annotation of its pods.
type source struct {
	display  string
	identity string
	config   string
}

// sourceFor derives a source from a name as given to Decode: "-" is
// stdin, http:// and https:// names are URLs, anything else is a file
// path, identified by its absolute path.
func sourceFor(name string) source {
	switch {
	case name == "-":
		return source{display: "stdin", identity: "stdin", config: configSourceStdin}
	case isURL(name):
		return source{display: redactURL(name), identity: name, config: configSourceHTTP}
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		abs = name
	}
	return source{display: name, identity: abs, config: configSourceFile}
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// Decode decodes one source's bytes: every document is decoded, defaulted
// and validated, duplicate objects within the source are reported, and
// pods that name a RuntimeClass are admitted against the source's
// (admitRuntimeClasses).
// source is shown in errors and chooses the UID identity and the
// config.source annotation: "-" means stdin (shown as "stdin"), an
// http:// or https:// URL means http, anything else is a file path.
// Data with no documents gives an empty Set.
func Decode(source string, data []byte, opts Options) (*Set, error) {
	opts.matched = make([]bool, len(opts.Overrides.Images))
	set, errs := decodeSource(sourceFor(source), data, opts)
	return finishSet(set, errs, opts)
}

// finishSet checks what needs every source of a run at once, after the
// errs of decoding them: no object twice, the pods' RuntimeClasses among
// the set's, each --image override matched by a container. It returns
// set, or every error joined.
func finishSet(set *Set, errs []error, opts Options) (*Set, error) {
	errs = append(errs, checkDuplicates(set)...)
	errs = append(errs, admitRuntimeClasses(set)...)
	if len(errs) == 0 {
		errs = opts.Overrides.unmatchedImages(set.Pods, opts.matched)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// decoder collects the objects and errors of one source.
type decoder struct {
	src  source
	opts Options
	set  Set
	errs []error
	// expandBudget is what is left of maxExpandedSize for the source's
	// YAML documents with their aliases expanded.
	expandBudget int
}

func decodeSource(src source, data []byte, opts Options) (*Set, []error) {
	d := &decoder{src: src, opts: opts, expandBudget: maxExpandedSize}
	for _, doc := range d.documents(data) {
		d.document(doc)
	}
	return &d.set, d.errs
}

// document is one non-empty document of a source.
type document struct {
	origin Origin
	raw    []byte // the document's bytes as written, for the UID
	value  any    // generic JSON value, numbers as json.Number
}

// documents splits data into its non-empty documents, numbered from 1.
// YAML documents are split on "---" lines; a document that is a JSON
// stream yields one document per JSON value. A document that cannot be
// parsed is reported and still counted.
func (d *decoder) documents(data []byte) []document {
	var docs []document
	n := 0
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		chunk, err := r.Read()
		if err == io.EOF {
			return docs
		}
		if err != nil {
			d.errs = append(d.errs, &Error{Origin: Origin{Source: d.src.display, Doc: n + 1}, Err: err})
			return docs
		}
		// The reader keeps a separator line that opens the input; drop
		// it so that the raw bytes (and the UID) do not depend on it.
		if bytes.HasPrefix(chunk, []byte("---")) {
			if _, rest, ok := bytes.Cut(chunk, []byte("\n")); ok {
				chunk = rest
			}
		}
		if values, ok := jsonStream(chunk); ok {
			for _, raw := range values {
				v, probs, err := parseJSON(raw)
				if err == nil && len(probs) == 0 && v == nil {
					continue
				}
				n++
				if doc, ok := d.parsed(n, raw, v, probs, err); ok {
					docs = append(docs, doc)
				}
			}
			continue
		}
		v, probs, err := parseYAML(chunk, &d.expandBudget)
		if err == nil && len(probs) == 0 && v == nil {
			continue // only comments or whitespace
		}
		n++
		if doc, ok := d.parsed(n, chunk, v, probs, err); ok {
			docs = append(docs, doc)
		}
		if d.expandBudget < 0 {
			return docs // reported once; what follows is not read
		}
	}
}

// parsed turns a parse result into a document, or records its errors.
func (d *decoder) parsed(n int, raw []byte, v any, probs []problem, err error) (document, bool) {
	o := Origin{Source: d.src.display, Doc: n}
	if err != nil {
		d.errs = append(d.errs, &Error{Origin: o, Msg: "parsing", Err: err})
		return document{}, false
	}
	if len(probs) > 0 {
		m, _ := v.(map[string]any)
		kind, _, name := typeMeta(m)
		d.problems(o, kind, name, probs)
		return document{}, false
	}
	return document{origin: o, raw: raw, value: v}, true
}

// jsonStream reports whether chunk is a stream of JSON values and returns
// them. KYAML documents also start with "{" but are not JSON; they fail
// here and are parsed as YAML.
func jsonStream(chunk []byte) ([]json.RawMessage, bool) {
	t := bytes.TrimSpace(chunk)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	var values []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(t))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return values, len(values) > 0
		}
		if err != nil {
			return nil, false
		}
		values = append(values, raw)
	}
}

// parseJSON decodes one JSON value and reports duplicate fields.
// With duplicates, the value is still returned (the last one wins) so
// that errors can name the object.
func parseJSON(raw []byte) (any, []problem, error) {
	v, err := decodeGeneric(raw)
	if err != nil {
		return nil, nil, err
	}
	return v, jsonDuplicates(raw), nil
}

// parseYAML converts one YAML document to a generic JSON value, once
// precheckYAML has bounded its aliases within budget and found no text
// after it.
// Duplicate fields are errors; their paths come from a second, ordered
// parse.
// With duplicates, the leniently parsed value is returned too, so that
// errors can name the object.
func parseYAML(chunk []byte, budget *int) (any, []problem, error) {
	if v, probs := precheckYAML(chunk, budget); len(probs) > 0 {
		return v, probs, nil
	}
	j, err := yaml.YAMLToJSONStrict(chunk)
	if err != nil {
		if lj, lerr := yaml.YAMLToJSON(chunk); lerr == nil {
			var ms yamlv2.MapSlice
			if yamlv2.Unmarshal(chunk, &ms) == nil {
				var probs []problem
				yamlDuplicates(ms, nil, &probs)
				if len(probs) > 0 {
					v, _ := decodeGeneric(lj)
					return v, probs, nil
				}
			}
		}
		return nil, nil, err
	}
	v, err := decodeGeneric(j)
	return v, nil, err
}

func decodeGeneric(j []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// yamlDuplicates reports every key that repeats within one YAML mapping.
func yamlDuplicates(v any, p *field.Path, probs *[]problem) {
	switch v := v.(type) {
	case yamlv2.MapSlice:
		seen := map[string]bool{}
		for _, it := range v {
			k := fmt.Sprint(it.Key)
			if seen[k] {
				*probs = append(*probs, problem{field: child(p, k).String(), msg: "duplicate field"})
			}
			seen[k] = true
			yamlDuplicates(it.Value, child(p, k), probs)
		}
	case []any:
		for i, e := range v {
			yamlDuplicates(e, index(p, i), probs)
		}
	}
}

// jsonDuplicates reports every key that repeats within one JSON object.
func jsonDuplicates(raw []byte) []problem {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var probs []problem
	var walk func(p *field.Path) error
	walk = func(p *field.Path) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if seen[k] {
					probs = append(probs, problem{field: child(p, k).String(), msg: "duplicate field"})
				}
				seen[k] = true
				if err := walk(child(p, k)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(index(p, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if walk(nil) != nil {
		return nil // syntax errors are reported by the real decode
	}
	return probs
}

// fail records one error about an object.
func (d *decoder) fail(o Origin, kind, name, fld, msg string) {
	d.errs = append(d.errs, &Error{Origin: o, Kind: kind, Name: name, Field: fld, Msg: msg})
}

func (d *decoder) problems(o Origin, kind, name string, probs []problem) {
	for _, p := range probs {
		d.fail(o, kind, name, p.field, p.msg)
	}
}

func (d *decoder) fieldErrors(o Origin, kind, name string, errs field.ErrorList) {
	seen := map[string]bool{}
	for _, e := range errs {
		// Each error once, as the API server's ToAggregate shows them (three
		// extended resources requested without a limit are one
		// "resources.limits: Required value" line).
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			d.fail(o, kind, name, e.Field, e.ErrorBody())
		}
	}
}

// typeMeta reads kind, apiVersion and metadata.name from a generic
// object; values of the wrong type read as "" and are reported by
// checkFields.
func typeMeta(m map[string]any) (kind, apiVersion, name string) {
	kind, _ = m["kind"].(string)
	apiVersion, _ = m["apiVersion"].(string)
	if md, ok := m["metadata"].(map[string]any); ok {
		name, _ = md["name"].(string)
	}
	return kind, apiVersion, name
}

// annotateSourced gives a pod the annotations the kubelet's file and HTTP
// sources give a static pod: kubernetes.io/config.source (config: file,
// http or stdin), config.hash (its UID) and, when seen is set,
// config.seen.
func annotateSourced(pod *v1.Pod, config string, seen time.Time) {
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[ConfigSourceAnnotationKey] = config
	pod.Annotations[ConfigHashAnnotationKey] = string(pod.UID)
	if !seen.IsZero() {
		pod.Annotations[ConfigFirstSeenAnnotationKey] = seen.Format(configSeenLayout)
	}
}

// document decodes one top-level document: a list or a single object.
func (d *decoder) document(doc document) {
	m, ok := doc.value.(map[string]any)
	if !ok {
		d.fail(doc.origin, "", "", "", fmt.Sprintf("expected an object, got %s", describe(doc.value)))
		return
	}
	kind, _, _ := typeMeta(m)
	if elem, ok := listItemKind(kind); ok {
		d.list(doc, m, kind, elem)
		return
	}
	d.object(doc.origin, doc.raw, m)
}

// listWrapper is what a List document may hold besides its items.
type listWrapper struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []json.RawMessage `json:"items"`
}

// list decodes a List, PodList, ConfigMapList, SecretList or
// RuntimeClassList. Items of a typed list may omit kind and apiVersion;
// items of a v1.List need them.
func (d *decoder) list(doc document, m map[string]any, kind, elem string) {
	_, apiVersion, _ := typeMeta(m)
	if !d.checkAPIVersion(doc.origin, kind, "", apiVersion, kindAPIVersion(kind)) {
		return
	}
	if probs := checkFields(m, reflect.TypeFor[listWrapper]()); len(probs) > 0 {
		d.problems(doc.origin, "", "", probs)
		return
	}
	items, _ := m["items"].([]any)
	for i, item := range items {
		o := doc.origin
		o.Item = i + 1
		im, ok := item.(map[string]any)
		if !ok {
			d.fail(o, "", "", "", fmt.Sprintf("expected an object, got %s", describe(item)))
			continue
		}
		if elem != "" {
			ikind, iapi, iname := typeMeta(im)
			switch {
			case ikind == "":
				im["kind"] = elem
			case ikind != elem:
				d.fail(o, ikind, iname, "kind", fmt.Sprintf("Invalid value: %q: a %s holds %s objects", ikind, kind, elem))
				continue
			}
			if iapi == "" {
				im["apiVersion"] = kindAPIVersion(elem)
			}
		}
		d.object(o, doc.raw, im)
	}
}

// checkAPIVersion reports an apiVersion other than want (kindAPIVersion,
// or a workload's group version).
func (d *decoder) checkAPIVersion(o Origin, kind, name, apiVersion, want string) bool {
	p := field.NewPath("apiVersion")
	switch apiVersion {
	case want:
		return true
	case "":
		d.fieldErrors(o, kind, name, field.ErrorList{field.Required(p, fmt.Sprintf("must be %q for kind %s", want, kind))})
	default:
		d.fieldErrors(o, kind, name, field.ErrorList{field.NotSupported(p, apiVersion, []string{want})})
	}
	return false
}

// object decodes, defaults and validates one Pod, ConfigMap, Secret or
// RuntimeClass.
func (d *decoder) object(o Origin, raw []byte, m map[string]any) {
	kind, apiVersion, name := typeMeta(m)
	var target any
	newObject, known := objectKinds[kind]
	switch {
	case known:
		target = newObject()
	case kind == "":
		if _, ok := m["kind"]; ok {
			d.fail(o, "", name, "kind", fmt.Sprintf("expected string, got %s", describe(m["kind"])))
		} else {
			d.fieldErrors(o, "", name, field.ErrorList{field.Required(field.NewPath("kind"), supportedMsg)})
		}
		return
	default:
		if _, ok := listItemKind(kind); ok {
			d.fail(o, kind, name, "", fmt.Sprintf("kind %s may not be nested in a list", kind))
			return
		}
		if _, ok := workloadKinds[kind]; ok {
			d.workload(o, raw, m, kind)
			return
		}
		d.fail(o, kind, name, "", fmt.Sprintf("kind %s is not supported: %s", printable(kind), supportedMsg))
		return
	}
	if !d.checkAPIVersion(o, kind, name, apiVersion, kindAPIVersion(kind)) {
		return
	}
	if !d.decodeInto(o, kind, name, m, target) {
		return
	}
	var manifest *v1.Pod
	var overridden []byte
	if pod, ok := target.(*v1.Pod); ok {
		manifest, overridden = d.override(pod)
	}
	uid := objectUID(d.src.identity, o, d.opts.NodeName, raw, overridden)
	var errs field.ErrorList
	switch obj := target.(type) {
	case *v1.Pod:
		defaultPod(obj, d.opts.NodeName)
		if d.opts.StaticPodNames {
			staticPodDefaults(obj, d.opts.NodeName)
		}
		errs = validatePod(obj)
	case *v1.ConfigMap:
		defaultConfigMap(obj)
		errs = validateConfigMap(obj)
	case *v1.Secret:
		defaultSecret(obj)
		errs = validateSecret(obj)
	case *nodev1.RuntimeClass:
		defaultRuntimeClass(obj)
		errs = validateRuntimeClass(obj)
	}
	if len(errs) > 0 {
		d.fieldErrors(o, kind, name, errs)
		return
	}
	givenUID := false
	if meta := target.(metav1.Object); meta.GetUID() == "" {
		meta.SetUID(uid)
		givenUID = true
	}
	switch obj := target.(type) {
	case *v1.Pod:
		annotateSourced(obj, d.src.config, d.opts.Seen)
		d.set.Pods = append(d.set.Pods, &Pod{Pod: obj, Origin: o, GivenUID: givenUID, Manifest: manifest})
	case *v1.ConfigMap:
		d.set.ConfigMaps = append(d.set.ConfigMaps, &ConfigMap{ConfigMap: obj, Origin: o})
	case *v1.Secret:
		d.set.Secrets = append(d.set.Secrets, &Secret{Secret: obj, Origin: o})
	case *nodev1.RuntimeClass:
		d.set.RuntimeClasses = append(d.set.RuntimeClasses, &RuntimeClass{RuntimeClass: obj, Origin: o})
	}
}

// override applies the run's overrides (Options.Overrides) to a pod as
// decoded, before its defaults. It returns the pod as it then stands when
// the run keeps it (Options.KeepManifests, or overrides to report on),
// and, when the overrides changed it, its JSON, which the UID then hashes:
// another image or environment is another pod, as a changed file is.
func (d *decoder) override(pod *v1.Pod) (manifest *v1.Pod, overridden []byte) {
	ov := d.opts.Overrides
	if !ov.empty() && ov.apply(pod, d.opts.matched) {
		b, err := json.Marshal(pod)
		if err != nil {
			b = []byte(err.Error()) // never: a decoded pod marshals
		}
		overridden = b
	}
	if d.opts.KeepManifests || !ov.empty() {
		manifest = pod.DeepCopy()
	}
	return manifest, overridden
}
