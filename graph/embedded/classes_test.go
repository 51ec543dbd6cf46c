package embedded

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	st "github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

// TestOpenClassifiesAnUnclassifiedFile opens a file of schema 1 (written
// before classifications and class counts were kept: no classes bucket,
// summaries without the read-only and problem flags) and checks that Open
// classifies every procedure, so Find's filters and totals are right.
func TestOpenClassifiesAnUnclassifiedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s := mustOpen(t, path)
	cat, _ := procedures.NewCatalogue([]procedures.Tool{{Name: "a", ReadOnly: true}, {Name: "b", ReadOnly: true}, {Name: "w"}})
	if err := s.PutCatalogue(ctx, cat); err != nil {
		t.Fatal(err)
	}
	ro, rw := []string{"a", "b"}, []string{"a", "w"}
	nested := []string{st.NameOf(ro...), "b"}
	for i, sig := range [][]string{ro, rw, nested} {
		st.MustCapture(t, s, st.In(sig, "h", "k", st.At(i)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	update(t, path, func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bClasses); err != nil {
			return err
		}
		c := tx.Bucket(bRank).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			old := append([]byte(nil), v...)
			old[0] &^= classBit("ReadOnly") | classBit("Problem")
			if err := tx.Bucket(bRank).Put(k, old); err != nil {
				return err
			}
		}
		return tx.Bucket(bMeta).Put(metaSchema, []byte(schemaUnclassified))
	})

	s = mustOpen(t, path)
	yes := true
	ps, total := st.MustFind(t, s, procedures.Query{ReadOnly: &yes})
	if got := []string{}; total != 2 || len(ps) != 2 {
		for _, p := range ps {
			got = append(got, p.Name)
		}
		t.Fatalf("read-only after migration: %v (total %d), want %s and %s", got, total, st.NameOf(ro...), st.NameOf(nested...))
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
