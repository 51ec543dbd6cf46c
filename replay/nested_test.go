package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/replay"

	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
)

// callerOf returns code that calls get_jobs and then the procedure inner.
func callerOf(inner string) string {
	return fmt.Sprintf("jobs = tools.get_jobs(task_id=task_id)\nreturn {\"jobs\": jobs, \"inner\": tools.%s(task_id=task_id)}", inner)
}

func TestNestedAllowed(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, false)
			inner := e.Capture(replaytest.ReadOnlyCode)
			outer := e.Capture(callerOf(inner.Name))
			if !outer.ReadOnly || !outer.Exposed {
				t.Fatalf("outer %+v", outer)
			}
			res := e.MustSucceed(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 7}, SessionID: "s"})
			if got := strings.Join(e.Upstream.Tools(), ","); got != "get_jobs,get_jobs,fetch_logs" {
				t.Fatalf("dispatched %s", got)
			}
			in := res.Result.(map[string]any)["inner"].(map[string]any)
			if in["logs"].(map[string]any)["tool"] != "fetch_logs" {
				t.Fatalf("inner result %v", in)
			}
			if len(res.Calls) != 2 || res.Calls[1].Tool != inner.Name || !res.Calls[1].OK {
				t.Fatalf("calls %+v", res.Calls)
			}
			// Each replay has its own recorded decision and is counted.
			for _, name := range []string{outer.Name, inner.Name} {
				ds := e.Decisions(name)
				if len(ds) != 1 || ds[0].Reason != audit.ReasonReadOnly {
					t.Fatalf("%s decisions %+v", name, ds)
				}
				if e.Get(name).UseCount != 1 {
					t.Fatalf("%s not counted", name)
				}
			}
		})
	}
}

func TestNestedArgumentsValidated(t *testing.T) {
	e := newEnv(t, sandbox.NewInProcess(), false)
	inner := e.Capture(replaytest.ReadOnlyCode)
	outer := e.Capture(fmt.Sprintf("tools.get_jobs(task_id=task_id)\nreturn tools.%s(wrong=1)", inner.Name))
	res := e.mustFailWith(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
		sandbox.ToolFailed, inner.Name)
	if !strings.Contains(res.Error.Message, "input schema") {
		t.Fatalf("message %q", res.Error.Message)
	}
	if len(e.Decisions(inner.Name)) != 0 {
		t.Fatal("a decision was recorded for invalid nested arguments")
	}
}

func TestNestedDenied(t *testing.T) {
	ctx := context.Background()
	t.Run("review required", func(t *testing.T) {
		for _, rn := range runners() {
			t.Run(rn.name, func(t *testing.T) {
				// The outer run holds an active grant; the state-changing
				// procedure it calls has none, and nobody reviewed.
				e := newEnv(t, rn.r, true)
				inner := e.Capture(replaytest.StateChangingCode)
				outer := e.Capture(callerOf(inner.Name))
				if _, _, err := e.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: outer.Name, Enabled: true, Actor: "op"}); err != nil {
					t.Fatal(err)
				}
				res := e.mustFailWith(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1}},
					sandbox.ToolRefused, inner.Name)
				if res.Decision.Reason != audit.ReasonDurableAutoRun || !strings.Contains(res.Error.Message, audit.ReasonReviewRequired) {
					t.Fatalf("decision %+v, error %+v", res.Decision, res.Error)
				}
				if ds := e.Decisions(inner.Name); len(ds) != 1 || ds[0].Reason != audit.ReasonReviewRequired {
					t.Fatalf("inner decisions %+v", ds)
				}
				if e.Upstream.Saw("kill_job") {
					t.Fatal("the dispatcher saw kill_job")
				}
			})
		}
	})
	t.Run("not succeeded", func(t *testing.T) {
		e := newEnv(t, sandbox.NewInProcess(), false)
		inner := e.CaptureStatus(replaytest.ReadOnlyCode, procedures.StatusFailed)
		outer := e.Capture(callerOf(inner.Name))
		res := e.mustFailWith(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
			sandbox.ToolRefused, inner.Name)
		if !strings.Contains(res.Error.Message, audit.ReasonProcedureNotSucceeded) {
			t.Fatalf("error %+v", res.Error)
		}
		if e.Upstream.Saw("fetch_logs") {
			t.Fatal("the failed procedure ran")
		}
	})
	t.Run("state-changing excluded from a read-only run", func(t *testing.T) {
		// An outer procedure calling a state-changing one is itself
		// state-changing: with a review it may run, but in the automatic
		// phase nothing runs at all.
		e := newEnv(t, sandbox.NewInProcess(), true)
		inner := e.Capture(replaytest.StateChangingCode)
		outer := e.Capture(callerOf(inner.Name))
		e.MustDeny(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}, audit.ReasonStateChangingAuto)
		res := e.MustSucceed(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseInteractive, Arguments: map[string]any{"task_id": 1},
			ReviewedBy: "op", ReviewerHasGrantScope: true})
		if ds := e.Decisions(inner.Name); len(ds) != 1 || ds[0].Reason != audit.ReasonOperatorReviewed {
			t.Fatalf("inner decisions %+v (outer %+v)", ds, res.Decision)
		}
		if !e.Upstream.Saw("kill_job") {
			t.Fatal("the reviewed nested run did not reach kill_job")
		}
	})
}

