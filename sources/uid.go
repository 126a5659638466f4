package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"

	"k8s.io/apimachinery/pkg/types"
)

// uidScheme versions the UID hash input; change it only together with
// the scheme.
const uidScheme = "podrun-uid-v1"

// objectUID is the UID podrun gives an object whose metadata.uid is empty.
//
// The kubelet hashes a dump of its internal Go structs, which podrun
// cannot reproduce, so podrun has its own deterministic scheme: SHA-256
// over, in order and each written as "<decimal byte length>:<bytes>", the
// scheme name "podrun-uid-v1", the source identity (the absolute file
// path, "stdin", or the URL as given), the document index, the list item
// index (0 outside a list), the node name and the raw bytes of the
// document as written (for a list item, the whole list document), and,
// only for a pod that --image or --env changed (Overrides), its JSON as
// changed (so a pod nothing overrides keeps the UID it had before). The
// first 16 bytes of the sum get the RFC 4122 version 5 and variant bits
// (byte 6 = 0x5X, byte 8 = 0b10XXXXXX) and are formatted as a lowercase
// 8-4-4-4-12 UUID. The same source, position, node and bytes always give
// the same UID; changing any of them gives another.
func objectUID(identity string, o Origin, nodeName string, raw, overridden []byte) types.UID {
	h := sha256.New()
	for _, part := range [][]byte{
		[]byte(uidScheme),
		[]byte(identity),
		fmt.Appendf(nil, "%d", o.Doc),
		fmt.Appendf(nil, "%d", o.Item),
		[]byte(nodeName),
		raw,
	} {
		writePart(h, part)
	}
	if overridden != nil {
		writePart(h, overridden)
	}
	return uuidOf(h.Sum(nil))
}

// derivedUIDScheme versions derivedUID's hash input.
const derivedUIDScheme = "podrun-derived-uid-v1"

// derivedUID is the UID of an object a controller makes for its parent (a
// Job's pods, a Deployment's ReplicaSet and its pod): SHA-256 over, each as
// objectUID writes its parts, "podrun-derived-uid-v1", the parent's UID
// and role (e.g. "Pod 2", "ReplicaSet web-5d4b8c7f9"), formatted as
// objectUID's. The same parent and role always give the same UID. An API
// server gives each a random one.
func derivedUID(parent types.UID, role string) types.UID {
	h := sha256.New()
	for _, part := range []string{derivedUIDScheme, string(parent), role} {
		writePart(h, []byte(part))
	}
	return uuidOf(h.Sum(nil))
}

// uuidOf formats the first 16 bytes of a hash as a lowercase 8-4-4-4-12
// UUID with the RFC 4122 version 5 and variant bits.
func uuidOf(sum []byte) types.UID {
	sum = sum[:16]
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	s := hex.EncodeToString(sum)
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}

// generatedNameChars are the characters the API server's generateName
// suffixes are drawn from (apimachinery's utilrand alphanums: no vowels,
// no 0, 1 or 3, so that no word is spelt).
const generatedNameChars = "bcdfghjklmnpqrstvwxz2456789"

// maxGeneratedNameLength is how much of a generateName base the API
// server keeps (names.MaxGeneratedNameLength: 63 less the 5 characters).
const maxGeneratedNameLength = 58

// generatedName is the name the API server gives an object created with
// generateName base: base, cut to 58 characters, and 5 characters of
// generatedNameChars. The API server draws them at random; podrun takes
// them from the object's UID (SHA-256 of it, a byte per character, modulo
// 27), so that one manifest gives the same names run after run.
func generatedName(base string, uid types.UID) string {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	sum := sha256.Sum256([]byte(uid))
	b := []byte(base)
	for i := range 5 {
		b = append(b, generatedNameChars[int(sum[i])%len(generatedNameChars)])
	}
	return string(b)
}

func writePart(h hash.Hash, b []byte) {
	fmt.Fprintf(h, "%d:", len(b))
	h.Write(b)
}
