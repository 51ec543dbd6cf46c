package neo4j

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/procgraph/procgraph/dump"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
)

var (
	dumpBig   = flag.Bool("neo4j.dump100k", false, "BenchmarkExportImport also at 100k procedures (several minutes with the fill)")
	dumpBatch = flag.Int("neo4j.dumpbatch", 0, "BenchmarkExportImport: records per import transaction (0: the default)")
)

// statementTimes sums the server's time per statement (a QueryObserver).
type statementTimes struct {
	mu sync.Mutex
	t  map[string]time.Duration
	n  map[string]int
}

func (s *statementTimes) observe(name string, available, consumed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t[name] += available + consumed
	s.n[name]++
}

func (s *statementTimes) log(b *testing.B) {
	names := make([]string, 0, len(s.t))
	for n := range s.t {
		names = append(names, n)
	}
	slices.SortFunc(names, func(x, y string) int { return int(s.t[y] - s.t[x]) })
	for _, n := range names {
		b.Logf("  %-20s %4d runs, server %v", n, s.n[n], s.t[n].Round(time.Millisecond))
	}
}

// timedFinish is the store with Load and FinishLoad timed.
type timedFinish struct {
	*Store
	took, load time.Duration
}

func (t *timedFinish) FinishLoad(ctx context.Context, id string) error {
	start := time.Now()
	defer func() { t.took = time.Since(start) }()
	return t.Store.FinishLoad(ctx, id)
}

func (t *timedFinish) Load(ctx context.Context, m dump.LoadMarker, recs []dump.Record) error {
	start := time.Now()
	defer func() { t.load += time.Since(start) }()
	return t.Store.Load(ctx, m, recs)
}

// BenchmarkExportImport: an embedded store of n procedures exported,
// imported into Neo4j, and Neo4j exported (the move this exists for); run
// with -benchtime=1x. 100k only with -neo4j.dump100k. It logs the server's
// time per statement of the import and FinishLoad's share.
func BenchmarkExportImport(b *testing.B) {
	settings(b)
	sizes := []int{10_000}
	if *dumpBig {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			from, err := embedded.Open(filepath.Join(b.TempDir(), "from.db"), embedded.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer from.Close()
			times := &statementTimes{t: map[string]time.Duration{}, n: map[string]int{}}
			ctx := WithQueryObserver(context.Background(), times.observe)
			to := &timedFinish{Store: freshStore(b)}
			storetest.BenchExportImportWith(ctx, b, from, to, n, dump.ImportOptions{BatchSize: *dumpBatch})
			b.Logf("import: Load calls %v, FinishLoad %v; server time per statement:", to.load.Round(time.Millisecond), to.took.Round(time.Millisecond))
			times.log(b)
		})
	}
}
