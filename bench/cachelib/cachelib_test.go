// Package cachelib measures the two cache libraries considered for
// procgraph's bounded caches (ADR 0041) on the shapes of two of them: the
// embedded store's decode cache (record key → raw bytes and the decoded
// record, a hit checked by comparing the bytes; 32 MiB of 2 KiB records)
// and replay's compiled-schema cache (code hash + schema key → compiled
// schema; 4096 entries). It is a module of its own so that the library not
// chosen stays out of procgraph's go.mod.
package cachelib

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"testing"

	theine "github.com/Yiling-J/theine-go"
	lru "github.com/hashicorp/golang-lru/v2"
)

type record struct{ fields [12]string }

type entry struct {
	raw []byte
	rec *record
}

type schema struct{ props map[string]any }

const (
	recordBytes   = 2 << 10
	decodeBytes   = 32 << 20
	decodeEntries = decodeBytes / recordBytes // 16384
	schemaEntries = 4096
)

// cache is what both libraries offer the benchmark.
type cache[V any] interface {
	get(k string) (V, bool)
	add(k string, v V, cost int)
	close()
}

type lruCache[V any] struct{ c *lru.Cache[string, V] }

func (c lruCache[V]) get(k string) (V, bool)   { return c.c.Get(k) }
func (c lruCache[V]) add(k string, v V, _ int) { c.c.Add(k, v) }
func (c lruCache[V]) close()                   {}

type theineCache[V any] struct{ c *theine.Cache[string, V] }

func (c theineCache[V]) get(k string) (V, bool)      { return c.c.Get(k) }
func (c theineCache[V]) add(k string, v V, cost int) { c.c.Set(k, v, int64(cost)) }
func (c theineCache[V]) close()                      { c.c.Close() }

func newLRU[V any](entries int) cache[V] {
	c, err := lru.New[string, V](entries)
	if err != nil {
		panic(err)
	}
	return lruCache[V]{c}
}

// newTheine bounds by cost: bytes for the decode cache (as DecodeCache
// does), entries (cost 1) for the schema cache.
func newTheine[V any](max int) cache[V] {
	c, err := theine.NewBuilder[string, V](int64(max)).Build()
	if err != nil {
		panic(err)
	}
	return theineCache[V]{c}
}

func decodeKeys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = "p\x00" + "procedure_" + strconv.Itoa(i) + "\x00" + strconv.Itoa(i%7)
	}
	return ks
}

func schemaKeys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		h := sha256.Sum256([]byte(strconv.Itoa(i)))
		ks[i] = hex.EncodeToString(h[:]) + "\x00" + `{"properties":{"limit":{"type":"integer"},"q":{"type":"string"}}}`
	}
	return ks
}

func raw(i int) []byte {
	b := bytes.Repeat([]byte{'x'}, recordBytes)
	copy(b, strconv.Itoa(i))
	return b
}

type lib struct {
	name      string
	newDecode func() cache[entry]
	newSchema func() cache[*schema]
}

var libs = []lib{
	{"golang-lru", func() cache[entry] { return newLRU[entry](decodeEntries) }, func() cache[*schema] { return newLRU[*schema](schemaEntries) }},
	{"theine", func() cache[entry] { return newTheine[entry](decodeBytes) }, func() cache[*schema] { return newTheine[*schema](schemaEntries) }},
}

// BenchmarkDecode is the decode cache: Hit reads a present record and
// compares its bytes; MissInsert adds a record not present (evicting one:
// 4× the capacity in keys); ParallelHit is Hit from every P.
func BenchmarkDecode(b *testing.B) {
	for _, l := range libs {
		keys := decodeKeys(decodeEntries)
		raws := make([][]byte, len(keys))
		for i := range raws {
			raws[i] = raw(i)
		}
		fill := func() cache[entry] {
			c := l.newDecode()
			for i, k := range keys {
				c.add(k, entry{raw: bytes.Clone(raws[i]), rec: &record{}}, len(raws[i]))
			}
			if t, ok := c.(theineCache[entry]); ok {
				t.c.Wait()
			}
			return c
		}
		b.Run(l.name+"/Hit", func(b *testing.B) {
			c := fill()
			defer c.close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % len(keys)
				if e, ok := c.get(keys[j]); !ok || !bytes.Equal(e.raw, raws[j]) {
					_ = e // a miss under theine's admission: counted in the time
				}
			}
		})
		b.Run(l.name+"/MissInsert", func(b *testing.B) {
			c := fill()
			defer c.close()
			more := decodeKeys(4 * decodeEntries)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % len(more)
				if _, ok := c.get(more[j]); !ok {
					c.add(more[j], entry{raw: raws[j%len(raws)], rec: &record{}}, recordBytes)
				}
			}
		})
		b.Run(l.name+"/ParallelHit", func(b *testing.B) {
			c := fill()
			defer c.close()
			var n atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(n.Add(7919))
				for pb.Next() {
					j := i % len(keys)
					if e, ok := c.get(keys[j]); ok {
						_ = bytes.Equal(e.raw, raws[j])
					}
					i++
				}
			})
		})
	}
}

// BenchmarkSchema is replay's compiled-schema cache, as BenchmarkDecode.
func BenchmarkSchema(b *testing.B) {
	for _, l := range libs {
		keys := schemaKeys(schemaEntries)
		fill := func() cache[*schema] {
			c := l.newSchema()
			for _, k := range keys {
				c.add(k, &schema{}, 1)
			}
			if t, ok := c.(theineCache[*schema]); ok {
				t.c.Wait()
			}
			return c
		}
		b.Run(l.name+"/Hit", func(b *testing.B) {
			c := fill()
			defer c.close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.get(keys[i%len(keys)])
			}
		})
		b.Run(l.name+"/MissInsert", func(b *testing.B) {
			c := fill()
			defer c.close()
			more := schemaKeys(4 * schemaEntries)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := more[i%len(more)]
				if _, ok := c.get(k); !ok {
					c.add(k, &schema{}, 1)
				}
			}
		})
		b.Run(l.name+"/ParallelHit", func(b *testing.B) {
			c := fill()
			defer c.close()
			var n atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(n.Add(7919))
				for pb.Next() {
					c.get(keys[i%len(keys)])
					i++
				}
			})
		})
	}
}
