package embedded

import (
	"bytes"
	"strings"
	"sync"
)

// decodeCache keeps decoded records next to the bytes they were decoded
// from, so the read path decodes a record again only when its stored bytes
// changed. A hit is checked by comparing the stored bytes in full, so an
// entry can never be stale, whichever store or transaction the bytes come
// from. Returned records are shared: callers must not modify them.
type decodeCache[T any] struct {
	mu       sync.Mutex
	entries  map[string]cacheEntry[T]
	bytes    int
	maxBytes int
}

type cacheEntry[T any] struct {
	raw []byte
	rec *T
}

func newDecodeCache[T any](maxBytes int) *decodeCache[T] {
	return &decodeCache[T]{entries: map[string]cacheEntry[T]{}, maxBytes: maxBytes}
}

// get returns raw (the value stored under k) decoded, from the cache when
// the same bytes were decoded before; kind names the record in an error
// (with k, its parts joined by spaces).
func (c *decodeCache[T]) get(k, raw []byte, kind string) (*T, error) {
	c.mu.Lock()
	e, ok := c.entries[string(k)]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.rec, nil
	}
	rec := new(T)
	if err := decode(raw, rec, kind+" "+strings.ReplaceAll(string(k), "\x00", " ")); err != nil {
		return nil, err
	}
	if 2*len(raw) > c.maxBytes/64 {
		return rec, nil // too large to be worth a slot
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[string(k)]; ok {
		c.bytes -= len(old.raw)
	}
	for k2, old := range c.entries { // evict arbitrary entries until it fits
		if c.bytes+len(raw) <= c.maxBytes {
			break
		}
		delete(c.entries, k2)
		c.bytes -= len(old.raw)
	}
	c.entries[string(k)] = cacheEntry[T]{raw: bytes.Clone(raw), rec: rec}
	c.bytes += len(raw)
	return rec, nil
}

// The read path's caches, shared by every store in the process: entries are
// validated against the stored bytes, so sharing them is safe.
var (
	procCache    = newDecodeCache[procRecord](8 << 20)
	versionCache = newDecodeCache[versionRecord](32 << 20)
)
