package sandbox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/procgraph/procgraph/sandbox"
)

// recorder is a ToolCaller that records every call it receives and answers
// from a table of canned results (a missing tool echoes its arguments).
type recorder struct {
	mu      sync.Mutex
	calls   []string
	results map[string]any
	errs    map[string]error
}

func (r *recorder) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	r.mu.Lock()
	r.calls = append(r.calls, name)
	r.mu.Unlock()
	if err := r.errs[name]; err != nil {
		return nil, err
	}
	if res, ok := r.results[name]; ok {
		return res, nil
	}
	return map[string]any{"tool": name, "args": args}, nil
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// mode is a runner under test.
type mode struct {
	name   string
	runner sandbox.Runner
}

var (
	poolOnce sync.Once
	pool     *sandbox.Pool
	poolErr  error
)

// sharedPool is one pool for the tests that don't break workers on purpose.
func sharedPool(t testing.TB) *sandbox.Pool {
	t.Helper()
	poolOnce.Do(func() { pool, poolErr = sandbox.NewPool(sandbox.PoolConfig{Size: 2}) })
	if poolErr != nil {
		t.Fatalf("NewPool: %v", poolErr)
	}
	return pool
}

// modes returns both runners: in-process and a worker pool.
func modes(t testing.TB) []mode {
	return []mode{
		{"in-process", sandbox.NewInProcess()},
		{"pool", sharedPool(t)},
	}
}

func run(t testing.TB, r sandbox.Runner, src string, args map[string]any, allowed []string, lim sandbox.Limits, tools sandbox.ToolCaller) sandbox.Result {
	t.Helper()
	if tools == nil {
		tools = &recorder{}
	}
	return r.Run(context.Background(), sandbox.Request{
		Filename: "proc__test.star", Source: src, Args: args, Allowed: allowed, Limits: lim,
	}, tools)
}

func errString(e *sandbox.Error) string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s (tool %q): %s", e.Code, e.Tool, e.Message)
}
