package embedded

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	st "github.com/procgraph/procgraph/graph/storetest"
)

// TestReadsForAWriteCopyTheCachedRecords: what getProc and getVersion
// return may have its fields set (every write does) without changing the
// records the decode cache shares with readers of the same bytes.
func TestReadsForAWriteCopyTheCachedRecords(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	sig := []string{"tool_a", "tool_b"}
	name := st.NameOf(sig...)
	st.MustCapture(t, s, st.In(sig, "h1", "k1", st.At(0)))
	before, err := s.Get(ctx, name) // the decode cache holds both records
	if err != nil {
		t.Fatal(err)
	}
	rollback := errors.New("rolled back")
	err = s.db.Update(func(tx *bolt.Tx) error {
		rec, err := s.getProc(tx, name)
		if err != nil {
			return err
		}
		ver, err := s.getVersion(tx, name, rec.Current)
		if err != nil {
			return err
		}
		rec.UseCount, rec.Frequency, rec.Demoted = 99, 99, true
		ver.Frequency, ver.Health, ver.Status = 99, []int64{7, 7, 7}, "failed"
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	after, err := s.Get(ctx, name) // the same bytes: served from the cache
	if err != nil {
		t.Fatal(err)
	}
	if after.UseCount != before.UseCount || after.Frequency != before.Frequency || after.Demoted != before.Demoted ||
		after.Status != before.Status || after.Health.Runs != before.Health.Runs {
		t.Fatalf("a write's copies changed the shared records: use count %d, frequency %d, demoted %v, status %s, runs %d; want %d, %d, %v, %s, %d",
			after.UseCount, after.Frequency, after.Demoted, after.Status, after.Health.Runs,
			before.UseCount, before.Frequency, before.Demoted, before.Status, before.Health.Runs)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		k := key(name, before.CodeHash)
		v, err := s.versionCache.Get(k, tx.Bucket(bVersions).Get(k), "version")
		if err == nil && v.Frequency == 99 {
			t.Errorf("the cached version's frequency is the rolled-back write's")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
