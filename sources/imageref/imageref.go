// Package imageref parses container image references the way the kubelet
// does (pkg/util/parsers ParseImageName, which calls
// github.com/distribution/reference ParseNormalizedNamed): the normalised
// repository that pull credentials are matched against, the tag that picks
// the default imagePullPolicy, and the ":latest" the kubelet adds before
// it asks the runtime (applyDefaultImageTag). sources, runner and
// runner/credentials share this one parser.
package imageref

import (
	"fmt"
	"strings"
)

// Ref is a parsed image reference.
type Ref struct {
	// Repository is the normalised name: "busybox" is
	// "docker.io/library/busybox", "index.docker.io/x/y" is "docker.io/x/y".
	Repository string
	Tag        string // as written; "" when there is none
	Digest     string // "sha256:…"; "" when there is none
}

// The reference grammar of github.com/distribution/reference, checked by
// hand rather than by a regular expression, which would cost every run a
// few milliseconds to compile at start-up (imageref_test.go keeps the
// expression and fuzzes the two against each other):
//
//	reference := name [ ":" tag ] [ "@" digest ]
//	name      := [ domain "/" ] component ( "/" component )*
//	domain    := ( label ( "." label )* | "[" [a-fA-F0-9:]+ "]" ) [ ":" [0-9]+ ]
//	label     := [a-zA-Z0-9] | [a-zA-Z0-9] [a-zA-Z0-9-]* [a-zA-Z0-9]
//	component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//	tag       := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
//	digest    := algorithm ":" [0-9a-fA-F]{32,}
//	algorithm := [A-Za-z][A-Za-z0-9]* ( [-_+.] [A-Za-z][A-Za-z0-9]* )*

func isLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || c >= 'A' && c <= 'Z' }
func isWord(c byte) bool  { return isAlnum(c) || c == '_' }
func isHex(c byte) bool   { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isComponent reports whether s is a path component: runs of [a-z0-9]
// joined by ".", "_", "__" or a run of "-".
func isComponent(s string) bool {
	if s == "" || !isLower(s[0]) || !isLower(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); {
		if isLower(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !isLower(s[j]) {
			j++
		}
		switch sep := s[i:j]; {
		case sep == "." || sep == "_" || sep == "__":
		case strings.Trim(sep, "-") == "":
		default:
			return false
		}
		i = j
	}
	return true
}

// isLabel reports whether s is a DNS label as the grammar has it.
func isLabel(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDomain reports whether s is a host name or bracketed IPv6 address,
// with an optional port.
func isDomain(s string) bool {
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.HasSuffix(s, "]") {
		port := s[i+1:]
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = s[:i]
	}
	if strings.HasPrefix(host, "[") {
		ip, ok := strings.CutSuffix(host[1:], "]")
		if !ok || ip == "" {
			return false
		}
		for i := 0; i < len(ip); i++ {
			if !isHex(ip[i]) && ip[i] != ':' {
				return false
			}
		}
		return true
	}
	for label := range strings.SplitSeq(host, ".") {
		if !isLabel(label) {
			return false
		}
	}
	return true
}

// isName reports whether s is a repository name.
func isName(s string) bool {
	segs := strings.Split(s, "/")
	if len(segs) > 1 && !isComponent(segs[0]) && !isDomain(segs[0]) {
		return false
	}
	if len(segs) == 1 && !isComponent(segs[0]) {
		return false
	}
	for _, c := range segs[1:] {
		if !isComponent(c) {
			return false
		}
	}
	return true
}

// isTag reports whether s is a tag.
func isTag(s string) bool {
	if s == "" || len(s) > 128 || !isWord(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isWord(s[i]) && s[i] != '.' && s[i] != '-' {
			return false
		}
	}
	return true
}

// isDigest reports whether s is algorithm:hex as the grammar has it (the
// algorithm and length are checked by Parse).
func isDigest(s string) bool {
	alg, hex, ok := strings.Cut(s, ":")
	if !ok || len(hex) < 32 || alg == "" {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if !isHex(hex[i]) {
			return false
		}
	}
	// Parts of letters and digits, each starting with a letter, joined by
	// one of - _ + .
	start := true
	for i := 0; i < len(alg); i++ {
		c := alg[i]
		switch {
		case start:
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
			start = false
		case isAlnum(c):
		case c == '-' || c == '_' || c == '+' || c == '.':
			start = true
		default:
			return false
		}
	}
	return !start
}

// split parses name[:tag][@digest]; ok is false when s is not a reference.
func split(s string) (name, tag, digest string, ok bool) {
	name, digest, hasDigest := strings.Cut(s, "@")
	if hasDigest && !isDigest(digest) {
		return "", "", "", false
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name, tag = name[:i], name[i+1:]
		if !isTag(tag) {
			return "", "", "", false
		}
	}
	if !isName(name) {
		return "", "", "", false
	}
	return name, tag, digest, true
}

// isIdentifier reports whether s is an image ID (64 lower-case hex
// digits), which is not a reference.
func isIdentifier(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// digestHexLength is the hex length of each digest algorithm distribution knows.
func digestHexLength(alg string) (int, bool) {
	switch alg {
	case "sha256":
		return 64, true
	case "sha384":
		return 96, true
	case "sha512":
		return 128, true
	}
	return 0, false
}

// Parse parses an image reference as the kubelet's ParseImageName does. A
// reference that does not parse is an error in the kubelet's words
// ("couldn't parse image name ...").
func Parse(image string) (Ref, error) {
	fail := func(why string) (Ref, error) {
		return Ref{}, fmt.Errorf("couldn't parse image name %q: %s", image, why)
	}
	if isIdentifier(image) {
		return fail(fmt.Sprintf("invalid repository name (%s), cannot specify 64-byte hexadecimal strings", image))
	}
	domain, rest := "docker.io", image
	if first, after, ok := strings.Cut(image, "/"); ok &&
		(strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		domain, rest = first, after
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	if remote, _, _ := strings.Cut(rest, ":"); strings.ToLower(remote) != remote {
		return fail(fmt.Sprintf("invalid reference format: repository name (%s) must be lowercase", remote))
	}
	name, tag, digest, ok := split(domain + "/" + rest)
	if !ok {
		return fail("invalid reference format")
	}
	if len(name) > 255 {
		return fail("repository name must not be more than 255 characters")
	}
	if d := digest; d != "" {
		alg, hex, _ := strings.Cut(d, ":")
		n, ok := digestHexLength(alg)
		if !ok {
			return fail("unsupported digest algorithm")
		}
		if len(hex) != n || strings.ToLower(hex) != hex {
			return fail("invalid checksum digest format")
		}
	}
	return Ref{Repository: name, Tag: tag, Digest: digest}, nil
}

// Tag is the tag the kubelet's ParseImageName finds: the written tag,
// "latest" when there is neither tag nor digest, "" for a digest-only
// reference and for one that does not parse (the defaulting of
// imagePullPolicy ignores that error).
func Tag(image string) string {
	r, err := Parse(image)
	switch {
	case err != nil:
		return ""
	case r.Tag == "" && r.Digest == "":
		return "latest"
	}
	return r.Tag
}

// WithDefaultTag adds ":latest" to an image with neither tag nor digest, as
// the kubelet's applyDefaultImageTag does.
func WithDefaultTag(image string) string {
	if strings.Contains(image, "@") {
		return image
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if strings.Contains(last, ":") {
		return image
	}
	return image + ":latest"
}
