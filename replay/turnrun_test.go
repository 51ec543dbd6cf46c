package replay

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/procedures"
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
	rp := New(e.svc, sandbox.NewInProcess(), e.disp, Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}, Admission: adm})
	g := NewGate(rp, GateOptions{})
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
		if procedures.ErrorCode(err) != procedures.CodeInternal {
			t.Fatalf("resolution %+v: run = %v, want internal (the integrity check before admission)", res, err)
		}
	}
	if got := e.disp.tools(); len(got) != 0 {
		t.Fatalf("the upstream saw %v", got)
	}
}
