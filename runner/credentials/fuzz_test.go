package credentials

import (
	"errors"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/podrun/podrun/sources/imageref"
)

// plainKey is a docker config key that url.Parse leaves as written: an
// optional scheme, host labels of lower-case letters, digits, '-' and the
// glob '*', an optional port and a path of plain characters. For such a
// key matchModel decides without url.Parse.
var plainKey = regexp.MustCompile(`^(?:https?://)?([a-z0-9*-]+(?:\.[a-z0-9*-]+)*)(?::([0-9]+))?(/[a-z0-9._/-]*)?$`)

// matchModel is the kubelet's matching rule (BasicDockerKeyring.Add and
// URLsMatch) for a plain key, read as the rule's text says rather than
// as urlsMatch computes it: the key's path loses a leading /v1 or /v2 and
// a lone "/"; the key matches a repository (domain/path, as imageref
// normalises it) when the domain has the key's port, as many labels as
// the key's host and each label matches the key's label as a glob, and
// the key's path is a string prefix of "/"+path; a bracketed domain that
// is not an IPv6 address matches nothing. It also returns the
// key's index form (host[:port][path]). ok is false for a key that is not
// plain.
func matchModel(loc, repo string) (match bool, key string, ok bool) {
	m := plainKey.FindStringSubmatch(loc)
	if m == nil {
		return false, "", false
	}
	host, port, path := m[1], m[2], m[3]
	if strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") {
		path = path[3:]
	}
	if path == "/" {
		path = ""
	}
	key = host
	if port != "" {
		key += ":" + port
	}
	key += path

	domain, rest, _ := strings.Cut(repo, "/")
	dHost, dPort, err := net.SplitHostPort(domain)
	if err != nil {
		dHost, dPort = domain, ""
	}
	if inside, ok := strings.CutPrefix(domain, "["); ok && !parseAddr(inside[:strings.IndexByte(inside, ']')]).IsValid() {
		// A bracketed host must be an IPv6 address: "[A]" passes the
		// reference grammar but is no host, and matches no key.
		return false, key, true
	}
	keyLabels, domainLabels := strings.Split(host, "."), strings.Split(dHost, ".")
	if port != dPort || len(keyLabels) != len(domainLabels) || !strings.HasPrefix("/"+rest, path) {
		return false, key, true
	}
	for i := range keyLabels {
		if ok, err := filepath.Match(keyLabels[i], domainLabels[i]); err != nil || !ok {
			return false, key, true
		}
	}
	return true, key, true
}

// parseAddr is the IPv6 address s, or the zero Addr.
func parseAddr(s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}
	}
	return a
}

