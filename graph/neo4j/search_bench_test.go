package neo4jstore

import (
	"strconv"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// BenchmarkSearchQuality: recall@5 and MRR over the labelled set.
func BenchmarkSearchQuality(b *testing.B) {
	storetest.BenchSearchQuality(b, freshStore(b))
}

// BenchmarkSearchScale: a labelled query (page of 25, with the total) at
// 1k and 10k procedures, loaded through Capture (one transaction each: a
// 100k load does not fit a benchmark's few minutes).
func BenchmarkSearchScale(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := freshStore(b)
			storetest.MustCaptureAll(b, s, storetest.ScaleCorpus(b, n))
			storetest.BenchSearchScale(b, s)
		})
	}
}
