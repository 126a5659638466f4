package volumes

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func files(p map[string]FileProjection) map[string]string {
	out := map[string]string{}
	for k, f := range p {
		out[k] = string(f.Data) + " " + modeString(f.Mode)
	}
	return out
}

func modeString(m int32) string { return fmt.Sprintf("%04o", m) }

var (
	cmMulti = &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "special-config", Namespace: "default"},
		Data:       map[string]string{"SPECIAL_LEVEL": "very", "SPECIAL_TYPE": "charm"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2}},
	}
	secUser = &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "mysecret", Namespace: "default"},
		Data:       map[string][]byte{"username": []byte("my-app"), "password": []byte("39528$vdg7Jb")},
	}
	objs = Objects{ConfigMaps: []*v1.ConfigMap{cmMulti}, Secrets: []*v1.Secret{secUser}}
)

func TestConfigMapPayload(t *testing.T) {
	for _, tc := range []struct {
		name     string
		items    []v1.KeyToPath
		optional bool
		want     map[string]string
		err      string
	}{{
		name: "no items: every key of data and binaryData with defaultMode",
		want: map[string]string{"SPECIAL_LEVEL": "very 0644", "SPECIAL_TYPE": "charm 0644", "blob": "\x00\x01\x02 0644"},
	}, {
		name:  "items: only those, at their paths, with their modes",
		items: []v1.KeyToPath{{Key: "SPECIAL_LEVEL", Path: "conf/level", Mode: ptr[int32](0o400)}, {Key: "blob", Path: "b"}},
		want:  map[string]string{"conf/level": "very 0400", "b": "\x00\x01\x02 0644"},
	}, {
		name:  "a missing key",
		items: []v1.KeyToPath{{Key: "NOPE", Path: "x"}},
		err:   "configmap references non-existent config key: NOPE",
	}, {
		name:     "a missing key, optional: skipped",
		items:    []v1.KeyToPath{{Key: "NOPE", Path: "x"}, {Key: "SPECIAL_TYPE", Path: "t"}},
		optional: true,
		want:     map[string]string{"t": "charm 0644"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := configMapPayload(tc.items, cmMulti, 0o644, tc.optional)
			checkErr(t, err, tc.err)
			if tc.err == "" && !reflect.DeepEqual(files(p), tc.want) {
				t.Errorf("payload %v, want %v", files(p), tc.want)
			}
		})
	}
}

func TestSecretPayload(t *testing.T) {
	p, err := secretPayload(nil, secUser, 0o400, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"username": "my-app 0400", "password": "39528$vdg7Jb 0400"}; !reflect.DeepEqual(files(p), want) {
		t.Errorf("payload %v, want %v", files(p), want)
	}
	p, err = secretPayload([]v1.KeyToPath{{Key: "username", Path: "my-group/my-username", Mode: ptr[int32](0o777)}}, secUser, 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"my-group/my-username": "my-app 0777"}; !reflect.DeepEqual(files(p), want) {
		t.Errorf("payload %v, want %v", files(p), want)
	}
	_, err = secretPayload([]v1.KeyToPath{{Key: "token", Path: "t"}}, secUser, 0o644, false)
	checkErr(t, err, "references non-existent secret key: token")
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
}

func dapiPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "kubernetes-downwardapi-volume-example", Namespace: "default", UID: "1234-5678",
			Labels:      map[string]string{"zone": "us-est-coast", "cluster": "test-cluster1", "rack": "rack-22"},
			Annotations: map[string]string{"build": "two", "builder": "john-doe", "quote": `say "hi"`},
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name: "client-container",
			Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
			},
		}}},
	}
}

var node2 = Node{AllocatableMilliCPU: 2000, AllocatableMemory: 8 << 30, AllocatableEphemeralStorage: 100 << 30}

