package kubeletoracle

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Side is one runtime's outcome of a manifest: its final pod and the
// output of each container's latest run (ReadPodLogs), or, with no pod,
// why it did not run the manifest at all.
type Side struct {
	Pod  *v1.Pod
	Logs map[string]string
	// Refused, with Pod nil, says why the manifest never ran: podrun's
	// error before it created anything (exit 125), or the kubelet's file
	// source dropping it (ErrNotRun).
	Refused string
}

// Options loosen a comparison where timing, not behaviour, decides.
type Options struct {
	// RestartTolerance is how far the restartCounts may differ: a
	// crash-looping container restarts on the back-off's clock, and the
	// two runs were stopped at different moments of it.
	RestartTolerance int32
	// OutputPrefix accepts outputs of which one is the other plus more
	// lines (after normalization): a container that prints forever was
	// stopped after a different number of lines.
	OutputPrefix bool
	// IgnoreOutput leaves output out (a row whose output is all timing).
	IgnoreOutput bool
}

// Diff is one field that differs, with both values.
type Diff struct {
	Path    string // e.g. status.containerStatuses[web].state.exitCode
	Podrun  string
	Kubelet string
	// Known is the ID of the documented, deliberate difference it is
	// (Classify), "" while undocumented.
	Known string
}

// Report is a comparison's result: MATCH when Diffs is empty.
type Report struct {
	Diffs []Diff
}

// Match says whether every compared field agrees.
func (r Report) Match() bool { return len(r.Diffs) == 0 }

// String is "MATCH", or "DIFF" and a line per field:
// "  PATH: podrun=VALUE kubelet=VALUE".
func (r Report) String() string {
	if r.Match() {
		return "MATCH"
	}
	var b strings.Builder
	b.WriteString("DIFF")
	for _, d := range r.Diffs {
		fmt.Fprintf(&b, "\n  %s: podrun=%s kubelet=%s", d.Path, strconv.Quote(d.Podrun), strconv.Quote(d.Kubelet))
	}
	return b.String()
}

// Row is a named comparison, one line (and its differences) of a Table.
// Err, when set, says why the comparison could not be made.
type Row struct {
	Name   string
	Report Report
	Err    string
}

// Table prints rows as "MATCH  NAME", "ERROR  NAME" with why, or "DIFF
// NAME" with the differing fields indented below, each followed by the documented difference it is
// ("[deliberate: ID]") or "[UNDOCUMENTED]" once classified, then a count:
// how many match, and how many of the others differ only deliberately.
func Table(rows []Row) string {
	var b strings.Builder
	match, deliberate, failed := 0, 0, 0
	for _, r := range rows {
		if r.Err != "" {
			failed++
			fmt.Fprintf(&b, "ERROR  %s\n         %s\n", r.Name, r.Err)
			continue
		}
		if r.Report.Match() {
			match++
			fmt.Fprintf(&b, "MATCH  %s\n", r.Name)
			continue
		}
		if len(r.Report.Undocumented()) == 0 {
			deliberate++
		}
		fmt.Fprintf(&b, "DIFF   %s\n", r.Name)
		for _, d := range r.Report.Diffs {
			fmt.Fprintf(&b, "         %s: podrun=%s kubelet=%s%s\n", d.Path, strconv.Quote(d.Podrun), strconv.Quote(d.Kubelet), knownText(d))
		}
	}
	fmt.Fprintf(&b, "%d of %d match; %d differ only deliberately, %d undocumented", match, len(rows), deliberate, len(rows)-match-deliberate-failed)
	if failed > 0 {
		fmt.Fprintf(&b, "; %d not compared (ERROR)", failed)
	}
	b.WriteString("\n")
	return b.String()
}

func knownText(d Diff) string {
	if d.Known == "" {
		return " [UNDOCUMENTED]"
	}
	return " [deliberate: " + d.Known + "]"
}

// Undocumented is the report's differences that no documented difference
// explains (Classify).
func (r Report) Undocumented() []Diff {
	var out []Diff
	for _, d := range r.Diffs {
		if d.Known == "" {
			out = append(out, d)
		}
	}
	return out
}

// absent stands for a field or container status one side does not have.
const absent = "<absent>"

