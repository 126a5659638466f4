package runner

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podrun/podrun/runner/credentials"
)

// aheadPod is a pod with these init and regular containers, each
// "image[/policy]" (policy: A Always, N Never, else IfNotPresent).
func aheadPod(name string, secrets []string, inits []string, ctrs ...string) *v1.Pod {
	mk := func(prefix string, specs []string) []v1.Container {
		var out []v1.Container
		for i, s := range specs {
			c := v1.Container{Name: fmt.Sprintf("%s%d", prefix, i), Image: s, ImagePullPolicy: v1.PullIfNotPresent}
			if n := len(s); n > 2 && s[n-2] == '/' && (s[n-1] == 'A' || s[n-1] == 'N') {
				c.Image = s[:n-2]
				c.ImagePullPolicy = map[byte]v1.PullPolicy{'A': v1.PullAlways, 'N': v1.PullNever}[s[n-1]]
			}
			out = append(out, c)
		}
		return out
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
	p.Spec.InitContainers = mk("init", inits)
	p.Spec.Containers = mk("c", ctrs)
	for _, s := range secrets {
		p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
	}
	return p
}

func pullSecret(t *testing.T, name, registry, user, pass string) *v1.Secret {
	t.Helper()
	b, err := json.Marshal(map[string]any{"auths": map[string]any{
		registry: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{".dockerconfigjson": b}}
}

func TestPlanPullsAhead(t *testing.T) {
	secrets := []*v1.Secret{
		pullSecret(t, "a", "reg.test", "alice", "pw-a"),
		pullSecret(t, "b", "reg.test", "bob", "pw-b"),
		{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default"}, Type: v1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": []byte("{")}},
	}
	withHandler := func(p *v1.Pod, h string) *v1.Pod {
		p.Annotations = map[string]string{runtimeHandlerAnnotation: h}
		return p
	}
	// want: "image always? user holders" per pull, in order.
	type pull struct {
		image   string
		always  bool
		user    string // the first credential's user, "" none
		handler string
		holders []int
	}
	cases := []struct {
		name string
		pods []*v1.Pod
		want []pull
	}{
		{name: "init containers first, then the containers, default tag",
			pods: []*v1.Pod{aheadPod("p", nil, []string{"init"}, "db:1", "app")},
			want: []pull{{image: "init:latest", holders: []int{0}}, {image: "db:1", holders: []int{0}}, {image: "app:latest", holders: []int{0}}}},
		{name: "image volumes before the pod's containers; Never pulls nothing",
			pods: []*v1.Pod{func() *v1.Pod {
				p := aheadPod("p", nil, []string{"init"}, "app:1")
				p.Spec.Volumes = []v1.Volume{
					{Name: "art", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "quay.io/crio/artifact:v2", PullPolicy: v1.PullIfNotPresent}}},
					{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
					{Name: "local", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "local/only:1", PullPolicy: v1.PullNever}}},
				}
				return p
			}()},
			want: []pull{{image: "quay.io/crio/artifact:v2", holders: []int{0}}, {image: "init:latest", holders: []int{0}}, {image: "app:1", holders: []int{0}}}},
		{name: "every pod's first container before any second",
			pods: []*v1.Pod{aheadPod("p", nil, nil, "a1", "a2", "a3"), aheadPod("q", nil, nil, "b1")},
			want: []pull{{image: "a1:latest", holders: []int{0}}, {image: "b1:latest", holders: []int{1}}, {image: "a2:latest", holders: []int{0}}, {image: "a3:latest", holders: []int{0}}}},
		{name: "one image, one pull for every pod with the same credentials",
			pods: []*v1.Pod{aheadPod("p", nil, nil, "x:1", "x:1"), aheadPod("q", nil, nil, "x:1")},
			want: []pull{{image: "x:1", holders: []int{0, 1}}}},
		{name: "a tag and its default spelling are one pull",
			pods: []*v1.Pod{aheadPod("p", nil, nil, "x", "x:latest")},
			want: []pull{{image: "x:latest", holders: []int{0}}}},
		{name: "Never pulls nothing ahead",
			pods: []*v1.Pod{aheadPod("p", nil, []string{"i/N"}, "x/N")},
			want: nil},
		{name: "Always anywhere makes the pull an Always one",
			pods: []*v1.Pod{aheadPod("p", nil, nil, "x:1"), aheadPod("q", nil, nil, "x:1/A")},
			want: []pull{{image: "x:1", always: true, holders: []int{0, 1}}}},
		{name: "an image that is no reference is left to its refusal",
			pods: []*v1.Pod{aheadPod("p", nil, nil, "<bad>", "ok:1")},
			want: []pull{{image: "ok:1", holders: []int{0}}}},
		{name: "different credentials, different pulls; the same, one",
			pods: []*v1.Pod{aheadPod("p", []string{"a"}, nil, "reg.test/app:1"), aheadPod("q", []string{"b"}, nil, "reg.test/app:1"),
				aheadPod("r", []string{"a"}, nil, "reg.test/app:1"), aheadPod("s", []string{"a"}, nil, "other.test/app:1")},
			want: []pull{{image: "reg.test/app:1", user: "alice", holders: []int{0, 2}}, {image: "reg.test/app:1", user: "bob", holders: []int{1}},
				{image: "other.test/app:1", holders: []int{3}}}},
		{name: "a pull secret that does not parse: nothing ahead for its pod",
			pods: []*v1.Pod{aheadPod("p", []string{"bad"}, nil, "reg.test/app:1"), aheadPod("q", nil, nil, "reg.test/app:1")},
			want: []pull{{image: "reg.test/app:1", holders: []int{1}}}},
		{name: "a missing pull secret: the pull goes without it",
			pods: []*v1.Pod{aheadPod("p", []string{"absent"}, nil, "reg.test/app:1"), aheadPod("q", nil, nil, "reg.test/app:1")},
			want: []pull{{image: "reg.test/app:1", holders: []int{0, 1}}}},
		{name: "a different snapshotter's handler, a different pull",
			pods: []*v1.Pod{withHandler(aheadPod("p", nil, nil, "x:1"), "kata"), aheadPod("q", nil, nil, "x:1")},
			want: []pull{{image: "x:1", handler: "kata", holders: []int{0}}, {image: "x:1", holders: []int{1}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := planPullsAhead(tc.pods, secrets, []*credentials.Keyring{})
			var got []pull
			for _, a := range plan {
				p := pull{image: a.Image, always: a.Always, handler: a.Handler, holders: a.Holders}
				if len(a.Creds) > 0 {
					p.user = a.Creds[0].Username
				}
				if a.PullConfig.GetMetadata().GetName() != tc.pods[a.Holders[0]].Name {
					t.Errorf("%s: pull config of pod %q, want the first holder's", a.Image, a.PullConfig.GetMetadata().GetName())
				}
				got = append(got, p)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("plan\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}
