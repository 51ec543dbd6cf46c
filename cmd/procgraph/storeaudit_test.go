package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestStoreLoadsAreAudited: an import, a merge and a restore each leave one
// audit record of kind store in the store they write (who, what kind, the
// counts; no value, no code), which the served audit log lists under
// kind=store; an import refused before it writes anything records nothing.
func TestStoreLoadsAreAudited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 20)
	dump := filepath.Join(dir, "dump.jsonl")
	if code, _, errOut := runMain(t, "export", "--data", src, "-o", dump); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}

	imported := filepath.Join(dir, "imported.db")
	if code, out, errOut := runMain(t, "import", dump, "--data", imported); code != 0 {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	rec := mustStoreRecord(t, imported, audit.ReasonImported)
	if !strings.Contains(rec.Note, "procedure 25 of 25") {
		t.Errorf("the import's note: %q", rec.Note)
	}

	// Refused before anything is written: nothing is recorded.
	if code, _, errOut := runMain(t, "import", dump, "--data", imported); code != 1 || !strings.Contains(errOut, "not empty") {
		t.Fatalf("a second import: exit %d: %s", code, errOut)
	}
	mustStoreRecord(t, imported, audit.ReasonImported)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, mustReadFile(t, dump)[:200], 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if code, _, _ := runMain(t, "import", bad, "--data", empty); code != 1 {
		t.Fatalf("import of a truncated dump: exit %d", code)
	}
	s := mustOpenEmbedded(t, empty)
	if ds := storetest.MustDecisions(t, s, audit.DecisionFilter{}); len(ds) != 0 {
		t.Errorf("a refused import recorded %+v", ds)
	}
	_ = s.Close()

	// A merge of the same dump applies no procedure, and says so.
	if code, out, errOut := runMain(t, "import", dump, "--merge", "--data", src); code != 0 {
		t.Fatalf("merge: exit %d: %s%s", code, out, errOut)
	}
	if rec := mustStoreRecord(t, src, audit.ReasonMerged); !strings.Contains(rec.Note, "procedure 25 of 25") {
		t.Errorf("the merge's note: %q", rec.Note)
	}

	// A restore records itself in the restored file.
	backup := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(backup, mustReadFile(t, imported), 0o600); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(dir, "restored.db")
	if code, out, errOut := runMain(t, "restore", backup, "--data", restored); code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(embedded.SearchIndexPath(restored)); err == nil {
		t.Errorf("restore left a search index beside %s", restored)
	}
	st := mustOpenEmbedded(t, restored)
	ds := storetest.MustDecisions(t, st, audit.DecisionFilter{Kind: audit.KindStore})
	if len(ds) != 2 || ds[0].Reason != audit.ReasonRestored || ds[0].Actor != operator() || ds[1].ID != rec.ID ||
		!strings.Contains(ds[0].Note, "bytes") {
		t.Fatalf("the restored store's store records: %+v", ds)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Fatalf("the restored store fails its check: %v", err)
	}
	_ = st.Close()

	// The served audit log lists them under kind=store.
	srv := mustServe(t, serverOpts{Data: restored})
	got := srv.decisions(t, "kind=store")
	if len(got) != 2 || got[0]["reason"] != "restored" || got[1]["reason"] != "imported" {
		t.Fatalf("GET /v1/decisions?kind=store: %v", got)
	}
}
