package runner

import (
	"errors"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/volumes"
)

// envBase is the fixture of the env table: a pod in namespace prod with a
// ConfigMap "cfg" and a Secret "sec" in the run, on a node with 4 cpus and
// 8Gi of allocatable memory.
func envBase() envInput {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "prod", UID: "uid-1",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"team": "a"},
		},
		Spec: v1.PodSpec{
			NodeName: "node1", ServiceAccountName: "sa",
			Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
			}}, {Name: "other", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m")},
			}}},
		},
	}
	return envInput{
		Pod: pod, Container: &pod.Spec.Containers[0],
		PodIPs: []string{"10.88.0.5", "fd00::5"}, HostIP: "192.168.1.10",
		Node: volumes.Node{AllocatableMilliCPU: 4000, AllocatableMemory: 8 << 30, AllocatableEphemeralStorage: 100 << 30},
		Objects: volumes.Objects{
			ConfigMaps: []*v1.ConfigMap{
				{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "prod"}, Data: map[string]string{"mode": "fast", "9bad": "x", "A": "from-cm"}},
				{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "other"}, Data: map[string]string{"mode": "wrong-namespace"}},
			},
			Secrets: []*v1.Secret{
				{ObjectMeta: metav1.ObjectMeta{Name: "sec", Namespace: "prod"}, Data: map[string][]byte{"token": []byte("s3cret"), "A": []byte("from-secret")}},
			},
		},
	}
}

func fieldEnv(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
}

func resourceEnv(name, container, res, divisor string) v1.EnvVar {
	sel := &v1.ResourceFieldSelector{ContainerName: container, Resource: res}
	if divisor != "" {
		sel.Divisor = resource.MustParse(divisor)
	}
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: sel}}
}

func cmEnv(name, cm, key string, optional bool) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: cm}, Key: key, Optional: &optional}}}
}

func secretEnv(name, s, key string, optional bool) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: s}, Key: key, Optional: &optional}}}
}

func cmFrom(name, prefix string, optional bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, ConfigMapRef: &v1.ConfigMapEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: &optional}}
}

func secretFrom(name, prefix string, optional bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, SecretRef: &v1.SecretEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: &optional}}
}

