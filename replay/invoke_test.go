package replay_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
)

func TestInvokeReadOnlyAutomaticAllowedAndCounted(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			p := e.Capture(replaytest.ReadOnlyCode)
			res := e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic,
				Arguments: map[string]any{"task_id": 42}, SessionID: "s-1", Cause: "input dataset unavailable", Actor: "planner"})

			d := res.Decision
			if d.Outcome != audit.Allowed || d.Reason != audit.ReasonReadOnly || d.ID == "" ||
				!slices.Equal(d.AllowedTools, []string{"fetch_logs", "get_jobs"}) || d.Actor != "planner" || d.CodeHash != p.CodeHash {
				t.Fatalf("decision %+v", d)
			}
			if got := e.Upstream.Tools(); !slices.Equal(got, []string{"get_jobs", "fetch_logs"}) {
				t.Fatalf("dispatched %v", got)
			}
			if len(res.Calls) != 2 || !res.Calls[0].OK || res.Calls[0].Tool != "get_jobs" {
				t.Fatalf("calls %+v", res.Calls)
			}
			m := res.Result.(map[string]any)
			if m["jobs"].(map[string]any)["args"].(map[string]any)["task_id"] != int64(42) {
				t.Fatalf("result %#v", res.Result)
			}
			ds := e.Decisions(p.Name)
			if len(ds) != 1 || ds[0].ID != d.ID {
				t.Fatalf("recorded decisions %+v", ds)
			}

			// Counted: use_count, last_used_at, and the frequency by usage key.
			after := e.Get(p.Name)
			if after.UseCount != 1 || after.LastUsedAt == nil || after.Frequency != 2 {
				t.Fatalf("after one replay: use_count %d, last_used_at %v, frequency %d", after.UseCount, after.LastUsedAt, after.Frequency)
			}
			if len(after.Causes) != 1 || after.Causes[0].Name != "input dataset unavailable" {
				t.Fatalf("causes %+v", after.Causes)
			}
			// The same session again: one more use, no more frequency.
			e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 42}, SessionID: "s-1"})
			if again := e.Get(p.Name); again.UseCount != 2 || again.Frequency != 2 {
				t.Fatalf("same session: use_count %d, frequency %d", again.UseCount, again.Frequency)
			}
		})
	}
}

func TestInvokeResultJSONShape(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode + "\nprint('hello')")
	res := e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "t"}})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"decision", "status", "result", "output", "calls", "error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("the 200 body lacks %q: %s", k, b)
		}
	}
	if m["error"] != nil || m["status"] != "succeeded" {
		t.Errorf("body %s", b)
	}
	c := m["calls"].([]any)[0].(map[string]any)
	if _, ok := c["duration_ms"]; !ok || c["tool"] != "get_jobs" || c["ok"] != true {
		t.Errorf("call %v", c)
	}
}

func TestInvokeStateChangingAutomaticDenied(t *testing.T) {
	for _, allowMutating := range []bool{false, true} {
		e := newEnv(t, sandbox.NewInProcess(), allowMutating)
		p := e.Capture(replaytest.StateChangingCode)
		if allowMutating {
			if _, _, err := e.Service.SetAutoRun(context.Background(), procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "op"}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1},
			ReviewedBy: "op", ReviewerHasGrantScope: true})
		d := e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}, audit.ReasonStateChangingAuto)
		pe := err.(*fault.Error)
		if pe.Details["suggestion"] == nil || d.Suggestion == "" || !strings.Contains(d.Suggestion, "interactive") {
			t.Fatalf("no suggestion: %+v", pe.Details)
		}
		if len(d.AllowedTools) != 0 || d.Phase != audit.PhaseAutomatic || d.CodeHash != p.CodeHash {
			t.Fatalf("decision %+v", d)
		}
		if ds := e.Decisions(p.Name); len(ds) != 2 || ds[0].Outcome != audit.Denied {
			t.Fatalf("recorded %+v", ds)
		}
		if got := e.Upstream.Tools(); len(got) != 0 {
			t.Fatalf("the dispatcher saw %v", got)
		}
		if e.Get(p.Name).UseCount != 0 {
			t.Fatal("a denied replay was counted")
		}
	}
}

