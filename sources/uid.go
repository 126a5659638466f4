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
	sum := h.Sum(nil)[:16]
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	s := hex.EncodeToString(sum)
	return types.UID(s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32])
}

func writePart(h hash.Hash, b []byte) {
	fmt.Fprintf(h, "%d:", len(b))
	h.Write(b)
}
