package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

const (
	tenCalls = `out = []
for i in range(10):
    out.append(tools.noop(i=i, task_id=task_id)["ok"])
return {"task_id": task_id, "n": len(out)}`
	noCalls = `out = []
for i in range(10):
    out.append({"ok": True}["ok"])
return {"task_id": task_id, "n": len(out)}`
)

var noop = sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
	return map[string]any{"ok": true}, nil
})

func benchRequest(src string) sandbox.Request {
	return sandbox.Request{Filename: "proc__bench.star", Source: src, Args: map[string]any{"task_id": int64(42)}, Allowed: []string{"noop"}}
}

// perRun times n runs of req on r.
func perRun(b *testing.B, r sandbox.Runner, req sandbox.Request, n int) time.Duration {
	start := time.Now()
	for range n {
		if res := r.Run(context.Background(), req, noop); res.Err != nil {
			b.Fatal(errString(res.Err))
		}
	}
	return time.Since(start) / time.Duration(n)
}

// BenchmarkRun replays a 10-call procedure against a no-op ToolCaller.
// ns/call is the cost of one tool call: (a run with 10 calls − the same
// run without them) / 10.
func BenchmarkRun(b *testing.B) {
	req := benchRequest(tenCalls)
	base := benchRequest(noCalls)
	b.Run("in-process", func(b *testing.B) {
		r := sandbox.NewInProcess()
		baseline := perRun(b, r, base, 2000)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if res := r.Run(context.Background(), req, noop); res.Err != nil || len(res.Calls) != 10 {
				b.Fatal(errString(res.Err))
			}
		}
		reportPerCall(b, baseline)
	})
	b.Run("warm-worker", func(b *testing.B) {
		p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		baseline := perRun(b, p, base, 2000)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if res := p.Run(context.Background(), req, noop); res.Err != nil || len(res.Calls) != 10 {
				b.Fatal(errString(res.Err))
			}
		}
		reportPerCall(b, baseline)
	})
	b.Run("cold-worker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
			if err != nil {
				b.Fatal(err)
			}
			if res := p.Run(context.Background(), req, noop); res.Err != nil || len(res.Calls) != 10 {
				b.Fatal(errString(res.Err))
			}
			p.Close()
		}
	})
}

// BenchmarkRunAfterIdle runs a block of no call and a block of one call
// in a warm worker after a pause (the timer stopped): the worker and this
// process have parked, as between two invokes of a server that is not
// busy. A worker round trip as an invoke meets it.
func BenchmarkRunAfterIdle(b *testing.B) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct {
		name, src string
		calls     int
	}{{"no-call", "return task_id", 0}, {"one-call", "return tools.noop(task_id=task_id)", 1}} {
		req := benchRequest(c.src)
		for _, pause := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/pause=%v", c.name, pause), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					time.Sleep(pause)
					b.StartTimer()
					if res := p.Run(context.Background(), req, noop); res.Err != nil || len(res.Calls) != c.calls {
						b.Fatal(errString(res.Err))
					}
				}
			})
		}
	}
}

func reportPerCall(b *testing.B, baseline time.Duration) {
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perOp-baseline)/10, "ns/call")
	b.ReportMetric(float64(baseline), "ns/nocall-run")
}
