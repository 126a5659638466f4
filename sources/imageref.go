package sources

import (
	"regexp"
	"strings"
)

// referenceRegexp is the image reference grammar of
// github.com/distribution/reference: [domain[:port]/]path[:tag][@digest].
// Path components are lowercase; the domain may hold upper case.
var referenceRegexp = func() *regexp.Regexp {
	const (
		pathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
		domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		host            = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[[a-fA-F0-9:]+\])`
		domain          = host + `(?::[0-9]+)?`
		name            = `(?:` + domain + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
		tag             = `[\w][\w.-]{0,127}`
		digest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(` + name + `)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
}()

var (
	identifierRegexp = regexp.MustCompile(`^[a-f0-9]{64}$`)
	digestHexLength  = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
)

// imageTag returns the tag the kubelet's parsers.ParseImageName finds in
// an image reference: the written tag, "latest" when there is neither tag
// nor digest, "" for a digest-only reference, and "" for a reference that
// does not parse (ParseImageName's error is ignored by the defaulting).
func imageTag(image string) string {
	if identifierRegexp.MatchString(image) {
		return ""
	}
	m := referenceRegexp.FindStringSubmatch(image)
	if m == nil || len(m[1]) > 255 {
		return ""
	}
	tag, digest := m[2], m[3]
	if digest != "" {
		alg, hex, _ := strings.Cut(digest, ":")
		if n, ok := digestHexLength[alg]; !ok || len(hex) != n || strings.ToLower(hex) != hex {
			return ""
		}
	}
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}
