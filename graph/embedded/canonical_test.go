package embedded

import (
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestCanonicalBackfill: versions stored without a canonical hash (before
// versions were keyed by it, or from a dump) get the hash of their code
// when the store opens; versions of one program stay apart, and a capture
// of the program counts on the earliest captured of them.
func TestCanonicalBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.CaptureWithoutCanonical(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	storetest.RequireCanonicalBackfill(t, s)
}
