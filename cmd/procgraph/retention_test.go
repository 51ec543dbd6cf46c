package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestAuditRetention: serve with --audit-retention archives the whole store
// into --audit-archive-dir, then prunes exactly the audit records older than
// the retention; the archive imports with every record. Without the setting
// nothing is pruned, and a retention without an archive directory is refused.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	if _, err := parseServeConfig([]string{"--audit-retention", "24h"}); err == nil || !strings.Contains(err.Error(), "--audit-archive-dir") {
		t.Errorf("retention without an archive directory: %v", err)
	}
	for _, bad := range []string{"-1h", "soon"} {
		if _, err := parseServeConfig([]string{"--audit-retention", bad, "--audit-archive-dir", t.TempDir()}); err == nil {
			t.Errorf("--audit-retention %q accepted", bad)
		}
	}
	dir := t.TempDir()
	src := mustFilledStoreFile(t, dir, 5)
	s := mustOpenEmbedded(t, src)
	before := storetest.MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	_ = s.Close()

	// Default: kept forever.
	srv := mustServe(t, serverOpts{Data: src})
	srv.Stop(t)
	s = mustOpenEmbedded(t, src)
	kept := storetest.MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	_ = s.Close()
	if len(kept) < len(before) {
		t.Fatalf("without --audit-retention %d of %d records are left", len(kept), len(before))
	}

	archives := filepath.Join(dir, "archives")
	if err := os.Mkdir(archives, 0o700); err != nil {
		t.Fatal(err)
	}
	// A retention whose cut falls among the filled records (half a second
	// past a whole one: records are at whole seconds, the server's clock a
	// little later than this one's).
	cut := time.Date(2025, 3, 4, 3, 6, 38, 5e8, time.UTC)
	retention := time.Since(cut).Round(time.Millisecond)
	cut = time.Now().Add(-retention)
	start := time.Now()
	srv = mustServe(t, serverOpts{Data: src, Extra: []string{"--audit-retention", retention.String(), "--audit-archive-dir", archives}})
	for !strings.Contains(srv.logs.String(), "pruned the audit log") {
		if time.Since(start) > time.Minute {
			t.Fatalf("no prune within a minute:\n%s", srv.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Stop(t)
	s = mustOpenEmbedded(t, src)
	left := storetest.MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	_ = s.Close()
	older := 0
	for _, d := range kept {
		if d.At.Before(cut) {
			older++
		}
	}
	if older == 0 || older == len(kept) || len(left) != len(kept)-older {
		t.Fatalf("%d records, %d older than the retention; %d left", len(kept), older, len(left))
	}
	for _, d := range left {
		if d.At.Before(cut) {
			t.Errorf("record %s of %s outlived the retention", d.ID, d.At)
		}
	}
	files, err := filepath.Glob(filepath.Join(archives, "audit-*.pgdump"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no archive in %s (%v)", archives, err)
	}
	restored := filepath.Join(dir, "restored.db")
	if code, out, errOut := runMain(t, "import", files[0], "--data", restored); code != 0 {
		t.Fatalf("import of the archive: exit %d: %s%s", code, out, errOut)
	}
	if got := len(storetest.MustDecisions(t, mustOpenEmbedded(t, restored), audit.DecisionFilter{Limit: 1000})); got < len(kept) {
		t.Errorf("the archive holds %d records, the store had %d", got, len(kept))
	}
}
