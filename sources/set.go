package sources

import (
	"io"
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
)

// Options configure Load and Decode.
type Options struct {
	// Stdin is read for the spec "-".
	Stdin io.Reader
	// HTTPHeaders are sent with every manifest URL request
	// (--manifest-url-header), and with its redirects while they stay on
	// its origin (scheme, host and port); values of one key are added in
	// order.
	HTTPHeaders http.Header
	// HTTPCAFile is a PEM file of CA certificates that manifest URLs'
	// servers are verified against besides the system roots
	// (--manifest-url-ca).
	HTTPCAFile string
	// HTTPClient fetches manifest URLs. Nil means a client with a 10 s
	// timeout, as the kubelet's HTTP source uses, HTTPCAFile, and at most
	// 10 redirects, none from https to http.
	HTTPClient *http.Client
	// HTTPTimeout bounds each manifest URL request, the body included,
	// when HTTPClient is nil; 0 is the kubelet's 10 s.
	HTTPTimeout time.Duration
	// NodeName is the default for spec.nodeName and part of every UID.
	NodeName string
	// StaticPodNames applies the kubelet's static pod defaults
	// (--static-pod-names): each pod is named <name>-<node name>, runs on
	// this node whatever spec.nodeName says, and tolerates every NoExecute
	// taint (staticPodDefaults).
	StaticPodNames bool
	// Overrides change every pod as it is decoded, before its defaults
	// and validation (--image, --env).
	Overrides Overrides
	// KeepManifests keeps each pod as decoded, overrides applied, before
	// its defaults (Pod.Manifest): what --dry-run=client prints.
	KeepManifests bool
	// matched records which Overrides.Images named a container, over
	// every source of a Load.
	matched []bool
	// Seen, when set, is the time the sources were read: the pods'
	// kubernetes.io/config.seen annotation, as the kubelet records when it
	// first saw a pod.
	Seen time.Time
}

// Origin identifies where a decoded object came from, for error messages.
type Origin struct {
	// Source is the file path, "stdin" for "-", or the URL.
	Source string
	// Doc is the 1-based index of the document in the source. Only
	// non-empty documents are counted: a document holding nothing but
	// comments or whitespace is skipped and gets no number. Each value of
	// a JSON stream counts as one document. 0 means the whole source.
	Doc int
	// Item is the 1-based index in a List, PodList, ConfigMapList,
	// SecretList or RuntimeClassList document, 0 when the document is not
	// a list.
	Item int
}

// Pod is a decoded, defaulted and validated pod with its UID set.
type Pod struct {
	*v1.Pod
	Origin Origin
	// GivenUID: the manifest has no metadata.uid and podrun gave the pod
	// its UID. A kubelet gives such a manifest another UID (a hash of
	// its own), so it can never adopt the pod (docs/handover.md).
	GivenUID bool
	// Manifest is the pod as decoded with the overrides applied, before
	// its defaults; set with Options.KeepManifests or Options.Overrides.
	Manifest *v1.Pod
	// Workload is the Deployment, ReplicaSet, StatefulSet or DaemonSet
	// the pod was made from; nil for a Pod document.
	Workload *Workload
}

// ConfigMap is a decoded, defaulted and validated ConfigMap.
type ConfigMap struct {
	*v1.ConfigMap
	Origin Origin
}

// Secret is a decoded, defaulted and validated Secret; stringData has been
// merged into data.
type Secret struct {
	*v1.Secret
	Origin Origin
}

// RuntimeClass is a decoded and validated node.k8s.io/v1 RuntimeClass: a
// cluster-scoped object, its namespace cleared as the API server clears
// it.
type RuntimeClass struct {
	*nodev1.RuntimeClass
	Origin Origin
}

// Set is everything decoded from the specs, each kind in the order given.
// A Deployment, ReplicaSet, StatefulSet or DaemonSet document is the Pod
// its controller would make; a Job or a CronJob document is a Job, whose
// pods the run makes.
type Set struct {
	Pods           []*Pod
	Jobs           []*Job
	ConfigMaps     []*ConfigMap
	Secrets        []*Secret
	RuntimeClasses []*RuntimeClass
}

func (s *Set) append(o *Set) {
	s.Pods = append(s.Pods, o.Pods...)
	s.Jobs = append(s.Jobs, o.Jobs...)
	s.ConfigMaps = append(s.ConfigMaps, o.ConfigMaps...)
	s.Secrets = append(s.Secrets, o.Secrets...)
	s.RuntimeClasses = append(s.RuntimeClasses, o.RuntimeClasses...)
}

func (s *Set) len() int {
	return len(s.Pods) + len(s.Jobs) + len(s.ConfigMaps) + len(s.Secrets) + len(s.RuntimeClasses)
}
