package gate_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/gate"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// TestGrantCoversTheProgramUpToNames: a durable grant covers another text
// of its procedure's program whatever the names of its parameters — a
// literal bound to a name first (lifted under the binding's name) where
// the procedure was captured from the literal inline (lifted under the
// keyword's), a result returned through a name — and the values the turn
// gives them are a proc__ call's arguments: a value the procedure's input
// schema refuses is reviewed.
func TestGrantCoversTheProgramUpToNames(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	small := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}, "job_id": map[string]any{"type": "integer"}}}
	if _, err := e.Service.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: small},
		{Name: "fetch_logs", ReadOnly: true, InputSchema: small}, {Name: "kill_job"}}, "tester"); err != nil {
		t.Fatal(err)
	}
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	grant := func(code string, schema map[string]any) {
		t.Helper()
		out, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: code, Status: procedures.StatusSucceeded, SessionID: "capture", ParamsSchema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "op"}); err != nil {
			t.Fatal(err)
		}
	}
	// Lifted: jobs = tools.get_jobs(task_id=task_id) …
	grant("jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn [jobs, logs]\n", nil)
	// A declared parameter at most 10.
	grant("return tools.fetch_logs(task_id=n)\n", map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 10}}})
	turn := func(code string, args map[string]any) gate.TurnRequest {
		return gate.TurnRequest{Code: code, SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent", Arguments: args}
	}
	for _, tc := range []struct {
		name    string
		req     gate.TurnRequest
		covered bool
	}{
		{"a bound literal", turn("task = 43\nj = tools.get_jobs(task_id=task)\nl = tools.fetch_logs(task_id=task)\nreturn [j, l]\n", nil), true},
		{"a bound literal, the result returned through a name", turn("t = 44\nl = tools.fetch_logs(task_id=t)\nj = tools.get_jobs(task_id=t)\nresult = [j, l]\nreturn result\n", nil), true},
		{"two values of one parameter", turn("j = tools.get_jobs(task_id=43)\nl = tools.fetch_logs(task_id=44)\nreturn [j, l]\n", nil), false},
		{"another return", turn("task = 43\nj = tools.get_jobs(task_id=task)\nl = tools.fetch_logs(task_id=task)\nreturn [l, j]\n", nil), false},
		{"a value the schema admits, inline", turn("return tools.fetch_logs(task_id=7)\n", nil), true},
		{"a value the schema admits, as an argument of another name", turn("return tools.fetch_logs(task_id=m)\n", map[string]any{"m": 7}), true},
		{"a value the schema refuses, inline", turn("return tools.fetch_logs(task_id=70)\n", nil), false},
		{"a value the schema refuses, as an argument", turn("return tools.fetch_logs(task_id=n)\n", map[string]any{"n": 70}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustCoveredBy(t, g, tc.req, tc.covered, audit.ReasonDurableAutoRun)
		})
	}
}

