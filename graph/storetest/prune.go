package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// RunAuditPrune: PruneDecisions deletes exactly the audit records older
// than its time (by every read: the whole log, by procedure, by kind,
// paging), keeps everything else, and a second run deletes nothing.
func RunAuditPrune(t *testing.T, newStore NewStore) {
	s := newStore(t)
	FillScenarios(t, s)
	ctx := context.Background()
	all := MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	cut := At(31)
	var older, kept int64
	for _, d := range all {
		if d.At.Before(Ms(cut)) {
			older++
		} else {
			kept++
		}
	}
	if older == 0 || kept == 0 {
		t.Fatalf("the fixture has %d older and %d newer records: no test", older, kept)
	}
	p := s.(procedures.AuditPruner)
	n, err := p.PruneDecisions(ctx, cut)
	if err != nil || n != older {
		t.Fatalf("PruneDecisions = %d, %v; want %d", n, err, older)
	}
	left := MustDecisions(t, s, audit.DecisionFilter{Limit: 1000})
	if int64(len(left)) != kept {
		t.Errorf("%d records left, want %d", len(left), kept)
	}
	for _, d := range left {
		if d.At.Before(Ms(cut)) {
			t.Errorf("record %s at %v survived the prune", d.ID, d.At)
		}
	}
	for _, f := range []audit.DecisionFilter{{Procedure: NameOf("get_jobs", "get_logs")}, {Kind: audit.KindGrant}} {
		for _, d := range MustDecisions(t, s, f) {
			if d.At.Before(Ms(cut)) {
				t.Errorf("filter %+v still lists %s", f, d.ID)
			}
		}
	}
	page := MustDecisions(t, s, audit.DecisionFilter{Limit: 2})
	next := MustDecisions(t, s, audit.DecisionFilter{Limit: 1000, Before: page[len(page)-1].ID})
	if int64(len(page)+len(next)) != kept {
		t.Errorf("paging after the prune sees %d records, want %d", len(page)+len(next), kept)
	}
	if n, err := p.PruneDecisions(ctx, cut); err != nil || n != 0 {
		t.Errorf("a second prune = %d, %v; want 0", n, err)
	}
	_, err = p.PruneDecisions(ctx, time.Time{})
	RequireCode(t, err, fault.CodeInvalid)
}
