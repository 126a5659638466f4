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
	"regexp"
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

// referenceRegexp is the reference grammar of github.com/distribution/reference:
// name[:tag][@digest], the name being [domain[:port]/]component(/component)*.
// Components are lower case; the domain may hold upper case.
func referenceRegexp() *regexp.Regexp {
	const (
		component = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
		label     = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain    = `(?:` + label + `(?:\.` + label + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
		name      = `(?:` + domain + `/)?` + component + `(?:/` + component + `)*`
		tag       = `[\w][\w.-]{0,127}`
		digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(` + name + `)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
}

// reference is compiled once; it is only ever read.
var reference = referenceRegexp()

// identifier is an image ID, which is not a reference.
var identifier = regexp.MustCompile(`^[a-f0-9]{64}$`)

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
	if identifier.MatchString(image) {
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
	m := reference.FindStringSubmatch(domain + "/" + rest)
	if m == nil {
		return fail("invalid reference format")
	}
	if len(m[1]) > 255 {
		return fail("repository name must not be more than 255 characters")
	}
	if d := m[3]; d != "" {
		alg, hex, _ := strings.Cut(d, ":")
		n, ok := digestHexLength(alg)
		if !ok {
			return fail("unsupported digest algorithm")
		}
		if len(hex) != n || strings.ToLower(hex) != hex {
			return fail("invalid checksum digest format")
		}
	}
	return Ref{Repository: m[1], Tag: m[2], Digest: m[3]}, nil
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