func TestContainerEnvSources(t *testing.T) {
	cases := []struct {
		name    string
		env     []v1.EnvVar
		envFrom []v1.EnvFromSource
		mutate  func(*envInput)
		want    [][2]string
	}{
		{name: "metadata fields", env: []v1.EnvVar{
			fieldEnv("N", "metadata.name"), fieldEnv("NS", "metadata.namespace"), fieldEnv("U", "metadata.uid"),
			fieldEnv("L", "metadata.labels['app']"), fieldEnv("AN", "metadata.annotations['team']"),
			fieldEnv("MISSING", "metadata.labels['nope']"),
		}, want: [][2]string{{"N", "web"}, {"NS", "prod"}, {"U", "uid-1"}, {"L", "web"}, {"AN", "a"}, {"MISSING", ""}}},
		{name: "spec fields", env: []v1.EnvVar{fieldEnv("NODE", "spec.nodeName"), fieldEnv("SA", "spec.serviceAccountName")},
			want: [][2]string{{"NODE", "node1"}, {"SA", "sa"}}},
		{name: "status IPs come from the sandbox and the node", env: []v1.EnvVar{
			fieldEnv("IP", "status.podIP"), fieldEnv("IPS", "status.podIPs"), fieldEnv("H", "status.hostIP"), fieldEnv("HS", "status.hostIPs"),
		}, want: [][2]string{{"IP", "10.88.0.5"}, {"IPS", "10.88.0.5,fd00::5"}, {"H", "192.168.1.10"}, {"HS", "192.168.1.10"}}},
		{name: "a hostNetwork pod's IP is the node's", mutate: func(in *envInput) { in.Pod.Spec.HostNetwork, in.PodIPs = true, nil },
			env:  []v1.EnvVar{fieldEnv("IP", "status.podIP"), fieldEnv("IPS", "status.podIPs")},
			want: [][2]string{{"IP", "192.168.1.10"}, {"IPS", "192.168.1.10"}}},
		{name: "resources: cpu in millicores rounded up, memory with a divisor, unset limits are the node's", env: []v1.EnvVar{
			resourceEnv("CPU_REQ", "", "requests.cpu", ""), resourceEnv("CPU_REQ_M", "", "requests.cpu", "1m"),
			resourceEnv("MEM_LIM_MI", "", "limits.memory", "1Mi"), resourceEnv("CPU_LIM", "", "limits.cpu", ""),
			resourceEnv("MEM_REQ", "", "requests.memory", ""), resourceEnv("EPH_LIM_GI", "", "limits.ephemeral-storage", "1Gi"),
		}, want: [][2]string{{"CPU_REQ", "1"}, {"CPU_REQ_M", "250"}, {"MEM_LIM_MI", "128"}, {"CPU_LIM", "4"},
			{"MEM_REQ", "67108864"}, {"EPH_LIM_GI", "100"}}},
		{name: "resources of another named container", env: []v1.EnvVar{resourceEnv("X", "other", "limits.cpu", "100m")},
			want: [][2]string{{"X", "15"}}},
		{name: "configMap and secret keys", env: []v1.EnvVar{cmEnv("MODE", "cfg", "mode", false), secretEnv("TOKEN", "sec", "token", false)},
			want: [][2]string{{"MODE", "fast"}, {"TOKEN", "s3cret"}}},
		{name: "an optional missing object or key sets nothing", env: []v1.EnvVar{
			cmEnv("A", "nope", "k", true), cmEnv("B", "cfg", "nope", true), secretEnv("C", "nope", "k", true), secretEnv("D", "sec", "nope", true),
			{Name: "E", Value: "e"},
		}, want: [][2]string{{"E", "e"}}},
		{name: "envFrom with prefix, keys not filtered, in key order", envFrom: []v1.EnvFromSource{cmFrom("cfg", "CM_", false)},
			want: [][2]string{{"CM_9bad", "x"}, {"CM_A", "from-cm"}, {"CM_mode", "fast"}}},
		{name: "a later envFrom source overwrites an earlier one", envFrom: []v1.EnvFromSource{cmFrom("cfg", "", false), secretFrom("sec", "", false)},
			want: [][2]string{{"9bad", "x"}, {"A", "from-secret"}, {"mode", "fast"}, {"token", "s3cret"}}},
		{name: "env overwrites envFrom and expands against it",
			envFrom: []v1.EnvFromSource{secretFrom("sec", "S_", false)},
			env:     []v1.EnvVar{{Name: "S_A", Value: "mine"}, {Name: "URL", Value: "x:$(S_token)"}},
			want:    [][2]string{{"S_A", "mine"}, {"S_token", "s3cret"}, {"URL", "x:s3cret"}}},
		{name: "optional missing envFrom sources are skipped", envFrom: []v1.EnvFromSource{cmFrom("nope", "", true), secretFrom("nope", "", true)},
			env: []v1.EnvVar{{Name: "X", Value: "1"}}, want: [][2]string{{"X", "1"}}},
		{name: "a valueFrom value is not expanded; a later value referring to it is",
			mutate: func(in *envInput) { in.Pod.Labels["app"] = "$(X)" },
			env:    []v1.EnvVar{{Name: "X", Value: "x"}, fieldEnv("L", "metadata.labels['app']"), {Name: "M", Value: "[$(L)]"}},
			want:   [][2]string{{"X", "x"}, {"L", "$(X)"}, {"M", "[$(X)]"}}},
		{name: "an empty value with no valueFrom is an empty variable", env: []v1.EnvVar{{Name: "E"}},
			want: [][2]string{{"E", ""}}},
		{name: "the object is looked up in the pod's namespace", env: []v1.EnvVar{cmEnv("M", "cfg", "mode", false)},
			mutate: func(in *envInput) { in.Pod.Namespace = "other" }, want: [][2]string{{"M", "wrong-namespace"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := envBase()
			if tc.mutate != nil {
				tc.mutate(&in)
			}
			in.Container.Env, in.Container.EnvFrom = tc.env, tc.envFrom
			kvs, err := containerEnv(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := envOf(kvs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("env =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

func TestContainerEnvErrors(t *testing.T) {
	cases := []struct {
		name    string
		env     []v1.EnvVar
		envFrom []v1.EnvFromSource
		want    string
	}{
		{name: "a missing ConfigMap key", env: []v1.EnvVar{cmEnv("A", "cfg", "nope", false)},
			want: "couldn't find key nope in ConfigMap prod/cfg"},
		{name: "a missing Secret key", env: []v1.EnvVar{secretEnv("A", "sec", "nope", false)},
			want: "couldn't find key nope in Secret prod/sec"},
		{name: "a missing ConfigMap", env: []v1.EnvVar{cmEnv("A", "nope", "k", false)}, want: `configmaps "nope" not found`},
		{name: "a missing Secret", env: []v1.EnvVar{secretEnv("A", "nope", "k", false)}, want: `secrets "nope" not found`},
		{name: "a missing envFrom ConfigMap", envFrom: []v1.EnvFromSource{cmFrom("nope", "", false)}, want: `configmaps "nope" not found`},
		{name: "a missing envFrom Secret", envFrom: []v1.EnvFromSource{secretFrom("nope", "", false)}, want: `secrets "nope" not found`},
		{name: "an unsupported field path", env: []v1.EnvVar{fieldEnv("A", "spec.hostname")}, want: "unsupported fieldPath: spec.hostname"},
		{name: "an unsupported resource", env: []v1.EnvVar{resourceEnv("A", "", "limits.gpu", "")}, want: "unsupported container resource : limits.gpu"},
		{name: "an unknown container", env: []v1.EnvVar{resourceEnv("A", "ghost", "limits.cpu", "")}, want: "container ghost not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := envBase()
			in.Container.Env, in.Container.EnvFrom = tc.env, tc.envFrom
			_, err := containerEnv(in)
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *configError", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("err = %q, want %q", err, tc.want)
			}
			// containerConfig passes it on.
			if _, err := containerConfig(containerInput{Pod: in.Pod, Container: in.Container, Node: in.Node, Objects: in.Objects}); !errors.As(err, &ce) {
				t.Errorf("containerConfig err = %v, want a *configError", err)
			}
		})
	}
}

func TestContainerConfigExpandsCommandAgainstTheFinalEnv(t *testing.T) {
	in := envBase()
	in.Container.Command = []string{"echo", "$(MODE)", "$(LATER)"}
	in.Container.Args = []string{"$(NS)"}
	in.Container.Env = []v1.EnvVar{cmEnv("MODE", "cfg", "mode", false), fieldEnv("NS", "metadata.namespace"), {Name: "LATER", Value: "$(MODE)!"}}
	cfg, err := containerConfig(containerInput{Pod: in.Pod, Container: in.Container, Objects: in.Objects})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"echo", "fast", "fast!"}; !reflect.DeepEqual(cfg.Command, want) {
		t.Errorf("command = %q, want %q", cfg.Command, want)
	}
	if want := []string{"prod"}; !reflect.DeepEqual(cfg.Args, want) {
		t.Errorf("args = %q, want %q", cfg.Args, want)
	}
}
