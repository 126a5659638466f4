package credentials

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/cri"
	"github.com/podrun/podrun/cri/fake"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestPullSecretParseDockerConfig(t *testing.T) {
	tests := []struct {
		name    string
		legacy  bool // .dockercfg (a bare map) instead of {"auths": ...}
		in      string
		want    dockerConfig
		wantErr error
	}{
		{name: "username and password",
			in:   `{"auths":{"reg.io":{"username":"u","password":"p","email":"u@x"}}}`,
			want: dockerConfig{"reg.io": {Username: "u", Password: "p", Email: "u@x"}}},
		{name: "auth padded",
			in:   `{"auths":{"reg.io":{"auth":"` + b64("user:pass") + `"}}}`,
			want: dockerConfig{"reg.io": {Username: "user", Password: "pass"}}},
		{name: "auth unpadded",
			in:   `{"auths":{"reg.io":{"auth":"` + strings.TrimRight(b64("user:passw"), "=") + `"}}}`,
			want: dockerConfig{"reg.io": {Username: "user", Password: "passw"}}},
		{name: "auth split at the first colon",
			in:   `{"auths":{"reg.io":{"auth":"` + b64("user:pa:ss") + `"}}}`,
			want: dockerConfig{"reg.io": {Username: "user", Password: "pa:ss"}}},
		{name: "auth overrides username and password",
			in:   `{"auths":{"reg.io":{"username":"a","password":"b","auth":"` + b64("c:d") + `"}}}`,
			want: dockerConfig{"reg.io": {Username: "c", Password: "d"}}},
		{name: "tokens",
			in:   `{"auths":{"reg.io":{"identitytoken":"idt","registrytoken":"rgt"}}}`,
			want: dockerConfig{"reg.io": {IdentityToken: "idt", RegistryToken: "rgt"}}},
		{name: "several registries, other top-level fields ignored",
			in:   `{"auths":{"a.io":{"username":"1"},"b.io":{"username":"2"}},"credsStore":"desktop","HttpHeaders":{"X":"y"}}`,
			want: dockerConfig{"a.io": {Username: "1"}, "b.io": {Username: "2"}}},
		{name: "no auths", in: `{}`, want: nil},
		{name: "legacy bare map", legacy: true,
			in:   `{"https://index.docker.io/v1/":{"auth":"` + b64("u:p") + `","email":"e"}}`,
			want: dockerConfig{"https://index.docker.io/v1/": {Username: "u", Password: "p", Email: "e"}}},
		{name: "auth not base64", in: `{"auths":{"reg.io":{"auth":"not base64!"}}}`, wantErr: errAuthNotBase64},
		{name: "auth without a colon", in: `{"auths":{"reg.io":{"auth":"` + b64("userpass") + `"}}}`, wantErr: errAuthNoColon},
		{name: "not JSON", in: `{"auths":{"reg.io":{"password":"hunter2"`, wantErr: errBadDockerConfig},
		{name: "wrong shape", in: `{"auths":{"reg.io":{"password":["hunter2"]}}}`, wantErr: errBadDockerConfig},
		{name: "legacy not JSON", legacy: true, in: `hunter2`, wantErr: errBadDockerConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parse := parseDockerConfigJSON
			if tt.legacy {
				parse = parseDockercfg
			}
			got, err := parse([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes the config: %v", err)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func secret(name string, typ v1.SecretType, key, data string) *v1.Secret {
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Type:       typ,
		Data:       map[string][]byte{key: []byte(data)},
	}
}

func TestPullSecretPodKeyring(t *testing.T) {
	jsonSecret := secret("json", v1.SecretTypeDockerConfigJson, ".dockerconfigjson", `{"auths":{"reg.io":{"username":"j","password":"jp"}}}`)
	cfgSecret := secret("cfg", v1.SecretTypeDockercfg, ".dockercfg", `{"reg.io":{"auth":"`+b64("c:cp")+`"}}`)
	opaque := secret("opaque", v1.SecretTypeOpaque, ".dockerconfigjson", `{"auths":{"reg.io":{"username":"o","password":"op"}}}`)
	wrongKey := secret("wrongkey", v1.SecretTypeDockerConfigJson, ".dockercfg", `{"reg.io":{"username":"w"}}`)
	otherNS := secret("otherns", v1.SecretTypeDockerConfigJson, ".dockerconfigjson", `{"auths":{"reg.io":{"username":"n"}}}`)
	otherNS.Namespace = "other"
	bad := secret("bad", v1.SecretTypeDockerConfigJson, ".dockerconfigjson", `{"auths":{"reg.io":{"password":["hunter2"]}}}`)
	all := []*v1.Secret{jsonSecret, cfgSecret, opaque, wrongKey, otherNS, bad}

	tests := []struct {
		name        string
		refs        []string
		wantUsers   []string // credentials for reg.io/app, in order
		wantMissing []string
		wantErr     string
	}{
		{name: "dockerconfigjson", refs: []string{"json"}, wantUsers: []string{"j"}},
		{name: "dockercfg", refs: []string{"cfg"}, wantUsers: []string{"c"}},
		{name: "in the pod's order", refs: []string{"cfg", "json"}, wantUsers: []string{"c", "j"}},
		{name: "missing names recorded, empty names skipped", refs: []string{"", "regcred", "json", "other"},
			wantUsers: []string{"j"}, wantMissing: []string{"regcred", "other"}},
		{name: "another namespace's Secret is missing", refs: []string{"otherns"}, wantMissing: []string{"otherns"}},
		{name: "other types ignored", refs: []string{"opaque"}},
		{name: "the type's own key only", refs: []string{"wrongkey"}},
		{name: "a Secret that does not parse is named, not quoted", refs: []string{"json", "bad"},
			wantErr: "image pull secret default/bad: .dockerconfigjson: not a valid docker config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
			for _, r := range tt.refs {
				pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: r})
			}
			ring, missing, err := PodKeyring(pod, all)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("err = %v, want %q (and no secret)", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(missing, tt.wantMissing) {
				t.Errorf("missing = %q, want %q", missing, tt.wantMissing)
			}
			var users []string
			for _, c := range ring.lookup("reg.io/app") {
				users = append(users, c.Username)
			}
			if !slices.Equal(users, tt.wantUsers) {
				t.Errorf("credentials for reg.io/app: %q, want %q", users, tt.wantUsers)
			}
		})
	}
}

func TestKeyringIndexIsNormalisedAndReverseSorted(t *testing.T) {
	var k Keyring
	k.add(dockerConfig{
		"quay.io":                     {Username: "host"},
		"https://quay.io/coreos":      {Username: "path"},
		"http://quay.io/v2/coreos/x":  {Username: "v2"},
		"https://index.docker.io/v1/": {Username: "hub"},
		"reg.io:5000/v1/":             {Username: "port"},
		"*.example.com":               {Username: "glob"},
		"https://quay.io/":            {Username: "host2"},
		"bad url %zz":                 {Username: "skipped"},
	}, "test")
	want := []string{"reg.io:5000", "quay.io/coreos/x", "quay.io/coreos", "quay.io", "index.docker.io", "*.example.com"}
	if !slices.Equal(k.index, want) {
		t.Errorf("index = %q, want %q", k.index, want)
	}
	// Two spellings of one key keep the order of their spellings.
	var users []string
	for _, c := range k.creds["quay.io"] {
		users = append(users, c.Username)
	}
	if !slices.Equal(users, []string{"host2", "host"}) {
		t.Errorf("quay.io credentials %q, want [host2 host]", users)
	}
}

func TestAuthsFor(t *testing.T) {
	ring := func(source string, cfg dockerConfig) *Keyring {
		k := &Keyring{}
		k.add(cfg, source)
		return k
	}
	u := func(name string) dockerConfigEntry { return dockerConfigEntry{Username: name, Password: name + "-pw"} }
	tests := []struct {
		name  string
		image string
		rings []*Keyring
		want  []string // usernames in order
	}{
		{name: "no Keyring", image: "reg.io/app", want: nil},
		{name: "host match", image: "reg.io/team/app:1",
			rings: []*Keyring{ring("s", dockerConfig{"reg.io": u("a")})}, want: []string{"a"}},
		{name: "no match", image: "other.io/app",
			rings: []*Keyring{ring("s", dockerConfig{"reg.io": u("a")})}, want: nil},
		{name: "scheme and /v2/ ignored", image: "reg.io/app",
			rings: []*Keyring{ring("s", dockerConfig{"https://reg.io/v2/": u("a")})}, want: []string{"a"}},
		{name: "all matches, most specific first", image: "quay.io/coreos/etcd:v3",
			rings: []*Keyring{ring("s", dockerConfig{"quay.io": u("host"), "quay.io/coreos": u("org"), "quay.io/coreos/etcd": u("repo"), "quay.io/other": u("no")})},
			want:  []string{"repo", "org", "host"}},
		{name: "key path is a string prefix, as the kubelet's", image: "quay.io/coreos/etcd",
			rings: []*Keyring{ring("s", dockerConfig{"quay.io/core": u("prefix")})}, want: []string{"prefix"}},
		{name: "glob matches one label", image: "a.example.com/app",
			rings: []*Keyring{ring("s", dockerConfig{"*.example.com": u("glob")})}, want: []string{"glob"}},
		{name: "glob does not match two labels", image: "a.b.example.com/app",
			rings: []*Keyring{ring("s", dockerConfig{"*.example.com": u("glob")})}, want: nil},
		{name: "glob does not match the bare domain", image: "example.com/app",
			rings: []*Keyring{ring("s", dockerConfig{"*.example.com": u("glob")})}, want: nil},
		{name: "glob within a label", image: "eu-registry.example.com/app",
			rings: []*Keyring{ring("s", dockerConfig{"*-registry.example.com": u("glob")})}, want: []string{"glob"}},
		{name: "same port", image: "127.0.0.1:5000/private/app:1",
			rings: []*Keyring{ring("s", dockerConfig{"127.0.0.1:5000": u("port"), "127.0.0.1": u("noport"), "127.0.0.1:5001": u("other")})},
			want:  []string{"port"}},
		{name: "an IPv6 registry", image: "[::1]:5000/app",
			rings: []*Keyring{ring("s", dockerConfig{"[::1]:5000": u("v6"), "[::1]": u("noport")})}, want: []string{"v6"}},
		// FuzzKeyring: "[A]" passes the reference grammar, as in
		// distribution's, but is no IPv6 address: url.Parse refuses it, so
		// no key matches it, not even "*" (as in the kubelet).
		{name: "a bracketed registry that is no IPv6 address matches no key", image: "[A]/0",
			rings: []*Keyring{ring("s", dockerConfig{"*": u("glob"), "[A]": u("literal")})}, want: nil},
		{name: "nor with a port", image: "[0]:5000/0",
			rings: []*Keyring{ring("s", dockerConfig{"*:5000": u("glob"), "[0]:5000": u("literal")})}, want: nil},
		{name: "a key without port does not match an image with one", image: "reg.io:443/app",
			rings: []*Keyring{ring("s", dockerConfig{"reg.io": u("a")})}, want: nil},
		{name: "docker hub default for a short name", image: "busybox",
			rings: []*Keyring{ring("s", dockerConfig{"https://index.docker.io/v1/": u("hub")})}, want: []string{"hub"}},
		{name: "docker hub default for user/repo", image: "someone/app:1",
			rings: []*Keyring{ring("s", dockerConfig{"index.docker.io": u("hub")})}, want: []string{"hub"}},
		{name: "docker hub default for docker.io/...", image: "docker.io/library/busybox",
			rings: []*Keyring{ring("s", dockerConfig{"index.docker.io": u("hub")})}, want: []string{"hub"}},
		{name: "docker.io key matches directly", image: "busybox",
			rings: []*Keyring{ring("s", dockerConfig{"docker.io": u("d"), "index.docker.io": u("hub")})}, want: []string{"d"}},
		// FuzzKeyring: the kubelet's rule would send Docker Hub's
		// credentials to these single-label hosts.
		{name: "no docker hub default for localhost", image: "localhost/app",
			rings: []*Keyring{ring("s", dockerConfig{"index.docker.io": u("hub")})}, want: nil},
		{name: "no docker hub default for a host in upper case", image: "A/00",
			rings: []*Keyring{ring("s", dockerConfig{"index.docker.io": u("hub")})}, want: nil},
		{name: "no docker hub default for another registry", image: "quay.io/app",
			rings: []*Keyring{ring("s", dockerConfig{"index.docker.io": u("hub")})}, want: nil},
		{name: "pod secrets before node credentials", image: "reg.io/app",
			rings: []*Keyring{ring("pod", dockerConfig{"reg.io": u("pod")}), ring("node", dockerConfig{"reg.io/app": u("node")})},
			want:  []string{"pod", "node"}},
		{name: "the docker hub default applies per Keyring", image: "busybox",
			rings: []*Keyring{ring("pod", dockerConfig{"docker.io": u("pod")}), ring("node", dockerConfig{"index.docker.io": u("node")})},
			want:  []string{"pod", "node"}},
		{name: "a Credential found twice is tried once", image: "reg.io/app",
			rings: []*Keyring{ring("pod", dockerConfig{"reg.io": u("a")}), ring("node", dockerConfig{"https://reg.io": u("a")})},
			want:  []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AuthsFor(tt.image, tt.rings)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			for _, c := range got {
				users = append(users, c.Username)
				if c.Password != c.Username+"-pw" {
					t.Errorf("Credential %q has password %q", c.Username, c.Password)
				}
			}
			if !slices.Equal(users, tt.want) {
				t.Errorf("AuthsFor(%q) = %q, want %q", tt.image, users, tt.want)
			}
		})
	}
}

