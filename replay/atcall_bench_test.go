package replay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/audit"
	"github.com/procgraph/procgraph/decide"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/replay/replaytest"
	"github.com/procgraph/procgraph/sandbox"
	"github.com/procgraph/procgraph/usage"
)

// readsThenKill reads count times, then kills: the block of the resume
// benchmark.
const readsThenKill = `n = 0
for i in range(count):
    jobs = tools.get_jobs(task_id=i)
    n += len(jobs)
return tools.kill_job(panda_id=n)`

// BenchmarkAtCallResume is the cost of a resume's replay of N recorded
// reads (docs/benchmarks.md "Review at the call"), side by side with the
// same block whose N reads are dispatched to an in-process dispatcher that
// answers at once: each iteration runs both, one after the other, under
// the same load. It reports the time of each run and extra-µs/read, the
// resume's time beyond the dispatched run's, per read: what answering a
// read from the record costs beyond dispatching it (the block's own CPU
// is in both). Both runs end with the kill dispatched and the run's result
// recorded on its decision.
func BenchmarkAtCallResume(b *testing.B) {
	for _, rn := range []struct {
		name string
		r    sandbox.Runner
	}{{"pool", pool}, {"inprocess", sandbox.NewInProcess()}} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/reads=%d", rn.name, n), func(b *testing.B) {
				benchResume(b, rn.r, n)
			})
		}
	}
}

func benchResume(b *testing.B, runner sandbox.Runner, n int) {
	ctx := context.Background()
	st := replaytest.OpenStore(b)
	svc := procedures.NewService(st, procedures.Options{})
	if _, err := svc.PutCatalogue(ctx, replaytest.DefaultTools, "tester"); err != nil {
		b.Fatal(err)
	}
	up := replay.NewFuncDispatcher(map[string]replay.ToolFunc{
		"get_jobs": func(context.Context, map[string]any) (any, error) { return []any{job(1, 0)}, nil },
		"kill_job": func(context.Context, map[string]any) (any, error) { return map[string]any{"done": true}, nil },
	})
	r := replay.New(svc, runner, up, replay.Options{Limits: sandbox.Limits{Timeout: 20 * time.Second, MaxCalls: 2 * n}})
	blk, err := r.PrepareBlock(ctx, readsThenKill, "", map[string]any{"count": n})
	if err != nil {
		b.Fatal(err)
	}
	allowed := replay.AllowSet(blk.Analysis.Signature, blk.Class, decide.Verdict{Outcome: audit.Allowed, StateChanging: true})
	d, err := r.Record(ctx, audit.Decision{Kind: audit.KindTurn, Procedure: blk.Name, CodeHash: blk.Analysis.CodeHash,
		Phase: audit.PhaseInteractive, Outcome: audit.Allowed, Reason: audit.ReasonOperatorApproved,
		Actor: "agent", Session: "s", AllowedTools: allowed})
	if err != nil {
		b.Fatal(err)
	}
	req := replay.RunRequest{Block: blk, Decision: d, Allowed: allowed, UsageKey: usage.UsageKey("s", ""), Pending: &replay.Pending{},
		Request: replay.InvokeRequest{Name: blk.Name, Phase: audit.PhaseInteractive, SessionID: "s", Actor: "agent"}}
	first, err := r.RunAtCall(ctx, req)
	if err != nil || first.Pause == nil || first.Pause.Position != n {
		b.Fatalf("RunAtCall = pause %+v, result %+v, %v; want a pause after %d reads", first.Pause, first.Result, err, n)
	}
	p := first.Pause
	var dispatched, resumed time.Duration
	runs := 0
	for b.Loop() {
		start := time.Now()
		out, _ := r.RunBlock(ctx, req)
		mid := time.Now()
		res, err := r.ResumeAtCall(ctx, req, p, p.Approval(false))
		end := time.Now()
		if out.Status != replay.StatusSucceeded || err != nil || res.Result == nil || res.Result.Status != replay.StatusSucceeded {
			b.Fatalf("dispatched %+v; resumed %+v, %v", out, res, err)
		}
		dispatched += mid.Sub(start)
		resumed += end.Sub(mid)
		runs++
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(runs) }
	b.ReportMetric(us(dispatched), "dispatched-µs/run")
	b.ReportMetric(us(resumed), "resumed-µs/run")
	b.ReportMetric((us(resumed)-us(dispatched))/float64(n), "extra-µs/read")
}
