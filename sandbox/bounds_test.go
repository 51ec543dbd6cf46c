package sandbox_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// totalAlloc is the bytes this process (the server side) has allocated.
func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// TestLargeArgumentsStayOutOfTheServer: a read-only procedure passing a
// 60 MB string to a tool, 8 runs at once. The arguments are over the
// per-call bound: each run fails with runtime_error naming the bound, the
// tool never sees the call, and the server does not read them — it
// allocates nothing like their size (before the bound, each such call cost
// the server several copies of it: GBs for 8).
func TestLargeArgumentsStayOutOfTheServer(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 8, MaxMemory: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := &recorder{}
	src := "s = 'x' * 60000000\nreturn tools.echo(s=s)"
	before := totalAlloc()
	var wg sync.WaitGroup
	results := make([]sandbox.Result, 8)
	for i := range results {
		wg.Go(func() {
			results[i] = run(t, p, src, nil, []string{"echo"}, sandbox.Limits{MaxSteps: 1 << 30}, rec)
		})
	}
	wg.Wait()
	grown := totalAlloc() - before
	for i, res := range results {
		if res.Err == nil || res.Err.Code != sandbox.RuntimeError || res.Err.Tool != "echo" || !strings.Contains(res.Err.Message, "per-call limit") {
			t.Errorf("run %d: %s", i, errString(res.Err))
		}
		if len(res.Calls) != 1 || res.Calls[0].OK {
			t.Errorf("run %d: calls %+v", i, res.Calls)
		}
	}
	if len(rec.seen()) != 0 {
		t.Fatalf("the tool saw %v", rec.seen())
	}
	if grown > 32<<20 {
		t.Fatalf("the server allocated %d MiB for 8 refused calls of 60 MB", grown>>20)
	}
	if s := p.Stats(); s.Crashed != 0 || s.Killed != 0 {
		t.Errorf("workers lost: %+v", s)
	}
	t.Logf("server allocated %d KiB", grown>>10)
}

// TestCallBounds: the per-call bound on arguments and on results, each way.
func TestCallBounds(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1, MaxCallBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		name   string
		src    string
		result any // what the tool answers
		code   sandbox.ErrorCode
		called bool
		msg    string
	}{
		{"arguments under the bound", "return len(tools.echo(s='x' * 1000000)['args']['s'])", nil, "", true, ""},
		{"arguments over the bound", "return tools.echo(s='x' * 1100000)", nil, sandbox.RuntimeError, false, "per-call limit of 1048576"},
		{"result over the bound", "return tools.big()", strings.Repeat("y", 1100000), sandbox.ToolFailed, true, "per-call limit of 1048576"},
		{"refused tool over the bound", "return tools.kill_job(s='x' * 1100000)", nil, sandbox.ToolRefused, false, "allow-set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{results: map[string]any{}}
			if tc.result != nil {
				rec.results["big"] = tc.result
			}
			res := run(t, p, tc.src, nil, []string{"echo", "big"}, sandbox.Limits{}, rec)
			var code sandbox.ErrorCode
			if res.Err != nil {
				code = res.Err.Code
			}
			if code != tc.code || (tc.msg != "" && !strings.Contains(res.Err.Message, tc.msg)) {
				t.Fatalf("error = %s, want %q with %q", errString(res.Err), tc.code, tc.msg)
			}
			if called := len(rec.seen()) > 0; called != tc.called {
				t.Fatalf("tool called: %v, want %v", called, tc.called)
			}
			if len(res.Calls) != 1 {
				t.Fatalf("calls %+v", res.Calls)
			}
		})
	}
	if s := p.Stats(); s.Crashed != 0 || s.Killed != 0 || s.Started != 1 {
		t.Errorf("a refused call cost a worker: %+v", s)
	}
}

// TestCallBudget: the budget is shared by the runs in flight. With room
// for two calls of 3 MB, a third one arriving while two are held fails at
// once with runtime_error and never reaches the tool; once they are
// answered the budget is whole again.
func TestCallBudget(t *testing.T) {
	budget := sandbox.NewBudget(30 << 20) // a 3 MB call reserves 4 copies: 12 MB
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 3, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	arrived := make(chan struct{}, 3)
	hold := make(chan struct{})
	tool := sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		arrived <- struct{}{}
		<-hold
		return len(args["s"].(string)), nil
	})
	src := "return tools.echo(s='x' * 3000000)"
	results := make(chan sandbox.Result, 3)
	for range 2 {
		go func() { results <- run(t, p, src, nil, []string{"echo"}, sandbox.Limits{}, tool) }()
	}
	<-arrived
	<-arrived
	if in := budget.Stats().InUse; in < 24_000_000 {
		t.Fatalf("in use %d with two calls held", in)
	}
	res := run(t, p, src, nil, []string{"echo"}, sandbox.Limits{}, tool)
	if res.Err == nil || res.Err.Code != sandbox.RuntimeError || !strings.Contains(res.Err.Message, "budget") {
		t.Fatalf("third call: %s", errString(res.Err))
	}
	close(hold)
	for range 2 {
		if r := <-results; r.Err != nil || r.Value != int64(3000000) {
			t.Fatalf("held call: %v %s", r.Value, errString(r.Err))
		}
	}
	if s := budget.Stats(); s.InUse != 0 || s.Refused != 1 {
		t.Fatalf("budget after = %+v", s)
	}
	if len(arrived) != 0 {
		t.Fatal("the refused call reached the tool")
	}
}

// TestCallTooLargeToSend: a call the worker cannot put in a frame (a tool
// name over 65535 bytes, built at run time) fails the run with
// runtime_error naming the reason; the worker does not exit over it (it
// used to, as if the parent were gone, costing a worker per such run).
func TestCallTooLargeToSend(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rec := &recorder{}
	res := run(t, p, `return getattr(tools, "x" * 70000)()`, nil, []string{"echo"}, sandbox.Limits{}, rec)
	if res.Err == nil || res.Err.Code != sandbox.RuntimeError || !strings.Contains(res.Err.Message, "too large to send") {
		t.Fatalf("error %.200s, want runtime_error: too large to send", errString(res.Err))
	}
	if len(rec.seen()) != 0 {
		t.Fatalf("the tool saw %v", rec.seen())
	}
	if s := p.Stats(); s.Crashed != 0 || s.Killed != 0 || s.Started != 1 {
		t.Fatalf("stats %+v: the worker was lost", s)
	}
	if res := run(t, p, "return tools.echo(x=1)", nil, []string{"echo"}, sandbox.Limits{}, rec); res.Err != nil {
		t.Fatalf("the next run: %s", errString(res.Err))
	}
}
