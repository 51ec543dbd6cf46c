package storetest

import (
	"math"

	"github.com/procgraph/procgraph/internal/findorder"
)

// FindKeys is every combination of the edges of Find's order
// (findorder.Compare): frequencies from 0 to the largest, last uses
// never, before, at and after 1970 and far off, and names that share a
// prefix. A store's test checks that its index key sorts them as
// findorder.Compare does.
func FindKeys() []findorder.Key {
	ms := func(v int64) *int64 { return &v }
	var out []findorder.Key
	for _, f := range []int64{0, 1, 2, 1 << 40, math.MaxInt64} {
		for _, lu := range []*int64{nil, ms(-62135596800000), ms(-1), ms(0), ms(1), ms(1700000000000), ms(253402300799999)} {
			for _, n := range []string{"proc_a", "proc_a_b", "proc_b"} {
				out = append(out, findorder.Key{Frequency: f, LastUsedAt: lu, Name: n})
			}
		}
	}
	return out
}
