// Package credentials finds the registry credentials to pull an image
// with, the kubelet's way (pkg/credentialprovider: keyring.go, config.go
// and secrets/secrets.go; kuberuntime_image.go PullImage):
//
//  1. Credentials come from docker configs: the pod's imagePullSecrets of
//     type kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg (Secrets
//     of the same run, in the pod's namespace), then the node's: the file
//     given with --image-credentials, then the first docker config found
//     where the kubelet looks (DockerConfigDirs).
//  2. Each source becomes a keyring: its registry keys normalised and
//     reverse-sorted, so that a more specific key comes first.
//  3. AuthsFor matches the image's repository against every keyring in
//     order and returns all matching credentials, most specific first.
//  4. Pull tries them in order until a pull succeeds; with none it
//     pulls without credentials.
//
// No credential is ever printed: errors name where a credential came from
// (a Secret's name, a file's path), never its contents, and the runtime's
// error messages are scrubbed of every credential tried.
package credentials

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podrun/podrun/sources/imageref"
)

// ------------------------------------------------------ docker configs --

// dockerConfigEntry is one registry's credentials in a docker config.
type dockerConfigEntry struct {
	Username      string
	Password      string
	Email         string
	IdentityToken string
	RegistryToken string
}

// dockerConfig maps a registry key ("quay.io", "https://index.docker.io/v1/",
// "*.example.com:5000/team") to its credentials.
type dockerConfig map[string]dockerConfigEntry

// errBadDockerConfig is what a docker config that does not parse gives. The
// JSON decoder's own errors can quote the input, which holds credentials,
// so they are never shown (the kubelet does the same).
var errBadDockerConfig = errors.New("not a valid docker config: the JSON does not parse")

// Errors of an entry's "auth" field; they quote nothing either.
var (
	errAuthNotBase64 = errors.New(`an "auth" field is not base64`)
	errAuthNoColon   = errors.New(`an "auth" field is not base64 of "username:password"`)
)

// UnmarshalJSON reads an entry; a non-empty "auth" (base64 of
// "user:password", padded or not) overrides username and password.
func (e *dockerConfigEntry) UnmarshalJSON(b []byte) error {
	var raw struct {
		Username      string `json:"username"`
		Password      string `json:"password"`
		Email         string `json:"email"`
		Auth          string `json:"auth"`
		IdentityToken string `json:"identitytoken"`
		RegistryToken string `json:"registrytoken"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return errBadDockerConfig
	}
	*e = dockerConfigEntry{
		Username: raw.Username, Password: raw.Password, Email: raw.Email,
		IdentityToken: raw.IdentityToken, RegistryToken: raw.RegistryToken,
	}
	if raw.Auth == "" {
		return nil
	}
	user, pass, err := decodeAuth(raw.Auth)
	if err != nil {
		return err
	}
	e.Username, e.Password = user, pass
	return nil
}

// decodeAuth splits a docker config "auth" field, base64("user:password"),
// at the first ':'. Padded and unpadded base64 are both accepted.
func decodeAuth(field string) (user, pass string, err error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(strings.TrimSpace(field), "=") {
		enc = base64.StdEncoding
	}
	b, err := enc.DecodeString(field)
	if err != nil {
		return "", "", errAuthNotBase64
	}
	user, pass, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", errAuthNoColon
	}
	return user, pass, nil
}

// parseDockerConfigJSON reads a config.json or a .dockerconfigjson:
// {"auths": {KEY: ENTRY, ...}}.
func parseDockerConfigJSON(b []byte) (dockerConfig, error) {
	var cfg struct {
		Auths dockerConfig `json:"auths"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, maskJSONError(err)
	}
	return cfg.Auths, nil
}

// parseDockercfg reads a legacy .dockercfg: a bare {KEY: ENTRY, ...}.
func parseDockercfg(b []byte) (dockerConfig, error) {
	var cfg dockerConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, maskJSONError(err)
	}
	return cfg, nil
}

// maskJSONError keeps podrun's own entry errors, which quote nothing, and
// replaces the decoder's.
func maskJSONError(err error) error {
	if errors.Is(err, errAuthNotBase64) || errors.Is(err, errAuthNoColon) {
		return err
	}
	return errBadDockerConfig
}

// ------------------------------------------------------------ Keyring --

