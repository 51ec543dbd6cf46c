package gate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/sandbox"
)

// turnKill is the interactive, state-changing block the gate tests submit:
// it always needs an operator.
func turnKill(wait time.Duration) gate.TurnRequest {
	return gate.TurnRequest{Code: "return tools.kill_job(panda_id=panda_id)", SessionID: "s", Phase: audit.PhaseInteractive,
		Arguments: map[string]any{"panda_id": 7}, Actor: "agent", Wait: wait}
}

// mustPending submits req on g and returns its pending turn's id.
func mustPending(t *testing.T, g *gate.Gate, req gate.TurnRequest) string {
	t.Helper()
	ans, err := g.Submit(context.Background(), req)
	if err != nil || ans.Turn.Status != gate.TurnPending {
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
	rp := replay.New(e.Service, sandbox.NewInProcess(), e.Upstream, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Admission: adm})
	g := gate.New(rp, e.turns, gate.Options{})
	id := mustPending(t, g, turnKill(0))
	cur, err := e.turns.GetApproval(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*gate.Resolution{nil, {Choice: gate.ChoiceReject, By: "op"}} {
		bad := *cur
		bad.Status, bad.Resolution = gate.TurnApproved, res
		if _, err := e.turns.TransitionTurn(ctx, bad, []gate.TurnStatus{gate.TurnPending, gate.TurnApproved}, true, time.Now()); err != nil {
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
	if got := e.Upstream.Tools(); len(got) != 0 {
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
	}{{"rejected", audit.ReasonOperatorRejected}, {"expired", audit.ReasonApprovalExpired}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, sandbox.NewInProcess(), false)
			opts := gate.Options{}
			if c.name == "expired" {
				opts.ApprovalTimeout = 50 * time.Millisecond
			}
			g := gate.New(e.Replayer, e.turns, opts)
			errs := make(chan error, 1)
			go func() { _, err := g.Submit(ctx, turnKill(gate.MaxWait)); errs <- err }()
			if c.name == "rejected" {
				waitFor(func() bool { return g.Waiting() == 1 })
				list, err := g.Approvals(ctx, gate.ApprovalFilter{Status: gate.TurnPending}, false)
				if err != nil || len(list) != 1 {
					t.Fatalf("approvals: %v, %v", list, err)
				}
				if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: list[0].ID, Choice: gate.ChoiceReject, Actor: "op", HasGrant: true}); err != nil {
					t.Fatal(err)
				}
			}
			err := <-errs
			got, ok := audit.DecisionOf(err)
			if fault.ErrorCode(err) != fault.CodeDenied || !ok {
				t.Fatalf("submit: %v", err)
			}
			ds, err := e.Service.Decisions(ctx, audit.DecisionFilter{Kind: audit.KindTurn})
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
