// Package storetest is the conformance suite every procedures.Store passes.
//
// Conventions the suite fixes where procedures.Store is silent (both
// backends agree on them):
//   - Times come back in UTC, truncated to milliseconds.
//   - JSON-like maps (InputSchema, Metadata, Tool.InputSchema) come back as
//     encoding/json decodes them into any: numbers are float64.
//   - Nil and empty slices and maps are interchangeable.
//   - Version.CapturedAt defaults to CaptureInput.At when zero.
//   - A failed capture of a code hash whose version failed before upgrades
//     that version to succeeded once a capture of it succeeds.
//   - A cause named by a failed capture is upserted and linked (edge
//     frequency 0): the edge counts usage keys of succeeded captures only.
//   - The cause edge counts its own distinct usage keys, independently of
//     whether the key was new to the procedure.
//   - CreatedAt is the At of the creating capture; UpdatedAt the At of the
//     latest capture or use.
//   - Procedure.Causes is ordered by edge frequency desc, then name.
//   - Versions are ordered by CapturedAt, then code hash.
//   - SetGrant binds the grant to expectHash (Grant.CodeHash = expectHash).
//   - A decision with an existing ID is a CodeConflict.
//   - Negative Query.MinTools, unknown Query.Status, negative
//     DecisionFilter.Limit and an unknown decision kind are CodeInvalid;
//     DecisionFilter.Limit above 1000 is clamped to 1000.
//   - After Close, methods return CodeUnavailable; Close twice is harmless.
package storetest

import (
	"testing"

	"github.com/procgraph/procgraph/procedures"
)

// NewStore returns a fresh, empty store for one test. It arranges (with
// t.Cleanup) for the store to be closed; the suite may close it earlier, so a
// second Close must be harmless.
type NewStore func(t *testing.T) procedures.Store

// RunStoreTests runs the conformance suite against the stores newStore
// returns. Every subtest gets a fresh store.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) procedures.Store) {
	groups := []struct {
		name string
		run  func(t *testing.T, newStore NewStore)
	}{
		{"Capture", testCapture},
		{"RecordUse", testRecordUse},
		{"RecordRun", testRecordRun},
		{"Get", testGet},
		{"Find", testFind},
		{"Versions", testVersions},
		{"Promote", testPromote},
		{"SetGrant", testSetGrant},
		{"Granted", testGranted},
		{"Decisions", testDecisions},
		{"DecisionFilters", testDecisionFilters},
		{"EdgeCounts", testEdgeCounts},
		{"Catalogue", testCatalogue},
		{"Causes", testCauses},
		{"Lifecycle", testLifecycle},
		{"Concurrency", testConcurrency},
		{"Naming", testNaming},
		{"Retire", testRetire},
		{"Turns", testTurns},
		{"Bindings", testBindings},
		{"Search", testSearch},
		{"Views", testViews},
		{"SearchCatalogue", testSearchCatalogue},
		{"SearchRanking", testSearchRanking},
		{"ToolTotals", testToolTotals},
		{"FindSparseTools", testFindSparseTools},
		{"Drift", testDrift},
		{"Health", testHealth},
		{"Demotion", testDemotion},
		{"Recordings", testRecordings},
		{"Canonical", testCanonical},
		{"Tokens", testTokens},
		{"AuthRevision", testAuthRevision},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, newStore) })
	}
}