// Credential is one set of registry credentials and where it came from.
// Source names a Secret or a file, never the contents.
type Credential struct {
	Username      string
	Password      string
	IdentityToken string
	RegistryToken string
	Source        string
}

// authConfig is the CRI form of c. Like the kubelet for docker-config
// credentials, podrun leaves Auth and ServerAddress empty: containerd
// refuses a ServerAddress that is not a URL of the registry's host.
func (c Credential) AuthConfig() *runtimeapi.AuthConfig {
	return &runtimeapi.AuthConfig{
		Username: c.Username, Password: c.Password,
		IdentityToken: c.IdentityToken, RegistryToken: c.RegistryToken,
	}
}

// Keyring indexes one source's credentials by registry key
// (host[:port][/path]), as the kubelet's BasicDockerKeyring.
type Keyring struct {
	index []string                // keys, reverse-sorted: more specific first
	creds map[string][]Credential // key → credentials, in the order added
}

// defaultRegistryKey is where Docker Hub credentials are stored
// ("https://index.docker.io/v1/" normalised).
const defaultRegistryKey = "index.docker.io"

// add puts a docker config's credentials in the Keyring (kubelet
// BasicDockerKeyring.Add): the key gets https:// unless it has a scheme,
// a leading /v1/ or /v2/ of its path is dropped, and the index key is
// host[:port] plus the path unless that is "/". Keys that do not parse as
// URLs are skipped. Entries are added in key order, so that two spellings
// of one registry ("quay.io", "https://quay.io") keep a stable order.
func (k *Keyring) add(cfg dockerConfig, source string) {
	if k.creds == nil {
		k.creds = map[string][]Credential{}
	}
	for _, loc := range slices.Sorted(mapKeys(cfg)) {
		e := cfg[loc]
		value := loc
		if !strings.HasPrefix(value, "https://") && !strings.HasPrefix(value, "http://") {
			value = "https://" + value
		}
		u, err := url.Parse(value)
		if err != nil {
			continue
		}
		path := u.Path
		if strings.HasPrefix(path, "/v2/") || strings.HasPrefix(path, "/v1/") {
			path = path[3:]
		}
		key := u.Host
		if path != "" && path != "/" {
			key += path
		}
		if _, ok := k.creds[key]; !ok {
			k.index = append(k.index, key)
		}
		k.creds[key] = append(k.creds[key], Credential{
			Username: e.Username, Password: e.Password,
			IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken,
			Source: source,
		})
	}
	slices.Sort(k.index)
	slices.Reverse(k.index)
}

func mapKeys(cfg dockerConfig) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range cfg {
			if !yield(k) {
				return
			}
		}
	}
}

