package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
)

// TestPolicyCoversTheProgram: a session policy set with auto_run covers
// another text of the same program in its session (docs/design.md "What
// an authorization binds to"): for a read-only block, with any values of
// its lifted literals; for a state-changing one, only with the values the
// operator saw. Another program — a call added, another keyword, another
// value in a state-changing call — is reviewed.
func TestPolicyCoversTheProgram(t *testing.T) {
	ctx := context.Background()
	g := typedGate(t)
	turn := func(session, code string, args ...any) gate.TurnRequest {
		req := gate.TurnRequest{Code: code, SessionID: session, Phase: audit.PhaseInteractive, Actor: "agent", Arguments: map[string]any{}}
		for i := 0; i+1 < len(args); i += 2 {
			req.Arguments[args[i].(string)] = args[i+1]
		}
		return req
	}
	approve := func(req gate.TurnRequest) {
		t.Helper()
		id := mustPending(t, g, req)
		if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceAutoRun, Reason: "ok", Actor: "op", HasGrant: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Run(ctx, id, "agent"); err != nil {
			t.Fatal(err)
		}
	}
	approve(turn("s", "jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [jobs, logs]\n"))
	approve(turn("s", "return tools.kill_job(job_id=7)\n"))
	approve(turn("s", "return tools.kill_job(job_id=job)\n", "job", 9))
	for _, tc := range []struct {
		name, session, code string
		covered             bool
		args                []any
	}{
		{"read-only: other names, a comment, another order, another task", "s",
			"# again\nl = tools.fetch_logs(task_id=43)\nj = tools.get_jobs(task_id=43)\nreturn [j, l]\n", true, nil},
		{"read-only: in another session", "s2",
			"jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [jobs, logs]\n", false, nil},
		{"read-only: a state-changing call added", "s",
			"jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\ntools.kill_job(job_id=1)\nreturn [jobs, logs]\n", false, nil},
		{"read-only: another return", "s",
			"jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [logs, jobs]\n", false, nil},
		{"state-changing: another text, the value the operator saw", "s", "# the same kill\nreturn tools.kill_job(job_id = 7)\n", true, nil},
		{"state-changing: another value", "s", "return tools.kill_job(job_id=8)\n", false, nil},
		{"state-changing: the argument value the operator saw", "s", "# again\nreturn tools.kill_job(job_id=job)\n", true, []any{"job", 9}},
		{"state-changing: another argument value", "s", "return tools.kill_job(job_id=job)\n", false, []any{"job", 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustCoveredBy(t, g, turn(tc.session, tc.code, tc.args...), tc.covered, audit.ReasonSessionPolicy)
		})
	}
}

// TestCoversTextSaysWhatAPolicyCovers: the review's words for an auto_run
// that sets a session policy follow what the policy covers — a read-only
// program with any values, a state-changing one with the values shown.
func TestCoversTextSaysWhatAPolicyCovers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		want     string
	}{
		{"read-only", true, "in any text, with any task_id and any values of its literals"},
		{"state-changing", false, "in any text, with the argument values shown only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gate.CoversText(gate.ChoiceAutoRun, gate.CoverScope{ReadOnly: tc.readOnly, Arguments: []string{"task_id"}, SessionID: "s", Requester: "agent"})
			if !strings.Contains(got, tc.want) {
				t.Fatalf("CoversText = %q, want it to say %q", got, tc.want)
			}
		})
	}
}

// TestAutoRunOfAReadGrantsItsProgram: auto_run on a block that is one
// read-only tool's call grants that single-tool procedure once the turn
// succeeded, and the grant covers the same program — other text, other
// values of its lifted literals — for every caller, in any session, as a
// proc__ call of it would be; another program (another tool, a call
// added) is reviewed.
func TestAutoRunOfAReadGrantsItsProgram(t *testing.T) {
	ctx := context.Background()
	g := typedGate(t)
	turn := func(session, actor, code string) gate.TurnRequest {
		return gate.TurnRequest{Code: code, SessionID: session, Phase: audit.PhaseInteractive, Actor: actor}
	}
	id := mustPending(t, g, turn("s1", "agent", "jobs = tools.get_jobs(task_id=42)\nreturn jobs\n"))
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceAutoRun, Reason: "reads are fine", Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	if ans, err := g.Run(ctx, id, "agent"); err != nil || ans.Turn.Status != gate.TurnSucceeded {
		t.Fatalf("run: %+v %v", ans, err)
	}
	for _, tc := range []struct {
		name, session, actor, code string
		covered                    bool
	}{
		{"another session, another caller, another task, another text", "s2", "agent2", "# again\nj = tools.get_jobs(task_id = 43)\nreturn j\n", true},
		{"another tool", "s2", "agent2", "l = tools.fetch_logs(task_id=43)\nreturn l\n", false},
		{"another keyword, the same tool", "s2", "agent2", "j = tools.get_jobs(task=43)\nreturn j\n", false},
		{"a call added", "s2", "agent2", "j = tools.get_jobs(task_id=43)\ntools.kill_job(job_id=1)\nreturn j\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustCoveredBy(t, g, turn(tc.session, tc.actor, tc.code), tc.covered, audit.ReasonDurableAutoRun)
		})
	}
}

// TestAutoRunOfAWriteGrantsNothing: auto_run on one state-changing call
// sets the session's policy only, even with mutating auto-run on: no
// durable grant, so another session's same call is reviewed.
func TestAutoRunOfAWriteGrantsNothing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	kill := func(session string) gate.TurnRequest {
		return gate.TurnRequest{Code: "return tools.kill_job(job_id=1)\n", SessionID: session, Phase: audit.PhaseInteractive, Actor: "agent"}
	}
	id := mustPending(t, g, kill("s1"))
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceAutoRun, Reason: "once", Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	if ans, err := g.Run(ctx, id, "agent"); err != nil || ans.Turn.Status != gate.TurnSucceeded {
		t.Fatalf("run: %+v %v", ans, err)
	}
	if ans, err := g.Submit(ctx, kill("s2")); err != nil || ans.InvokeResult != nil {
		t.Fatalf("the same kill in another session ran (%+v, %v): auto_run on a write granted it", ans, err)
	}
}

// typedGate is a gate over a catalogue whose task_id arguments are typed,
// so that a literal task_id is lifted (docs/design.md "Lifting literals
// into parameters"): get_jobs and fetch_logs read, kill_job writes.
func typedGate(t *testing.T) *gate.Gate {
	t.Helper()
	e := newEnv(t, sandbox.NewInProcess(), false)
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	if _, err := e.Service.PutCatalogue(context.Background(), []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed},
		{Name: "fetch_logs", ReadOnly: true, InputSchema: typed}, {Name: "kill_job"}}, "tester"); err != nil {
		t.Fatal(err)
	}
	return gate.New(e.Replayer, e.turns, gate.Options{})
}

// mustCoveredBy submits req and requires that it ran at once, decided for
// reason, when covered, else that it waits for review.
func mustCoveredBy(t *testing.T, g *gate.Gate, req gate.TurnRequest, covered bool, reason string) {
	t.Helper()
	ans, err := g.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ran := ans.InvokeResult != nil
	if ran != covered {
		t.Fatalf("ran %v (status %s); want covered (%s): %v", ran, ans.Turn.Status, reason, covered)
	}
	if ran && ans.Decision.Reason != reason {
		t.Fatalf("ran with decision %+v, want %s", ans.Decision, reason)
	}
}
