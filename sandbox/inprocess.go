package sandbox

import "context"

// inProcess runs blocks on the caller's goroutine.
type inProcess struct{}

// NewInProcess returns a Runner that runs blocks in this process, for tests
// and benchmarks. It enforces every limit but MaxMemory; panics are
// recovered. A block that allocates without bound can kill the process: serve
// replays with a Pool.
func NewInProcess() Runner { return inProcess{} }

// localCaller sends calls straight to the gate.
type localCaller struct {
	ctx context.Context
	g   *gate
}

func (c localCaller) call(name string, args map[string]any) (any, *Error) {
	return c.g.call(c.ctx, name, args)
}

// Run runs req.
func (inProcess) Run(ctx context.Context, req Request, tools ToolCaller) Result {
	req.Limits = req.Limits.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, req.Limits.Timeout)
	defer cancel()
	g := newGate(req.Allowed, req.Limits.MaxCalls, tools, req.Check)
	o := execute(ctx, &req, localCaller{ctx: ctx, g: g})
	res := Result{Value: o.value, Output: o.output, Calls: g.calls, Err: g.outcome(o.err)}
	if res.Err != nil {
		res.Value = nil
	}
	return res
}

// Close does nothing.
func (inProcess) Close() error { return nil }
