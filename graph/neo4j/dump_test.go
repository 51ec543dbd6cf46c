package neo4j

import (
	"path/filepath"
	"testing"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/graph/storetest"
	"github.com/procgraph/procgraph/procedures"
)

func newEmbedded(t *testing.T) procedures.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestDumpRoundTrip: the suite's scenarios carried between the two
// backends both ways: the dumps equal record for record, every read the same.
func TestDumpRoundTrip(t *testing.T) {
	settings(t)
	t.Run("embedded to neo4j", func(t *testing.T) { storetest.RunDumpRoundTrip(t, newEmbedded, newStore) })
	t.Run("neo4j to embedded", func(t *testing.T) { storetest.RunDumpRoundTrip(t, newStore, newEmbedded) })
}

// TestDumpAdmission: what an import admits into Neo4j, both ways.
func TestDumpAdmission(t *testing.T) {
	settings(t)
	t.Run("embedded to neo4j", func(t *testing.T) { storetest.RunDumpAdmission(t, newEmbedded, newStore) })
	t.Run("neo4j to embedded", func(t *testing.T) { storetest.RunDumpAdmission(t, newStore, newEmbedded) })
}

// TestDumpPausedTurn: a turn paused at a call arrives expired, both ways.
func TestDumpPausedTurn(t *testing.T) {
	settings(t)
	t.Run("embedded to neo4j", func(t *testing.T) { storetest.RunDumpPausedTurn(t, newEmbedded, newStore) })
	t.Run("neo4j to embedded", func(t *testing.T) { storetest.RunDumpPausedTurn(t, newStore, newEmbedded) })
}

// TestDumpRefusals: bad dumps leave the Neo4j store empty, with no marker.
func TestDumpRefusals(t *testing.T) {
	settings(t)
	storetest.RunDumpRefusals(t, newStore)
}

// TestAuditPrune: the audit log pruned on Neo4j.
func TestAuditPrune(t *testing.T) {
	settings(t)
	storetest.RunAuditPrune(t, newStore)
}

// TestDumpMerge: the merge suite between the backends: an embedded dump
// merged into Neo4j and a Neo4j dump merged into an embedded store, each
// compared with an embedded store that saw both histories.
func TestDumpMerge(t *testing.T) {
	settings(t)
	t.Run("embedded into neo4j", func(t *testing.T) { storetest.RunDumpMerge(t, newEmbedded, newStore, newEmbedded) })
	t.Run("neo4j into embedded", func(t *testing.T) { storetest.RunDumpMerge(t, newStore, newEmbedded, newEmbedded) })
}

// TestDumpPages: a dump read in pages of two (every kind of record spans
// several pages, decisions share times) equals the dump read in one page.
func TestDumpPages(t *testing.T) {
	s := freshStore(t)
	storetest.FillScenarios(t, s)
	want := storetest.DumpBody(storetest.MustDump(t, s, "one page"))
	s.dumpPage = 2
	got := storetest.DumpBody(storetest.MustDump(t, s, "pages of two"))
	if len(got) != len(want) {
		t.Fatalf("pages of two: %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d:\n  got  %s\n  want %s", i+1, got[i], want[i])
		}
	}
}

// TestDumpBaselines: versions keep their drift baselines between the
// backends, both ways (a stale version stays stale), and merged.
func TestDumpBaselines(t *testing.T) {
	settings(t)
	t.Run("embedded to neo4j", func(t *testing.T) { storetest.RunDumpBaselines(t, newEmbedded, newStore) })
	t.Run("neo4j to embedded", func(t *testing.T) { storetest.RunDumpBaselines(t, newStore, newEmbedded) })
}

// TestDumpRecordings: recordings between the backends, both ways: left
// out unless asked, kept within the target's bound, merged by id.
func TestDumpRecordings(t *testing.T) {
	settings(t)
	t.Run("embedded to neo4j", func(t *testing.T) { storetest.RunDumpRecordings(t, newEmbedded, newStore) })
	t.Run("neo4j to embedded", func(t *testing.T) { storetest.RunDumpRecordings(t, newStore, newEmbedded) })
}

// TestDumpRecordingRefusals: bad recordings leave the Neo4j store empty.
func TestDumpRecordingRefusals(t *testing.T) {
	settings(t)
	storetest.RunDumpRecordingRefusals(t, newEmbedded, newStore)
}
