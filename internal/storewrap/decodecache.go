package storewrap

import (
	"bytes"
	"strings"

	"github.com/procgraph/procgraph/internal/cache"
)

// DecodeCache keeps decoded records next to the bytes they were decoded
// from, so the read path decodes a record again only when its stored bytes
// changed (the embedded store's procedure and version records). A hit is
// checked by comparing the stored bytes in full, so an entry can never be
// stale, whichever store or transaction the bytes come from. Returned
// records are shared: callers must not modify them. Bounded by the stored
// bytes it holds (an LRU, internal/cache).
type DecodeCache[T any] struct {
	decode   func(raw []byte, rec *T, what string) error
	entries  *cache.Cache[string, cacheEntry[T]]
	maxBytes int
}

type cacheEntry[T any] struct {
	raw []byte
	rec *T
}

// NewDecodeCache returns a cache of at most maxBytes of stored bytes that
// decodes with decode (what names the record in its error).
func NewDecodeCache[T any](maxBytes int, decode func(raw []byte, rec *T, what string) error) *DecodeCache[T] {
	return &DecodeCache[T]{decode: decode, maxBytes: maxBytes,
		entries: cache.NewWeighted[string](maxBytes, func(_ string, e cacheEntry[T]) int { return len(e.raw) })}
}

// Get returns raw (the value stored under k) decoded, from the cache when
// the same bytes were decoded before; kind names the record in an error
// (with k, its parts joined by spaces).
func (c *DecodeCache[T]) Get(k, raw []byte, kind string) (*T, error) {
	if e, ok := c.entries.Get(string(k)); ok && bytes.Equal(e.raw, raw) {
		return e.rec, nil
	}
	rec := new(T)
	if err := c.decode(raw, rec, kind+" "+strings.ReplaceAll(string(k), "\x00", " ")); err != nil {
		return nil, err
	}
	if 2*len(raw) > c.maxBytes/64 {
		return rec, nil // too large to be worth a slot
	}
	c.entries.Add(string(k), cacheEntry[T]{raw: bytes.Clone(raw), rec: rec})
	return rec, nil
}
