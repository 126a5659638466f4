package runner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// User namespaces (spec.hostUsers: false), as the kubelet's userns manager
// does them: each pod gets 65536 host IDs of its own, mapped to IDs 0-65535
// inside, the same for uids and gids, in the sandbox and in every
// container (NamespaceOption.UsernsOptions, mode POD). The first 65536 host
// IDs are the host's: no pod range starts at 0.
const (
	usernsLength = 65536
	// usernsSlots: pod ranges live in host IDs [65536, 2^31), slot n at
	// n*65536 for n in 1..usernsSlots.
	usernsSlots = (1<<31)/usernsLength - 1
)

// hostUsersOff: the pod asks for a user namespace of its own.
func hostUsersOff(pod *v1.Pod) bool {
	return pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers
}

// usernsOptions is the CRI user namespace of a pod whose range starts at
// hostBase: nil (the node's, the runtime's default) unless hostUsers is false.
func usernsOptions(pod *v1.Pod, hostBase uint32) *runtimeapi.UserNamespace {
	if !hostUsersOff(pod) {
		return nil
	}
	m := func() []*runtimeapi.IDMapping {
		return []*runtimeapi.IDMapping{{HostId: hostBase, ContainerId: 0, Length: usernsLength}}
	}
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: m(), Gids: m()}
}

// usedUsernsBases: the ranges the listed sandboxes hold (their annotation).
func usedUsernsBases(sbs []*runtimeapi.PodSandbox) map[uint32]bool {
	used := map[uint32]bool{}
	for _, sb := range sbs {
		if s, ok := sb.Annotations[annotationUsernsBase]; ok {
			if b, err := strconv.ParseUint(s, 10, 32); err == nil {
				used[uint32(b)] = true
			}
		}
	}
	return used
}

// allocateUsernsBase picks the range of a pod: the slot its UID hashes to,
// or the next free one after it, skipping used (which it then marks).
// Deriving from the UID keeps two podruns starting at once apart unless
// their pods' UIDs hash alike.
func allocateUsernsBase(uid string, used map[uint32]bool) (uint32, error) {
	h := fnv.New32a()
	h.Write([]byte(uid))
	start := h.Sum32() % usernsSlots
	for i := uint32(0); i < usernsSlots; i++ {
		base := ((start+i)%usernsSlots + 1) * usernsLength
		if !used[base] {
			used[base] = true
			return base, nil
		}
	}
	return 0, errors.New("no free user namespace range: every one is in use")
}

// allocateUserns gives each pod with hostUsers false a range no listed
// sandbox (sbs: podrun's live ones) nor other pod of the run holds, by UID.
func allocateUserns(pods []*v1.Pod, sbs []*runtimeapi.PodSandbox) (map[string]uint32, error) {
	used := usedUsernsBases(sbs)
	out := map[string]uint32{}
	for _, pod := range pods {
		if !hostUsersOff(pod) {
			continue
		}
		b, err := allocateUsernsBase(string(pod.UID), used)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		out[string(pod.UID)] = b
	}
	return out, nil
}

// allocateRunUserns is allocateUserns for a run's pods and Jobs: each Job
// whose pods have hostUsers false holds a range for each pod it runs at
// once (jobParallel), by namespace/name.
func allocateRunUserns(pods []*v1.Pod, jobs []Job, sbs []*runtimeapi.PodSandbox) (map[string]uint32, map[string][]uint32, error) {
	byPod, err := allocateUserns(append(slices.Clip(pods), JobFirstPods(jobs)...), sbs)
	if err != nil {
		return nil, nil, err
	}
	byJob := map[string][]uint32{}
	for _, j := range jobs {
		for _, p := range JobFirstPods([]Job{j}) {
			if b, ok := byPod[string(p.UID)]; ok {
				byJob[j.name()] = append(byJob[j.name()], b)
				delete(byPod, string(p.UID))
			}
		}
	}
	return byPod, byJob, nil
}

// checkUserns refuses, before anything is created, pods with hostUsers
// false when their runtime handler (handlers, by pod UID: a RuntimeClass's;
// the default "" without one) does not report user namespace support
// (CRI Status RuntimeHandlers[].Features.UserNamespaces, reported), as
// the kubelet does.
func checkUserns(pods []*v1.Pod, handlers map[string]string, reported []*runtimeapi.RuntimeHandler) error {
	var errs []error
	for _, p := range pods {
		if hostUsersOff(p) {
			errs = append(errs, usernsRefusal([]*v1.Pod{p}, reported, handlers[string(p.UID)]))
		}
	}
	return errors.Join(errs...)
}

// usernsRefusal: the error for pods (all with hostUsers false) when
// handler lacks user namespace support among handlers, else nil.
func usernsRefusal(pods []*v1.Pod, handlers []*runtimeapi.RuntimeHandler, handler string) error {
	var msg string
	found := false
	for _, h := range handlers {
		if h.GetName() == handler {
			found = true
			if h.GetFeatures().GetUserNamespaces() {
				return nil
			}
		}
	}
	name := handler
	if name == "" {
		name = "default"
	}
	if found {
		msg = fmt.Sprintf("the runtime's %s handler does not support user namespaces (CRI Status: features.user_namespaces false; the OCI runtime behind it must support idmapped mounts, e.g. runc >= 1.2)", name)
	} else {
		msg = fmt.Sprintf("the runtime reports no %s handler, so no user namespace support", name)
	}
	var errs []error
	for _, p := range pods {
		errs = append(errs, fmt.Errorf("pod %s/%s: spec.hostUsers: false needs a user namespace: %s", p.Namespace, p.Name, msg))
	}
	return errors.Join(errs...)
}