func TestInvokeInteractive(t *testing.T) {
	ctx := context.Background()
	t.Run("mutating off", func(t *testing.T) {
		e := newEnv(t, sandbox.NewInProcess(), false)
		p := e.Capture(replaytest.StateChangingCode)
		e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
			ReviewedBy: "op", ReviewerHasGrantScope: true}, audit.ReasonStateChangingDisabled)
		if len(e.Upstream.Tools()) != 0 {
			t.Fatal("dispatched")
		}
	})
	t.Run("read-only", func(t *testing.T) {
		e := newEnv(t, sandbox.NewInProcess(), false)
		p := e.Capture(replaytest.ReadOnlyCode)
		res := e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}})
		if res.Decision.Reason != audit.ReasonReadOnly {
			t.Fatal(res.Decision)
		}
	})
	for _, rn := range runners() {
		t.Run("grant/"+rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, true)
			p := e.Capture(replaytest.StateChangingCode)
			e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}}, audit.ReasonReviewRequired)
			if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "op", Reason: "safe"}); err != nil {
				t.Fatal(err)
			}
			res := e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}})
			if res.Decision.Reason != audit.ReasonDurableAutoRun || !slices.Equal(res.Decision.AllowedTools, []string{"get_jobs", "kill_job"}) {
				t.Fatalf("decision %+v", res.Decision)
			}
			if !slices.Equal(e.Upstream.Tools(), []string{"get_jobs", "kill_job"}) {
				t.Fatalf("dispatched %v", e.Upstream.Tools())
			}
		})
	}
	t.Run("reviewed_by", func(t *testing.T) {
		e := newEnv(t, sandbox.NewInProcess(), true)
		p := e.Capture(replaytest.StateChangingCode)
		e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
			ReviewedBy: "alice"}, audit.ReasonReviewRequired)
		if len(e.Upstream.Tools()) != 0 {
			t.Fatal("a review without the grant scope ran")
		}
		res := e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
			ReviewedBy: "alice", ReviewerHasGrantScope: true, Actor: "bob"})
		d := res.Decision
		if d.Reason != audit.ReasonOperatorReviewed || d.Actor != "bob" || !strings.Contains(d.Note, "alice") {
			t.Fatalf("decision %+v", d)
		}
		if !e.Upstream.Saw("kill_job") {
			t.Fatal("kill_job was not dispatched")
		}
	})
}

func TestInvokeInvalidArgumentsNoDecision(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	cases := []struct {
		name string
		args map[string]any
		path string
	}{
		{"missing", nil, ""},
		{"extra", map[string]any{"task_id": 1, "rm": "-rf"}, ""},
		{"not JSON", map[string]any{"task_id": func() {}}, ""},
		{"number out of range", map[string]any{"task_id": json.Number("1e400")}, "/task_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: c.args})
			if fault.ErrorCode(err) != fault.CodeInvalidArguments {
				t.Fatalf("err = %v", err)
			}
			list, ok := err.(*fault.Error).Details["errors"].([]replay.ArgumentError)
			if !ok || len(list) == 0 || list[0].Message == "" || (c.path != "" && list[0].Path != c.path) {
				t.Fatalf("details %+v", err.(*fault.Error).Details)
			}
		})
	}
	if ds := e.Decisions(p.Name); len(ds) != 0 {
		t.Fatalf("decisions were recorded: %+v", ds)
	}
	if len(e.Upstream.Tools()) != 0 {
		t.Fatal("dispatched")
	}
}

func TestInvokeArgumentsAgainstSuppliedSchema(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	out, err := e.Service.Capture(context.Background(), procedures.CaptureRequest{Code: replaytest.ReadOnlyCode, ParamsSchema: map[string]any{
		"type": "object", "properties": map[string]any{"task_id": map[string]any{"type": "integer", "minimum": 1}},
		"additionalProperties": false,
	}})
	if err != nil {
		t.Fatal(err)
	}
	name := out.Procedure.Name
	_, err = e.Invoke(replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": "x"}})
	list, _ := err.(*fault.Error).Details["errors"].([]replay.ArgumentError)
	if fault.ErrorCode(err) != fault.CodeInvalidArguments || len(list) != 1 || list[0].Path != "/task_id" {
		t.Fatalf("err = %v, errors %+v", err, list)
	}
	_, err = e.Invoke(replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 0}})
	if fault.ErrorCode(err) != fault.CodeInvalidArguments {
		t.Fatalf("minimum: err = %v", err)
	}
	res := e.MustSucceed(replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 9007199254740993}})
	got := res.Result.(map[string]any)["jobs"].(map[string]any)["args"].(map[string]any)["task_id"]
	if got != int64(9007199254740993) {
		t.Fatalf("a big integer argument arrived as %#v", got)
	}
}

