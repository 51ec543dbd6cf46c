package embedded

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// BenchmarkExportImport: export, import and export again at 10k and 100k
// procedures (run with -benchtime=1x: one pass each).
func BenchmarkExportImport(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			from, err := Open(filepath.Join(b.TempDir(), "from.db"), Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer from.Close()
			to, err := Open(filepath.Join(b.TempDir(), "to.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer to.Close()
			storetest.BenchExportImport(b, from, to, n)
		})
	}
}
