package runner

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodHostnames(t *testing.T) {
	base := func() *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	}
	yes := true
	cases := []struct {
		name          string
		mutate        func(p *v1.Pod)
		clusterDomain string
		want          podNames
		wantErr       string
	}{
		{name: "the pod name", mutate: func(p *v1.Pod) {},
			want: podNames{Hostname: "web", Nodename: "web"}},
		{name: "spec.hostname wins over the pod name", mutate: func(p *v1.Pod) { p.Spec.Hostname = "box" },
			want: podNames{Hostname: "box", Nodename: "box"}},
		{name: "a spec.hostname that is no DNS label is refused", mutate: func(p *v1.Pod) { p.Spec.Hostname = "Box_1" },
			wantErr: `pod Hostname "Box_1" is not a valid DNS label`},
		{name: "a long pod name is cut to 63 without a trailing '-' or '.'", mutate: func(p *v1.Pod) { p.Name = strings.Repeat("a", 61) + ".-xyz" },
			want: podNames{Hostname: strings.Repeat("a", 61), Nodename: strings.Repeat("a", 61)}},
		{name: "a subdomain gives the domain", clusterDomain: "cluster.local", mutate: func(p *v1.Pod) { p.Spec.Subdomain = "db" },
			want: podNames{Hostname: "web", Domain: "db.ns.svc.cluster.local", Nodename: "web"}},
		{name: "without a cluster domain the domain ends in svc. as with the kubelet", mutate: func(p *v1.Pod) { p.Spec.Subdomain = "db" },
			want: podNames{Hostname: "web", Domain: "db.ns.svc.", Nodename: "web"}},
		{name: "setHostnameAsFQDN makes the nodename the FQDN", clusterDomain: "cluster.local",
			mutate: func(p *v1.Pod) { p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "db", &yes },
			want:   podNames{Hostname: "web", Domain: "db.ns.svc.cluster.local", Nodename: "web.db.ns.svc.cluster.local"}},
		{name: "setHostnameAsFQDN without a subdomain changes nothing", clusterDomain: "cluster.local",
			mutate: func(p *v1.Pod) { p.Spec.SetHostnameAsFQDN = &yes },
			want:   podNames{Hostname: "web", Nodename: "web"}},
		{name: "an FQDN of exactly 64 characters is kept", clusterDomain: "cluster.local",
			mutate: func(p *v1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("h", 64-len(".db.ns.svc.cluster.local")), "db", &yes
			},
			want: podNames{Hostname: strings.Repeat("h", 40), Domain: "db.ns.svc.cluster.local", Nodename: strings.Repeat("h", 40) + ".db.ns.svc.cluster.local"}},
		{name: "an FQDN longer than 64 characters is refused", clusterDomain: "cluster.local",
			mutate: func(p *v1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("h", 41), "db", &yes
			},
			wantErr: "FQDN " + strings.Repeat("h", 41) + ".db.ns.svc.cluster.local is too long (64 characters is the max, 65 characters requested)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := base()
			tc.mutate(pod)
			got, err := podHostnames(pod, tc.clusterDomain)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("podHostnames = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
