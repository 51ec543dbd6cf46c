package neo4jstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
)

// BenchmarkExportImport: an embedded store of n procedures exported,
// imported into Neo4j, and Neo4j exported (the move this exists for); run
// with -benchtime=1x.
func BenchmarkExportImport(b *testing.B) {
	settings(b)
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			from, err := embedded.Open(filepath.Join(b.TempDir(), "from.db"), embedded.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer from.Close()
			storetest.BenchExportImport(b, from, freshStore(b), n)
		})
	}
}
