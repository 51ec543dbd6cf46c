package embedded

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

func openBench(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "p.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkSearchQuality: recall@5 and MRR over the labelled set.
func BenchmarkSearchQuality(b *testing.B) {
	storetest.BenchSearchQuality(b, openBench(b))
}

// BenchmarkSearchScale: a labelled query (page of 25, with the total) at
// 1k, 10k and 100k procedures with the labelled catalogue, captured in
// batches.
func BenchmarkSearchScale(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := openBench(b)
			storetest.MustPutCatalogue(b, s, storetest.SearchCatalogue(b))
			storetest.MustCaptureAll(b, s, storetest.ScaleCorpus(b, n))
			storetest.BenchSearchScale(b, s)
		})
	}
}
