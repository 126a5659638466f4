// Package sources turns podrun's -f specs into decoded, defaulted and
// validated API objects: the part of the kubelet's static-pod sources
// (pkg/kubelet/config) and of the API server's create path that podrun
// needs, without an API server.
//
// A spec is a file, a directory (every regular file whose name does not
// start with a dot, in lexical order, not recursive), "-" for stdin, or an
// http:// or https:// URL. Each source may hold several YAML documents
// (block style or the flow-style "KYAML"), a JSON object or a stream of
// them, and v1 List, PodList, ConfigMapList, SecretList and (node.k8s.io/v1)
// RuntimeClassList wrappers. Pods, ConfigMaps, Secrets and RuntimeClasses
// are accepted, and the workloads Job, CronJob, Deployment, ReplicaSet,
// StatefulSet and DaemonSet, whose pods are made as their controllers make
// them (workload.go, apps.go, job.go; docs/workloads.md); every other kind
// is an error. A pod (or a workload's pod template) that names a
// RuntimeClass is admitted against the run's as the API server's
// RuntimeClass admission admits it (runtimeclass.go).
//
// Where podrun differs from the kubelet, on purpose:
//   - every document of a file is read, not only the first, and the same
//     kinds are accepted from files, stdin and URLs;
//   - decoding is strict: unknown and duplicate fields are errors with
//     their full field path, as with kubectl's --validate=strict;
//   - a bad file in a directory fails the run instead of being skipped;
//   - a pod keeps the name the user wrote: the static pod's
//     "-<nodename>" suffix is not added;
//   - no NoExecute toleration is added to file pods;
//   - a metadata.uid that is given must be a lowercase RFC 1123 label (API
//     server UUIDs and the kubelet's own static-pod UIDs are), since it
//     names podrun's data, log and cgroup paths; the kubelet takes any.
//   - a resource quantity must fit the int64 the kubelet computes with
//     (cpu in millicores, the rest in units): the API server takes
//     memory: 1e400, which the kubelet wraps around into no limit.
//
// Documents are numbered from 1, counting only non-empty ones: a document
// of nothing but comments or whitespace is skipped and not counted. Line
// numbers in YAML syntax errors count from the start of their document.
//
// Each stage has its own file: load.go reads specs, decode.go splits
// documents and dispatches kinds, strict.go checks fields against the Go
// types, defaults.go and imageref.go apply API defaulting, validate.go
// checks what podrun relies on, duplicates.go finds objects defined
// twice, runtimeclass.go admits pods against the RuntimeClasses, uid.go
// computes object UIDs and errors.go renders errors.
// overrides.go applies --image and --env to each pod before its defaults;
// runpod.go generates the pod of `podrun run NAME --image IMAGE`, as
// kubectl run does, and decodes it as a manifest.
package sources
