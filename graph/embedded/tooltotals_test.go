package embedded

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestOpenCountsToolsOfAnOlderFile opens a file of schema 2 (written before
// the per-tool class counts were kept: no tool_classes bucket) and checks
// that Open counts them, so tool-filtered totals are exact, and that Check
// finds a count that is off.
func TestOpenCountsToolsOfAnOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := mustOpen(t, path)
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, st.ToolTotalsCatalogue(false), "test"); err != nil {
		t.Fatal(err)
	}
	st.CaptureToolTotals(t, s, 0)
	st.RequireToolTotals(t, s, "as written")
	yes := true
	q := procedures.Query{Limit: 1, Tools: []string{"tool_a"}, ReadOnly: &yes}
	_, want := st.MustFind(t, s, q)
	if want == 0 {
		t.Fatal("no read-only procedure calls tool_a: no test")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	update(t, path, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bToolClasses); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put(metaSchema, []byte(schemaNoToolCounts))
	})

	s = mustOpen(t, path)
	st.RequireToolTotals(t, s, "after opening the older file")
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// One count off: Check says so, and Find's total follows the count (it
	// is what Find reads).
	update(t, path, func(tx *bolt.Tx) error {
		c := tx.Bucket(bToolClasses).Cursor()
		for k, v := c.Seek(prefix("tool_a")); k != nil; k, v = c.Next() {
			if cl, ok := decodeClassKey(k[len(prefix("tool_a")):]); ok && cl.ReadOnly {
				return tx.Bucket(bToolClasses).Put(k, u64(getU64(v)+5))
			}
		}
		t.Fatal("no read-only class of tool_a")
		return nil
	})
	s = mustOpen(t, path)
	if err := s.Check(ctx); err == nil {
		t.Error("Check passed a per-tool class count that is off by 5")
	}
	if _, got := st.MustFind(t, s, q); got != want+5 {
		t.Errorf("Find(tool_a, read-only) total %d with a count off by 5, want %d: the counts are not what it reads", got, want+5)
	}
}