// hasGlob tells whether a host holds a filepath.Match metacharacter.
func hasGlob(host string) bool { return strings.ContainsAny(host, `*?[\`) }

// credOf is the credential fuzzKeyring gives the config key loc: its
// username is the key, so that a result names the key it came from.
func credOf(loc string) dockerConfigEntry {
	return dockerConfigEntry{Username: loc, Password: "pw:" + loc}
}

// FuzzKeyring checks the registry keyring matcher (Keyring.add, lookup
// and AuthsFor) on three docker config keys, an image and a whole docker
// config as JSON:
//   - nothing panics, whatever the keys, the image or the config;
//   - a config that does not parse gives one of podrun's own errors,
//     which quote nothing of it (it holds secrets);
//   - the index is reverse-sorted without duplicates and every key in it
//     has its credentials;
//   - a credential matched by its key (not the Docker Hub fallback) never
//     crosses hosts or ports: the key's port is the image's, its host has
//     as many labels as the image's registry, each label matching, and a
//     key host without glob characters is the registry's host exactly;
//   - the Docker Hub fallback applies only to Docker Hub images and only
//     when no key matched;
//   - results come in the kubelet's order: most specific key first
//     (reverse-sorted index keys), a key's credentials in the order
//     added, the first keyring's before the second's, and a credential
//     found twice only once;
//   - for keys that url.Parse leaves as written, exactly the keys
//     matchModel matches are returned.
func FuzzKeyring(f *testing.F) {
	for _, seed := range [][4]string{
		{"quay.io", "quay.io/coreos", "https://quay.io/v2/coreos/etcd", "quay.io/coreos/etcd:v3"},
		{"*.example.com", "example.com", "*.*.example.com", "a.b.example.com/app"},
		{"127.0.0.1:5000", "127.0.0.1", "127.0.0.1:5001/private", "127.0.0.1:5000/private/app:1"},
		{"https://index.docker.io/v1/", "docker.io", "docker.io/library", "busybox"},
		{"index.docker.io", "other.io", "*", "someone/app@sha256:" + strings.Repeat("a", 64)},
		{"reg.io/team", "reg.io/te", "reg.io/team-b", "reg.io/team-b/app"},
		{"reg.io:", "http://reg.io/", "reg.io/?x", "reg.io/x"},
		{"[::1]:5000", "*:5000", "[::1]", "[::1]:5000/x"},
		{"user@reg.io", "reg.io#frag", "reg.io/a%3Fb", "reg.io/a/b"},
		{"bad url %zz", "reg.io\\*", "[a-", "localhost/app"},
		{"*-registry.example.com", "eu-*.example.com", "e?-registry.example.com", "eu-registry.example.com/x"},
		{"HTTPS://reg.io", "Reg.IO", "reg.io/V2/", "Reg.IO/x"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], []byte(`{"auths":{"`+seed[1]+`":{"auth":"`+b64("u:p")+`"}}}`))
	}
	f.Add("a", "b", "c", "<your-private-image>", []byte(`{"auths":{"reg.io":{"password":["hunter2"]}}}`))
	f.Add("", "", "", "", []byte(`{"auths":{"reg.io":{"auth":"hunter2!"}}}`))
	f.Add("x.io", "", "", "x.io/y", []byte(`{"auths":{"x.io":{"auth":"`+b64("nocolon")+`"},"":{}}}`))

	f.Fuzz(func(t *testing.T, k1, k2, k3, image string, config []byte) {
		// The config as JSON: parsed or refused without quoting it.
		cfgJSON, err := parseDockerConfigJSON(config)
		if err != nil {
			if !errors.Is(err, errBadDockerConfig) && !errors.Is(err, errAuthNotBase64) && !errors.Is(err, errAuthNoColon) {
				t.Fatalf("parseDockerConfigJSON(%q): an error of its own: %v", config, err)
			}
			cfgJSON = nil
		}
		if _, err := parseDockercfg(config); err != nil && !errors.Is(err, errBadDockerConfig) &&
			!errors.Is(err, errAuthNotBase64) && !errors.Is(err, errAuthNoColon) {
			t.Fatalf("parseDockercfg(%q): an error of its own: %v", config, err)
		}

		locs := []string{k1, k2, k3}
		cfg := dockerConfig{}
		for _, loc := range locs {
			cfg[loc] = credOf(loc)
		}
		ring := &Keyring{}
		ring.add(cfg, "fuzz")
		second := &Keyring{}
		second.add(cfgJSON, "json")
		// One credential of the first keyring again, to be dropped.
		second.add(dockerConfig{k1: credOf(k1)}, "again")

		// The index.
		for i, key := range ring.index {
			if i > 0 && ring.index[i-1] <= key {
				t.Fatalf("index %q is not reverse-sorted without duplicates", ring.index)
			}
			if len(ring.creds[key]) == 0 {
				t.Fatalf("index key %q has no credentials", key)
			}
		}
		if len(ring.creds) != len(ring.index) {
			t.Fatalf("%d keys with credentials, %d in the index %q", len(ring.creds), len(ring.index), ring.index)
		}

		// Lookups of anything at all do not panic.
		ring.lookup(image)
		second.lookup(image)

		got, err := AuthsFor(image, []*Keyring{ring, second})
		if err != nil {
			if got != nil {
				t.Fatalf("AuthsFor(%q) = %v with error %v", image, got, err)
			}
			return
		}
		ref, err := imageref.Parse(image)
		if err != nil {
			t.Fatalf("AuthsFor took %q, which imageref refuses: %v", image, err)
		}
		repo := ref.Repository
		domain, _, _ := strings.Cut(repo, "/")

		// Which index key each credential of the first keyring has.
		keyOf := map[string]string{}
		for _, key := range ring.index {
			for _, c := range ring.creds[key] {
				keyOf[c.Username] = key
			}
		}
		var first []Credential // the first keyring's results, in order
		for _, c := range got {
			if c.Source == "fuzz" {
				first = append(first, c)
			}
		}
		if n := slices.IndexFunc(got, func(c Credential) bool { return c.Source != "fuzz" }); n >= 0 && n < len(first) {
			t.Fatalf("the second keyring's credentials before the first's: %+v", got)
		}
		for i, c := range got {
			if slices.ContainsFunc(got[:i], func(o Credential) bool { return sameSecret(o, c) }) {
				t.Fatalf("credential %+v returned twice: %+v", c, got)
			}
		}

		matched := ring.lookupMatched(repo)
		fallback := len(matched) == 0
		if fallback && len(first) > 0 {
			if domain != "docker.io" {
				t.Fatalf("image %q (registry %s) got Docker Hub's credentials %+v", image, domain, first)
			}
			for _, c := range first {
				if keyOf[c.Username] != defaultRegistryKey {
					t.Fatalf("Docker Hub fallback for %q gave %+v of key %q", image, c, keyOf[c.Username])
				}
			}
		}
		var prev string
		for i, c := range first {
			if fallback {
				break
			}
			key := keyOf[c.Username]
			if i > 0 && key > prev {
				t.Fatalf("results %+v not most specific key first: %q after %q", first, key, prev)
			}
			prev = key
			checkNoCrossing(t, key, domain, image)
		}
		// A key's credentials in the order they were added: their keys'
		// sorted order (add sorts a config's keys).
		for i := 1; i < len(first); i++ {
			a, b := first[i-1], first[i]
			if keyOf[a.Username] == keyOf[b.Username] && a.Username > b.Username {
				t.Fatalf("credentials of key %q out of order: %q before %q", keyOf[a.Username], a.Username, b.Username)
			}
		}

		// The model, when every key is plain.
		want := map[string]bool{}
		anyMatch := false
		for _, loc := range locs {
			m, _, ok := matchModel(loc, repo)
			if !ok {
				return
			}
			want[loc] = m
			anyMatch = anyMatch || m
		}
		if !anyMatch && domain == "docker.io" {
			for _, loc := range locs {
				_, key, _ := matchModel(loc, repo)
				want[loc] = key == defaultRegistryKey
			}
		}
		gotLocs := map[string]bool{}
		for _, c := range first {
			gotLocs[c.Username] = true
		}
		for _, loc := range locs {
			if gotLocs[loc] != want[loc] {
				t.Fatalf("key %q for %q (repository %s): matched %v, the rule says %v; got %+v", loc, image, repo, gotLocs[loc], want[loc], first)
			}
		}
	})
}

// lookupMatched is lookup without the Docker Hub fallback: the
// credentials whose keys match repo.
func (k *Keyring) lookupMatched(repo string) []Credential {
	var out []Credential
	for _, key := range k.index {
		if urlsMatch(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	return out
}

// checkNoCrossing fails unless the index key key may send its credentials
// to the registry domain (imageref's, not url.Parse's): the same port, as
// many host labels, and the very host when the key has no glob.
func checkNoCrossing(t *testing.T, key, domain, image string) {
	t.Helper()
	keyHost, _, _ := strings.Cut(key, "/")
	kh, kp, err := net.SplitHostPort(keyHost)
	if err != nil {
		kh, kp = keyHost, ""
	}
	dh, dp, err := net.SplitHostPort(domain)
	if err != nil {
		dh, dp = domain, ""
	}
	switch {
	case kp != dp:
		t.Fatalf("key %q (port %q) matched %q, registry %s (port %q)", key, kp, image, domain, dp)
	case strings.Count(kh, ".") != strings.Count(dh, "."):
		t.Fatalf("key %q matched %q, whose registry %s has another number of labels", key, image, domain)
	case !hasGlob(kh) && kh != dh:
		t.Fatalf("key %q (host %q, no glob) matched %q, registry host %q", key, kh, image, dh)
	}
}
