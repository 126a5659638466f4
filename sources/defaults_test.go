package sources

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// decodePod decodes a single pod manifest or fails the test.
func decodePod(t *testing.T, data string, opts Options) *Pod {
	t.Helper()
	set, err := Decode("pod.yaml", []byte(data), opts)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(set.Pods) != 1 {
		t.Fatalf("got %d pods, want 1", len(set.Pods))
	}
	return set.Pods[0]
}

func TestDefaultPod(t *testing.T) {
	pod := decodePod(t, `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - name: init
    image: busybox
    resources: {limits: {cpu: 500m}}
  containers:
  - name: app
    image: nginx:1.29
    ports: [{containerPort: 80}]
    resources:
      limits: {cpu: "1", memory: 100Mi}
      requests: {cpu: 200m}
    env:
    - name: NODE
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
    livenessProbe: {httpGet: {port: 80}}
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 5}
    lifecycle: {preStop: {httpGet: {port: 80, path: /stop}}}
  volumes:
  - name: none
  - name: cm
    configMap: {name: c}
  - name: sec
    secret: {secretName: s, defaultMode: 0400}
  - name: dapi
    downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}
  - name: proj
    projected:
      sources:
      - serviceAccountToken: {path: token}
      - downwardAPI: {items: [{path: ns, fieldRef: {fieldPath: metadata.namespace}}]}
  - name: host
    hostPath: {path: /tmp}
status: {phase: Running, podIP: 10.0.0.1}
`, Options{NodeName: "node1"})

	s := pod.Spec
	checks := []struct {
		name      string
		got, want any
	}{
		{"namespace", pod.Namespace, "default"},
		{"nodeName", s.NodeName, "node1"},
		{"dnsPolicy", s.DNSPolicy, v1.DNSClusterFirst},
		{"restartPolicy", s.RestartPolicy, v1.RestartPolicyAlways},
		{"securityContext", *s.SecurityContext, v1.PodSecurityContext{}},
		{"terminationGracePeriodSeconds", *s.TerminationGracePeriodSeconds, int64(30)},
		{"schedulerName", s.SchedulerName, "default-scheduler"},
		{"enableServiceLinks", *s.EnableServiceLinks, true},
		{"status", pod.Status, v1.PodStatus{Phase: v1.PodPending}},
		{"init imagePullPolicy (no tag)", s.InitContainers[0].ImagePullPolicy, v1.PullAlways},
		{"init requests from limits", s.InitContainers[0].Resources.Requests.Cpu().String(), "500m"},
		{"imagePullPolicy (tag)", s.Containers[0].ImagePullPolicy, v1.PullIfNotPresent},
		{"terminationMessagePath", s.Containers[0].TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", s.Containers[0].TerminationMessagePolicy, v1.TerminationMessageReadFile},
		{"port protocol", s.Containers[0].Ports[0].Protocol, v1.ProtocolTCP},
		{"hostPort without hostNetwork", s.Containers[0].Ports[0].HostPort, int32(0)},
		{"request kept", s.Containers[0].Resources.Requests.Cpu().String(), "200m"},
		{"request copied from limit", s.Containers[0].Resources.Requests.Memory().String(), "100Mi"},
		{"fieldRef apiVersion", s.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"liveness probe", *s.Containers[0].LivenessProbe, v1.Probe{
			ProbeHandler:   v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: v1.URISchemeHTTP}},
			TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}},
		{"readiness period kept", s.Containers[0].ReadinessProbe.PeriodSeconds, int32(5)},
		{"preStop httpGet scheme", s.Containers[0].Lifecycle.PreStop.HTTPGet.Scheme, v1.URISchemeHTTP},
		{"preStop httpGet path kept", s.Containers[0].Lifecycle.PreStop.HTTPGet.Path, "/stop"},
		{"volume without source", s.Volumes[0].VolumeSource, v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{"configMap defaultMode", *s.Volumes[1].ConfigMap.DefaultMode, int32(0o644)},
		{"secret defaultMode kept", *s.Volumes[2].Secret.DefaultMode, int32(0o400)},
		{"downwardAPI defaultMode", *s.Volumes[3].DownwardAPI.DefaultMode, int32(0o644)},
		{"downwardAPI fieldRef apiVersion", s.Volumes[3].DownwardAPI.Items[0].FieldRef.APIVersion, "v1"},
		{"projected defaultMode", *s.Volumes[4].Projected.DefaultMode, int32(0o644)},
		{"token expirationSeconds", *s.Volumes[4].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds, int64(3600)},
		{"projected fieldRef apiVersion", s.Volumes[4].Projected.Sources[1].DownwardAPI.Items[0].FieldRef.APIVersion, "v1"},
		{"hostPath type", *s.Volumes[5].HostPath.Type, v1.HostPathUnset},
		{"config.source", pod.Annotations[ConfigSourceAnnotationKey], "file"},
		{"config.hash", pod.Annotations[ConfigHashAnnotationKey], string(pod.UID)},
		{"name has no node suffix", pod.Name, "web"},
		{"creationTimestamp untouched", pod.CreationTimestamp.IsZero(), true},
	}
	for _, c := range checks {
		if !equality.Semantic.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestDefaultPodKeepsWhatIsSet(t *testing.T) {
	pod := decodePod(t, `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ns, uid: "1234", annotations: {kubernetes.io/config.source: api}}
spec:
  nodeName: other
  hostNetwork: true
  dnsPolicy: Default
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  enableServiceLinks: false
  schedulerName: mine
  containers:
  - name: app
    image: nginx
    imagePullPolicy: Never
    ports: [{containerPort: 80}, {containerPort: 53, hostPort: 5353, protocol: UDP}]
`, Options{NodeName: "node1"})
	s := pod.Spec
	checks := []struct {
		name      string
		got, want any
	}{
		{"namespace", pod.Namespace, "ns"},
		{"uid", string(pod.UID), "1234"},
		{"config.hash follows uid", pod.Annotations[ConfigHashAnnotationKey], "1234"},
		{"config.source is overwritten", pod.Annotations[ConfigSourceAnnotationKey], "file"},
		{"nodeName", s.NodeName, "other"},
		{"dnsPolicy", s.DNSPolicy, v1.DNSDefault},
		{"restartPolicy", s.RestartPolicy, v1.RestartPolicyNever},
		{"grace", *s.TerminationGracePeriodSeconds, int64(0)},
		{"enableServiceLinks", *s.EnableServiceLinks, false},
		{"schedulerName", s.SchedulerName, "mine"},
		{"imagePullPolicy", s.Containers[0].ImagePullPolicy, v1.PullNever},
		{"hostNetwork hostPort", s.Containers[0].Ports[0].HostPort, int32(80)},
		{"hostPort kept", s.Containers[0].Ports[1].HostPort, int32(5353)},
	}
	for _, c := range checks {
		if !equality.Semantic.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestDefaultConfigMapAndSecret(t *testing.T) {
	set, err := Decode("-", []byte(`apiVersion: v1
kind: Secret
metadata: {name: s}
data: {a: YQ==, b: Yg==}
stringData: {b: B, c: C}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {k: v}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sec := set.Secrets[0]
	if sec.Namespace != "default" || sec.Type != v1.SecretTypeOpaque || sec.StringData != nil {
		t.Errorf("secret namespace %q type %q stringData %v", sec.Namespace, sec.Type, sec.StringData)
	}
	want := map[string]string{"a": "a", "b": "B", "c": "C"}
	if len(sec.Data) != len(want) {
		t.Errorf("data = %v, want %v", sec.Data, want)
	}
	for k, v := range want {
		if string(sec.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, sec.Data[k], v)
		}
	}
	if cm := set.ConfigMaps[0]; cm.Namespace != "default" || cm.UID == "" {
		t.Errorf("configmap namespace %q uid %q", cm.Namespace, cm.UID)
	}
}

func TestPullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  v1.PullPolicy
	}{
		{"nginx", v1.PullAlways},
		{"nginx:latest", v1.PullAlways},
		{"nginx:1.29", v1.PullIfNotPresent},
		{"docker.io/library/nginx", v1.PullAlways},
		{"127.0.0.1:5000/x", v1.PullAlways},
		{"127.0.0.1:5000/x:v1", v1.PullIfNotPresent},
		{"localhost:5000/a/b:latest", v1.PullAlways},
		{"[::1]:5000/x", v1.PullAlways},
		{"localhost:5000", v1.PullIfNotPresent}, // tag "5000" on image localhost
		{"nginx@sha256:" + hex64, v1.PullIfNotPresent},
		{"nginx:latest@sha256:" + hex64, v1.PullAlways},
		{"nginx:1.0@sha256:" + hex64, v1.PullIfNotPresent},
		{"nginx@sha256:abc", v1.PullIfNotPresent}, // invalid digest: unparsable
		{"<your-private-image>", v1.PullIfNotPresent},
		{"Nginx", v1.PullIfNotPresent}, // upper case path: unparsable
		{"Registry.Example.com/nginx", v1.PullAlways},
		{hex64, v1.PullIfNotPresent}, // a bare image ID is rejected
		{"", v1.PullIfNotPresent},
	}
	for _, tt := range tests {
		if got := pullPolicy(tt.image); got != tt.want {
			t.Errorf("pullPolicy(%q) = %s, want %s", tt.image, got, tt.want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestQuantityAsNumber(t *testing.T) {
	pod := decodePod(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    resources: {limits: {example.com/dongle: 3}}\n", Options{})
	got := pod.Spec.Containers[0].Resources.Requests["example.com/dongle"]
	if got.Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("request = %s, want 3", got.String())
	}
}

// TestStaticPodDefaults: --static-pod-names does what the kubelet's file
// source does to a static pod (applyDefaults): the <name>-<node> name
// (lower-cased node), spec.nodeName overridden, the NoExecute toleration
// added or made exact; the namespace default and the UID are podrun's.
func TestStaticPodDefaults(t *testing.T) {
	seen := time.Date(2026, 11, 23, 22, 7, 46, 466735800, time.UTC)
	for _, tc := range []struct {
		name, manifest  string
		wantName        string
		wantTolerations []v1.Toleration
	}{
		{"a plain pod", `apiVersion: v1
kind: Pod
metadata: {name: etcd}
spec: {nodeName: elsewhere, containers: [{name: c, image: busybox}]}
`, "etcd-node1", []v1.Toleration{{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}},
		{"its tolerations kept, a matching one made exact", `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: kube-system}
spec:
  tolerations:
  - {key: a, operator: Equal, value: b, effect: NoSchedule}
  - {operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  containers: [{name: c, image: busybox}]
`, "web-node1", []v1.Toleration{
			{Key: "a", Operator: v1.TolerationOpEqual, Value: "b", Effect: v1.TaintEffectNoSchedule},
			{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := decodePod(t, tc.manifest, Options{NodeName: "Node1", StaticPodNames: true, Seen: seen})
			if pod.Name != tc.wantName {
				t.Errorf("name %q, want %q", pod.Name, tc.wantName)
			}
			if pod.Spec.NodeName != "Node1" {
				t.Errorf("nodeName %q, want Node1", pod.Spec.NodeName)
			}
			if !equality.Semantic.DeepEqual(pod.Spec.Tolerations, tc.wantTolerations) {
				t.Errorf("tolerations %+v, want %+v", pod.Spec.Tolerations, tc.wantTolerations)
			}
			want := map[string]string{
				ConfigSourceAnnotationKey:    "file",
				ConfigHashAnnotationKey:      string(pod.UID),
				ConfigFirstSeenAnnotationKey: "2026-11-23T22:07:46.466735800Z",
			}
			for k, v := range want {
				if pod.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, pod.Annotations[k], v)
				}
			}
		})
	}
	// Without the flag: the name as written, no config.seen without Seen.
	pod := decodePod(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: etcd}\nspec: {containers: [{name: c, image: busybox}]}\n", Options{NodeName: "node1"})
	if _, ok := pod.Annotations[ConfigFirstSeenAnnotationKey]; pod.Name != "etcd" || len(pod.Spec.Tolerations) != 0 || ok {
		t.Errorf("without --static-pod-names: name %q, tolerations %v, annotations %v", pod.Name, pod.Spec.Tolerations, pod.Annotations)
	}
}
