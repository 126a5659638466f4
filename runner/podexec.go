package runner

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ExecTarget is the container instance `podrun exec` runs a command in.
type ExecTarget struct {
	Pod         string // NAMESPACE/NAME
	Container   string
	ContainerID string
}

// FindExecTarget finds the running container of a podrun pod (POD: NAME,
// NAMESPACE/NAME or UID) that `podrun exec` runs in: the named container,
// else the one kubectl defaults to (execContainer), with kubectl's notice
// when it picked one among several. It must be running, as kubectl
// refuses to exec into a pod that completed.
func FindExecTarget(ctx context.Context, rt Runtime, podArg, container string) (t ExecTarget, notice string, err error) {
	return findRunningContainer(ctx, rt, podArg, container, "exec into")
}

// FindCopyTarget is FindExecTarget for `podrun cp`, which runs tar there:
// its errors say that it copies from the container.
func FindCopyTarget(ctx context.Context, rt Runtime, podArg, container string) (t ExecTarget, notice string, err error) {
	return findRunningContainer(ctx, rt, podArg, container, "copy from")
}

// findRunningContainer is FindExecTarget's search; verb says what cannot
// be done to a container that is not running ("exec into").
func findRunningContainer(ctx context.Context, rt Runtime, podArg, container, verb string) (t ExecTarget, notice string, err error) {
	pod, err := findPod(ctx, rt, podArg)
	if err != nil {
		return t, "", err
	}
	ctrs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{labelPodUID: pod.UID}})
	if err != nil {
		return t, "", err
	}
	sb := pod.Sandboxes[0]
	c, notice, err := execContainer(pod.Name, containersOf(sb, ctrs), sb.Annotations[defaultContainerAnnotation], container)
	if err != nil {
		return t, "", err
	}
	insts, err := instancesOf(ctx, rt, ctrs, c.Name, 1, "")
	if err != nil {
		return t, "", err
	}
	t = ExecTarget{Pod: pod.Namespace + "/" + pod.Name, Container: c.Name}
	if err := execState(t, insts, verb); err != nil {
		return t, "", err
	}
	t.ContainerID = insts[0].ID
	return t, notice, nil
}

// execState refuses a container whose newest instance (insts, newest
// first) is not running: what cannot be done to it is verb.
func execState(t ExecTarget, insts []*containerStatus, verb string) error {
	if len(insts) == 0 {
		return fmt.Errorf("cannot %s container %s of pod %s: it has not been created", verb, t.Container, t.Pod)
	}
	switch c := insts[0]; c.State {
	case stateRunning:
		return nil
	case stateExited:
		return fmt.Errorf("cannot %s container %s of pod %s: it is not running (exited with code %d)", verb, t.Container, t.Pod, c.ExitCode)
	default:
		return fmt.Errorf("cannot %s container %s of pod %s: it is not running (%s)", verb, t.Container, t.Pod, c.State)
	}
}
