package main

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podrun/podrun/runner/admission"
	"github.com/podrun/podrun/sources"
)

func TestWithOrigins(t *testing.T) {
	pod := func(ns, name string, o sources.Origin) *sources.Pod {
		return &sources.Pod{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, Origin: o}
	}
	set := &sources.Set{Pods: []*sources.Pod{
		pod("default", "web", sources.Origin{Source: "/m/pods.yaml", Doc: 2}),
		pod("default", "web2", sources.Origin{Source: "/m/list.yaml", Doc: 1, Item: 3}),
		pod("kube-system", "etcd", sources.Origin{Source: "https://example.test/etcd.yaml", Doc: 1}),
	}}
	for _, tc := range []struct{ in, want string }{
		{`pod default/web: spec.containers[0].image: InvalidImageName: bad`,
			`/m/pods.yaml: document 2: pod default/web: spec.containers[0].image: InvalidImageName: bad`},
		{"pod default/web2: volume \"v\": x\npod kube-system/etcd: y\nsomething else\npod other/web: z",
			"/m/list.yaml: document 1, item 3: pod default/web2: volume \"v\": x\nhttps://example.test/etcd.yaml: document 1: pod kube-system/etcd: y\nsomething else\npod other/web: z"},
		{`runtime not ready: NetworkReady=false`, `runtime not ready: NetworkReady=false`},
	} {
		if got := withOrigins(errors.New(tc.in), set).Error(); got != tc.want {
			t.Errorf("withOrigins(%q):\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if withOrigins(nil, set) != nil {
		t.Error("withOrigins(nil) is not nil")
	}

	// The chain is kept: runFailed still finds an admission rejection, and
	// an exit status keeps its code.
	rej := &admission.Error{Namespace: "default", Name: "web", Reason: "OutOfcpu", Message: "Pod was rejected: no"}
	var found *admission.Error
	if err := withOrigins(rej, set); !errors.As(err, &found) || err.Error() != "/m/pods.yaml: document 2: pod default/web: Pod was rejected: no (reason OutOfcpu)" {
		t.Errorf("rejection: %v (found %v)", err, found)
	}
	ee, ok := withOrigins(&exitError{code: 3, err: errors.New("pod default/web: Error")}, set).(*exitError)
	if !ok || ee.code != 3 || ee.Error() != "/m/pods.yaml: document 2: pod default/web: Error" {
		t.Errorf("exit error: %#v", ee)
	}
}
