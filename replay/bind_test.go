package replay_test

import (
	"context"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/binding"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/signature"
)

// TestNestedChangedMidRun: a run allowed by a durable grant calls a nested
// procedure whose current version changed after the decision (promoted
// mid-run, and granted again): the nested call is refused nested_changed
// and recorded so, though the new version's own grant would allow it —
// the outer grant covered the version it was bound to, nothing else — and
// the state-changing tool never reaches the dispatcher.
func TestNestedChangedMidRun(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, sandbox.NewInProcess(), true)
	innerCode := "tools.kill_job(job_id=task_id)\nreturn tools.get_jobs(task_id=task_id)"
	inner := e.Capture(innerCode)
	outer := e.Capture(callerOf(inner.Name))
	for _, name := range []string{inner.Name, outer.Name} {
		if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: name, Enabled: true, Actor: "op"}); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	e.Upstream.OnCall = func(tool string) {
		once.Do(func() {
			v2 := "\"another version\"\n" + innerCode
			e.Capture(v2)
			if _, _, err := e.Service.Promote(ctx, procedures.PromoteRequest{Name: inner.Name, CodeHash: signature.CodeHash(v2), Actor: "op"}); err != nil {
				t.Error(err)
			}
			if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: inner.Name, Enabled: true, Actor: "op"}); err != nil {
				t.Error(err)
			}
		})
	}
	res := e.mustFailWith(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}},
		sandbox.ToolRefused, inner.Name)
	if res.Decision.Reason != audit.ReasonDurableAutoRun {
		t.Fatalf("outer decision %+v", res.Decision)
	}
	ds := e.Decisions(inner.Name)
	if len(ds) == 0 || ds[0].Reason != binding.ReasonNestedChanged || ds[0].Outcome != audit.Denied {
		t.Fatalf("inner decisions %+v, want the newest denied nested_changed", ds)
	}
	if e.Upstream.Saw("kill_job") {
		t.Fatal("the dispatcher saw kill_job")
	}
}
