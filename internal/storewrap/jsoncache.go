package storewrap

import (
	"encoding/json"

	"github.com/procgraph/procgraph/internal/cache"
)

// JSONCache keeps values decoded from JSON texts by the text, so that a
// read decodes a text only the first time it sees it (the Neo4j store's
// JSON properties): a version's
// input schema and warnings are the same text on every read of it, and
// decoding the schema was a third of decoding a procedure. An entry is
// found by the whole text, so it is never stale. The values are shared by
// every read that finds them: callers must not modify them (as the
// embedded store's shared records; procedures' decoration cache recognises
// a schema it has seen by the map's identity). Bounded by the bytes of its
// texts (an LRU, internal/cache); texts too large to be worth a slot are
// decoded every time.
type JSONCache[T any] struct {
	m        *cache.Cache[string, T]
	maxBytes int
}

// NewJSONCache returns an empty cache of at most maxBytes of texts.
func NewJSONCache[T any](maxBytes int) *JSONCache[T] {
	return &JSONCache[T]{maxBytes: maxBytes, m: cache.NewWeighted(maxBytes, func(text string, _ T) int { return len(text) })}
}

// Decode returns text decoded (json.Unmarshal into a T), from the cache
// when it was decoded before; the error is json.Unmarshal's.
func (c *JSONCache[T]) Decode(text string) (T, error) {
	if v, ok := c.m.Get(text); ok {
		return v, nil
	}
	var out T
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, err
	}
	if len(text) > c.maxBytes/64 {
		return out, nil
	}
	c.m.Add(text, out)
	return out, nil
}
