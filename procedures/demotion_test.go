package procedures_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/changes"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/graph/embedded"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
)

// TestDemotionIsAuditedAndPublished: the current version's failures
// demote the procedure once its streak of failures that count toward
// demotion reaches --demote-after and they came from two callers: one
// caller's failures alone, and outages and timeouts from any, do not. The
// demoted procedure leaves the exposed procedures, its grant turns
// inactive (unhealthy), one health decision by procgraph names the streak
// (never a value), and the feed says demote. A success lifts nothing; a
// verification under another catalogue revision lifts nothing; one under
// the current one lifts it (procgraph, restore), and so does an operator
// (their name, their reason); lifting what is not demoted is a conflict
// that records nothing.
func TestDemotionIsAuditedAndPublished(t *testing.T) {
	ctx := context.Background()
	store, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := procedures.NewService(store, procedures.Options{DemoteAfter: 3})
	cat, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}, {Name: "get_logs", ReadOnly: true}}, "tester")
	if err != nil {
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
	fail := func(class, caller string) {
		t.Helper()
		if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k", "", &health.Run{Failure: class, Duration: time.Second, Caller: caller}); err != nil {
			t.Fatal(err)
		}
	}
	healthDecisions := func() []audit.Decision {
		t.Helper()
		ds, err := svc.Decisions(ctx, audit.DecisionFilter{Procedure: p.Name, Kind: audit.KindHealth})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	for range 4 {
		fail(health.FailureToolError, "mallory")
		fail(health.FailureUpstreamUnavailable, "bob")
		fail(health.FailureTimeout, "carol")
	}
	if got, _ := svc.Get(ctx, p.Name); got.Demoted || !exposed() || got.Health.DemotionStreak != 4 || got.Health.StreakCallerCount() != 1 {
		t.Fatalf("one caller's tool errors and others' outages and timeouts: demoted %v, streak %d by %d callers; want not demoted, 4 by 1",
			got.Demoted, got.Health.DemotionStreak, got.Health.StreakCallerCount())
	}
	sub.Take()
	fail(health.FailureToolError, "bob")
	got, err := svc.Get(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Demoted || got.Exposed || got.AutoRun.Active || got.AutoRun.InactiveReason == nil || *got.AutoRun.InactiveReason != procedures.InactiveUnhealthy {
		t.Fatalf("after a second caller's failure: demoted %v, exposed %v, auto_run %+v; want demoted, hidden, grant inactive (unhealthy)",
			got.Demoted, got.Exposed, got.AutoRun)
	}
	if exposed() {
		t.Error("a demoted procedure is still exposed")
	}
	ds := healthDecisions()
	if len(ds) != 1 {
		t.Fatalf("health decisions = %+v; want one", ds)
	}
	d := ds[0]
	if d.Reason != audit.ReasonDemoted || d.Actor != audit.ActorProcgraph || d.CodeHash != p.CodeHash ||
		!strings.Contains(d.Note, "5 times") || !strings.Contains(d.Note, health.FailureToolError) ||
		strings.Contains(d.Note, "bob") || strings.Contains(d.Note, "mallory") {
		t.Errorf("demotion decision = %+v", d)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeDemote, Procedure: p.Name, Decision: d.ID})

	fail(health.FailureToolError, "carol")
	if err := svc.RecordRun(ctx, p.Name, p.CodeHash, "k2", "", &health.Run{Duration: time.Millisecond, Caller: "mallory"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(ctx, p.Name); !got.Demoted || len(healthDecisions()) != 1 {
		t.Fatalf("a failure and a success of a demoted procedure: demoted %v, %d health decisions; want still demoted, one", got.Demoted, len(healthDecisions()))
	}
	mustTake(t, sub)

	if lifted, err := svc.LiftVerified(ctx, p.Name, p.CodeHash, "another-revision", 2); err != nil || lifted {
		t.Fatalf("a verification under another catalogue: lifted %v, %v; want nothing", lifted, err)
	}
	if lifted, err := svc.LiftVerified(ctx, p.Name, p.CodeHash, cat.Revision, 2); err != nil || !lifted {
		t.Fatalf("a verification under the current catalogue: lifted %v, %v; want lifted", lifted, err)
	}
	got, _ = svc.Get(ctx, p.Name)
	if got.Demoted || !got.Exposed || !got.AutoRun.Active {
		t.Fatalf("after a verification: demoted %v, exposed %v, auto_run %+v; want it all back", got.Demoted, got.Exposed, got.AutoRun)
	}
	ds = healthDecisions()
	if len(ds) != 2 || ds[0].Reason != audit.ReasonHealthRestored || ds[0].Actor != audit.ActorProcgraph || !strings.Contains(ds[0].Note, "verification") {
		t.Fatalf("health decisions after the verification = %+v; want a health_restored one by procgraph first", ds)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeRestore, Procedure: p.Name, Decision: ds[0].ID})

	fail(health.FailureInternal, "mallory")
	fail(health.FailureToolError, "bob")
	if got, _ := svc.Get(ctx, p.Name); got.Demoted {
		t.Fatal("two failures after a lifting demoted again: the streak did not start from 0")
	}
	fail(health.FailureStepLimit, "mallory")
	if got, _ := svc.Get(ctx, p.Name); !got.Demoted {
		t.Fatal("three failures of two callers after a lifting did not demote")
	}
	sub.Take()
	lp, ld, err := svc.LiftDemotion(ctx, procedures.LiftDemotionRequest{Name: p.Name, Reason: " fixed upstream ", Actor: "ops"})
	if err != nil || lp.Demoted || !lp.Exposed {
		t.Fatalf("an operator's lifting: %+v, %v", lp, err)
	}
	if ld.Kind != audit.KindHealth || ld.Reason != audit.ReasonHealthRestored || ld.Actor != "ops" || ld.Note != "fixed upstream" {
		t.Errorf("the operator's lifting recorded %+v", ld)
	}
	mustTake(t, sub, changes.Change{Kind: changes.ChangeRestore, Procedure: p.Name, Decision: ld.ID})
	n := len(healthDecisions())
	_, _, err = svc.LiftDemotion(ctx, procedures.LiftDemotionRequest{Name: p.Name, Actor: "ops"})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.CodeConflict || fe.Details["reason"] != procedures.ReasonNotDemoted {
		t.Fatalf("lifting a procedure that is not demoted: %v; want a not_demoted conflict", err)
	}
	if len(healthDecisions()) != n {
		t.Error("a refused lifting was recorded")
	}
	mustTake(t, sub)
}

// TestDemotedAfter: the rule on its own. Only a failure of the current
// version that counts toward demotion demotes, at the setting's streak of
// two callers' failures; nothing lifts.
func TestDemotedAfter(t *testing.T) {
	a, b := health.CallerHash("a"), health.CallerHash("b")
	if a == b || a < 1 || b < 1 || a >= health.CallerSpan || b >= health.CallerSpan {
		t.Fatalf("CallerHash: %d, %d", a, b)
	}
	var h health.Health
	h = h.Add(health.Run{Failure: health.FailureToolError, Caller: "a"})
	h = h.Add(health.Run{Failure: health.FailureTimeout, Caller: "b"})
	h = h.Add(health.Run{Failure: health.FailureUpstreamUnavailable, Caller: "b"})
	h = h.Add(health.Run{Failure: health.FailureResultTooLarge, Caller: "a"})
	one := h
	h = h.Add(health.Run{Failure: health.FailureMemoryLimit, Caller: "b"})
	if one.DemotionStreak != 2 || one.StreakCallerCount() != 1 || h.DemotionStreak != 3 || h.StreakCallerCount() != 2 || h.ConsecutiveFailures != 5 {
		t.Fatalf("streaks %+v, %+v", one, h)
	}
	for _, tc := range []struct {
		name         string
		was, current bool
		failure      string
		h            health.Health
		after        int
		want         bool
	}{
		{"two callers at the setting", false, true, health.FailureMemoryLimit, h, 3, true},
		{"two callers below it", false, true, health.FailureMemoryLimit, h, 4, false},
		{"one caller", false, true, health.FailureToolError, one.Add(health.Run{Failure: health.FailureToolError, Caller: "a"}), 3, false},
		{"a timeout", false, true, health.FailureTimeout, h, 3, false},
		{"an outage", false, true, health.FailureUpstreamUnavailable, h, 3, false},
		{"another version", false, false, health.FailureMemoryLimit, h, 3, false},
		{"0 never", false, true, health.FailureMemoryLimit, h, 0, false},
		{"a success lifts nothing", true, true, "", h.Add(health.Run{}), 3, true},
		{"invalid arguments", false, true, health.FailureInvalidArguments, h, 3, false},
	} {
		if got := health.DemotedAfter(tc.was, tc.current, tc.failure, tc.h, tc.after); got != tc.want {
			t.Errorf("%s: DemotedAfter = %v, want %v", tc.name, got, tc.want)
		}
	}
	if s := h.Add(health.Run{}); s.DemotionStreak != 0 || s.StreakCallerCount() != 0 {
		t.Errorf("a success left the streak %d by %d callers", s.DemotionStreak, s.StreakCallerCount())
	}
	if r := health.HealthOf(health.StreakReset().Apply(h.Vector())); r.DemotionStreak != 0 || r.StreakCallerCount() != 0 || r.Runs != h.Runs || r.ConsecutiveFailures != 5 {
		t.Errorf("StreakReset: %+v", r)
	}
}
