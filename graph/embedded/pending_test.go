package embedded

import (
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/graph/storetest"
)

// TestPendingEntryWithoutRequester: a pending index entry written before
// the index kept the requester (the deadline only) still counts for its
// turn's requester, read from the turn's record, so a store made by an
// older version keeps the per-requester bound exact.
func TestPendingEntryWithoutRequester(t *testing.T) {
	s := newTestStore(t).(*Store)
	b := gate.PendingBounds{Total: 10, PerRequester: 1}
	old := storetest.PendingTurn("s1", storetest.At(0), time.Minute)
	if err := s.CreateApproval(t.Context(), old, b, storetest.At(0)); err != nil {
		t.Fatal(err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bPending).Put([]byte(old.ID), u64(uint64(ms(old.Deadline))))
	})
	if err != nil {
		t.Fatal(err)
	}
	next := storetest.PendingTurn("s2", storetest.At(1), time.Minute)
	e := storetest.RequireCode(t, s.CreateApproval(t.Context(), next, b, storetest.At(1)), fault.CodeBusy)
	if e.Details["reason"] != gate.ReasonPendingRequester {
		t.Fatalf("details %v, want reason %s", e.Details, gate.ReasonPendingRequester)
	}
	other := storetest.PendingTurn("s3", storetest.At(1), time.Minute)
	other.RequestedBy = "agent2"
	if err := s.CreateApproval(t.Context(), other, b, storetest.At(1)); err != nil {
		t.Fatalf("another requester: %v", err)
	}
}