// TestGrantCoversALongSignature: the grant cover finds the procedure of a
// signature by the name its capture gave it, which for a long signature
// is not the analysis' own (signature.Names with the catalogue's tools).
func TestGrantCoversALongSignature(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	if _, err := e.Service.PutCatalogue(ctx, []procedures.Tool{{Name: "find_similar_successful_tasks", ReadOnly: true, InputSchema: typed},
		{Name: "get_failed_job_log_summary", ReadOnly: true, InputSchema: typed}}, "tester"); err != nil {
		t.Fatal(err)
	}
	g := gate.New(e.Replayer, e.turns, gate.Options{})
	out, err := e.Service.Capture(ctx, procedures.CaptureRequest{Code: "a = tools.find_similar_successful_tasks(task_id=1)\nb = tools.get_failed_job_log_summary(task_id=1)\nreturn [a, b]\n",
		Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	mustCoveredBy(t, g, gate.TurnRequest{Code: "x = tools.find_similar_successful_tasks(task_id=2)\ny = tools.get_failed_job_log_summary(task_id=2)\nreturn [x, y]\n",
		SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}, true, audit.ReasonDurableAutoRun)
}

// TestPolicyCoversTheProgramUpToNames: a read-only session policy covers
// its program written with a literal bound to a name first, or with the
// result returned through a name, and the other way round.
func TestPolicyCoversTheProgramUpToNames(t *testing.T) {
	ctx := context.Background()
	g := typedGate(t)
	turn := func(code string) gate.TurnRequest {
		return gate.TurnRequest{Code: code, SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}
	}
	id := mustPending(t, g, turn("jobs = tools.get_jobs(task_id=42)\nlogs = tools.fetch_logs(task_id=42)\nreturn {'jobs': jobs, 'logs': logs}\n"))
	if _, _, err := g.Resolve(ctx, gate.ResolveRequest{ID: id, Choice: gate.ChoiceAutoRun, Reason: "ok", Actor: "op", HasGrant: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, code string
		covered    bool
	}{
		{"a bound literal", "task = 43\nj = tools.get_jobs(task_id=task)\nl = tools.fetch_logs(task_id=task)\nreturn {'jobs': j, 'logs': l}\n", true},
		{"the result through a name", "l = tools.fetch_logs(task_id=44)\nj = tools.get_jobs(task_id=44)\nresult = {'jobs': j, 'logs': l}\nreturn result\n", true},
		{"another key", "task = 43\nj = tools.get_jobs(task_id=task)\nl = tools.fetch_logs(task_id=task)\nreturn {'jobs': j, 'log': l}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustCoveredBy(t, g, turn(tc.code), tc.covered, audit.ReasonSessionPolicy)
		})
	}
}

// TestGrantCoverReadsNoProcedure: a turn a durable grant covers as its
// procedure's program reads neither the procedure nor a session policy
// once the service read the grant (its authorization cache) and the gate
// the session's policies (its policy index); a revoke through this service
// is seen by the next turn, one made by another instance after this
// instance's next poll of the store's authorization revision.
func TestGrantCoverReadsNoProcedure(t *testing.T) {
	ctx := context.Background()
	cs := &countedStore{Store: replaytest.OpenStore(t)}
	clk := &clock{now: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
	svc := procedures.NewService(cs, procedures.Options{Now: clk.Now})
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed}, {Name: "fetch_logs", ReadOnly: true, InputSchema: typed}}, "tester"); err != nil {
		t.Fatal(err)
	}
	g := gate.New(replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), cs, gate.Options{})
	grant := func(s *procedures.Service, enabled bool) string {
		t.Helper()
		out, err := s.Capture(ctx, procedures.CaptureRequest{Code: "j = tools.get_jobs(task_id=1)\nl = tools.fetch_logs(task_id=1)\nreturn [j, l]\n", Status: procedures.StatusSucceeded, SessionID: "capture"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: enabled, Actor: "op"}); err != nil {
			t.Fatal(err)
		}
		return out.Procedure.Name
	}
	grant(svc, true)
	if err := svc.PollAuthorization(ctx); err != nil { // the process's poller, started
		t.Fatal(err)
	}
	turn := gate.TurnRequest{Code: "task = 5\na = tools.get_jobs(task_id=task)\nb = tools.fetch_logs(task_id=task)\nreturn [a, b]\n", SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}
	mustCoveredBy(t, g, turn, true, audit.ReasonDurableAutoRun) // reads the grant
	cs.Take()
	mustCoveredBy(t, g, turn, true, audit.ReasonDurableAutoRun)
	if got := cs.Take(); strings.Contains(got, "Get") || policyReads(got) {
		t.Fatalf("a turn the grant covers made the store calls %s: it read the procedure or a session policy", got)
	}

	// Another instance (another service over the store) revokes: seen
	// after this instance's next poll.
	other := procedures.NewService(cs.Store, procedures.Options{Now: clk.Now})
	grant(other, false)
	if err := svc.PollAuthorization(ctx); err != nil {
		t.Fatal(err)
	}
	mustCoveredBy(t, g, turn, false, audit.ReasonDurableAutoRun)

	// This service grants again, then revokes: the next turn sees each.
	name := grant(svc, true)
	mustCoveredBy(t, g, turn, true, audit.ReasonDurableAutoRun)
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: false, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	mustCoveredBy(t, g, turn, false, audit.ReasonDurableAutoRun)
}

// BenchmarkTurnCoveredByGrant measures a turn a durable grant covers as
// its procedure's program (another text, a bound literal), run included,
// in process on the embedded store: with the authorization cache warm (no
// store read of the procedure), and with the store's authorization
// revision moved and polled before each turn (one read of the procedure,
// as every such turn made before the cache).
func BenchmarkTurnCoveredByGrant(b *testing.B) {
	ctx := context.Background()
	cs := &countedStore{Store: replaytest.OpenStore(b)}
	clk := &clock{now: time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)}
	svc := procedures.NewService(cs, procedures.Options{Now: clk.Now})
	typed := map[string]any{"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer"}}}
	if _, err := svc.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true, InputSchema: typed}, {Name: "fetch_logs", ReadOnly: true, InputSchema: typed}}, "tester"); err != nil {
		b.Fatal(err)
	}
	g := gate.New(replay.New(svc, sandbox.NewInProcess(), &replaytest.Recorder{}, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second}}), cs, gate.Options{})
	out, err := svc.Capture(ctx, procedures.CaptureRequest{Code: "j = tools.get_jobs(task_id=1)\nl = tools.fetch_logs(task_id=1)\nreturn [j, l]\n", Status: procedures.StatusSucceeded, SessionID: "capture"})
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.SetAutoRun(ctx, procedures.AutoRunRequest{Name: out.Procedure.Name, Enabled: true, Actor: "op"}); err != nil {
		b.Fatal(err)
	}
	turn := gate.TurnRequest{Code: "task = 5\na = tools.get_jobs(task_id=task)\nb = tools.fetch_logs(task_id=task)\nreturn [a, b]\n", SessionID: "s", Phase: audit.PhaseInteractive, Actor: "agent"}
	if err := svc.PollAuthorization(ctx); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		expired bool
	}{{"index", false}, {"store", true}} {
		b.Run(c.name, func(b *testing.B) {
			cs.Take()
			n := 0
			for b.Loop() {
				if c.expired {
					movedAndPolled(b, cs.Store, svc)
				}
				ans, err := g.Submit(ctx, turn)
				if err != nil || !ans.Ran() || ans.Decision.Reason != audit.ReasonDurableAutoRun {
					b.Fatalf("submit: %+v, %v", ans, err)
				}
				n++
			}
			b.ReportMetric(float64(strings.Count(cs.Take(), "Get×"+strconv.Itoa(n))), "procedure_reads/turn")
		})
	}
}