func TestAuthsForInvalidImageName(t *testing.T) {
	if _, err := AuthsFor("<your-private-image>", nil); err == nil {
		t.Fatal("no error for an invalid image name")
	}
}

// writeFile writes content to dir/name, creating dir.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPullNodeDockerConfigSearchOrder(t *testing.T) {
	jsonCfg := func(user string) string { return `{"auths":{"reg.io":{"username":"` + user + `"}}}` }
	legacyCfg := func(user string) string { return `{"reg.io":{"username":"` + user + `"}}` }
	type file struct{ dir, name, content string } // dir: root, wd, home, dockerconfig
	tests := []struct {
		name     string
		files    []file
		noDocker bool // DOCKER_CONFIG unset
		want     string
		wantFile string // relative to its dir's key
	}{
		{name: "nothing", want: ""},
		{name: "root dir first",
			files: []file{{"root", "config.json", jsonCfg("root")}, {"wd", "config.json", jsonCfg("wd")}, {"dockerconfig", "config.json", jsonCfg("dc")}},
			want:  "root"},
		{name: "then the working dir",
			files: []file{{"wd", "config.json", jsonCfg("wd")}, {"dockerconfig", "config.json", jsonCfg("dc")}},
			want:  "wd"},
		{name: "then $DOCKER_CONFIG in place of $HOME/.docker",
			files: []file{{"home", ".docker/config.json", jsonCfg("home")}, {"dockerconfig", "config.json", jsonCfg("dc")}},
			want:  "dc"},
		{name: "$HOME/.docker without $DOCKER_CONFIG", noDocker: true,
			files: []file{{"home", ".docker/config.json", jsonCfg("home")}},
			want:  "home"},
		{name: "$HOME/.docker is not read when $DOCKER_CONFIG is set",
			files: []file{{"home", ".docker/config.json", jsonCfg("home")}},
			want:  ""},
		{name: "any config.json before a legacy .dockercfg",
			files: []file{{"root", ".dockercfg", legacyCfg("root-legacy")}, {"dockerconfig", "config.json", jsonCfg("dc")}},
			want:  "dc"},
		{name: "legacy .dockercfg: root dir, working dir, then $HOME",
			files: []file{{"wd", ".dockercfg", legacyCfg("wd-legacy")}, {"home", ".dockercfg", legacyCfg("home-legacy")}},
			want:  "wd-legacy"},
		{name: "legacy .dockercfg in $HOME",
			files: []file{{"home", ".dockercfg", legacyCfg("home-legacy")}},
			want:  "home-legacy"},
		{name: "a file that does not parse is passed over",
			files: []file{{"root", "config.json", `{"auths":`}, {"wd", "config.json", jsonCfg("wd")}},
			want:  "wd"},
		{name: "a legacy file is read as a bare map",
			files: []file{{"root", ".dockercfg", jsonCfg("nested")}},
			want:  "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dirs := DockerConfigDirs{
				Preferred: filepath.Join(base, "root"), WorkDir: filepath.Join(base, "wd"),
				Home: filepath.Join(base, "home"), DockerConfig: filepath.Join(base, "dockerconfig"),
			}
			byKey := map[string]string{"root": dirs.Preferred, "wd": dirs.WorkDir, "home": dirs.Home, "dockerconfig": dirs.DockerConfig}
			if tt.noDocker {
				dirs.DockerConfig = ""
			}
			for _, f := range tt.files {
				p := filepath.Join(byKey[f.dir], f.name)
				writeFile(t, filepath.Dir(p), filepath.Base(p), f.content)
			}
			path, cfg := findNodeDockerConfig(dirs)
			got := ""
			if cfg != nil {
				got = cfg["reg.io"].Username
				if tt.want == "?" {
					// {"auths": ...} read as a bare map has a registry
					// called "auths" and nothing for reg.io.
					if _, ok := cfg["auths"]; !ok || got != "" {
						t.Errorf("legacy parse of a config.json: %+v", cfg)
					}
					return
				}
				if !strings.HasPrefix(path, base) {
					t.Errorf("path %s is outside the test's dirs", path)
				}
			}
			if got != tt.want {
				t.Errorf("found %q at %q, want %q", got, path, tt.want)
			}
		})
	}
}

