package runner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestDecideRuntimeHandler: the handler a pod's sandbox is created with,
// and whether the run refuses it, from its RuntimeClass, the run's classes
// and the handlers the runtime reports (containerd 2.x: "" and "runc";
// CRI-O: "", "crun" and "runc"; containerd 1.6: none).
func TestDecideRuntimeHandler(t *testing.T) {
	classes := []*nodev1.RuntimeClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "runc"}, Handler: "runc"},
		{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata"},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: "crun"},
	}
	handler := func(names ...string) []*runtimeapi.RuntimeHandler {
		var out []*runtimeapi.RuntimeHandler
		for _, n := range names {
			out = append(out, &runtimeapi.RuntimeHandler{Name: n})
		}
		return out
	}
	containerd2 := handler("", "runc")
	crio := handler("crun", "", "runc")
	for _, tc := range []struct {
		name     string
		class    *string
		reported []*runtimeapi.RuntimeHandler
		known    bool // the runtime was asked (not a dry run)
		want     string
		note     string // part of the note, "" for none
		err      string // the refusal, "" for none
	}{
		{name: "no class: the default handler", reported: containerd2, known: true},
		{name: "an empty class: the default handler", class: new(""), reported: containerd2, known: true},
		{name: "runc named explicitly on containerd 2", class: new("runc"), reported: containerd2, known: true, want: "runc"},
		{name: "a class whose handler is named otherwise", class: new("fast"), reported: crio, known: true, want: "crun"},
		{name: "a handler the runtime does not have", class: new("kata"), reported: containerd2, known: true,
			err: `spec.runtimeClassName: RuntimeClass "kata" has handler "kata", which the runtime does not have (its handlers, from CRI Status: the default, "runc"); a kubelet's RunPodSandbox would fail`},
		{name: "a class the run lacks", class: new("gvisor"), reported: containerd2, known: true,
			err: `spec.runtimeClassName: runtimeclass.node.k8s.io "gvisor" not found: the run has no RuntimeClass of that name (give it with -f)`},
		{name: "a runtime that reports no handlers: sent unchecked, with a note", class: new("kata"), known: true, want: "kata",
			note: "the runtime reports no handlers in its CRI Status"},
		{name: "a dry run: not checked, with a note", class: new("kata"), want: "kata", note: "the runtime was not asked"},
		{name: "a dry run still refuses a class the run lacks", class: new("gvisor"),
			err: `runtimeclass.node.k8s.io "gvisor" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{RuntimeClassName: tc.class}}
			d := decideRuntimeHandler(pod, classes, tc.reported, tc.known)
			switch {
			case tc.err != "":
				if d.Err == nil || !strings.Contains(d.Err.Error(), tc.err) {
					t.Errorf("error %v, want %s", d.Err, tc.err)
				}
				return
			case d.Err != nil:
				t.Fatalf("refused: %v", d.Err)
			}
			if d.Handler != tc.want {
				t.Errorf("handler %q, want %q", d.Handler, tc.want)
			}
			if (tc.note == "") != (d.Note == "") || !strings.Contains(d.Note, tc.note) {
				t.Errorf("note %q, want one with %q", d.Note, tc.note)
			}
		})
	}
}

// TestUsernsByHandler: hostUsers false is judged on the user namespace
// support of the pod's own handler, as the kubelet judges it.
func TestUsernsByHandler(t *testing.T) {
	f := false
	pods := []*v1.Pod{usernsPod("a", &f), usernsPod("b", &f)}
	reported := []*runtimeapi.RuntimeHandler{
		{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}},
		{Name: "old", Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: false}},
	}
	if err := checkUserns(pods, nil, reported); err != nil {
		t.Errorf("default handler: %v", err)
	}
	err := checkUserns(pods, map[string]string{"uid-b": "old"}, reported)
	if err == nil || err.Error() != "pod default/b: spec.hostUsers: false needs a user namespace: the runtime's old handler does not support user namespaces "+
		"(CRI Status: features.user_namespaces false; the OCI runtime behind it must support idmapped mounts, e.g. runc >= 1.2)" {
		t.Errorf("handler old: %v", err)
	}
}
