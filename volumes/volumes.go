// Package volumes sets up a pod's volumes the way the kubelet's volume
// plugins (pkg/volume) and volume manager (pkg/kubelet/volumemanager) do,
// without an API server: emptyDir (disk or tmpfs), hostPath with
// its type checks, and configMap, secret, downwardAPI and projected volumes
// filled from the ConfigMaps and Secrets of the same podrun run and written
// through an atomic writer. It also decides each container's mounts
// (subPath, subPathExpr, readOnly, mountPropagation) and bind-mounts
// subpaths safely.
//
// Every plugin is a pure decision and a thin effect. Plan decides, for one
// pod, what each volume is: the dir to make, whether it is a tmpfs and how
// large, its mode, the files to write, the host path to check. SetUp
// carries the plan out under the pod's data dir:
//
//	<pod dir>/volumes/kubernetes.io~<plugin>/<volume>   the volume
//	<pod dir>/plugins/kubernetes.io~empty-dir/<volume>/ready
//	<pod dir>/volume-subpaths/<volume>/<container>/<mount index>
//
// Volume types that need an API server, a CSI driver or the kubelet's
// in-tree cloud plugins are refused by Check before anything is created,
// naming the volume and why. So is a reference to a ConfigMap or Secret that
// the run does not provide (unless it is optional): a kubelet would wait for
// it to appear, but nothing can add it to a podrun run.
//
// Teardown is the pod data dir's: everything mounted under it is unmounted
// before it is removed (RemoveSafely).
package volumes

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podrun/podrun/sources/podresources"
)

// Plugin directory names under <pod dir>/volumes, as the kubelet escapes
// its plugin names ("/" → "~").
const (
	PluginEmptyDir    = "kubernetes.io~empty-dir"
	PluginHostPath    = "kubernetes.io~host-path"
	PluginConfigMap   = "kubernetes.io~configmap"
	PluginSecret      = "kubernetes.io~secret"
	PluginDownwardAPI = "kubernetes.io~downward-api"
	PluginProjected   = "kubernetes.io~projected"
)

// Kind is the type of a volume podrun sets up.
type Kind string

const (
	KindEmptyDir    Kind = "emptyDir"
	KindHostPath    Kind = "hostPath"
	KindConfigMap   Kind = "configMap"
	KindSecret      Kind = "secret"
	KindDownwardAPI Kind = "downwardAPI"
	KindProjected   Kind = "projected"
	// KindImage is an image volume (ImageVolume, GA in v1.36): an OCI
	// image that the runtime mounts read-only, with no dir of podrun's.
	KindImage Kind = "image"
)

// defaultDirMode is the mode of an emptyDir (and of the emptyDir that wraps
// a configMap, secret, downwardAPI or projected volume): the kubelet's
// defaultPerm.
const defaultDirMode = 0o777

// Objects are the ConfigMaps and Secrets a run provides: where a kubelet
// would read them from the API server.
type Objects struct {
	ConfigMaps []*v1.ConfigMap
	Secrets    []*v1.Secret
}

// ConfigMap is the run's ConfigMap namespace/name, nil when there is none.
func (o Objects) ConfigMap(namespace, name string) *v1.ConfigMap {
	for _, cm := range o.ConfigMaps {
		if cm.Namespace == namespace && cm.Name == name {
			return cm
		}
	}
	return nil
}

// Secret is the run's Secret namespace/name, nil when there is none.
func (o Objects) Secret(namespace, name string) *v1.Secret {
	for _, s := range o.Secrets {
		if s.Namespace == namespace && s.Name == name {
			return s
		}
	}
	return nil
}

// Node is what the decisions need to know about the node: its allocatable
// resources, the defaults of the downward API's resource limits and the
// ceiling of a memory-backed emptyDir.
type Node struct {
	AllocatableMilliCPU         int64
	AllocatableMemory           int64 // bytes
	AllocatableEphemeralStorage int64 // bytes
}

// FileProjection is one file of an atomic writer volume.
type FileProjection struct {
	Data []byte
	Mode int32
}

// Volume is the plan for one pod volume.
type Volume struct {
	Name   string
	Kind   Kind
	Plugin string // dir name under <pod dir>/volumes; "" for hostPath

	// The volume dir (every kind but hostPath).
	DirMode   uint32 // permission bits of the dir, sticky bit included (0777 or emptyDir.mode)
	ModeSet   bool   // emptyDir.mode was given: a tmpfs root gets it too (else tmpfs's own 1777)
	Tmpfs     bool   // backed by a tmpfs (medium Memory; always for secret, downwardAPI, projected)
	TmpfsSize int64  // size= in bytes; 0: no size option

	// Files written through the atomic writer (configMap, secret,
	// downwardAPI, projected); nil for emptyDir.
	Payload map[string]FileProjection

	// hostPath.
	HostPath     string
	HostPathType v1.HostPathType

	// image: the reference as written and its pull policy (defaulted);
	// the runner pulls it and gives the Set the image to mount
	// (Set.ResolveImage).
	Image           string
	ImagePullPolicy v1.PullPolicy

	// FSGroup, when set, is applied to the volume as the kubelet's
	// SetVolumeOwnership does (emptyDir and the atomic writer volumes).
	FSGroup *int64

	// The plugin's attributes: ReadOnly forces read-only mounts;
	// SELinuxRelabel asks the runtime to relabel the first mount.
	ReadOnly       bool
	SELinuxRelabel bool
}