func TestPullNodeDockerConfigCandidates(t *testing.T) {
	got := DockerConfigDirs{Preferred: "/var/lib/podrun", WorkDir: "/work", Home: "/root"}.candidates()
	want := []string{
		"/var/lib/podrun/config.json", "/work/config.json", "/root/.docker/config.json", "/.docker/config.json",
		"/var/lib/podrun/.dockercfg", "/work/.dockercfg", "/root/.dockercfg", "/.dockercfg",
	}
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
	got = DockerConfigDirs{DockerConfig: "/etc/docker-cfg"}.candidates()
	want = []string{"/etc/docker-cfg/config.json", "/.docker/config.json", "/.dockercfg"}
	if !slices.Equal(got, want) {
		t.Errorf("candidates with only $DOCKER_CONFIG:\n got %q\nwant %q", got, want)
	}
}

func TestPullNodeKeyringsImageCredentialsFile(t *testing.T) {
	base := t.TempDir()
	writeFile(t, base, "creds.json", `{"auths":{"reg.io":{"username":"flag","password":"fp"}}}`)
	writeFile(t, base, "bad.json", `{"auths":{"reg.io":{"password":"hunter2",}}}`)
	root := filepath.Join(base, "root")
	writeFile(t, root, "config.json", `{"auths":{"reg.io":{"username":"node","password":"np"}}}`)
	dirs := DockerConfigDirs{Preferred: root}

	flagRing, err := LoadFile(filepath.Join(base, "creds.json"), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	rings := NodeKeyrings(flagRing, dirs)
	creds, _ := AuthsFor("reg.io/app", rings)
	var got []string
	for _, c := range creds {
		got = append(got, c.Username+"@"+filepath.Base(c.Source))
	}
	if want := []string{"flag@creds.json", "node@config.json"}; !slices.Equal(got, want) {
		t.Errorf("credentials %q, want %q (the flag's file first)", got, want)
	}

	if _, err := LoadFile(filepath.Join(base, "absent.json"), os.ReadFile); err == nil || !strings.Contains(err.Error(), "--image-credentials") {
		t.Errorf("a missing --image-credentials file: err = %v", err)
	}
	_, err = LoadFile(filepath.Join(base, "bad.json"), os.ReadFile)
	if err == nil || !strings.Contains(err.Error(), "bad.json") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a bad --image-credentials file: err = %v, want it named and not quoted", err)
	}
	if none, err := LoadFile("", os.ReadFile); none != nil || err != nil {
		t.Errorf("without the flag: %v, %v", none, err)
	}
	if rings := NodeKeyrings(nil, DockerConfigDirs{Preferred: filepath.Join(base, "none")}); len(rings) > 1 {
		t.Errorf("without the flag: %d keyrings", len(rings))
	}
}