func TestDownwardAPIPayload(t *testing.T) {
	field := func(path, fp string) v1.DownwardAPIVolumeFile {
		return v1.DownwardAPIVolumeFile{Path: path, FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: fp}}
	}
	res := func(path, ctr, r, div string) v1.DownwardAPIVolumeFile {
		f := v1.DownwardAPIVolumeFile{Path: path, ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: ctr, Resource: r}}
		if div != "" {
			f.ResourceFieldRef.Divisor = resource.MustParse(div)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		item v1.DownwardAPIVolumeFile
		want string
		err  string
	}{
		{"labels: sorted key=\"value\" lines, no trailing newline", field("labels", "metadata.labels"),
			"cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\"", ""},
		{"annotations: values Go-quoted", field("annotations", "metadata.annotations"),
			"build=\"two\"\nbuilder=\"john-doe\"\nquote=\"say \\\"hi\\\"\"", ""},
		{"one label", field("zone", "metadata.labels['zone']"), "us-est-coast", ""},
		{"a missing label is empty", field("x", "metadata.labels['nope']"), "", ""},
		{"one annotation", field("b", "metadata.annotations['builder']"), "john-doe", ""},
		{"name", field("name", "metadata.name"), "kubernetes-downwardapi-volume-example", ""},
		{"namespace", field("ns", "metadata.namespace"), "default", ""},
		{"uid", field("uid", "metadata.uid"), "1234-5678", ""},
		{"a field volumes do not support", field("ip", "status.podIP"), "", "unsupported fieldPath: status.podIP"},
		{"cpu request 250m, divisor 1: rounded up", res("cpu", "client-container", "requests.cpu", ""), "1", ""},
		{"cpu request in millicores", res("cpu", "client-container", "requests.cpu", "1m"), "250", ""},
		{"cpu limit unset: node allocatable", res("cpu", "client-container", "limits.cpu", ""), "2", ""},
		{"memory request in bytes", res("m", "client-container", "requests.memory", ""), "33554432", ""},
		{"memory limit in Mi", res("m", "client-container", "limits.memory", "1Mi"), "64", ""},
		{"ephemeral-storage limit unset: node allocatable in Gi", res("e", "client-container", "limits.ephemeral-storage", "1Gi"), "100", ""},
		{"ephemeral-storage request unset: 0", res("e", "client-container", "requests.ephemeral-storage", ""), "0", ""},
		{"unknown container", res("x", "nope", "limits.cpu", ""), "", "container nope not found"},
		{"unknown resource", res("x", "client-container", "limits.gpu", ""), "", "unsupported container resource : limits.gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := downwardAPIPayload([]v1.DownwardAPIVolumeFile{tc.item}, dapiPod(), node2, ptr[int32](0o644))
			checkErr(t, err, tc.err)
			if tc.err != "" {
				return
			}
			if got := string(p[tc.item.Path].Data); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.item.Path, got, tc.want)
			}
		})
	}
}

func TestDownwardAPIModes(t *testing.T) {
	items := []v1.DownwardAPIVolumeFile{
		{Path: "./a/name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr[int32](0o400)},
		{Path: "ns", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
	}
	p, err := downwardAPIPayload(items, dapiPod(), node2, ptr[int32](0o600))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a/name": "kubernetes-downwardapi-volume-example 0400", "ns": "default 0600"}
	if !reflect.DeepEqual(files(p), want) {
		t.Errorf("payload %v, want %v", files(p), want)
	}
}

func projectedPod(sources ...v1.VolumeProjection) *v1.Pod {
	pod := dapiPod()
	pod.Spec.Volumes = []v1.Volume{{Name: "all-in-one", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		Sources: sources, DefaultMode: ptr[int32](0o644)}}}}
	return pod
}

func TestProjected(t *testing.T) {
	// The corpus's projected-secret-downwardapi-configmap pod.
	pod := projectedPod(
		v1.VolumeProjection{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "mysecret"},
			Items: []v1.KeyToPath{{Key: "username", Path: "my-group/my-username"}}}},
		v1.VolumeProjection{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "cpu_limit", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "client-container", Resource: "limits.cpu"}},
		}}},
		v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"},
			Items: []v1.KeyToPath{{Key: "SPECIAL_LEVEL", Path: "my-group/my-config", Mode: ptr[int32](0o600)}}}},
	)
	vols, err := Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	v := vols[0]
	if v.Kind != KindProjected || v.Plugin != "kubernetes.io~projected" || !v.Tmpfs || !v.ReadOnly {
		t.Errorf("volume %+v: want a read-only projected volume on a tmpfs", v)
	}
	want := map[string]string{
		"my-group/my-username": "my-app 0644",
		"labels":               "cluster=\"test-cluster1\"\nrack=\"rack-22\"\nzone=\"us-est-coast\" 0644",
		"cpu_limit":            "2 0644",
		"my-group/my-config":   "very 0600",
	}
	if !reflect.DeepEqual(files(v.Payload), want) {
		t.Errorf("payload %v, want %v", files(v.Payload), want)
	}

	// A later source wins at the same path.
	pod = projectedPod(
		v1.VolumeProjection{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "mysecret"},
			Items: []v1.KeyToPath{{Key: "username", Path: "x"}}}},
		v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"},
			Items: []v1.KeyToPath{{Key: "SPECIAL_TYPE", Path: "x"}}}},
	)
	vols, err = Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(vols[0].Payload["x"].Data); got != "charm" {
		t.Errorf("x = %q, want the later source's charm", got)
	}
}

