package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

func (e *env) setRetired(name string, retired bool) {
	e.T.Helper()
	if _, _, err := e.Service.SetRetired(context.Background(), procedures.RetireRequest{Name: name, Retired: retired, Reason: "superseded", Actor: "admin"}); err != nil {
		e.T.Fatal(err)
	}
}

// TestInvokeRetiredDenied: a retired procedure is denied with reason retired
// in every phase, even with a grant and a reviewer, and reaches no tool;
// brought back, it runs again.
func TestInvokeRetiredDenied(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), true)
	ro := e.Capture(replaytest.ReadOnlyCode)
	sc := e.Capture(replaytest.StateChangingCode)
	if _, _, err := e.Service.SetAutoRun(context.Background(), procedures.AutoRunRequest{Name: sc.Name, Enabled: true, Actor: "op"}); err != nil {
		t.Fatal(err)
	}
	e.setRetired(ro.Name, true)
	e.setRetired(sc.Name, true)
	args := map[string]any{"task_id": 1}
	for _, req := range []replay.InvokeRequest{
		{Name: ro.Name, Phase: audit.PhaseAutomatic, Arguments: args},
		{Name: ro.Name, Phase: audit.PhaseInteractive, Arguments: args},
		{Name: sc.Name, Phase: audit.PhaseInteractive, Arguments: args, ReviewedBy: "op", ReviewerHasGrantScope: true},
	} {
		d := e.MustDeny(req, audit.ReasonRetired)
		if !strings.Contains(d.Suggestion, "retired") || len(d.AllowedTools) != 0 {
			t.Fatalf("decision %+v", d)
		}
	}
	if got := e.Upstream.Tools(); len(got) != 0 {
		t.Fatalf("the dispatcher saw %v", got)
	}
	if p := e.Get(ro.Name); p.Exposed || p.Retired == nil || p.UseCount != 0 {
		t.Fatalf("retired procedure: exposed %v, retired %+v, use count %d", p.Exposed, p.Retired, p.UseCount)
	}
	e.setRetired(ro.Name, false)
	e.MustSucceed(replay.InvokeRequest{Name: ro.Name, Phase: audit.PhaseAutomatic, Arguments: args})
	if p := e.Get(ro.Name); !p.Exposed || p.Retired != nil {
		t.Fatalf("brought back: exposed %v, retired %+v", p.Exposed, p.Retired)
	}
}

// TestNestedRetiredRefused: a procedure that calls a retired one is no
// longer exposed, and its invoke is denied up front with reason
// calls_retired_procedure, reaching no tool; when the callee comes back,
// so does the caller.
func TestNestedRetiredRefused(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	inner := e.Capture(replaytest.ReadOnlyCode)
	outer := e.Capture(callerOf(inner.Name))
	e.setRetired(inner.Name, true)
	if p := e.Get(outer.Name); p.Exposed || p.Retired != nil || len(p.StateChangingTools) != 0 {
		t.Fatalf("caller of a retired procedure: exposed %v, retired %+v, state-changing %v", p.Exposed, p.Retired, p.StateChangingTools)
	}
	req := replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}
	e.MustDeny(req, audit.ReasonCallsRetired)
	if got := e.Upstream.Tools(); len(got) != 0 {
		t.Fatalf("dispatched %v", got)
	}
	e.setRetired(inner.Name, false)
	if p := e.Get(outer.Name); !p.Exposed {
		t.Fatal("the caller is not exposed again once its callee is back")
	}
	e.MustSucceed(req)
	if got := strings.Join(e.Upstream.Tools(), ","); got != "get_jobs,get_jobs,fetch_logs" {
		t.Fatalf("dispatched %s", got)
	}
}