func TestInvokeRequestValidation(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	for _, req := range []replay.InvokeRequest{
		{Name: p.Name},
		{Name: p.Name, Phase: "later"},
		{Phase: audit.PhaseAutomatic},
		{Name: p.Name, Phase: audit.PhaseAutomatic, SessionID: strings.Repeat("s", 600)},
	} {
		if _, err := e.Invoke(req); fault.ErrorCode(err) != fault.CodeInvalid {
			t.Errorf("Invoke(%+v) err = %v, want invalid_request", req.Phase, err)
		}
	}
	if _, err := e.Invoke(replay.InvokeRequest{Name: "proc__nope__none", Phase: audit.PhaseAutomatic}); fault.ErrorCode(err) != fault.CodeNotFound {
		t.Errorf("unknown procedure: %v", err)
	}
	if ds := e.Decisions(""); len(ds) != 0 {
		t.Fatalf("decisions recorded: %+v", ds)
	}
}

func TestInvokeFailedVersionDenied(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.CaptureStatus(replaytest.ReadOnlyCode, procedures.StatusFailed)
	e.MustDeny(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}, audit.ReasonProcedureNotSucceeded)
	if len(e.Upstream.Tools()) != 0 {
		t.Fatal("dispatched")
	}
}

func TestInvokeFailedRunNotCounted(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			e.Upstream.Fail = map[string]string{"fetch_logs": "logs are gone"}
			p := e.Capture(replaytest.ReadOnlyCode)
			res, err := e.Invoke(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}, SessionID: "s-9"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != replay.StatusFailed || res.Error == nil || res.Error.Code != sandbox.ToolFailed || res.Error.Tool != "fetch_logs" ||
				!strings.Contains(res.Error.Message, "logs are gone") || res.Result != nil {
				t.Fatalf("result %+v, error %+v", res, res.Error)
			}
			if after := e.Get(p.Name); after.UseCount != 0 || after.LastUsedAt != nil || after.Frequency != 1 {
				t.Fatalf("a failed run was counted: %+v", after)
			}
		})
	}
}

// failingDecisions is the real embedded store with AppendDecision and
// RecordRun failing: fault injection for the fail-closed rule.
type failingDecisions struct{ procedures.Store }

func (failingDecisions) AppendDecision(context.Context, audit.Decision) error {
	return fault.Errorf(fault.CodeUnavailable, "the store cannot be reached")
}

func (failingDecisions) RecordRun(context.Context, procedures.RunRecord) ([]procedures.UseResult, error) {
	return nil, fault.Errorf(fault.CodeUnavailable, "the store cannot be reached")
}

// TestInvokeFailsClosedWhenTheDecisionIsNotRecorded: a state-changing
// run whose decision cannot be stored runs nothing; a read-only run,
// whose decision is stored with it (docs/design.md "One commit per
// run"), answers nothing when it cannot be stored.
func TestInvokeFailsClosedWhenTheDecisionIsNotRecorded(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), true)
	ro, sc := e.Capture(replaytest.ReadOnlyCode), e.Capture(replaytest.StateChangingCode)
	broken := newEnvOn(t, e.Store, failingDecisions{e.Store}, sandbox.NewInProcess(), true)
	res, err := broken.Invoke(replay.InvokeRequest{Name: sc.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
		ReviewedBy: "op", ReviewerHasGrantScope: true})
	if fault.ErrorCode(err) != fault.CodeUnavailable || res != nil {
		t.Fatalf("state-changing: %+v, %v", res, err)
	}
	if len(broken.Upstream.Tools()) != 0 {
		t.Fatal("a state-changing run ran without a recorded decision")
	}
	res, err = broken.Invoke(replay.InvokeRequest{Name: ro.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}})
	if fault.ErrorCode(err) != fault.CodeUnavailable || res != nil {
		t.Fatalf("read-only: answered %+v, %v without its record", res, err)
	}
}

func TestInvokeCatalogueChangeReclassifies(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	req := replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}
	e.MustSucceed(req)
	tools := slices.Clone(replaytest.DefaultTools)
	for i := range tools {
		if tools[i].Name == "fetch_logs" {
			tools[i].ReadOnly = false
		}
	}
	if _, err := e.Service.PutCatalogue(ctx, tools, "tester"); err != nil {
		t.Fatal(err)
	}
	before := len(e.Upstream.Tools())
	e.MustDeny(req, audit.ReasonStateChangingAuto)
	if len(e.Upstream.Tools()) != before {
		t.Fatal("dispatched after the flip")
	}
	// A tool that leaves the catalogue is unknown: the replay is refused
	// as such, in either phase, and says which tool.
	if _, err := e.Service.PutCatalogue(ctx, []procedures.Tool{{Name: "get_jobs", ReadOnly: true}}, "tester"); err != nil {
		t.Fatal(err)
	}
	if d := e.MustDeny(req, audit.ReasonUnknownTool); !strings.Contains(d.Suggestion, "fetch_logs") {
		t.Fatalf("suggestion %q", d.Suggestion)
	}
	req.Phase, req.ReviewedBy, req.ReviewerHasGrantScope = audit.PhaseInteractive, "op", true
	e.MustDeny(req, audit.ReasonUnknownTool)
	if len(e.Upstream.Tools()) != before {
		t.Fatal("dispatched a replay calling an unknown tool")
	}
}