func TestPullRedact(t *testing.T) {
	creds := []Credential{{Username: "user", Password: "s3cr3t-pw"}, {IdentityToken: "id-token-x"}, {RegistryToken: "reg-token-y"}}
	msg := "401: s3cr3t-pw " + b64("user:s3cr3t-pw") + " " + base64.RawURLEncoding.EncodeToString([]byte("user:s3cr3t-pw")) +
		" Basic " + b64("s3cr3t-pw") + " id-token-x reg-token-y user"
	got := redact(msg, creds)
	for _, s := range []string{"s3cr3t", b64("user:s3cr3t-pw"), "id-token-x", "reg-token-y"} {
		if strings.Contains(got, s) {
			t.Errorf("redact left %q in %q", s, got)
		}
	}
	if !strings.HasSuffix(got, " user") {
		t.Errorf("usernames are not secrets and stay: %q", got)
	}
}

// dialFake starts a fake runtime with a client on it.
func dialFake(t *testing.T) (*cri.Client, *fake.Server) {
	t.Helper()
	srv, ep := fake.Start(t)
	c, err := cri.Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func TestPullImageTriesCredentialsInOrder(t *testing.T) {
	const image = "reg.io/private/app:1"
	good := Credential{Username: "u", Password: "right", Source: "secret default/good"}
	bad1 := Credential{Username: "u", Password: "wrong1", Source: "secret default/bad"}
	bad2 := Credential{IdentityToken: "tok-wrong", Source: "/root/.docker/config.json"}

	t.Run("until one succeeds", func(t *testing.T) {
		c, srv := dialFake(t)
		srv.RequireAuth(image, &runtimeapi.AuthConfig{Username: "u", Password: "right"})
		ref, err := Pull(context.Background(), c, image, []Credential{bad1, bad2, good, bad1}, nil)
		if err != nil || ref == "" {
			t.Fatalf("Pull = %q, %v", ref, err)
		}
		var tried []*runtimeapi.AuthConfig
		for _, p := range srv.Pulls() {
			tried = append(tried, p.Auth)
		}
		want := []*runtimeapi.AuthConfig{
			{Username: "u", Password: "wrong1"}, {IdentityToken: "tok-wrong"}, {Username: "u", Password: "right"},
		}
		if len(tried) != len(want) {
			t.Fatalf("pulls %v, want %v", tried, want)
		}
		for i := range want {
			if tried[i].String() != want[i].String() {
				t.Errorf("pull %d with %v, want %v", i, tried[i], want[i])
			}
		}
	})
	t.Run("none: anonymous", func(t *testing.T) {
		c, srv := dialFake(t)
		if _, err := Pull(context.Background(), c, "busybox", nil, nil); err != nil {
			t.Fatal(err)
		}
		if p := srv.Pulls(); len(p) != 1 || p[0].Auth != nil {
			t.Errorf("pulls %+v, want one without auth", p)
		}
	})
	t.Run("all fail: aggregated, sources named, secrets not", func(t *testing.T) {
		c, srv := dialFake(t)
		srv.RequireAuth(image, &runtimeapi.AuthConfig{Username: "u", Password: "right"})
		_, err := Pull(context.Background(), c, image, []Credential{bad1, bad2}, nil)
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		for _, want := range []string{"[with credentials from secret default/bad: ", ", with credentials from /root/.docker/config.json: ", "authorization failed"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		for _, s := range []string{"wrong1", "tok-wrong"} {
			if strings.Contains(msg, s) {
				t.Errorf("error %q holds a Credential", msg)
			}
		}
		if len(srv.Pulls()) != 2 {
			t.Errorf("%d pulls, want 2", len(srv.Pulls()))
		}
	})
	t.Run("one fails: its error alone", func(t *testing.T) {
		c, srv := dialFake(t)
		srv.RequireAuth(image, &runtimeapi.AuthConfig{Username: "u", Password: "right"})
		_, err := Pull(context.Background(), c, image, []Credential{bad1}, nil)
		if err == nil || strings.HasPrefix(err.Error(), "[") || !strings.Contains(err.Error(), "secret default/bad") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("stops when the context ends", func(t *testing.T) {
		c, srv := dialFake(t)
		srv.RequireAuth(image, &runtimeapi.AuthConfig{Username: "u", Password: "right"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Pull(ctx, c, image, []Credential{bad1, good}, nil); err == nil {
			t.Fatal("no error")
		}
		if n := len(srv.Pulls()); n > 1 {
			t.Errorf("%d pulls after the context ended, want at most 1", n)
		}
	})
}