// Compare compares podrun's outcome of a manifest with the kubelet's. Per
// pod: phase, reason and each condition's status and reason (by type).
// Per container status (init containers, then regular ones, by name):
// state (waiting, running or terminated), its reason, exit code and
// termination message, restartCount (within RestartTolerance), ready,
// started, and the output. Messages and output are compared after
// normalize.
//
// A side that did not run the manifest (Refused) is compared by that fact
// alone: both refusing is a match, whatever the reasons; else "outcome",
// "refused: REASON" against "ran (PHASE)".
func Compare(podrun, kubelet Side, o Options) Report {
	n := newNormalizer(podrun.Pod, kubelet.Pod)
	var r Report
	add := func(path, p, k string) {
		if p != k {
			r.Diffs = append(r.Diffs, Diff{Path: path, Podrun: p, Kubelet: k})
		}
	}
	if podrun.Pod == nil || kubelet.Pod == nil {
		if podrun.Pod != nil || kubelet.Pod != nil {
			add("outcome", outcome(podrun), outcome(kubelet))
		}
		return r
	}
	ps, ks := podrun.Pod.Status, kubelet.Pod.Status
	add("status.phase", string(ps.Phase), string(ks.Phase))
	add("status.reason", ps.Reason, ks.Reason)
	add("status.qosClass", string(ps.QOSClass), string(ks.QOSClass))
	compareConditions(add, ps.Conditions, ks.Conditions)
	for _, list := range []struct {
		field   string
		podrun  []v1.ContainerStatus
		kubelet []v1.ContainerStatus
	}{
		{"initContainerStatuses", ps.InitContainerStatuses, ks.InitContainerStatuses},
		{"containerStatuses", ps.ContainerStatuses, ks.ContainerStatuses},
	} {
		for _, name := range statusNames(list.podrun, list.kubelet) {
			path := fmt.Sprintf("status.%s[%s]", list.field, name)
			compareContainer(add, n, path, findStatus(list.podrun, name), findStatus(list.kubelet, name), o)
		}
	}
	if !o.IgnoreOutput {
		for _, name := range logNames(podrun.Logs, kubelet.Logs) {
			p, pok := podrun.Logs[name]
			k, kok := kubelet.Logs[name]
			if !pok || !kok {
				add("output["+name+"]", presence(pok), presence(kok))
				continue
			}
			if path, pv, kv, differ := compareOutput(n.apply(p), n.apply(k), o.OutputPrefix); differ {
				add("output["+name+"]"+path, pv, kv)
			}
		}
	}
	return r
}

// outcome is "refused: REASON" for a side without a pod, else "ran
// (PHASE)".
func outcome(s Side) string {
	if s.Pod == nil {
		return "refused: " + s.Refused
	}
	return "ran (" + string(s.Pod.Status.Phase) + ")"
}

func presence(ok bool) string {
	if ok {
		return "<present>"
	}
	return absent
}

