package volumes

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// planProjected decides a projected volume (kubelet pkg/volume/projected):
// its configMap, secret and downwardAPI sources merged into one payload
// (a later source's file wins over an earlier one at the same path),
// written by the atomic writer into an emptyDir on a tmpfs, mounted
// read-only. Sources that need the API server — serviceAccountToken,
// clusterTrustBundle, podCertificate — are refused.
func planProjected(v *Volume, pod *v1.Pod, src *v1.ProjectedVolumeSource, objs Objects, node Node) error {
	v.Kind, v.Plugin = KindProjected, PluginProjected
	wrapInMemory(v, pod, node)
	if err := checkMode(src.DefaultMode, "defaultMode"); err != nil {
		return err
	}
	def := defaultMode(src.DefaultMode)
	payload := map[string]FileProjection{}
	var errs []error
	for i, s := range src.Sources {
		part, err := projectionPayload(pod, &s, objs, node, src.DefaultMode, def)
		if err != nil {
			errs = append(errs, fmt.Errorf("sources[%d]: %w", i, err))
			continue
		}
		for k, f := range part {
			payload[k] = f
		}
	}
	if len(errs) > 0 {
		return joinLine(errs)
	}
	v.Payload = payload
	return nil
}

func projectionPayload(pod *v1.Pod, s *v1.VolumeProjection, objs Objects, node Node, defMode *int32, def int32) (map[string]FileProjection, error) {
	switch {
	case s.Secret != nil:
		if err := checkItemModes(nil, s.Secret.Items); err != nil {
			return nil, err
		}
		return secretFiles(pod, objs, s.Secret.Name, s.Secret.Optional, s.Secret.Items, def)
	case s.ConfigMap != nil:
		if err := checkItemModes(nil, s.ConfigMap.Items); err != nil {
			return nil, err
		}
		return configMapFiles(pod, objs, s.ConfigMap.Name, s.ConfigMap.Optional, s.ConfigMap.Items, def)
	case s.DownwardAPI != nil:
		return downwardAPIPayload(s.DownwardAPI.Items, pod, node, defMode)
	case s.ServiceAccountToken != nil:
		return nil, errors.New("serviceAccountToken projections are not supported: the token is issued by the API server; podrun has none")
	case s.ClusterTrustBundle != nil:
		return nil, errors.New("clusterTrustBundle projections are not supported: trust bundles are read from the API server; podrun has none")
	case s.PodCertificate != nil:
		return nil, errors.New("podCertificate projections are not supported: pod certificates are issued through the API server; podrun has none")
	}
	return nil, errors.New("a projection source must set one of configMap, secret or downwardAPI")
}