func TestPlanRefusals(t *testing.T) {
	vol := func(name string, s v1.VolumeSource) v1.Volume { return v1.Volume{Name: name, VolumeSource: s} }
	for _, tc := range []struct {
		name string
		vol  v1.Volume
		err  string
	}{
		{"pvc", vol("data", v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "task-pv-claim"}}),
			`volume "data": persistentVolumeClaim volumes are not supported: a PersistentVolumeClaim is bound to a volume by the API server`},
		{"csi", vol("c", v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "x"}}), `volume "c": csi volumes are not supported: csi volumes are mounted by a CSI driver`},
		{"ephemeral", vol("e", v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}), `volume "e": ephemeral volumes are not supported`},
		{"nfs", vol("n", v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/"}}), `volume "n": nfs volumes are not supported: nfs volumes need the kubelet's in-tree volume plugin`},
		{"gce", vol("g", v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "d"}}), `volume "g": gcePersistentDisk volumes are not supported`},
		{"service account token", vol("t", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", Audience: "vault"}}}}}),
			`volume "t": sources[0]: serviceAccountToken projections are not supported: the token is issued by the API server`},
		{"cluster trust bundle", vol("t", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Path: "b"}}}}}), `clusterTrustBundle projections are not supported`},
		{"pod certificate", vol("t", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{PodCertificate: &v1.PodCertificateProjection{SignerName: "x"}}}}}), `podCertificate projections are not supported`},
		{"missing configmap", vol("config-volume", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "game-demo"}}}),
			`volume "config-volume": configmap "game-demo" not found in namespace "default" (podrun reads ConfigMaps and Secrets only from the run's -f sources`},
		{"missing secret", vol("s", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "backend-user"}}), `volume "s": secret "backend-user" not found in namespace "default"`},
		{"missing projected secret", vol("p", v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "user"}}}}}}), `volume "p": sources[0]: secret "user" not found`},
		{"missing key", vol("k", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"},
			Items: []v1.KeyToPath{{Key: "game.properties", Path: "g"}}}}), `volume "k": configmap references non-existent config key: game.properties`},
		{"item path escaping", vol("k", v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"},
			Items: []v1.KeyToPath{{Key: "SPECIAL_TYPE", Path: "../../etc/x"}}}}), `volume "k": invalid path: must not contain '..'`},
		{"bad mode", vol("k", v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mysecret", DefaultMode: ptr[int32](0o1777)}}), `defaultMode 01777: must be a number between 0 and 0777`},
		{"hostPath with ..", vol("h", v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/../etc"}}), "volume \"h\": invalid HostPath `/var/../etc`: must not contain '..'"},
		{"hugepages", vol("h", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumHugePages}}), `emptyDir medium "HugePages" is not supported`},
		{"emptyDir mode too big", vol("m", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Mode: ptr[int32](0o2777)}}), `emptyDir.mode 02777: must be a value between 0000 and 01777`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := dapiPod()
			pod.Spec.Volumes = []v1.Volume{tc.vol}
			_, err := Plan(pod, objs, node2)
			checkErr(t, err, tc.err)
		})
	}
}

func TestPlanOptionalMissingObjectsGiveEmptyVolumes(t *testing.T) {
	pod := dapiPod()
	pod.Spec.Volumes = []v1.Volume{
		{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}, Optional: ptr(true),
			Items: []v1.KeyToPath{{Key: "k", Path: "k"}}}}},
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "nope", Optional: ptr(true)}}},
		{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}, Optional: ptr(true)}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"}, Optional: ptr(true),
				Items: []v1.KeyToPath{{Key: "missing", Path: "m"}, {Key: "SPECIAL_TYPE", Path: "t"}}}},
		}}}},
	}
	vols, err := Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]string{{}, {}, {"t": "charm 0644"}} {
		if got := files(vols[i].Payload); !reflect.DeepEqual(got, want) || vols[i].Payload == nil {
			t.Errorf("volume %s: payload %v, want %v", vols[i].Name, got, want)
		}
	}
}

