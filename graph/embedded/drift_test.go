package embedded

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestBaselineUpgrade: versions stored before drift was kept (no baseline,
// no index entry, no marker) take the current catalogue's contracts as
// their baseline when the file is opened again, once: a later catalogue
// change makes them stale, and opening again does not rebaseline them.
func TestBaselineUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	cat := storetest.DriftUpgradeCatalogue(t, s, n)
	err = s.db.Update(func(tx *bolt.Tx) error {
		var keys [][]byte
		c := tx.Bucket(bVersions).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			var r versionRecord
			if err := decode(tx.Bucket(bVersions).Get(k), &r, "version"); err != nil {
				return err
			}
			r.Baseline = nil
			b, err := encode(&r)
			if err != nil {
				return err
			}
			if err := tx.Bucket(bVersions).Put(k, b); err != nil {
				return err
			}
			if err := tx.Bucket(bBaselines).Delete(k); err != nil {
				return err
			}
		}
		return tx.Bucket(bMeta).Delete(metaBaselines)
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := storetest.MustVersion(t, s, storetest.NameOf("tool_a", "tool_b"), "ha"); v.Baseline != nil {
		t.Fatalf("the old version kept a baseline: %+v", v.Baseline)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	open := func() *Store {
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s = open()
	storetest.RequireBaselines(t, s, n, cat, "upgraded")
	storetest.DriftedCatalogue(t, s)
	if _, total, err := s.Drifted(context.Background(), 0, 0); err != nil || total != n {
		t.Fatalf("Drifted after a change = %d, %v; want %d", total, err, n)
	}
	_ = s.Close()
	s = open()
	storetest.RequireBaselines(t, s, n, cat, "opened again")
}
