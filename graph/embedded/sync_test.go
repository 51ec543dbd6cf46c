package embedded

import (
	"path/filepath"
	"testing"
)

// TestOpenSyncsByDefault: durability rests on bbolt's fsync after each
// commit. The store opens with it on unless Options.NoSync asks otherwise,
// and a reopened file does not inherit an earlier NoSync.
func TestOpenSyncsByDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	for _, tc := range []struct {
		name   string
		opts   Options
		noSync bool
	}{
		{"default", Options{}, false},
		{"NoSync asked", Options{NoSync: true}, true},
		{"reopened without NoSync", Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.db.NoSync != tc.noSync || s.Synced() == tc.noSync {
				t.Fatalf("the store opened with NoSync %v (Synced %v), want NoSync %v", s.db.NoSync, s.Synced(), tc.noSync)
			}
		})
	}
}