func TestPlanEmptyDir(t *testing.T) {
	mi := func(n int64) int64 { return n << 20 }
	withLimits := func(limits ...string) *v1.Pod {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}
		for _, l := range limits {
			c := v1.Container{Name: "c"}
			if l != "" {
				c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse(l)}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		return pod
	}
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		ed    v1.EmptyDirVolumeSource
		tmpfs bool
		size  int64
		mode  uint32
		set   bool
	}{
		{"disk, 0777", withLimits(""), v1.EmptyDirVolumeSource{}, false, 0, 0o777, false},
		{"disk with sizeLimit: not enforced", withLimits(""), v1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Mi"))}, false, 0, 0o777, false},
		{"mode 01777 (the corpus's emptydir-volume-mode)", withLimits(""), v1.EmptyDirVolumeSource{Mode: ptr[int32](0o1777)}, false, 0, 0o1777, true},
		{"mode 0750", withLimits(""), v1.EmptyDirVolumeSource{Mode: ptr[int32](0o750)}, false, 0, 0o750, true},
		{"memory, no limits: node allocatable", withLimits(""), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}, true, 8 << 30, 0o777, false},
		{"memory, every container limited: the pod limit", withLimits("64Mi", "32Mi"), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}, true, mi(96), 0o777, false},
		{"memory, one container unlimited: node allocatable", withLimits("64Mi", ""), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}, true, 8 << 30, 0o777, false},
		{"memory, sizeLimit below the pod limit", withLimits("64Mi"), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("16Mi"))}, true, mi(16), 0o777, false},
		{"memory, sizeLimit above the pod limit", withLimits("64Mi"), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("1Gi"))}, true, mi(64), 0o777, false},
		{"memory, zero sizeLimit ignored", withLimits(""), v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("0"))}, true, 8 << 30, 0o777, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{EmptyDir: &tc.ed}}}
			vols, err := Plan(tc.pod, Objects{}, node2)
			if err != nil {
				t.Fatal(err)
			}
			v := vols[0]
			if v.Tmpfs != tc.tmpfs || v.TmpfsSize != tc.size || v.DirMode != tc.mode || v.ModeSet != tc.set || v.Plugin != "kubernetes.io~empty-dir" {
				t.Errorf("got tmpfs %v size %d mode %#o set %v plugin %s; want %v %d %#o %v", v.Tmpfs, v.TmpfsSize, v.DirMode, v.ModeSet, v.Plugin, tc.tmpfs, tc.size, tc.mode, tc.set)
			}
		})
	}
}

func TestTmpfsOptions(t *testing.T) {
	for _, tc := range []struct {
		v      Volume
		noswap bool
		want   string
	}{
		{Volume{TmpfsSize: 1 << 20}, false, "size=1048576"},
		{Volume{TmpfsSize: 1 << 20}, true, "size=1048576,noswap"},
		{Volume{TmpfsSize: 1 << 20, DirMode: 0o1777, ModeSet: true}, false, "size=1048576,mode=01777"},
		{Volume{DirMode: 0o777}, false, ""},
	} {
		if got := tmpfsOptions(&tc.v, tc.noswap); got != tc.want {
			t.Errorf("tmpfsOptions(%+v, %v) = %q, want %q", tc.v, tc.noswap, got, tc.want)
		}
	}
}

func TestSecretVolumesAreInMemoryConfigMapsOnDisk(t *testing.T) {
	pod := dapiPod()
	pod.Spec.Volumes = []v1.Volume{
		{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "mysecret"}}},
		{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}},
		{Name: "c", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "special-config"}}}},
	}
	vols, err := Plan(pod, objs, node2)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		plugin string
		tmpfs  bool
		size   int64
	}{{"kubernetes.io~secret", true, 64 << 20}, {"kubernetes.io~downward-api", true, 64 << 20}, {"kubernetes.io~configmap", false, 0}} {
		v := vols[0]
		vols = vols[1:]
		if v.Plugin != want.plugin || v.Tmpfs != want.tmpfs || v.TmpfsSize != want.size || !v.ReadOnly {
			t.Errorf("%s: plugin %s tmpfs %v size %d readOnly %v; want %s %v %d read-only", v.Name, v.Plugin, v.Tmpfs, v.TmpfsSize, v.ReadOnly, want.plugin, want.tmpfs, want.size)
		}
	}
}
