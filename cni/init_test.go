package cni

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitConfList(t *testing.T) {
	for _, tc := range []struct {
		name, version, bridge, subnet, want string
	}{
		{"IPv4", "1.0.0", "cni0", "10.88.0.0/16", `{
  "cniVersion": "1.0.0",
  "name": "podrun",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [
          [
            {
              "subnet": "10.88.0.0/16"
            }
          ]
        ],
        "routes": [
          {
            "dst": "0.0.0.0/0"
          }
        ]
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}
`},
		{"IPv6 gets an IPv6 default route", "0.4.0", "br-pods", "fd00:88::/64",
			`"cniVersion": "0.4.0"|"bridge": "br-pods"|"subnet": "fd00:88::/64"|"dst": "::/0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, n, err := net.ParseCIDR(tc.subnet)
			if err != nil {
				t.Fatal(err)
			}
			b, err := initConfList(tc.version, tc.bridge, n)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(tc.want, "{") {
				if string(b) != tc.want {
					t.Errorf("initConfList:\n%s\nwant:\n%s", b, tc.want)
				}
				return
			}
			for _, w := range strings.Split(tc.want, "|") {
				if !strings.Contains(string(b), w) {
					t.Errorf("initConfList lacks %s:\n%s", w, b)
				}
			}
		})
	}
}

func TestPickVersion(t *testing.T) {
	debian := []string{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"}
	for _, tc := range []struct {
		name      string
		supported map[string][]string
		want      string // "" for an error
	}{
		{"Debian 12's plugins: 1.0.0", map[string][]string{"bridge": debian, "portmap": debian}, "1.0.0"},
		{"never 1.1.0, which libcni before v1.2 cannot read", map[string][]string{"bridge": {"1.0.0", "1.1.0"}}, "1.0.0"},
		{"the newest all speak", map[string][]string{"bridge": debian, "portmap": {"0.3.1", "0.4.0"}}, "0.4.0"},
		{"none in common", map[string][]string{"bridge": {"0.2.0"}, "portmap": {"1.0.0"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickVersion(tc.supported)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "bridge: 0.2.0; portmap: 1.0.0") {
					t.Errorf("pickVersion = %q, %v; want an error naming each plugin's versions", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("pickVersion = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestInitFlagsChecked(t *testing.T) {
	for _, tc := range []struct {
		subnet, bridge, want string
	}{
		{"10.88.0.0/16", "cni0", ""},
		{"fd00::/64", "br0", ""},
		{"10.88.0.1/16", "cni0", "not a network address (did you mean 10.88.0.0/16?)"},
		{"10.88.0.0", "cni0", "want a network in CIDR notation"},
		{"10.88.0.0/16", "", "invalid --bridge"},
		{"10.88.0.0/16", "a-very-long-bridge", "invalid --bridge"},
		{"10.88.0.0/16", "a/b", "invalid --bridge"},
	} {
		_, err := parseSubnet(tc.subnet)
		if err == nil {
			err = checkBridgeName(tc.bridge)
		}
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("subnet %q bridge %q: %v, want %q", tc.subnet, tc.bridge, err, tc.want)
		}
	}
}

func TestInit(t *testing.T) {
	tmp := t.TempDir()
	conf, bin := filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	for _, p := range initPlugins() {
		fakePlugin(t, bin, p, allVersions)
	}
	o := InitOptions{ConfDir: conf, BinDirs: []string{bin}, Subnet: "10.99.0.0/16", Bridge: "podrun9"}

	path, shadowed, err := Init(context.Background(), o)
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	if path != filepath.Join(conf, InitFileName) || shadowed != "" {
		t.Errorf("Init = %q, %q; want %q, \"\"", path, shadowed, filepath.Join(conf, InitFileName))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	for _, w := range []string{`"subnet": "10.99.0.0/16"`, `"bridge": "podrun9"`, `"cniVersion": "1.0.0"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("written config lacks %s:\n%s", w, b)
		}
	}
	if entries, _ := os.ReadDir(conf); len(entries) != 1 {
		t.Errorf("conf dir holds %d entries, want only the config (no temp file left)", len(entries))
	}
	// The check accepts what init wrote.
	if err := check(context.Background(), Dirs{ConfDir: conf, BinDirs: []string{bin}, Loopback: true}, ""); err != nil {
		t.Errorf("check of the written config: %v", err)
	}

	// A second time: refused, the file untouched.
	o.Subnet = "10.77.0.0/16"
	_, _, err = Init(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), path+" already exists; not overwriting it") {
		t.Errorf("second Init: %v, want a refusal to overwrite", err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("the refused Init changed the file")
	}
}

func TestInitMissingPlugins(t *testing.T) {
	tmp := t.TempDir()
	conf, bin := filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	fakePlugin(t, bin, "bridge", allVersions)
	_, _, err := Init(context.Background(), InitOptions{ConfDir: conf, BinDirs: []string{bin, "/nonexistent"}, Subnet: DefaultSubnet, Bridge: DefaultBridge})
	want := "CNI plugins not found in " + bin + ":/nonexistent: host-local, portmap, loopback"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Init = %v, want %q", err, want)
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) {
		t.Errorf("conf dir created for a refused init (%v)", err)
	}
}

func TestInitShadowed(t *testing.T) {
	tmp := t.TempDir()
	conf, bin := filepath.Join(tmp, "net.d"), filepath.Join(tmp, "bin")
	for _, p := range initPlugins() {
		fakePlugin(t, bin, p, allVersions)
	}
	writeFile(t, conf, "05-other.conflist", bridgePortmap)
	_, shadowed, err := Init(context.Background(), InitOptions{ConfDir: conf, BinDirs: []string{bin}, Subnet: DefaultSubnet, Bridge: DefaultBridge})
	if err != nil {
		t.Fatal(err)
	}
	if shadowed != filepath.Join(conf, "05-other.conflist") {
		t.Errorf("shadowed = %q, want the 05- file the runtime picks first", shadowed)
	}
}
