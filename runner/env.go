package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/volumes"
)

// envInput is everything containerEnv decides from: the run's ConfigMaps
// and Secrets stand for the kubelet's configMap and secret managers, the
// sandbox's IPs for the pod IPs it passes in at container creation.
type envInput struct {
	Pod       *v1.Pod
	Container *v1.Container
	PodIPs    []string // the sandbox's IPs, primary first
	HostIP    string   // status.hostIP(s); "" when unknown
	Node      volumes.Node
	Objects   volumes.Objects // the run's ConfigMaps and Secrets
	PodDir    string          // the pod's data dir, for fileKeyRef's emptyDir
}

// containerEnv is the kubelet's makeEnvironmentVariables without service
// variables (a standalone kubelet has no service lister):
//
//  1. envFrom in order, each key (not filtered, as since v1.30) with the
//     source's prefix; a later source overwrites an earlier one; a missing
//     ConfigMap or Secret is skipped only when optional.
//  2. env in order, overwriting: a value is $(VAR)-expanded against what is
//     defined so far; an empty value with valueFrom reads the field, the
//     resource, or the ConfigMap or Secret key (skipped when optional and
//     missing).
//
// The kubelet emits map order; podrun keeps the order of first definition,
// so the same pod gives the same config.
func containerEnv(in envInput) ([]*runtimeapi.KeyValue, error) {
	c := in.Container
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}

	for _, ef := range c.EnvFrom {
		data, err := envFromData(in, ef)
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			set(ef.Prefix+k, data[k])
		}
	}

	for _, e := range c.Env {
		v := e.Value
		switch {
		case v != "":
			v = expand(v, vals)
		case e.ValueFrom != nil:
			var skip bool
			var err error
			v, skip, err = envValueFrom(in, e.ValueFrom)
			if err != nil {
				return nil, &configError{err.Error()}
			}
			if skip {
				continue
			}
		}
		set(e.Name, v)
	}

	out := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, k := range order {
		out = append(out, &runtimeapi.KeyValue{Key: k, Value: []byte(vals[k])})
	}
	return out, nil
}

// subPathEnv is the environment container in.Container's subPathExprs
// expand in (volumes.Env): its values as containerEnv makes them, and as
// shown, the same made from the run's Secrets masked (volumes.Objects.Masked,
// what a dry run's configs are made from), so that an expansion that
// takes anything from a Secret is decided on its value and never printed.
func subPathEnv(in envInput) (volumes.Env, error) {
	values, err := containerEnv(in)
	if err != nil {
		return volumes.Env{}, err
	}
	in.Objects = in.Objects.Masked()
	shown, err := containerEnv(in)
	if err != nil {
		return volumes.Env{}, err
	}
	return volumes.Env{Values: envMap(values), Shown: envMap(shown)}, nil
}

// envMap is an environment as a map.
func envMap(kvs []*runtimeapi.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = string(kv.Value)
	}
	return m
}

// envFromData is what an envFrom source sets, before its prefix: the run's
// ConfigMap's data or Secret's; nothing for an optional one the run lacks.
func envFromData(in envInput, ef v1.EnvFromSource) (map[string]string, error) {
	ns := in.Pod.Namespace
	switch {
	case ef.ConfigMapRef != nil:
		if cm := in.Objects.ConfigMap(ns, ef.ConfigMapRef.Name); cm != nil {
			return cm.Data, nil
		}
		return nil, missingEnvFrom("configmaps", ef.ConfigMapRef.Name, ef.ConfigMapRef.Optional)
	case ef.SecretRef != nil:
		s := in.Objects.Secret(ns, ef.SecretRef.Name)
		if s == nil {
			return nil, missingEnvFrom("secrets", ef.SecretRef.Name, ef.SecretRef.Optional)
		}
		data := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// missingEnvFrom is the error of an envFrom source the run lacks: none
// when it is optional.
func missingEnvFrom(resource, name string, optional *bool) error {
	if isTrue(optional) {
		return nil
	}
	return &configError{fmt.Sprintf("%s %q not found", resource, name)}
}

// envValueFrom resolves one valueFrom; skip means an optional ConfigMap,
// Secret or key is missing and the variable is not set.
func envValueFrom(in envInput, src *v1.EnvVarSource) (v string, skip bool, err error) {
	pod := in.Pod
	switch {
	case src.FieldRef != nil:
		v, err = podFieldValue(in, src.FieldRef.FieldPath)
		return v, false, err
	case src.ResourceFieldRef != nil:
		// containerResourceRuntimeValue: the container itself unless the
		// selector names another one.
		c := in.Container
		if n := src.ResourceFieldRef.ContainerName; n != "" && n != c.Name {
			if c = volumes.FindContainer(pod, n); c == nil {
				return "", false, fmt.Errorf("container %s not found", n)
			}
		}
		v, err = volumes.ContainerResourceValue(c, src.ResourceFieldRef, in.Node)
		return v, false, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm := in.Objects.ConfigMap(pod.Namespace, ref.Name)
		return keyRefValue("ConfigMap", pod.Namespace, ref.Name, ref.Optional, cm != nil, func() (string, bool) {
			v, ok := cm.Data[ref.Key]
			return v, ok
		}, ref.Key)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s := in.Objects.Secret(pod.Namespace, ref.Name)
		return keyRefValue("Secret", pod.Namespace, ref.Name, ref.Optional, s != nil, func() (string, bool) {
			b, ok := s.Data[ref.Key]
			return string(b), ok
		}, ref.Key)
	case src.FileKeyRef != nil:
		return fileKeyValue(pod, in.PodDir, src.FileKeyRef)
	}
	return "", false, nil
}

// keyRefValue is a configMapKeyRef's or secretKeyRef's value: the key of
// the run's object of kind (found: the run has it), read by value. An
// optional reference that misses gives skip, as the kubelet leaves such a
// variable out.
func keyRefValue(kind, namespace, name string, optional *bool, found bool, value func() (string, bool), key string) (v string, skip bool, err error) {
	if !found {
		if isTrue(optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("%ss %q not found", strings.ToLower(kind), name)
	}
	v, ok := value()
	if !ok {
		if isTrue(optional) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("couldn't find key %v in %s %v/%v", key, kind, namespace, name)
	}
	return v, false, nil
}

// podFieldValue is the kubelet's podFieldSelectorRuntimeValue: the spec
// and status fields it knows, then the pod's metadata as the downward API
// volume reads it. A hostNetwork pod's IPs are the node's, as its status
// shows them.
func podFieldValue(in envInput, path string) (string, error) {
	pod := in.Pod
	ips := in.PodIPs
	if pod.Spec.HostNetwork && in.HostIP != "" {
		ips = []string{in.HostIP}
	}
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return in.HostIP, nil
	case "status.podIP":
		if len(ips) == 0 {
			return "", nil
		}
		return ips[0], nil
	case "status.podIPs":
		return strings.Join(ips, ","), nil
	}
	return volumes.FieldPathValue(pod, path)
}

func isTrue(b *bool) bool { return b != nil && *b }
