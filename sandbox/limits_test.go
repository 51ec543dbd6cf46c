package sandbox_test

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/procgraph/procgraph/sandbox"
)

const memoryBomb = `s = "x" * 1000000
for i in range(40):
    s = s + s
return len(s)`

// TestMemoryBomb: the doubling loop kills its worker, the run fails with
// memory_limit, this process lives, and the pool serves the next run.
func TestMemoryBomb(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 3 {
		start := time.Now()
		res := run(t, p, memoryBomb, nil, nil, sandbox.Limits{}, nil)
		if res.Err == nil || res.Err.Code != sandbox.MemoryLimit {
			t.Fatalf("bomb %d: error = %s", i, errString(res.Err))
		}
		t.Logf("bomb %d: %s in %v", i, res.Err.Message, time.Since(start))
		res = run(t, p, "return 1 + 1", nil, nil, sandbox.Limits{}, nil)
		if res.Err != nil || res.Value != int64(2) {
			t.Fatalf("run after bomb %d: %v %s", i, res.Value, errString(res.Err))
		}
	}
	if s := p.Stats(); s.Crashed != 3 {
		t.Errorf("stats = %+v, want 3 crashed", s)
	}
}

// TestMemoryWithinLimit: a run that needs well under the limit works.
func TestMemoryWithinLimit(t *testing.T) {
	// About 150 MB live: 100k strings of 1 KB, twice (the second list
	// while the first is alive), a dict of 100k entries.
	src := `a = [str(i) + "x" * 1000 for i in range(n)]
b = [s.upper() for s in a]
d = {str(i): i for i in range(n)}
return len(a) + len(b) + len(d)`
	p := sharedPool(t)
	for i := range 5 { // the same worker (or its replacement) again and again
		res := run(t, p, src, map[string]any{"n": int64(70000)}, nil, sandbox.Limits{MaxSteps: 1 << 40}, nil)
		if res.Err != nil || res.Value != int64(210000) {
			t.Fatalf("run %d: got %v, %s", i, res.Value, errString(res.Err))
		}
	}
}

// blockingTool waits for its context and reports that it was cancelled.
type blockingTool struct {
	started   chan struct{}
	once      sync.Once
	cancelled chan struct{}
}

func newBlockingTool() *blockingTool {
	return &blockingTool{started: make(chan struct{}), cancelled: make(chan struct{})}
}

func (b *blockingTool) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	b.once.Do(func() { close(b.started) })
	select {
	case <-ctx.Done():
		close(b.cancelled)
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return "too late", nil
	}
}

// TestCancelReachesTool: cancelling the caller's context ends a run blocked
// in a tool with timeout, and the tool's context is cancelled.
func TestCancelReachesTool(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			tool := newBlockingTool()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-tool.started
				cancel()
			}()
			start := time.Now()
			res := m.runner.Run(ctx, sandbox.Request{Filename: "t.star", Source: "return tools.wait()", Allowed: []string{"wait"}}, tool)
			if res.Err == nil || res.Err.Code != sandbox.Timeout || res.Err.Tool != "wait" {
				t.Fatalf("error = %s", errString(res.Err))
			}
			select {
			case <-tool.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool's context was not cancelled")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if len(res.Calls) != 1 || res.Calls[0].OK {
				t.Errorf("calls = %+v", res.Calls)
			}
		})
	}
}

// TestTimeoutReachesTool: the run's own timeout cancels the tool call too.
func TestTimeoutReachesTool(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			tool := newBlockingTool()
			res := m.runner.Run(context.Background(), sandbox.Request{
				Filename: "t.star", Source: "return tools.wait()", Allowed: []string{"wait"},
				Limits: sandbox.Limits{Timeout: 300 * time.Millisecond},
			}, tool)
			if res.Err == nil || res.Err.Code != sandbox.Timeout {
				t.Fatalf("error = %s", errString(res.Err))
			}
			select {
			case <-tool.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool's context was not cancelled")
			}
		})
	}
}

// TestCancelStopsLoop: cancelling the context stops a busy block.
func TestCancelStopsLoop(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			res := m.runner.Run(ctx, sandbox.Request{Filename: "t.star", Source: "while True:\n    pass", Limits: sandbox.Limits{MaxSteps: 1 << 62}}, nil)
			if res.Err == nil || res.Err.Code != sandbox.Timeout {
				t.Fatalf("error = %s", errString(res.Err))
			}
		})
	}
}

// TestWorkerKilledExternally: a worker killed mid-run fails that run
// cleanly; the next run succeeds.
func TestWorkerKilledExternally(t *testing.T) {
	p, err := sandbox.NewPool(sandbox.PoolConfig{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pids := sandbox.IdlePIDs(p)
	if len(pids) != 1 {
		t.Fatalf("idle workers %v, want 1", pids)
	}
	tool := sandbox.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (any, error) {
		if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
			t.Errorf("kill %d: %v", pids[0], err)
		}
		<-ctx.Done() // the run ends when the worker's death is seen
		return nil, ctx.Err()
	})
	start := time.Now()
	res := run(t, p, "tools.x()\nreturn 1", nil, []string{"x"}, sandbox.Limits{}, tool)
	if res.Err == nil || res.Err.Code != sandbox.RuntimeError || !strings.Contains(res.Err.Message, "worker died") {
		t.Fatalf("error = %s", errString(res.Err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to notice", d)
	}
	if len(res.Calls) != 1 || res.Calls[0].OK {
		t.Errorf("calls = %+v", res.Calls)
	}
	res = run(t, p, "return 2", nil, nil, sandbox.Limits{}, nil)
	if res.Err != nil || res.Value != int64(2) {
		t.Fatalf("next run: %v %s", res.Value, errString(res.Err))
	}
	if s := p.Stats(); s.Crashed != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// TestCancelledBeforeItStarts: a run whose caller gave up before it began
// does not run (in process, the thread is cancelled before its first
// step): it ends with timeout, its print output never produced. A pool used
// to pick at random between a free worker and the cancelled context, and
// the worker then ran the block anyway (the cancel reached it before the
// run, and was dropped): about half of these succeeded.
func TestCancelledBeforeItStarts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			for i := range 20 {
				res := m.runner.Run(ctx, sandbox.Request{Filename: "t.star", Source: "print('ran')\nreturn 1"}, nil)
				if res.Err == nil || res.Err.Code != sandbox.Timeout || res.Output != "" {
					t.Fatalf("run %d: value %v, output %q, error %s; want timeout, nothing run", i, res.Value, res.Output, errString(res.Err))
				}
			}
		})
	}
}
