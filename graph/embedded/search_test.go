package embedded

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestSearchIndexRebuilt: an index that is missing, stale (from before a
// commit it did not see, as after a crash between the commit and the
// indexing) or unreadable is rebuilt from bbolt at Open.
func TestSearchIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.db")
	open := func() *Store {
		t.Helper()
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	find := func(s *Store, q string) []string {
		t.Helper()
		return storetest.MustSearchNames(t, s, q)
	}
	s := open()
	a := storetest.WithCause(storetest.In([]string{"tool_a", "tool_b"}, "h1", "k1", storetest.At(1)), "alpha failure", "")
	storetest.MustCapture(t, s, a)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.search")
	if err := os.CopyFS(old, os.DirFS(path+".search")); err != nil {
		t.Fatal(err)
	}
	s = open()
	b := storetest.WithCause(storetest.In([]string{"tool_c", "tool_d"}, "h2", "k2", storetest.At(2)), "beta failure", "")
	storetest.MustCapture(t, s, b)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Stale: the index from before b's capture.
	if err := os.RemoveAll(path + ".search"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, path+".search"); err != nil {
		t.Fatal(err)
	}
	s = open()
	if got := find(s, "beta"); len(got) != 1 || got[0] != b.Name {
		t.Fatalf("stale index: beta found %v", got)
	}
	_ = s.Close()
	// Missing.
	if err := os.RemoveAll(path + ".search"); err != nil {
		t.Fatal(err)
	}
	s = open()
	if got := find(s, "alpha beta"); len(got) != 2 {
		t.Fatalf("missing index: found %v", got)
	}
	_ = s.Close()
	// Unreadable: garbage where the index was.
	if err := os.RemoveAll(path + ".search"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".search", []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	if got := find(s, "alpha"); len(got) != 1 || got[0] != a.Name {
		t.Fatalf("unreadable index: alpha found %v", got)
	}
}