func compareConditions(add func(path, p, k string), podrun, kubelet []v1.PodCondition) {
	var types []v1.PodConditionType
	for _, c := range slices.Concat(podrun, kubelet) {
		if !slices.Contains(types, c.Type) {
			types = append(types, c.Type)
		}
	}
	for _, t := range types {
		p, k := findCondition(podrun, t), findCondition(kubelet, t)
		path := fmt.Sprintf("status.conditions[%s]", t)
		if p == nil || k == nil {
			add(path, conditionText(p), conditionText(k))
			continue
		}
		add(path+".status", string(p.Status), string(k.Status))
		add(path+".reason", p.Reason, k.Reason)
	}
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func conditionText(c *v1.PodCondition) string {
	if c == nil {
		return absent
	}
	if c.Reason == "" {
		return string(c.Status)
	}
	return string(c.Status) + " (" + c.Reason + ")"
}

// statusNames is every container name of both lists, podrun's order first.
func statusNames(podrun, kubelet []v1.ContainerStatus) []string {
	var names []string
	for _, s := range slices.Concat(podrun, kubelet) {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

func findStatus(ss []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range ss {
		if ss[i].Name == name {
			return &ss[i]
		}
	}
	return nil
}

func logNames(podrun, kubelet map[string]string) []string {
	var names []string
	for name := range podrun {
		names = append(names, name)
	}
	for name := range kubelet {
		if _, ok := podrun[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func compareContainer(add func(path, p, k string), n *normalizer, path string, p, k *v1.ContainerStatus, o Options) {
	if p == nil || k == nil {
		add(path, statusText(p), statusText(k))
		return
	}
	pk, pr, pe, pm := stateFields(p.State)
	kk, kr, ke, km := stateFields(k.State)
	add(path+".state", pk, kk)
	add(path+".state.reason", pr, kr)
	if pk == "terminated" || kk == "terminated" {
		add(path+".state.exitCode", pe, ke)
		add(path+".state.message", n.apply(pm), n.apply(km))
	}
	if d := p.RestartCount - k.RestartCount; d > o.RestartTolerance || -d > o.RestartTolerance {
		add(path+".restartCount", strconv.Itoa(int(p.RestartCount)), strconv.Itoa(int(k.RestartCount)))
	}
	add(path+".ready", strconv.FormatBool(p.Ready), strconv.FormatBool(k.Ready))
	add(path+".started", strconv.FormatBool(p.Started != nil && *p.Started), strconv.FormatBool(k.Started != nil && *k.Started))
	add(path+".resources", jsonText(p.Resources), jsonText(k.Resources))
	add(path+".allocatedResources", jsonText(p.AllocatedResources), jsonText(k.AllocatedResources))
	add(path+".volumeMounts", jsonText(p.VolumeMounts), jsonText(k.VolumeMounts))
	add(path+".user", jsonText(p.User), jsonText(k.User))
}

// jsonText is v as compact JSON ("null" for nothing), for fields compared
// whole.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func statusText(s *v1.ContainerStatus) string {
	if s == nil {
		return absent
	}
	kind, reason, _, _ := stateFields(s.State)
	if reason == "" {
		return kind
	}
	return kind + " (" + reason + ")"
}

// stateFields is a container state's kind, reason, exit code and
// termination message ("" where the kind has none).
func stateFields(s v1.ContainerState) (kind, reason, exitCode, message string) {
	switch {
	case s.Terminated != nil:
		return "terminated", s.Terminated.Reason, strconv.Itoa(int(s.Terminated.ExitCode)), s.Terminated.Message
	case s.Running != nil:
		return "running", "", "", ""
	case s.Waiting != nil:
		return "waiting", s.Waiting.Reason, "", ""
	}
	return "none", "", "", ""
}

// compareOutput compares normalized outputs line by line. It reports the
// first line that differs (" line N") with both lines, or a line one side
// lacks as <end>. With prefix, stdout and stderr are compared each on its
// own (" line N", " stderr line N"), and one running out of lines is no
// difference: each stream was cut at another point.
func compareOutput(p, k string, prefix bool) (path, pv, kv string, differ bool) {
	if p == k {
		return "", "", "", false
	}
	if prefix {
		po, pe := splitStreams(p)
		ko, ke := splitStreams(k)
		if path, pv, kv, differ = compareLines(po, ko, true); differ {
			return path, pv, kv, differ
		}
		if path, pv, kv, differ = compareLines(pe, ke, true); differ {
			return " stderr" + path, pv, kv, differ
		}
		return "", "", "", false
	}
	return compareLines(p, k, false)
}

// splitStreams splits a DecodeCRILog output into its stdout and stderr
// lines.
func splitStreams(s string) (stdout, stderr string) {
	var o, e strings.Builder
	for _, l := range outputLines(s) {
		if strings.HasPrefix(l, stderrMark) {
			e.WriteString(l + "\n")
		} else {
			o.WriteString(l + "\n")
		}
	}
	return o.String(), e.String()
}

func compareLines(p, k string, prefix bool) (path, pv, kv string, differ bool) {
	if p == k {
		return "", "", "", false
	}
	pl, kl := outputLines(p), outputLines(k)
	for i := 0; i < max(len(pl), len(kl)); i++ {
		pv, kv = "<end>", "<end>"
		if i < len(pl) {
			pv = pl[i]
		}
		if i < len(kl) {
			kv = kl[i]
		}
		if pv == kv {
			continue
		}
		if prefix && (i >= len(pl) || i >= len(kl)) {
			return "", "", "", false
		}
		return fmt.Sprintf(" line %d", i+1), pv, kv, true
	}
	// Same lines, different text: only a final newline differs.
	return " end", strconv.Quote(p[max(0, len(p)-1):]), strconv.Quote(k[max(0, len(k)-1):]), true
}

func outputLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// normalizer replaces what differs between two runs of the same manifest
// by its kind: both pods' names (the kubelet's static pod is
// <name>-<node>) by <pod>, their UIDs by <uid>, node names by <node> (each
// only where no letter or digit is next to it), and then any UUID, IPv4
// address, 64-hex container/sandbox ID and time stamp.
type normalizer struct {
	names []string // longest first
	to    map[string]string
}

var patterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<id>"},
	// The kubelet's static pod UID: an md5 hex (32 digits, no dashes).
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "<uid>"},
	// RFC 3339 / ISO 8601 (Go, the CRI, `date -Is`).
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	// date(1)'s default: "Mon Nov 23 20:15:04 UTC 2026".
	{regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}( [A-Z]{2,5})? \d{4}\b`), "<time>"},
	// A bare clock time.
	{regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b`), "<time>"},
	{regexp.MustCompile(`\b(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\b`), "<ip>"},
}

func newNormalizer(pods ...*v1.Pod) *normalizer {
	n := &normalizer{to: map[string]string{}}
	for _, p := range pods {
		if p == nil {
			continue
		}
		for from, to := range map[string]string{p.Name: "<pod>", string(p.UID): "<uid>", p.Spec.NodeName: "<node>"} {
			if from != "" {
				n.to[from] = to
			}
		}
	}
	// Longest first: the kubelet's "web-node" is a pod name before "web"
	// or "node" is replaced in it.
	for from := range n.to {
		n.names = append(n.names, from)
	}
	sort.Slice(n.names, func(i, j int) bool {
		if len(n.names[i]) != len(n.names[j]) {
			return len(n.names[i]) > len(n.names[j])
		}
		return n.names[i] < n.names[j]
	})
	return n
}

func (n *normalizer) apply(s string) string {
	s = n.replaceNames(s)
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// replaceNames replaces each name that starts and ends where no letter or
// digit is next to it.
func (n *normalizer) replaceNames(s string) string {
	if len(n.names) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if i == 0 || !isAlnum(s[i-1]) {
			found := ""
			for _, name := range n.names {
				if end := i + len(name); strings.HasPrefix(s[i:], name) && (end == len(s) || !isAlnum(s[end])) {
					found = name
					break
				}
			}
			if found != "" {
				b.WriteString(n.to[found])
				i += len(found)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
