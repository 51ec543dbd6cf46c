package procedures_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/procedures"
)

// TestDemotionIsAuditedAndPublished: the --demote-after'th consecutive
// failure of the current version demotes the procedure: it leaves the
// exposed procedures, its grant turns inactive (unhealthy), one health
// decision by procgraph names the streak (never a value), and the feed
// says demote; a success lifts it all, audited and published as restore.
func TestDemotionIsAuditedAndPublished(t *testing.T) {
	ctx := context.Background()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := procedures.NewService(store, procedures.Options{DemoteAfter: 3})
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}, "tester"); err != nil {
		t.Fatal(err)
	}
	p := mustCapture(t, svc, procedures.CaptureRequest{Code: readOnlyCode}).Procedure
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "alice", Reason: "checked"}); err != nil {
		t.Fatal(err)
	}
	sub := svc.Changes().Subscribe(16)
	defer sub.Close()
	exposed := func() bool {
		t.Helper()
		ps, err := svc.Exposed(ctx, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(ps) == 1
	}
	if !exposed() {
		t.Fatal("the procedure is not exposed before it failed")
	}
	failure := &procedures.Run{Failure: procedures.FailureTimeout, Duration: time.Second}
	for i := range 2 {
		if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k", "", failure); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.Get(ctx, p.Name); got.Demoted || !exposed() {
			t.Fatalf("demoted after %d failures, want the third", i+1)
		}
	}
	sub.Take()
	if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k", "", failure); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Demoted || got.Exposed || got.AutoRun.Active || got.AutoRun.InactiveReason == nil || *got.AutoRun.InactiveReason != procedures.InactiveUnhealthy {
		t.Fatalf("after the third failure: demoted %v, exposed %v, auto_run %+v; want demoted, hidden, grant inactive (unhealthy)",
			got.Demoted, got.Exposed, got.AutoRun)
	}
	if exposed() {
		t.Error("a demoted procedure is still exposed")
	}
	ds, err := svc.Decisions(ctx, procedures.DecisionFilter{Procedure: p.Name, Kind: procedures.KindHealth})
	if err != nil || len(ds) != 1 {
		t.Fatalf("health decisions = %+v, %v; want one", ds, err)
	}
	d := ds[0]
	if d.Reason != procedures.ReasonDemoted || d.Actor != procedures.ActorProcgraph || d.CodeHash != p.CodeHash ||
		!strings.Contains(d.Note, "3 times in a row") || !strings.Contains(d.Note, procedures.FailureTimeout) {
		t.Errorf("demotion decision = %+v", d)
	}
	mustTake(t, sub, procedures.Change{Kind: procedures.ChangeDemote, Procedure: p.Name, Decision: d.ID})

	if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k", "", failure); err != nil {
		t.Fatal(err)
	}
	if ds, _ := svc.Decisions(ctx, procedures.DecisionFilter{Procedure: p.Name, Kind: procedures.KindHealth}); len(ds) != 1 {
		t.Errorf("a fourth failure recorded another health decision: %+v", ds)
	}
	mustTake(t, sub)

	if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k2", "", &procedures.Run{Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	got, _ = svc.Get(ctx, p.Name)
	if got.Demoted || !got.Exposed || !got.AutoRun.Active {
		t.Fatalf("after a success: demoted %v, exposed %v, auto_run %+v; want it all back", got.Demoted, got.Exposed, got.AutoRun)
	}
	ds, _ = svc.Decisions(ctx, procedures.DecisionFilter{Procedure: p.Name, Kind: procedures.KindHealth})
	if len(ds) != 2 || ds[0].Reason != procedures.ReasonHealthRestored || ds[0].Actor != procedures.ActorProcgraph {
		t.Fatalf("health decisions after the success = %+v; want a health_restored one first", ds)
	}
	mustTake(t, sub, procedures.Change{Kind: procedures.ChangeRestore, Procedure: p.Name, Decision: ds[0].ID})
}