// refusedType says why podrun cannot set up a volume type, by the
// VolumeSource field's JSON name, for the types it knows it refuses.
func refusedType(t string) (string, bool) {
	switch t {
	case "persistentVolumeClaim":
		return "a PersistentVolumeClaim is bound to a volume by the API server and attached by its CSI or in-tree driver; podrun has neither", true
	case "ephemeral":
		return "a generic ephemeral volume is a PersistentVolumeClaim the API server creates; podrun has none", true
	case "csi":
		return "csi volumes are mounted by a CSI driver through the kubelet's CSI plugin; podrun has none", true
	case "gitRepo":
		return "gitRepo volumes are deprecated and disabled in the kubelet; use an init container that clones into an emptyDir", true
	case "flexVolume":
		return "flexVolume drivers are kubelet exec plugins; podrun has none", true
	}
	return "", false
}

// supportedTypes lists the volume types podrun sets up, for messages.
const supportedTypes = "emptyDir, hostPath, configMap, secret, downwardAPI, projected and image"

// volumeType is the JSON name of the one VolumeSource field that is set.
func volumeType(s *v1.VolumeSource) string {
	rv := reflect.ValueOf(s).Elem()
	rt := rv.Type()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// refusal says why podrun cannot set up a volume of type t, or "".
func refusal(t string) string {
	switch t {
	case "emptyDir", "hostPath", "configMap", "secret", "downwardAPI", "projected", "image":
		return ""
	case "":
		return "no volume type is set"
	}
	if why, ok := refusedType(t); ok {
		return why
	}
	return fmt.Sprintf("%s volumes need the kubelet's in-tree volume plugin (a cloud disk or a network filesystem attached for the node); podrun supports only %s volumes", t, supportedTypes)
}

// Plan decides every volume of the pod. objs are the run's ConfigMaps and
// Secrets; node gives the downward API's defaults and the tmpfs ceiling.
// Its errors name the volume; several are joined.
func Plan(pod *v1.Pod, objs Objects, node Node) ([]Volume, error) {
	var out []Volume
	var errs []error
	for i := range pod.Spec.Volumes {
		v, err := planVolume(pod, &pod.Spec.Volumes[i], objs, node)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", pod.Spec.Volumes[i].Name, err))
			continue
		}
		out = append(out, v)
	}
	return out, errors.Join(errs...)
}

func planVolume(pod *v1.Pod, vol *v1.Volume, objs Objects, node Node) (Volume, error) {
	t := volumeType(&vol.VolumeSource)
	if why := refusal(t); why != "" {
		return Volume{}, fmt.Errorf("%s volumes are not supported: %s", t, why)
	}
	v := Volume{Name: vol.Name, DirMode: defaultDirMode, FSGroup: fsGroup(pod)}
	var err error
	switch {
	case vol.EmptyDir != nil:
		err = planEmptyDir(&v, pod, vol.EmptyDir, node)
	case vol.HostPath != nil:
		err = planHostPath(&v, vol.HostPath)
	case vol.ConfigMap != nil:
		err = planConfigMap(&v, pod, vol.ConfigMap, objs)
	case vol.Secret != nil:
		err = planSecret(&v, pod, vol.Secret, objs, node)
	case vol.DownwardAPI != nil:
		err = planDownwardAPI(&v, pod, vol.DownwardAPI, node)
	case vol.Projected != nil:
		err = planProjected(&v, pod, vol.Projected, objs, node)
	case vol.Image != nil:
		// The image volume plugin's attributes: read-only, no relabelling
		// (the runtime mounts the image's own snapshot).
		v.Kind, v.ReadOnly, v.FSGroup = KindImage, true, nil
		v.Image, v.ImagePullPolicy = vol.Image.Reference, vol.Image.PullPolicy
	}
	if err == nil && v.Payload != nil {
		v.Payload, err = validatePayload(v.Payload)
	}
	return v, err
}

func fsGroup(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		g := *sc.FSGroup
		return &g
	}
	return nil
}

// wrapInMemory makes v an atomic writer volume on a tmpfs emptyDir, as the
// kubelet wraps secret, downwardAPI and projected volumes (never on disk).
func wrapInMemory(v *Volume, pod *v1.Pod, node Node) {
	v.Tmpfs = true
	v.TmpfsSize = memoryVolumeSize(node.AllocatableMemory, podresources.MemoryLimit(pod), 0)
	v.ReadOnly = true
	v.SELinuxRelabel = true
}

// checkMode refuses file modes outside 0..0777, as API validation does.
func checkMode(m *int32, what string) error {
	if m != nil && (*m < 0 || *m > 0o777) {
		return fmt.Errorf("%s %#o: must be a number between 0 and 0777 (octal), both inclusive", what, *m)
	}
	return nil
}

// joinLine joins errors on one line ("; "), for the parts of one volume's
// error.
func joinLine(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
