package mcpserve

import (
	"context"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
)

// TestAutoRunNeedsGrant: set_procedure_auto_run needs the grant scope and
// nothing else. A holder with invoke but not grant is refused and nothing
// is granted or decided; a holder with grant but not invoke grants and
// revokes, audited under its name.
func TestAutoRunNeedsGrant(t *testing.T) {
	e := newEnv(t, false)
	ro := e.capture(readOnlyCode)
	ctx := context.Background()

	invoker := e.connect("/mcp", "invoker", nil)
	res := call(t, invoker, AutoRunToolName, map[string]any{"name": ro.Name, "enabled": true, "reason": "try"})
	if !res.IsError || !strings.Contains(text(res), "grant") {
		t.Fatalf("a holder without grant set auto-run: error %v, %s", res.IsError, text(res))
	}
	if p, err := e.svc.Get(ctx, ro.Name); err != nil || p.AutoRun.Active || p.Grant != nil {
		t.Fatalf("after the refused call: auto_run %+v, grant %+v, %v", p.AutoRun, p.Grant, err)
	}
	if ds, _ := e.svc.Decisions(ctx, audit.DecisionFilter{Procedure: ro.Name}); len(ds) != 0 {
		t.Fatalf("a refused call was decided: %+v", ds)
	}

	granter := e.connect("/mcp", "granter", nil)
	for _, enabled := range []bool{true, false} {
		res = call(t, granter, AutoRunToolName, map[string]any{"name": ro.Name, "enabled": enabled, "reason": "reviewed"})
		if res.IsError {
			t.Fatalf("a grant holder set auto-run %v: %s", enabled, text(res))
		}
		p, err := e.svc.Get(ctx, ro.Name)
		if err != nil || p.AutoRun.Active != enabled {
			t.Fatalf("after enabled=%v: auto_run %+v, %v", enabled, p.AutoRun, err)
		}
	}
	ds, err := e.svc.Decisions(ctx, audit.DecisionFilter{Procedure: ro.Name})
	if err != nil || len(ds) != 2 || ds[0].Actor != "granter" || ds[1].Actor != "granter" {
		t.Fatalf("decisions %+v, %v; want a grant and a revoke by granter", ds, err)
	}
	if len(e.up.seen()) != 0 {
		t.Fatalf("the upstream saw %v", e.up.seen())
	}
}
