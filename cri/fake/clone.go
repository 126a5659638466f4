package fake

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
)

// clone deep-copies a proto message or a string map, so that responses never
// share memory with the server's state while gRPC marshals them.
func clone[T any](v T) T {
	switch x := any(v).(type) {
	case proto.Message:
		if x == nil {
			return v
		}
		return proto.Clone(x).(T)
	case map[string]string:
		if x == nil {
			return v
		}
		return any(maps.Clone(x)).(T)
	}
	return v
}

// sortedByCreation lists a map's values oldest first (ties by key), so that
// list calls answer in a stable order.
func sortedByCreation[T any](m map[string]*T, createdAt func(*T) int64) []*T {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(createdAt(m[a]), createdAt(m[b])); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}
