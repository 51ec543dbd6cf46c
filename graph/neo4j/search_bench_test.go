package neo4j

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
)

// BenchmarkSearchQuality: recall@5 and MRR over the labelled set.
func BenchmarkSearchQuality(b *testing.B) {
	storetest.BenchSearchQuality(b, freshStore(b))
}

// BenchmarkSearchScale: a labelled query (page of 25, with the total) at
// 1k and 10k procedures, and 100k with -neo4j.big, filled through the dump
// path (storetest.FillScale: a 100k fill still takes minutes). The fill is
// left in the database and reused by the next run at the same size
// (storetest.ScaleFilled), so old and new binaries can be compared on one
// fill.
func BenchmarkSearchScale(b *testing.B) {
	sizes := []int{1000, 10000}
	if *big {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := openStore(b)
			if !storetest.ScaleFilled(b, s, n) {
				run(b, s, testdata(b, "clean"), nil)
				from, err := embedded.Open(filepath.Join(b.TempDir(), "from.db"), embedded.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				defer from.Close()
				storetest.FillScale(b, from, s, b.TempDir(), n)
			}
			storetest.BenchSearchScale(b, s)
		})
	}
}
