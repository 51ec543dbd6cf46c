package gate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// The procedures of the review tests: killer kills job 4444 behind a read
// (the attack of issue 34), outer calls it one level down.
const (
	reviewKiller = "d = tools.get_scout_job_details(task_id=task_id)\ntools.kill_job(panda_id=4444)\nreturn d"
	reviewOuter  = "s = tools.get_task_jobs_summary(task_id=task_id)\nreturn tools.%s(task_id=task_id)"
)

// captureAsIs captures code as a succeeded procedure, its literals kept.
func captureAsIs(t *testing.T, e *env, code string) *procedures.Procedure {
	t.Helper()
	out, err := e.Service.Capture(context.Background(), procedures.CaptureRequest{Code: code, Status: procedures.StatusSucceeded,
		SessionID: "capture", NoLift: true})
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, code)
	}
	return out.Procedure
}

// TestReviewShowsAllThatRuns: the review of a proc__-only turn shows every
// procedure it may reach, each level, with the code, classification and
// code hash its approval binds to (the kill_job call and its literal two
// levels down); it says what each answer covers, auto_run naming the
// durable grant; a nested procedure captured anew after the turn became
// pending is not what the review shows, so resolving it asks for a review
// again, and the review then shows the new version.
func TestReviewShowsAllThatRuns(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	killer := captureAsIs(t, e, reviewKiller)
	outer := captureAsIs(t, e, strings.Replace(reviewOuter, "%s", killer.Name, 1))
	id := mustPending(t, g, gate.TurnRequest{Code: "return tools." + outer.Name + "(task_id=1)", SessionID: "s",
		Phase: audit.PhaseInteractive, Actor: "agent", Summary: "look at scouts of task 1"})

	a, err := g.Approval(ctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nested) != 2 {
		t.Fatalf("the review reaches %+v, want %s and %s", a.Nested, outer.Name, killer.Name)
	}
	o, k := a.Nested[0], a.Nested[1]
	if o.Name != outer.Name || o.Depth != 1 || len(o.CalledBy) != 1 || o.CalledBy[0] != "" || o.CodeHash != outer.CodeHash || o.ReadOnly {
		t.Fatalf("level 1: %+v", o)
	}
	if k.Name != killer.Name || k.Depth != 2 || len(k.CalledBy) != 1 || k.CalledBy[0] != outer.Name || k.CodeHash != killer.CodeHash ||
		k.ReadOnly || len(k.StateChangingTools) != 1 || k.StateChangingTools[0] != "kill_job" || k.Code != reviewKiller || k.Truncated {
		t.Fatalf("level 2: %+v", k)
	}
	covers := map[gate.Choice]gate.Cover{}
	for _, c := range a.Covers {
		covers[c.Choice] = c
	}
	if len(covers) != len(gate.BlockChoices) {
		t.Fatalf("covers %+v, want one per choice", a.Covers)
	}
	auto := covers[gate.ChoiceAutoRun]
	if len(auto.Grants) != 1 || auto.Grants[0] != outer.Name ||
		!strings.Contains(auto.Text, "auto-run of "+outer.Name+" for every caller and any arguments, until revoked") {
		t.Fatalf("auto_run covers %+v", auto)
	}
	if g := covers[gate.ChoiceRunOnce].Grants; len(g) != 0 {
		t.Fatalf("run_once grants %v", g)
	}

	// A new version of the killer after the review: the review still shows
	// what the approval binds to, and approving it asks for a review again.
	co, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: "d = tools.get_scout_job_details(task_id=task_id)\ntools.kill_job(panda_id=5555)\nreturn d",
		Status: procedures.StatusSucceeded, SessionID: "capture", NoLift: true})
	if err != nil || co.Procedure.Name != killer.Name || co.CodeHash == killer.CodeHash {
		t.Fatalf("the second capture: %+v, %v", co, err)
	}
	v2, _, err := e.Service.Promote(ctx, procedures.PromoteRequest{Name: killer.Name, CodeHash: co.CodeHash, Reason: "newer", Actor: "op"})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = g.Approval(ctx, id, true); err != nil || a.Nested[1].CodeHash != killer.CodeHash || !strings.Contains(a.Nested[1].Code, "4444") {
		t.Fatalf("after a new version the review shows %+v (%v), want the bound one", a.Nested, err)
	}
	_, _, err = g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true})
	if fault.ErrorCode(err) != fault.CodeConflict {
		t.Fatalf("resolving a review whose nested code changed: %v, want conflict", err)
	}
	if a, err = g.Approval(ctx, id, true); err != nil || a.Nested[1].CodeHash != v2.CodeHash || !strings.Contains(a.Nested[1].Code, "5555") {
		t.Fatalf("reviewed again, the review shows %+v (%v), want the new version", a.Nested, err)
	}
	if got := e.Upstream.Tools(); len(got) != 0 {
		t.Fatalf("the upstream saw %v", got)
	}
}

