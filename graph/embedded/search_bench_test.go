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

// BenchmarkCaptureThenSearch: a capture of a new procedure and, at once, a
// search for a word of its own that must find it (read your writes: the
// search waits for the indexer), with fsync on each commit and without.
func BenchmarkCaptureThenSearch(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(map[bool]string{true: "sync", false: "nosync"}[sync], func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "p.db"), Options{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			i := 0
			for b.Loop() {
				word := "word" + strconv.Itoa(i)
				in := storetest.In([]string{"then" + strconv.Itoa(i) + "_tool"}, "h", "k", storetest.At(i))
				in.Version.Summary = word
				storetest.MustCapture(b, s, in)
				if got := storetest.MustSearchNames(b, s, word); len(got) != 1 || got[0] != in.Name {
					b.Fatalf("%s finds %v", word, got)
				}
				i++
			}
		})
	}
}
