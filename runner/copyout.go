package runner

// --copy-out (Config.CopyOuts): a path on a container's volume copied into
// a host dir when the container has ended for good, as the sync loop
// observes it (copyEnded), or, for one that had not (a restartPolicy
// Always container, a sidecar, one still running when the wait ended), at
// teardown once the pod's containers are stopped and before its volumes
// go (copyRest). The pre-flight (artifacts.CheckRun, from refusals) has
// checked every spec against the pods before anything was created.

import (
	"errors"
	"fmt"
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/runner/artifacts"
	"github.com/podrun/podrun/sources/podresources"
)

// CopyOutResult is how one --copy-out of a pod went.
type CopyOutResult struct {
	Spec    artifacts.Spec
	Files   int      // files copied
	Bytes   int64    // bytes copied
	Skipped []string // entries not copied (symlinks, devices, ...), "REL (why)"
	Err     error    // the copy failed (what was copied before stays)
}

// copyOut is one --copy-out of the pod during the run.
type copyOut struct {
	artifacts.Planned
	done bool
	res  CopyOutResult
}

func newCopyOuts(pod *v1.Pod, specs []artifacts.Spec) []*copyOut {
	var out []*copyOut
	for _, pl := range artifacts.ForPod(pod, specs) {
		out = append(out, &copyOut{Planned: pl})
	}
	return out
}

// endedForGood tells whether the container, whose newest instance is cs,
// has ended and will not run again: an init container that completed (or
// failed, and is not restarted by its policy or the pod's), a regular container the kubelet
// would not restart (shouldRestart). A sidecar runs until the pod stops.
func endedForGood(pod *v1.Pod, name string, cs *containerStatus) bool {
	if cs == nil || cs.State != stateExited {
		return false
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.Name == name {
			if podresources.IsSidecar(c) {
				return false
			}
			return cs.ExitCode == 0 || !containerRestarts(c, pod.Spec.RestartPolicy, cs.ExitCode)
		}
	}
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == name {
			return !shouldRestart(pod, c, cs)
		}
	}
	return false
}

// copyEnded carries out the copies of the containers that have ended for
// good, as last observed.
func (p *podRun) copyEnded() {
	for _, c := range p.copyOuts {
		if !c.done && endedForGood(p.pod, c.Spec.Container, p.observed.latest(c.Spec.Container)) {
			p.copyOut(c)
		}
	}
}

// copyRest carries out the copies not made yet, at teardown: the pod's
// containers are stopped, its volumes still there.
func (p *podRun) copyRest() {
	for _, c := range p.copyOuts {
		if !c.done {
			p.copyOut(c)
		}
	}
}

// copyOut copies c's path from the host side of the container's mount
// (volumes.Set.MountSource) into its host dir, and reports it.
func (p *podRun) copyOut(c *copyOut) {
	c.done = true
	res := CopyOutResult{Spec: c.Spec}
	err := c.Err
	if err == nil {
		res, err = p.copyFromVolume(c)
	}
	if err != nil {
		if p.observed.latest(c.Spec.Container) == nil {
			err = fmt.Errorf("%w (the container never started)", err)
		}
		res.Err = fmt.Errorf("copying %s of container %s into %s: %w", c.Spec.Path, c.Spec.Container, c.Spec.HostDir, err)
		p.event("CopyOutFailed", "%v%s", res.Err, skippedText(res.Skipped))
	} else {
		p.event("CopiedOut", "%s of container %s into %s: %s%s", c.Spec.Path, c.Spec.Container, c.Spec.HostDir,
			filesText(res.Files, res.Bytes), skippedText(res.Skipped))
	}
	c.res = res
}

func (p *podRun) copyFromVolume(c *copyOut) (CopyOutResult, error) {
	res := CopyOutResult{Spec: c.Spec}
	if p.volumes == nil {
		return res, errors.New("the pod's volumes were never set up")
	}
	root := p.volumes.MountSource(c.Source.Container, c.Source.Mount)
	if root == "" {
		return res, fmt.Errorf("container %s has no volumeMount %d", c.Source.Container, c.Source.Mount)
	}
	d := artifacts.NewDest(c.Spec.HostDir, p.r.opts.CopyOutLimit)
	err := artifacts.CopyTree(root, c.Source.Rel, path.Base(c.Spec.Path), d)
	err = errors.Join(err, d.Close())
	res.Files, res.Bytes, res.Skipped = d.Files, d.Bytes, d.Skipped
	return res, err
}

// copyOutResults is how each --copy-out of the pod went; one never made
// failed with why.
func (p *podRun) copyOutResults(why string) []CopyOutResult {
	var out []CopyOutResult
	for _, c := range p.copyOuts {
		if !c.done {
			c.done = true
			c.res = CopyOutResult{Spec: c.Spec, Err: fmt.Errorf("%s of container %s not copied: %s", c.Spec.Path, c.Spec.Container, why)}
			p.event("CopyOutFailed", "%v", c.res.Err)
		}
		out = append(out, c.res)
	}
	return out
}

// failCopyOuts makes each failed copy one of the pod's errors, with
// --copy-out-required.
func (r *PodResult) failCopyOuts(required bool) {
	if !required {
		return
	}
	for _, c := range r.CopyOuts {
		if c.Err != nil {
			r.failWith(fmt.Errorf("--copy-out %s: %w", c.Spec, c.Err))
		}
	}
}

func filesText(files int, bytes int64) string {
	s := "s"
	if files == 1 {
		s = ""
	}
	return fmt.Sprintf("%d file%s, %d bytes", files, s, bytes)
}

// skippedText names the first entries a copy skipped.
func skippedText(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	const shown = 5
	list := skipped
	more := ""
	if len(list) > shown {
		list, more = list[:shown], fmt.Sprintf(" and %d more", len(skipped)-shown)
	}
	return fmt.Sprintf("; skipped %d: %s%s", len(skipped), strings.Join(list, ", "), more)
}
