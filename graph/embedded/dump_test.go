package embedded

import (
	"testing"

	"github.com/procgraph/procgraph/graph/storetest"
)

// TestDumpRoundTrip: embedded → dump → embedded. The cross-backend trips
// are in graph/neo4j (they need a Neo4j).
func TestDumpRoundTrip(t *testing.T) {
	storetest.RunDumpRoundTrip(t, newTestStore, newTestStore)
}

func TestDumpRefusals(t *testing.T) { storetest.RunDumpRefusals(t, newTestStore) }

func TestDumpAdmission(t *testing.T) { storetest.RunDumpAdmission(t, newTestStore, newTestStore) }

// TestDumpPausedTurn: a turn paused at a call arrives expired.
func TestDumpPausedTurn(t *testing.T) { storetest.RunDumpPausedTurn(t, newTestStore, newTestStore) }

func TestAuditPrune(t *testing.T) { storetest.RunAuditPrune(t, newTestStore) }

// TestDumpMerge: the merge suite on the embedded store (the cross-backend
// merges are in graph/neo4j).
func TestDumpMerge(t *testing.T) {
	storetest.RunDumpMerge(t, newTestStore, newTestStore, newTestStore)
}

// TestDumpBaselines, TestDumpRecordings, TestDumpRecordingRefusals: the
// suite's baseline and recording dumps on the embedded store (the
// cross-backend ones are in graph/neo4j).
func TestDumpBaselines(t *testing.T) { storetest.RunDumpBaselines(t, newTestStore, newTestStore) }

func TestDumpRecordings(t *testing.T) { storetest.RunDumpRecordings(t, newTestStore, newTestStore) }

func TestDumpRecordingRefusals(t *testing.T) {
	storetest.RunDumpRecordingRefusals(t, newTestStore, newTestStore)
}
