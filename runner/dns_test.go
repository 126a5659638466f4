package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestReadResolvConf(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    resolvConf
	}{
		{
			name:    "nameservers accumulate; comments and blank lines are skipped",
			content: "# generated\nnameserver 10.0.0.1\n\n; another comment\nnameserver 10.0.0.2 # trailing\nnameserver\n",
			want:    resolvConf{Servers: []string{"10.0.0.1", "10.0.0.2"}},
		},
		{
			name:    "the last search line wins, trailing dots trimmed",
			content: "search a.example b.example\nsearch c.example. d.example\n",
			want:    resolvConf{Searches: []string{"c.example", "d.example"}},
		},
		{
			name:    "the last options line wins",
			content: "options ndots:2 timeout:1\noptions rotate\n",
			want:    resolvConf{Options: []string{"rotate"}},
		},
		{
			name:    "a full file",
			content: "nameserver 1.1.1.1\nsearch corp.example\noptions edns0\nnameserver 8.8.8.8\n",
			want:    resolvConf{Servers: []string{"1.1.1.1", "8.8.8.8"}, Searches: []string{"corp.example"}, Options: []string{"edns0"}},
		},
		{
			name:    "an empty file",
			content: "",
			want:    resolvConf{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "resolv.conf")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readResolvConf(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readResolvConf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadResolvConfMissingFileIsEmpty(t *testing.T) {
	got, err := readResolvConf(filepath.Join(t.TempDir(), "nope"))
	if err != nil || !reflect.DeepEqual(got, resolvConf{}) {
		t.Errorf("readResolvConf(missing) = %+v, %v; want empty, nil", got, err)
	}
}

// baseDNSInput: a ClusterFirst pod in namespace "shop", a host resolv.conf,
// and a cluster DNS server.
func baseDNSInput() dnsInput {
	return dnsInput{
		Pod: &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
			Spec:       v1.PodSpec{DNSPolicy: v1.DNSClusterFirst},
		},
		Host: resolvConf{
			Servers:  []string{"192.168.0.1"},
			Searches: []string{"corp.example"},
			Options:  []string{"edns0"},
		},
		ClusterDNS:    []string{"10.96.0.10"},
		ClusterDomain: "cluster.local",
	}
}

var hostDNS = &runtimeapi.DNSConfig{Servers: []string{"192.168.0.1"}, Searches: []string{"corp.example"}, Options: []string{"edns0"}}

var clusterDNS = &runtimeapi.DNSConfig{
	Servers:  []string{"10.96.0.10"},
	Searches: []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"},
	Options:  []string{"ndots:5"},
}

func TestDNSConfigFor(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(*dnsInput)
		want     *runtimeapi.DNSConfig
		warnings []string // prefixes, in order
	}{
		{
			name:   "ClusterFirst with cluster DNS: cluster servers, cluster searches then host searches, ndots:5",
			mutate: func(*dnsInput) {},
			want:   clusterDNS,
		},
		{
			name:   "an empty dnsPolicy is ClusterFirst",
			mutate: func(in *dnsInput) { in.Pod.Spec.DNSPolicy = "" },
			want:   clusterDNS,
		},
		{
			name:     "ClusterFirst without cluster DNS falls back to the host, with a MissingClusterDNS warning",
			mutate:   func(in *dnsInput) { in.ClusterDNS = nil },
			want:     hostDNS,
			warnings: []string{"MissingClusterDNS"},
		},
		{
			name:   "ClusterFirst on the host network uses the host, without a warning",
			mutate: func(in *dnsInput) { in.Pod.Spec.HostNetwork = true },
			want:   hostDNS,
		},
		{
			name: "ClusterFirstWithHostNet on the host network uses the cluster",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.HostNetwork = true
				in.Pod.Spec.DNSPolicy = v1.DNSClusterFirstWithHostNet
			},
			want: clusterDNS,
		},
		{
			name:   "Default uses the host",
			mutate: func(in *dnsInput) { in.Pod.Spec.DNSPolicy = v1.DNSDefault },
			want:   hostDNS,
		},
		{
			name: "None uses only dnsConfig",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.DNSPolicy = v1.DNSNone
				in.Pod.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"9.9.9.9"}, Searches: []string{"x.example"},
					Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: ptrTo("1")}}}
			},
			want: &runtimeapi.DNSConfig{Servers: []string{"9.9.9.9"}, Searches: []string{"x.example"}, Options: []string{"ndots:1"}},
		},
		{
			name: "dnsConfig is merged: duplicates dropped, options merged by name",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.DNSConfig = &v1.PodDNSConfig{
					Nameservers: []string{"10.96.0.10", "1.1.1.1"},
					Searches:    []string{"svc.cluster.local", "extra.example"},
					Options:     []v1.PodDNSConfigOption{{Name: "ndots", Value: ptrTo("2")}, {Name: "edns0"}},
				}
			},
			want: &runtimeapi.DNSConfig{
				Servers:  []string{"10.96.0.10", "1.1.1.1"},
				Searches: []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "extra.example"},
				Options:  []string{"ndots:2", "edns0"},
			},
		},
		{
			name: "more than three nameservers are trimmed with a warning",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"}}
			},
			want: &runtimeapi.DNSConfig{
				Servers:  []string{"10.96.0.10", "1.1.1.1", "8.8.8.8"},
				Searches: clusterDNS.Searches,
				Options:  []string{"ndots:5"},
			},
			warnings: []string{"DNSConfigForming: nameserver limits were exceeded"},
		},
		{
			name: "an empty host resolv.conf gives 127.0.0.1 and search .",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.DNSPolicy = v1.DNSDefault
				in.Host = resolvConf{}
			},
			want: &runtimeapi.DNSConfig{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		},
		{
			name:   "without a cluster domain only the host searches are used",
			mutate: func(in *dnsInput) { in.ClusterDomain = "" },
			want:   &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"corp.example"}, Options: []string{"ndots:5"}},
		},
		{
			name: "more than 32 search paths are trimmed with a warning",
			mutate: func(in *dnsInput) {
				in.Pod.Spec.DNSPolicy = v1.DNSNone
				var s []string
				for i := 0; i < 40; i++ {
					s = append(s, "d"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+".example")
				}
				in.Pod.Spec.DNSConfig = &v1.PodDNSConfig{Searches: s}
			},
			warnings: []string{"DNSConfigForming: search line limits were exceeded"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := baseDNSInput()
			tc.mutate(&in)
			got, warnings := dnsConfigFor(in)
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dns config =\n%v\nwant\n%v", got, tc.want)
			}
			if len(got.Servers) > maxDNSNameservers || len(got.Searches) > maxDNSSearchPaths {
				t.Errorf("limits exceeded: %d servers, %d searches", len(got.Servers), len(got.Searches))
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings = %q, want %d starting with %q", warnings, len(tc.warnings), tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to start with %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestDNSConfigForDoesNotAliasItsInputs(t *testing.T) {
	in := baseDNSInput()
	in.Pod.Spec.DNSConfig = &v1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"more.example"}}
	in.Pod.Spec.DNSPolicy = v1.DNSDefault
	dnsConfigFor(in)
	in2 := baseDNSInput()
	if !reflect.DeepEqual(in.Host, in2.Host) {
		t.Errorf("host resolv.conf changed to %+v", in.Host)
	}
	in.Pod.Spec.DNSPolicy = v1.DNSClusterFirst
	dnsConfigFor(in)
	if !reflect.DeepEqual(in.ClusterDNS, in2.ClusterDNS) || !reflect.DeepEqual(in.Host, in2.Host) {
		t.Errorf("inputs changed: cluster DNS %v, host %+v", in.ClusterDNS, in.Host)
	}
}