// chainOf captures a chain of n+1 procedures, each calling the next: it
// returns their names outermost first (names[n] calls only tools).
func chainOf(e *env, n int) []string {
	names := make([]string, n+1)
	names[n] = e.Capture(replaytest.ReadOnlyCode).Name
	for i := n - 1; i >= 0; i-- {
		names[i] = e.Capture(callerOf(names[i+1])).Name
	}
	return names
}

func TestNestedDepth(t *testing.T) {
	for _, rn := range runners() {
		t.Run(rn.name, func(t *testing.T) {
			e := newEnv(t, rn.r, true)
			names := chainOf(e, procedures.MaxNesting+1) // names[0] .. names[5]
			req := func(name string) replay.InvokeRequest {
				return replay.InvokeRequest{Name: name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}}
			}
			// names[1] nests exactly MaxNesting deep: allowed, read-only.
			e.MustSucceed(req(names[1]))
			if !e.Upstream.Saw("fetch_logs") {
				t.Fatal("the innermost procedure did not run")
			}
			// names[0] nests one level too deep: its own reason, in both
			// phases, and nothing runs.
			before := len(e.Upstream.Tools())
			e.MustDeny(req(names[0]), audit.ReasonNestingTooDeep)
			r := req(names[0])
			r.Phase, r.ReviewedBy, r.ReviewerHasGrantScope = audit.PhaseInteractive, "op", true
			e.MustDeny(r, audit.ReasonNestingTooDeep)
			if len(e.Upstream.Tools()) != before {
				t.Fatal("a chain too deep reached a tool")
			}
			// The run-time check stays as a second line: a call five
			// levels down is refused and recorded.
			c := replay.NewChain(r, "k", names[:procedures.MaxNesting+1])
			_, err := e.Replayer.CallNested(context.Background(), c, names[5], map[string]any{"task_id": 1})
			if se, ok := err.(*sandbox.Error); !ok || se.Code != sandbox.ToolRefused || !strings.Contains(se.Message, "nest more than 4") {
				t.Fatalf("err = %v", err)
			}
			ds := e.Decisions(names[5])
			if len(ds) == 0 || ds[0].Reason != audit.ReasonNestingTooDeep || ds[0].Outcome != audit.Denied {
				t.Fatalf("innermost decisions %+v", ds)
			}
		})
	}
}

func TestNestedCycleRefused(t *testing.T) {
	// A name is a function of its signature, so no captured procedure can
	// reach itself; the run-time check is tested on the chain directly.
	e := newEnv(t, sandbox.NewInProcess(), false)
	p := e.Capture(replaytest.ReadOnlyCode)
	c := replay.NewChain(replay.InvokeRequest{Phase: audit.PhaseAutomatic, Actor: "t"}, "k", []string{"proc__outer", p.Name, "proc__mid"})
	_, err := e.Replayer.CallNested(context.Background(), c, p.Name, map[string]any{"task_id": 1})
	se, ok := err.(*sandbox.Error)
	if !ok || se.Code != sandbox.ToolRefused || se.Tool != p.Name || !strings.Contains(se.Message, "cycle") {
		t.Fatalf("err = %v", err)
	}
	ds := e.Decisions(p.Name)
	if len(ds) != 1 || ds[0].Reason != audit.ReasonCycle || ds[0].CodeHash != p.CodeHash {
		t.Fatalf("decisions %+v", ds)
	}
	if len(e.Upstream.Tools()) != 0 {
		t.Fatal("dispatched")
	}
}

func TestNestedPoolExhaustedTimesOut(t *testing.T) {
	// A pool with one worker cannot run a nested replay while its caller
	// holds the worker: the nested run waits within the caller's deadline
	// and fails, never deadlocks.
	small, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	e := newEnv(t, small, false)
	e.Replayer.SetTimeout(500e6) // 0.5s
	inner := e.Capture(replaytest.ReadOnlyCode)
	outer := e.Capture(callerOf(inner.Name))
	res := e.mustFailWith(replay.InvokeRequest{Name: outer.Name, Phase: audit.PhaseAutomatic, Arguments: map[string]any{"task_id": 1}},
		sandbox.Timeout, inner.Name)
	_ = res
}
