package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/graph/embedded"
)

// TestServeStoreIsSynced: the embedded store serve opens fsyncs every
// commit; an acknowledged write must survive a crash of the machine.
func TestServeStoreIsSynced(t *testing.T) {
	t.Parallel()
	cfg := &serveConfig{Store: "embedded", Data: filepath.Join(t.TempDir(), "p.db")}
	st, err := openStore(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	es, ok := st.(*embedded.Store)
	if !ok {
		t.Fatalf("serve opened a %T for the embedded store", st)
	}
	if !es.Synced() {
		t.Fatal("serve opened the embedded store without fsync")
	}
}