// lookup returns every Credential whose key matches repo (a normalised
// repository such as "docker.io/library/busybox"), most specific key first;
// with no match, the Docker Hub credentials for a Docker Hub image (kubelet
// BasicDockerKeyring.Lookup).
func (k *Keyring) lookup(repo string) []Credential {
	if k == nil {
		return nil
	}
	var out []Credential
	for _, key := range k.index {
		if urlsMatch(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDefaultRegistryMatch(repo) {
		out = append(out, k.creds[defaultRegistryKey]...)
	}
	return out
}

// urlsMatch reports whether the Keyring key glob matches target, both
// schemeless URLs (kubelet URLsMatch): same port, same number of host
// labels with each label matched by filepath.Match (so "*.example.com"
// matches exactly one more label), and the key's path a prefix of the
// target's.
func urlsMatch(glob, target string) bool {
	g, err := url.Parse("https://" + glob)
	if err != nil {
		return false
	}
	t, err := url.Parse("https://" + target)
	if err != nil {
		return false
	}
	gLabels, gPort := splitHost(g.Host)
	tLabels, tPort := splitHost(t.Host)
	if gPort != tPort || len(gLabels) != len(tLabels) || !strings.HasPrefix(t.Path, g.Path) {
		return false
	}
	for i := range gLabels {
		if ok, err := filepath.Match(gLabels[i], tLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// splitHost splits host[:port] into its dot-separated labels and port.
func splitHost(hostport string) ([]string, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	return strings.Split(host, "."), port
}

// isDefaultRegistryMatch reports whether repo, a repository as imageref
// normalises it, is pulled from Docker Hub: its registry is docker.io.
//
// The kubelet's isDefaultRegistryMatch also takes any first component
// without '.' or ':' for Docker Hub, a rule from before registries were
// always spelled out: for "localhost/app", and for "REGISTRY/app" (a
// component in upper case is a host to the reference grammar), it sends
// Docker Hub's credentials to that host, a single-label name the node's
// DNS search list resolves. podrun sends them to Docker Hub only
// (FuzzKeyring found it; docs/fuzzing.md).
func isDefaultRegistryMatch(repo string) bool {
	first, _, _ := strings.Cut(repo, "/")
	return first == "docker.io" || first == "index.docker.io"
}

// AuthsFor returns the credentials to try for image, in order: each
// Keyring's matches in turn (the kubelet's union Keyring: the pod's
// secrets first, then the node's), with exact duplicates dropped so that a
// Credential found twice is tried once.
func AuthsFor(image string, rings []*Keyring) ([]Credential, error) {
	ref, err := imageref.Parse(image)
	if err != nil {
		return nil, err
	}
	repo := ref.Repository
	var out []Credential
	for _, r := range rings {
		for _, c := range r.lookup(repo) {
			if !slices.ContainsFunc(out, func(o Credential) bool { return sameSecret(o, c) }) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func sameSecret(a, b Credential) bool {
	return a.Username == b.Username && a.Password == b.Password &&
		a.IdentityToken == b.IdentityToken && a.RegistryToken == b.RegistryToken
}

// ------------------------------------------------------------- sources --

// PodKeyring builds the Keyring of a pod's imagePullSecrets from the
// run's Secrets (kubelet getPullSecretsForPod and MakeDockerKeyring).
// Empty names are skipped; names with no Secret in the pod's namespace are
// returned as missing; Secrets of other types, or without their key, are
// ignored. A docker config Secret that does not parse is an error naming
// it.
func PodKeyring(pod *v1.Pod, secrets []*v1.Secret) (ring *Keyring, missing []string, err error) {
	ring = &Keyring{}
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		i := slices.IndexFunc(secrets, func(s *v1.Secret) bool {
			return s.Namespace == pod.Namespace && s.Name == ref.Name
		})
		if i < 0 {
			missing = append(missing, ref.Name)
			continue
		}
		s := secrets[i]
		var cfg dockerConfig
		switch b := s.Data[secretKey(s.Type)]; {
		case len(b) == 0:
			continue
		case s.Type == v1.SecretTypeDockerConfigJson:
			cfg, err = parseDockerConfigJSON(b)
		default:
			cfg, err = parseDockercfg(b)
		}
		if err != nil {
			return nil, missing, fmt.Errorf("image pull secret %s/%s: %s: %w", s.Namespace, s.Name, secretKey(s.Type), err)
		}
		ring.add(cfg, fmt.Sprintf("secret %s/%s", s.Namespace, s.Name))
	}
	return ring, missing, nil
}

// secretKey is the data key holding a docker config Secret's config, ""
// for other types.
func secretKey(t v1.SecretType) string {
	switch t {
	case v1.SecretTypeDockerConfigJson:
		return v1.DockerConfigJsonKey
	case v1.SecretTypeDockercfg:
		return v1.DockerConfigKey
	}
	return ""
}

// DockerConfigDirs are where the node's docker config is looked for.
type DockerConfigDirs struct {
	Preferred    string // the kubelet's root dir; podrun's --root-dir
	WorkDir      string
	Home         string // $HOME
	DockerConfig string // $DOCKER_CONFIG: replaces $HOME/.docker when set
}

// candidates lists the files to try, in the kubelet's order
// (ReadDockerConfigFile): config.json in the preferred dir, the working
// dir, $HOME/.docker and /.docker, then the legacy .dockercfg in the
// preferred dir, the working dir, $HOME and /. podrun also honours
// $DOCKER_CONFIG, as the docker CLI does, in place of $HOME/.docker.
// Empty dirs are left out.
func (d DockerConfigDirs) candidates() []string {
	homeJSON := ""
	if d.Home != "" {
		homeJSON = filepath.Join(d.Home, ".docker")
	}
	if d.DockerConfig != "" {
		homeJSON = d.DockerConfig
	}
	var out []string
	for _, dir := range []string{d.Preferred, d.WorkDir, homeJSON, "/.docker"} {
		if dir != "" {
			out = append(out, filepath.Join(dir, "config.json"))
		}
	}
	for _, dir := range []string{d.Preferred, d.WorkDir, d.Home, "/"} {
		if dir != "" {
			out = append(out, filepath.Join(dir, ".dockercfg"))
		}
	}
	return out
}

// findNodeDockerConfig returns the first candidate file that reads and
// parses, and its path; "" and nil when there is none. Like the kubelet, a
// file that cannot be read or parsed is passed over.
func findNodeDockerConfig(d DockerConfigDirs) (string, dockerConfig) {
	for _, path := range d.candidates() {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		parse := parseDockerConfigJSON
		if filepath.Base(path) == ".dockercfg" {
			parse = parseDockercfg
		}
		if cfg, err := parse(b); err == nil {
			return path, cfg
		}
	}
	return "", nil
}

// LoadFile reads the docker config.json given with --image-credentials
// through readFile (os.ReadFile): an error if it cannot be read or parsed,
// since it was asked for. "" is none (nil).
func LoadFile(path string, readFile func(string) ([]byte, error)) (*Keyring, error) {
	if path == "" {
		return nil, nil
	}
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading --image-credentials: %w", err)
	}
	cfg, err := parseDockerConfigJSON(b)
	if err != nil {
		return nil, fmt.Errorf("reading --image-credentials %s: %w", path, err)
	}
	k := &Keyring{}
	k.add(cfg, path)
	return k, nil
}

// NodeKeyrings returns the node's keyrings, in the order they are tried:
// the --image-credentials file's (flagRing; nil for none), then the
// docker config the kubelet would find in dirs.
func NodeKeyrings(flagRing *Keyring, dirs DockerConfigDirs) []*Keyring {
	var rings []*Keyring
	if flagRing != nil {
		rings = append(rings, flagRing)
	}
	if path, cfg := findNodeDockerConfig(dirs); cfg != nil {
		k := &Keyring{}
		k.add(cfg, path)
		rings = append(rings, k)
	}
	return rings
}

// NodeDockerConfigDirs are the search dirs for this process.
func NodeDockerConfigDirs(rootDir string) DockerConfigDirs {
	wd, _ := os.Getwd()
	return DockerConfigDirs{Preferred: rootDir, WorkDir: wd, Home: os.Getenv("HOME"), DockerConfig: os.Getenv("DOCKER_CONFIG")}
}

// ---------------------------------------------------------------- pull --

// Puller is the one runtime call pulling needs.
type Puller interface {
	PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error)
}

// Pull pulls image with each Credential in turn until one succeeds,
// or without credentials when there are none (kubelet
// kubeGenericRuntimeManager.PullImage). The errors are aggregated as the
// kubelet's ("[e1, e2]" for several), each naming the Credential's source,
// and scrubbed of every Credential tried.
func Pull(ctx context.Context, rt Puller, image string, creds []Credential, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if len(creds) == 0 {
		return rt.PullImage(ctx, image, nil, sandboxCfg)
	}
	var msgs []string
	for _, c := range creds {
		ref, err := rt.PullImage(ctx, image, c.AuthConfig(), sandboxCfg)
		if err == nil {
			return ref, nil
		}
		msgs = append(msgs, fmt.Sprintf("with credentials from %s: %s", c.Source, redact(err.Error(), creds)))
		if ctx.Err() != nil {
			break
		}
	}
	if len(msgs) == 1 {
		return "", errors.New(msgs[0])
	}
	return "", errors.New("[" + strings.Join(msgs, ", ") + "]")
}

// redact replaces every secret of creds in msg: passwords and tokens, and
// the base64 forms of "user:password" a registry client may send.
// Usernames are not secrets and stay.
func redact(msg string, creds []Credential) string {
	var secrets []string
	for _, c := range creds {
		secrets = append(secrets, c.Password, c.IdentityToken, c.RegistryToken)
		if c.Password != "" {
			up := c.Username + ":" + c.Password
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				secrets = append(secrets, enc.EncodeToString([]byte(up)), enc.EncodeToString([]byte(c.Password)))
			}
		}
	}
	// Longest first, so that a secret containing another goes whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}
