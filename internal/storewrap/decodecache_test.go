package storewrap

import (
	"strconv"
	"testing"
)

// TestDecodeCache: a hit needs the very bytes decoded before (changed bytes
// under the same key are decoded again), the cache stays within its bytes
// and keeps the most recently used records, and a record too large for a
// slot is decoded every time.
func TestDecodeCache(t *testing.T) {
	decodes := 0
	c := NewDecodeCache[string](64*32, func(raw []byte, rec *string, _ string) error {
		decodes++
		*rec = string(raw)
		return nil
	})
	get := func(k, raw string) *string {
		t.Helper()
		rec, err := c.Get([]byte(k), []byte(raw), "record")
		if err != nil || *rec != raw {
			t.Fatalf("Get(%s) = %v, %v", k, rec, err)
		}
		return rec
	}
	a := get("a", "aaaa")
	if get("a", "aaaa") != a || decodes != 1 {
		t.Fatalf("the same bytes were decoded again (%d decodes)", decodes)
	}
	if get("a", "AAAA") == a || decodes != 2 {
		t.Fatal("changed bytes were served from the cache")
	}
	for i := range 1000 {
		get("k"+strconv.Itoa(i), "value "+strconv.Itoa(i))
		get("a", "AAAA") // kept: the most recently used
		if n := c.entries.Cost(); n > c.maxBytes {
			t.Fatalf("cache holds %d bytes, bound %d", n, c.maxBytes)
		}
	}
	if decodes != 2+1000 {
		t.Fatalf("%d decodes, want %d: a recently used record was evicted", decodes, 2+1000)
	}
	big := string(make([]byte, 64))
	get("big", big)
	if _, ok := c.entries.Get("big"); ok {
		t.Fatal("a record above maxBytes/128 was kept")
	}
}
