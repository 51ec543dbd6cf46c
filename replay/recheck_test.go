package replay_test

import (
	"context"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/sandbox"
)

// wideningRunner is a real sandbox runner whose gate is handed a wider
// allow-set than the decision's: a Runner that gets the allow-set wrong.
type wideningRunner struct {
	sandbox.Runner
	extra []string
}

func (w wideningRunner) Run(ctx context.Context, req sandbox.Request, tools sandbox.ToolCaller) sandbox.Result {
	req.Allowed = append(append([]string(nil), req.Allowed...), w.extra...)
	return w.Runner.Run(ctx, req, tools)
}

// TestAllowSetRecheckedAfterTheRunner: the Replayer's own allow-set check
// holds when the sandbox admits a call it should not have: the call is
// refused, reaches no tool, and the run is not counted.
func TestAllowSetRecheckedAfterTheRunner(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, wideningRunner{Runner: rn.r, extra: []string{"kill_job"}}, true)
			p := e.Capture(`jobs = tools.get_jobs(task_id=task_id)
getattr(tools, "kill_" + "job")(job_id=task_id)
return jobs`)
			if !p.ReadOnly {
				t.Fatalf("%s is not read-only by its signature", p.Name)
			}
			res := e.mustFailWith(replay.InvokeRequest{Name: p.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
				sandbox.ToolRefused, "kill_job")
			if len(res.Decision.AllowedTools) != 1 || res.Decision.AllowedTools[0] != "get_jobs" {
				t.Fatalf("decision %+v", res.Decision)
			}
			if e.Upstream.Saw("kill_job") || !e.Upstream.Saw("get_jobs") {
				t.Fatalf("dispatched %v", e.Upstream.Tools())
			}
			if e.Get(p.Name).UseCount != 0 {
				t.Fatal("a refused run was counted")
			}
		})
	}
}
