package main

// The mutants of the one bounded cache (internal/cache, ADR 0041) and the
// stores' decode caches over it.
func init() {
	mutants = append(mutants, []Mutant{
		{
			Name:     "cache/weighted-replace-keeps-cost",
			Why:      "replacing a value in a cost-bounded cache counts the old value's cost forever: the cache shrinks with every rewrite of a record until it keeps nothing",
			Edits:    []Edit{{Dir: "internal/cache", Files: "cache.go", Find: "c.total -= c.cost(k, old)", Replace: "_ = old"}},
			Packages: []string{"./internal/cache"},
			Tests:    []string{"TestNewWeightedBoundsCost"},
		},
		{
			Name:     "cache/lru-not-touched-on-get",
			Why:      "Get does not mark an entry used: the cache evicts in insertion order, the hot records first",
			Edits:    []Edit{{Dir: "internal/cache", Files: "cache.go", Find: "return c.lru.Get(k)", Replace: "return c.lru.Peek(k)"}},
			Packages: []string{"./internal/cache", "./internal/storewrap"},
			Tests:    []string{"TestNewEvictsLeastRecentlyUsed", "TestNewWeightedBoundsCost", "TestDecodeCache"},
		},
		{
			Name:     "storewrap/decode-cache-any-bytes",
			Why:      "a decoded record is served for its key whatever the stored bytes are now: a read returns the record as it was before the last write",
			Edits:    []Edit{{Dir: "internal/storewrap", Files: "decodecache.go", Find: "ok && bytes.Equal(e.raw, raw) {", Replace: "ok && len(e.raw) >= 0 {"}},
			Packages: []string{"./internal/storewrap", "./graph/embedded"},
			Tests:    []string{"TestDecodeCache", "TestStore"},
		},
	}...)
}