// TestReviewBoundsNestedCode: a nested procedure whose code is longer than
// a review shows is shown truncated — marked, with its length and hash —
// never left out silently, and the review stays within its bound; a
// hostile one (control characters, a line separator in a string) is
// shown as the store holds it, for each surface to show visibly.
func TestReviewBoundsNestedCode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	long := "# " + strings.Repeat("x", fields.MaxReviewCodeBytes) + "\n" + reviewKiller
	big := captureAsIs(t, e, long)
	hostile := captureAsIs(t, e, "n = tools.record_note(text=\"\x1b[2K\u2028ok\")\nreturn tools.get_task_jobs_summary(task_id=task_id)")
	id := mustPending(t, g, gate.TurnRequest{Code: "a = tools." + big.Name + "(task_id=1)\nreturn tools." + hostile.Name + "(task_id=1)",
		SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"})
	a, err := g.Approval(ctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]binding.Reached{}
	for _, r := range a.Nested {
		byName[r.Name] = r
	}
	b := byName[big.Name]
	if !b.Truncated || b.CodeBytes != len(long) || len(b.Code) > fields.MaxReviewCodeBytes || b.CodeHash != big.CodeHash || !strings.HasPrefix(long, b.Code) {
		t.Fatalf("the long procedure is shown %d of %d bytes, truncated %v, hash %s", len(b.Code), b.CodeBytes, b.Truncated, b.CodeHash)
	}
	if h := byName[hostile.Name]; h.Truncated || !strings.Contains(h.Code, "\x1b[2K\u2028ok") {
		t.Fatalf("the hostile procedure is shown %q", h.Code)
	}
}

// TestReviewBoundsAllNestedCode: however many long procedures a block
// reaches, a review shows at most fields.MaxReviewNestedBytes of their code; each
// one cut is marked truncated with its whole length, none is left out.
func TestReviewBoundsAllNestedCode(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	pad := strings.Repeat("# padding\n", fields.MaxReviewCodeBytes/10+10)
	var calls []string
	for _, tool := range []string{"get_retry_chain", "get_task_input_datasets", "fetch_brokerage_context", "get_failed_job_log_summary", "get_task_jobs_summary"} {
		p := captureAsIs(t, e, pad+"return tools."+tool+"(task_id=task_id)")
		calls = append(calls, "tools."+p.Name+"(task_id=1)")
	}
	id := mustPending(t, g, gate.TurnRequest{Code: "return [" + strings.Join(calls, ", ") + "]", SessionID: "s",
		Phase: audit.PhaseInteractive, Actor: "agent"})
	a, err := g.Approval(ctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range a.Nested {
		total += len(r.Code)
		if !r.Truncated || r.CodeBytes <= fields.MaxReviewCodeBytes {
			t.Fatalf("%s: %d of %d bytes shown, truncated %v", r.Name, len(r.Code), r.CodeBytes, r.Truncated)
		}
	}
	if len(a.Nested) != 5 || total > fields.MaxReviewNestedBytes {
		t.Fatalf("the review shows %d procedures, %d bytes of their code (bound %d)", len(a.Nested), total, fields.MaxReviewNestedBytes)
	}
}

// TestReviewOfAnUnavailableVersion: a pending turn whose binding names a
// nested version the store does not hold (an imported approval) shows it
// unavailable, with nothing of its code, and resolving it asks for a
// review again rather than approving what nobody saw.
func TestReviewOfAnUnavailableVersion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	killer := captureAsIs(t, e, reviewKiller)
	id := mustPending(t, g, gate.TurnRequest{Code: "return tools." + killer.Name + "(task_id=1)", SessionID: "s",
		Phase: audit.PhaseInteractive, Actor: "agent"})
	cur, err := e.turns.GetApproval(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	forged := *cur
	b := *cur.Binding
	b.Nested = []binding.BoundNested{{Name: killer.Name, CodeHash: strings.Repeat("0", 64), StateChangingTools: []string{}}}
	forged.Binding = &b
	if _, err := e.turns.TransitionTurn(ctx, forged, []gate.TurnStatus{gate.TurnPending}, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	a, err := g.Approval(ctx, id, true)
	if err != nil || len(a.Nested) != 1 || !a.Nested[0].Unavailable || a.Nested[0].Code != "" {
		t.Fatalf("the review of an unavailable version: %+v, %v", a, err)
	}
	_, _, err = g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceRunOnce, Actor: "op", HasGrant: true})
	if fault.ErrorCode(err) != fault.CodeConflict {
		t.Fatalf("resolving it: %v, want conflict (review again)", err)
	}
	if a, err = g.Approval(ctx, id, true); err != nil || a.Nested[0].Unavailable || a.Nested[0].CodeHash != killer.CodeHash {
		t.Fatalf("reviewed again: %+v, %v", a.Nested, err)
	}
}
