package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// preparedEnv is a world for counting a turn's preparations: the replay
// env, a gate over its replayer and store, and the count of preparations
// before the turn.
type preparedEnv struct {
	*replaytest.Env
	g      *gate.Gate
	before int64
}

func newPreparedEnv(t *testing.T) *preparedEnv {
	t.Helper()
	e := replaytest.New(t, sandbox.NewInProcess(), false)
	return &preparedEnv{Env: e, g: gate.New(e.Replayer, e.Store, gate.Options{}), before: e.Replayer.Preparations()}
}

// prepared is how many blocks were prepared since the env was made.
func (e *preparedEnv) prepared() int64 { return e.Replayer.Preparations() - e.before }

// killTurn is an interactive, state-changing turn: it waits for an
// operator.
func killTurn() gate.TurnRequest {
	return gate.TurnRequest{Code: "return tools.kill_job(job_id=task_id)", SessionID: "s", Phase: audit.PhaseInteractive,
		Arguments: map[string]any{"task_id": 7}, Actor: "agent"}
}

// mustPendingTurn submits req and returns its pending turn's id.
func (e *preparedEnv) mustPendingTurn(req gate.TurnRequest) string {
	e.T.Helper()
	ans, err := e.g.Submit(context.Background(), req)
	if err != nil || ans.Turn.Status != gate.TurnPending {
		e.T.Fatalf("submit: %+v, %v", ans, err)
	}
	return ans.Turn.ID
}

// resolve answers turn id with choice as operator op.
func (e *preparedEnv) resolve(id string, choice gate.Choice, code *string) error {
	_, _, err := e.g.Resolve(context.Background(), gate.ResolveRequest{ID: id, Choice: choice, Code: code, Actor: "op", HasGrant: true})
	return err
}

// mustRun runs approved turn id and wants it succeeded.
func (e *preparedEnv) mustRun(id string) {
	e.T.Helper()
	ans, err := e.g.Run(context.Background(), id, "agent")
	if err != nil || ans.Turn.Status != gate.TurnSucceeded {
		e.T.Fatalf("run: %+v, %v", ans, err)
	}
}

// TestTurnPreparedOnce: a turn's block is prepared (analysed, classified,
// its schema typed, its arguments validated) once, when it is submitted:
// its resolution and its run recheck it against the current catalogue and
// store without preparing it again — for an approved block (each choice
// that runs, the run apart or inside the submit's wait) and an automatic
// one.
func TestTurnPreparedOnce(t *testing.T) {
	for _, choice := range []gate.Choice{gate.ChoiceRunOnce, gate.ChoiceAutoRun, gate.ChoiceAlwaysAsk} {
		t.Run("approved "+string(choice), func(t *testing.T) {
			e := newPreparedEnv(t)
			id := e.mustPendingTurn(killTurn())
			if err := e.resolve(id, choice, nil); err != nil {
				t.Fatal(err)
			}
			e.mustRun(id)
			if got := e.prepared(); got != 1 {
				t.Fatalf("submit, resolve and run prepared the block %d times, want 1", got)
			}
			if got := e.Upstream.Tools(); len(got) != 1 || got[0] != "kill_job" {
				t.Fatalf("the upstream saw %v", got)
			}
		})
	}
	t.Run("approved while the submit waits", func(t *testing.T) {
		e := newPreparedEnv(t)
		req := killTurn()
		req.Wait = 20 * time.Second
		done := make(chan error, 1)
		go func() {
			ans, err := e.g.Submit(context.Background(), req)
			if err == nil && ans.Turn.Status != gate.TurnSucceeded {
				err = fault.Errorf(fault.CodeInternal, "turn %s", ans.Turn.Status)
			}
			done <- err
		}()
		var id string
		for id == "" {
			as, err := e.g.Approvals(context.Background(), gate.ApprovalFilter{Status: gate.TurnPending, Limit: 1}, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(as) == 1 {
				id = as[0].ID
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := e.resolve(id, gate.ChoiceRunOnce, nil); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := e.prepared(); got != 1 {
			t.Fatalf("the waited turn was prepared %d times, want 1", got)
		}
	})
	t.Run("automatic", func(t *testing.T) {
		e := newPreparedEnv(t)
		ans, err := e.g.Submit(context.Background(), gate.TurnRequest{Code: replaytest.ReadOnlyCode, SessionID: "s",
			Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 7}, Actor: "agent"})
		if err != nil || !ans.Ran() || ans.Turn.Status != gate.TurnSucceeded {
			t.Fatalf("submit: %+v, %v", ans, err)
		}
		if got := e.prepared(); got != 1 {
			t.Fatalf("the automatic turn was prepared %d times, want 1", got)
		}
	})
}

// TestTurnPreparedAgain: a turn's block is prepared again where what it
// was prepared from no longer holds — and what runs is then what the stored
// turn holds: the operator's edited block, the stored arguments, the
// schema typed from the current catalogue.
func TestTurnPreparedAgain(t *testing.T) {
	ctx := context.Background()
	t.Run("an edited block runs, not the submitted one", func(t *testing.T) {
		e := newPreparedEnv(t)
		id := e.mustPendingTurn(killTurn())
		edited := "return tools.get_jobs(task_id=task_id)"
		if err := e.resolve(id, gate.ChoiceRunOnce, &edited); err != nil {
			t.Fatal(err)
		}
		e.mustRun(id)
		if got := e.Upstream.Tools(); len(got) != 1 || got[0] != "get_jobs" {
			t.Fatalf("the upstream saw %v, want the edited block's get_jobs only", got)
		}
		if got := e.prepared(); got != 2 {
			t.Fatalf("prepared %d times, want 2 (the submitted block, the edited one)", got)
		}
	})
	t.Run("the stored arguments are what is checked", func(t *testing.T) {
		e := newPreparedEnv(t)
		id := e.mustPendingTurn(killTurn())
		cur, err := e.Store.GetApproval(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		cur.Arguments = map[string]any{"task_id": json.Number("8")}
		if _, err := e.Store.TransitionTurn(ctx, *cur, []gate.TurnStatus{gate.TurnPending}, true, time.Now()); err != nil {
			t.Fatal(err)
		}
		// The stored turn holds other values than were submitted and bound:
		// prepared from them, the block is not what its binding holds.
		err = e.resolve(id, gate.ChoiceRunOnce, nil)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.CodeConflict || fe.Details["reason"] != binding.InactiveArgumentsChanged {
			t.Fatalf("resolve: %v, want conflict arguments_changed", err)
		}
		if len(e.Upstream.Tools()) != 0 {
			t.Fatalf("the upstream saw %v", e.Upstream.Tools())
		}
	})
	t.Run("arguments that no longer fit the catalogue", func(t *testing.T) {
		e := newPreparedEnv(t)
		id := e.mustPendingTurn(killTurn())
		tools := append([]procedures.Tool(nil), replaytest.DefaultTools...)
		for i := range tools {
			if tools[i].Name == "kill_job" {
				tools[i].InputSchema = map[string]any{"type": "object", "properties": map[string]any{"job_id": map[string]any{"type": "string"}}}
			}
		}
		if _, err := e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
			t.Fatal(err)
		}
		// As a preparation now answers: the arguments fail the schema typed
		// from the current catalogue, and the approval stays pending.
		if err := e.resolve(id, gate.ChoiceRunOnce, nil); fault.ErrorCode(err) != fault.CodeInvalidArguments {
			t.Fatalf("resolve after the catalogue changed: %v, want invalid_arguments", err)
		}
		if len(e.Upstream.Tools()) != 0 {
			t.Fatalf("the upstream saw %v", e.Upstream.Tools())
		}
	})
}
