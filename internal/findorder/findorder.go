// Package findorder holds Find's order, its one definition: the order in
// which Find pages procedures and in which a relevance search breaks ties of
// score. A leaf, so that procedures, search and the stores' tests all use it.
package findorder

import (
	"cmp"
	"strings"
)

// Key is what Find orders procedures by: frequency, last use (Unix
// milliseconds, as the stores keep it; nil never used) and name.
type Key struct {
	Frequency  int64
	LastUsedAt *int64
	Name       string
}

// Compare is Find's order, its one definition: frequency desc, then
// last_used_at desc with never used last, then name asc. The stores keep
// it as an index key whose byte or string order is this order — the
// embedded store's rankKey (graph/embedded/keys.go), Neo4j's p.rank
// (cypher/fragments/rank_key.cypher) — and a relevance search breaks ties
// of score with it (search.Compare calls it); a test of each index key
// checks it against Compare.
func Compare(a, b Key) int {
	if c := cmp.Compare(b.Frequency, a.Frequency); c != 0 {
		return c
	}
	switch {
	case a.LastUsedAt == nil && b.LastUsedAt != nil:
		return 1
	case a.LastUsedAt != nil && b.LastUsedAt == nil:
		return -1
	case a.LastUsedAt != nil && *a.LastUsedAt != *b.LastUsedAt:
		return cmp.Compare(*b.LastUsedAt, *a.LastUsedAt)
	}
	return strings.Compare(a.Name, b.Name)
}
