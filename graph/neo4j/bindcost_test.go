package neo4j

import (
	"context"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/health"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestBindingChecksCostNoStatement: on Neo4j, a turn decided (and run) by
// a session policy and one decided by a durable grant run exactly the
// statements they ran before bindings (QueryObserver): the binding checks
// read nothing more. The session's policies are listed by its first turn
// on the instance (policies, where policy_get was read before the gate's
// policy index, ADR 0050); the same turn again reads none. The catalogue
// a block is classified with (catalogue_since) is read once after the
// setup's writes, by the policy's first turn, then trusted from the
// service's authorization cache while the polled authorization revision
// is unchanged (ADR 0052).
func TestBindingChecksCostNoStatement(t *testing.T) {
	s := freshStore(t)
	g, policy, grant := replaytest.BindCost(t, s, s)
	for _, c := range []struct {
		name        string
		req         gate.TurnRequest
		reason      string
		first, then string
	}{
		// find_filtered is the reuse suggestion of a block that is not
		// proc__-only; procedure_catalogue reads a procedure with the
		// catalogue (procedures.CatalogueGetter, ADR 0020). The writes:
		// the turn's decision before it runs (it may change state), then
		// one transaction after the run (Store.RecordRun, docs/design.md
		// "One commit per run"): run_use, the nested procedure's decision
		// with its result and the turn's result folded into the nested
		// success's use, and use_health, the turn's run in the health of a
		// stored version of its code (none here: it writes nothing).
		{"policy", policy, audit.ReasonSessionPolicy,
			"catalogue_since×1 decision_append×1 find_filtered×1 policies×1 procedure_catalogue×1 procedures_by_name×1 run_use×1 use_health×1",
			"decision_append×1 find_filtered×1 procedure_catalogue×1 procedures_by_name×1 run_use×1 use_health×1"},
		{"grant", grant, audit.ReasonDurableAutoRun,
			"decision_append×1 policies×1 procedure_catalogue×1 procedures_by_name×1 run_use×1 use_health×1",
			"decision_append×1 procedure_catalogue×1 procedures_by_name×1 run_use×1 use_health×1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, want := range []string{c.first, c.then} {
				var n replaytest.Counter
				octx := WithQueryObserver(context.Background(), func(q string, _, _ time.Duration) { n.Add(q) })
				ans, err := g.Submit(octx, c.req)
				if err != nil || !ans.Ran() || ans.Decision.Reason != c.reason || ans.Status != replay.StatusSucceeded {
					t.Fatalf("submit %d: %+v, %v", i, ans, err)
				}
				if s := n.Take(); s != want {
					t.Fatalf("submit %d: statements %s, want %s (the binding checks add none)", i, s, want)
				}
			}
		})
	}
}

// TestRunIsOneStatement (docs/design.md "One commit per run"): on Neo4j,
// an invoke of a read-only procedure and an automatic read-only turn
// write in one statement after their run — the decision with its result,
// the use (and for the turn its run in the health of the stored version
// of its code), the recording — and nothing before it.
func TestRunIsOneStatement(t *testing.T) {
	s := freshStore(t)
	ctx := context.Background()
	svc := procedures.NewService(s, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: replaytest.ReadOnlyCode, Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{RecordResponses: true, Limits: sandbox.Limits{Timeout: 20 * time.Second}})
	g := gate.New(rp, s, gate.Options{})
	var n replaytest.Counter
	octx := WithQueryObserver(ctx, func(q string, _, _ time.Duration) { n.Add(q) })
	args := map[string]any{"task_id": 7}
	res, err := rp.Invoke(octx, replay.InvokeRequest{Name: out.Procedure.Name, Arguments: args, Phase: audit.PhaseAutomatic, SessionID: "s"})
	if err != nil || res.Status != replay.StatusSucceeded {
		t.Fatalf("invoke: %+v, %v", res, err)
	}
	// procedure_catalogue reads the procedure with the catalogue.
	if got, want := n.Take(), "procedure_catalogue×1 run_use×1"; got != want {
		t.Fatalf("invoke: statements %s, want %s", got, want)
	}
	// The store reads the classes once for a summary filter and keeps
	// them (the suggestion's page is one; the capture above needed none):
	// the turn is counted in that steady state.
	exposed := true
	if _, _, err := s.Find(ctx, procedures.Query{Exposed: &exposed, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	ans, err := g.Submit(octx, gate.TurnRequest{Code: replaytest.ReadOnlyCode, SessionID: "s", Phase: audit.PhaseAutomatic, Arguments: args, Actor: "agent"})
	if err != nil || !ans.Ran() || ans.Status != replay.StatusSucceeded {
		t.Fatalf("turn: %+v, %v", ans, err)
	}
	// catalogue_since reads the catalogue a block is classified with,
	// find_filtered is the reuse suggestion.
	if got, want := n.Take(), "catalogue_since×1 find_filtered×1 run_use_health×1"; got != want {
		t.Fatalf("turn: statements %s, want %s", got, want)
	}
	ds, err := svc.Decisions(ctx, audit.DecisionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	results := map[audit.DecisionKind]string{}
	for _, d := range ds {
		results[d.Kind] = d.Result
	}
	if results[audit.KindInvoke] != health.ResultSucceeded || results[audit.KindTurn] != health.ResultSucceeded {
		t.Fatalf("records %+v", ds)
	}
	p, err := svc.Get(ctx, out.Procedure.Name)
	if err != nil || p.UseCount != 1 || p.Health.Runs != 2 {
		t.Fatalf("procedure %+v, %v: want one use and two runs", p, err)
	}
}
