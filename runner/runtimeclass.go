package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime classes: a pod's spec.runtimeClassName names one of the run's
// RuntimeClasses, whose handler is the CRI runtime handler its sandbox is
// created with (RunPodSandbox's runtime_handler), as an API-server
// kubelet's RuntimeClassManager looks it up. What the API server's
// RuntimeClass admission does to the pod (the overhead, the scheduling)
// was done when the manifests were read (package sources).

// lookupRuntimeHandler is the kubelet's RuntimeClassManager
// LookupRuntimeHandler over the run's RuntimeClasses: "" (the runtime's
// default handler) for a pod without a class, the class's handler, or the
// kubelet's error for a class that does not exist.
func lookupRuntimeHandler(pod *v1.Pod, classes []*nodev1.RuntimeClass) (string, error) {
	name := pod.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return "", nil
	}
	for _, rc := range classes {
		if rc.Name == *name {
			return rc.Handler, nil
		}
	}
	return "", fmt.Errorf("runtimeclass.node.k8s.io %q not found", *name)
}

// handlerDecision is whether a pod may run with its RuntimeClass's
// handler on this runtime, given the handlers the runtime reports (CRI
// Status runtime_handlers): known says whether the runtime was asked (a
// dry run's is not). A refusal is err; a handler that could not be checked
// is a note.
type handlerDecision struct {
	Handler string
	Note    string
	Err     error
}

// decideRuntimeHandler decides for one pod (runtimeHandlers). The
// kubelet checks nothing before RunPodSandbox, which the runtime fails
// for a handler it does not have (containerd: `no runtime for "kata" is
// configured`), and the pod then waits in ContainerCreating with the
// sandbox's error; podrun refuses it before anything is created, naming
// the handlers the runtime has. A runtime that reports no handlers
// (containerd before 2.0, CRI before 1.30) is taken at its word when the
// sandbox is made: the handler is sent unchecked, with a note, and the
// runtime's refusal is the pod's error.
func decideRuntimeHandler(pod *v1.Pod, classes []*nodev1.RuntimeClass, reported []*runtimeapi.RuntimeHandler, known bool) handlerDecision {
	h, err := lookupRuntimeHandler(pod, classes)
	if err != nil {
		return handlerDecision{Err: fmt.Errorf("spec.runtimeClassName: %w: the run has no RuntimeClass of that name (give it with -f)", err)}
	}
	if h == "" {
		return handlerDecision{}
	}
	class := *pod.Spec.RuntimeClassName
	switch {
	case !known:
		return handlerDecision{Handler: h, Note: fmt.Sprintf("RuntimeClass %q: handler %q is not checked: the runtime was not asked which handlers it has (a run refuses a handler the runtime does not report)", class, h)}
	case len(reported) == 0:
		return handlerDecision{Handler: h, Note: fmt.Sprintf("RuntimeClass %q: handler %q is not checked: the runtime reports no handlers in its CRI Status (containerd before 2.0); RunPodSandbox will say whether it has it", class, h)}
	case slices.ContainsFunc(reported, func(r *runtimeapi.RuntimeHandler) bool { return r.GetName() == h }):
		return handlerDecision{Handler: h}
	}
	return handlerDecision{Handler: h, Err: fmt.Errorf("spec.runtimeClassName: RuntimeClass %q has handler %q, which the runtime does not have (its handlers, from CRI Status: %s); a kubelet's RunPodSandbox would fail",
		class, h, handlerNames(reported))}
}

// handlerNames lists the runtime's handlers by name, the default ("")
// as "the default".
func handlerNames(reported []*runtimeapi.RuntimeHandler) string {
	var names []string
	for _, r := range reported {
		n := fmt.Sprintf("%q", r.GetName())
		if r.GetName() == "" {
			n = "the default"
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// runtimeHandlers decides every pod's handler before anything is created
// (decideRuntimeHandler), as refusals and a dry run need them: the
// handlers by pod UID (only those not the default), the notes, and every
// pod's refusal, each naming the pod.
func runtimeHandlers(pods []*v1.Pod, classes []*nodev1.RuntimeClass, facts Facts) (map[string]string, []string, error) {
	handlers := map[string]string{}
	var notes []string
	var errs []error
	for _, p := range pods {
		d := decideRuntimeHandler(p, classes, facts.RuntimeHandlers, !facts.NoRuntime)
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, d.Err))
			continue
		}
		if d.Note != "" {
			notes = append(notes, fmt.Sprintf("pod %s/%s: %s", p.Namespace, p.Name, d.Note))
		}
		if d.Handler != "" {
			handlers[string(p.UID)] = d.Handler
		}
	}
	return handlers, notes, errors.Join(errs...)
}
