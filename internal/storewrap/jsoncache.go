package storewrap

import (
	"encoding/json"
	"sync"
)

// JSONCache keeps values decoded from JSON texts by the text, so that a
// read decodes a text only the first time it sees it (the Neo4j store's
// JSON properties): a version's
// input schema and warnings are the same text on every read of it, and
// decoding the schema was a third of decoding a procedure. An entry is
// found by the whole text, so it is never stale. The values are shared by
// every read that finds them: callers must not modify them (as the
// embedded store's shared records; procedures' decoration cache recognises
// a schema it has seen by the map's identity). Bounded: emptied when full;
// texts too large to be worth a slot are decoded every time.
type JSONCache[T any] struct {
	mu       sync.Mutex
	m        map[string]T
	bytes    int
	maxBytes int
}

// NewJSONCache returns an empty cache of at most maxBytes of texts.
func NewJSONCache[T any](maxBytes int) *JSONCache[T] { return &JSONCache[T]{maxBytes: maxBytes} }

// Decode returns text decoded (json.Unmarshal into a T), from the cache
// when it was decoded before; the error is json.Unmarshal's.
func (c *JSONCache[T]) Decode(text string) (T, error) {
	c.mu.Lock()
	v, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	var out T
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, err
	}
	if len(text) > c.maxBytes/64 {
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(text) > c.maxBytes {
		c.m, c.bytes = map[string]T{}, 0
	}
	c.m[text] = out
	c.bytes += len(text)
	return out, nil
}
