package main

import (
	"strings"

	"github.com/podrun/podrun/runner"
	"github.com/podrun/podrun/sources"
)

// originError is an error whose lines about one pod name where the pod was
// read from; the original error stays in the chain (errors.As finds an
// admission rejection through it).
type originError struct {
	msg string
	err error
}

func (e *originError) Error() string { return e.msg }
func (e *originError) Unwrap() error { return e.err }

// withOrigins puts the source and document of the pod in front of each
// line of err that is about one pod of set ("pod NAMESPACE/NAME: ..."):
// a pod the run refuses (admission, volumes, user namespaces) or could not
// run is named as the decoder names what it refuses,
//
//	pod.yaml: document 2: pod default/web: spec.containers[0].volumeMounts[1].subPath: ...
//
// Other lines, and a nil err, are returned as they are; an *exitError
// keeps its code.
func withOrigins(err error, set *sources.Set) error {
	if err == nil || set == nil {
		return err
	}
	if ee, ok := err.(*exitError); ok {
		return &exitError{code: ee.code, err: withOrigins(ee.err, set)}
	}
	where := make(map[string]string, len(set.Pods))
	for _, p := range set.Pods {
		where["pod "+p.Namespace+"/"+p.Name+": "] = p.Origin.String()
	}
	for _, j := range set.Jobs {
		where["job "+j.Job.Namespace+"/"+j.Job.Name+": "] = j.Origin.String()
		for _, p := range runner.JobFirstPods([]runner.Job{runnerJob(j)}) {
			where["pod "+p.Namespace+"/"+p.Name+": "] = j.Origin.String()
		}
	}
	lines := strings.Split(err.Error(), "\n")
	named := false
	for i, l := range lines {
		prefix, ok := podPrefix(l)
		if o, found := where[prefix]; ok && found {
			lines[i] = o + ": " + l
			named = true
		}
	}
	if !named {
		return err
	}
	return &originError{msg: strings.Join(lines, "\n"), err: err}
}

// podPrefix is the "pod NAMESPACE/NAME: " (or "job NAMESPACE/NAME: ") a
// line starts with.
func podPrefix(line string) (string, bool) {
	i := strings.Index(line, ": ")
	if (!strings.HasPrefix(line, "pod ") && !strings.HasPrefix(line, "job ")) || i < 0 || !strings.Contains(line[:i], "/") {
		return "", false
	}
	return line[:i+2], true
}