func TestInvokeGrantInactiveAfterPromote(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	p := e.Capture(replaytest.StateChangingCode)
	if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: p.Name, Enabled: true, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	req := replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}}
	if res := e.MustSucceed(req); res.Decision.Reason != audit.ReasonDurableAutoRun {
		t.Fatal(res.Decision)
	}
	v2 := e.Capture(replaytest.StateChangingCode + "\n\"second version\"")
	if v2.CodeHash != p.CodeHash {
		t.Fatal("the second capture became current by itself")
	}
	vs, _ := e.Service.Versions(ctx, p.Name)
	if _, _, err := e.Service.Promote(ctx, procedures.PromoteRequest{Name: p.Name, CodeHash: vs[1].CodeHash, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	n := len(e.Upstream.Tools())
	d := e.MustDeny(req, audit.ReasonReviewRequired)
	if d.CodeHash != vs[1].CodeHash {
		t.Fatalf("decided on %s, want the promoted %s", d.CodeHash, vs[1].CodeHash)
	}
	if len(e.Upstream.Tools()) != n {
		t.Fatal("dispatched")
	}
}

// TestStoredCodeThatDoesNotMatchIsADeniedDecision: a procedure whose stored
// code analyses to another signature (a store written around the service)
// does not run; the error while deciding is recorded as a denial.
func TestStoredCodeThatDoesNotMatchIsADeniedDecision(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	ctx := context.Background()
	code := "a = tools.get_jobs(task_id=task_id)\ntools.kill_job(panda_id=a)\n"
	_, err := e.Store.Capture(ctx, procedures.CaptureInput{
		Name: "proc__fetch_logs__get_jobs", Signature: []string{"fetch_logs", "get_jobs"},
		Version: procedures.Version{CodeHash: signature.CodeHash(code), Code: code, Dialect: "starlark",
			Parameters: []string{"task_id"}, Status: procedures.StatusSucceeded, CapturedAt: time.Now()},
		UsageKey: "k", At: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Invoke(replay.InvokeRequest{Name: "proc__fetch_logs__get_jobs", Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}})
	if fault.ErrorCode(err) != fault.CodeInternal {
		t.Fatalf("err = %v, want internal", err)
	}
	if len(e.Upstream.Tools()) != 0 {
		t.Fatalf("the dispatcher saw %v", e.Upstream.Tools())
	}
	ds := e.Decisions("proc__fetch_logs__get_jobs")
	if len(ds) != 1 || ds[0].Outcome != audit.Denied || ds[0].Reason != audit.ReasonDecisionError {
		t.Fatalf("decisions = %+v, want one denied decision_error", ds)
	}
}

// TestStoredCodeBesideAnAnalysedTwinDoesNotRun: a version stored around the
// service under the code hash of a procedure just run, whose code differs
// from that procedure's only after its first lines, does not run: its code
// is analysed as it is (the analysis of the twin, kept from its run, is
// not taken for it) and found not to match its hash; nothing is
// dispatched and the decision is a denial.
func TestStoredCodeBesideAnAnalysedTwinDoesNotRun(t *testing.T) {
	e := newEnv(t, pool, false)
	ctx := context.Background()
	p := e.Capture(replaytest.ReadOnlyCode)
	args := map[string]any{"task_id": 7}
	e.MustSucceed(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: args})
	twin := p.Name + "_twin"
	if _, err := e.Store.Capture(ctx, procedures.CaptureInput{
		Name: twin, Signature: p.Signature,
		Version: procedures.Version{CodeHash: p.CodeHash, Code: replaytest.ReadOnlyCode + "\n# changed after it was hashed\n", Dialect: "starlark",
			Parameters: []string{"task_id"}, Status: procedures.StatusSucceeded, CapturedAt: time.Now()},
		UsageKey: "k", At: time.Now(),
	}); err != nil {
		t.Fatal(err)
	}
	n := len(e.Upstream.Tools())
	_, err := e.Invoke(replay.InvokeRequest{Name: twin, Phase: audit.PhaseAutomatic, Arguments: args})
	if fault.ErrorCode(err) != fault.CodeInternal {
		t.Fatalf("err = %v, want internal", err)
	}
	if got := e.Upstream.Tools(); len(got) != n {
		t.Fatalf("the dispatcher saw %v", got[n:])
	}
	if ds := e.Decisions(twin); len(ds) != 1 || ds[0].Outcome != audit.Denied || ds[0].Reason != audit.ReasonDecisionError {
		t.Fatalf("decisions = %+v, want one denied decision_error", ds)
	}
}
