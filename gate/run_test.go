package gate

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// turnKill is the interactive, state-changing block the gate tests submit:
// it always needs an operator.
func turnKill(wait time.Duration) TurnRequest {
	return TurnRequest{Code: "return tools.kill_job(panda_id=panda_id)", SessionID: "s", Phase: procedures.PhaseInteractive,
		Arguments: map[string]any{"panda_id": 7}, Actor: "agent", Wait: wait}
}

// mustPending submits req on g and returns its pending turn's id.
func mustPending(t *testing.T, g *Gate, req TurnRequest) string {
	t.Helper()
	ans, err := g.Submit(context.Background(), req)
	if err != nil || ans.Turn.Status != procedures.TurnPending {
		t.Fatalf("submit: %+v, %v", ans, err)
	}
	return ans.Turn.ID
}

// TestRunChecksItsResolutionBeforeAdmission: an approved turn whose stored
// resolution would not run it is refused as an integrity failure at once —
// it does not take (or wait for) an admission slot first, so a full queue
// does not hide the failure behind a busy answer.
func TestRunChecksItsResolutionBeforeAdmission(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	adm := sandbox.NewAdmission(sandbox.AdmissionConfig{Slots: 1, Queue: -1})
	rp := replay.New(e.svc, sandbox.NewInProcess(), e.disp, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Admission: adm})
	g := New(rp, Options{})
	id := mustPending(t, g, turnKill(0))
	cur, err := e.svc.Turns().GetApproval(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*procedures.Resolution{nil, {Choice: procedures.ChoiceReject, By: "op"}} {
		bad := *cur
		bad.Status, bad.Resolution = procedures.TurnApproved, res
		if _, err := e.svc.Turns().TransitionTurn(ctx, bad, []procedures.TurnStatus{procedures.TurnPending, procedures.TurnApproved}, true, time.Now()); err != nil {
			t.Fatal(err)
		}
		release, err := adm.Acquire(ctx, "someone else") // the only slot is taken, no queue
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Run(ctx, id, "agent")
		release()
		if fault.ErrorCode(err) != fault.CodeInternal {
			t.Fatalf("resolution %+v: run = %v, want internal (the integrity check before admission)", res, err)
		}
	}
	if got := e.disp.tools(); len(got) != 0 {
		t.Fatalf("the upstream saw %v", got)
	}
}

// TestWaitedDenialCarriesItsRecord: a turn that waited for an operator and
// was rejected, or expired, answers denied with the decision recorded for
// it — the audit record itself, id included — as a turn denied at once does
// (docs/api.md: details.decision holds the record).
func TestWaitedDenialCarriesItsRecord(t *testing.T) {
	for _, c := range []struct {
		name   string
		reason string
	}{{"rejected", procedures.ReasonOperatorRejected}, {"expired", procedures.ReasonApprovalExpired}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, sandbox.NewInProcess(), false)
			opts := Options{}
			if c.name == "expired" {
				opts.ApprovalTimeout = 50 * time.Millisecond
			}
			g := New(e.rp, opts)
			errs := make(chan error, 1)
			go func() { _, err := g.Submit(ctx, turnKill(MaxWait)); errs <- err }()
			if c.name == "rejected" {
				waitFor(func() bool { return g.Waiting() == 1 })
				list, err := g.Approvals(ctx, procedures.ApprovalFilter{Status: procedures.TurnPending}, false)
				if err != nil || len(list) != 1 {
					t.Fatalf("approvals: %v, %v", list, err)
				}
				if _, _, err := g.Resolve(ctx, ResolveRequest{ID: list[0].ID, Choice: procedures.ChoiceReject, Actor: "op", HasGrant: true}); err != nil {
					t.Fatal(err)
				}
			}
			err := <-errs
			got, ok := procedures.DecisionOf(err)
			if fault.ErrorCode(err) != fault.CodeDenied || !ok {
				t.Fatalf("submit: %v", err)
			}
			ds, err := e.svc.Decisions(ctx, procedures.DecisionFilter{Kind: procedures.KindTurn})
			if err != nil || len(ds) != 1 {
				t.Fatalf("turn decisions %+v, %v", ds, err)
			}
			if got.ID == "" || JSONOf(t, got) != JSONOf(t, ds[0]) || got.Reason != c.reason {
				t.Fatalf("denial carries\n%s\nrecorded\n%s", JSONOf(t, got), JSONOf(t, ds[0]))
			}
		})
	}
}

// JSONOf is v as JSON.
func JSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
