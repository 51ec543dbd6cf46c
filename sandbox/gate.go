package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/procgraph/procgraph/internal/jsonvalue"
)

// ToolCaller performs one allowed tool call on the parent side. It is only
// called for names in the allow-set; args are JSON-safe. The result is made
// JSON-safe (see the package doc). A returned error fails the run with
// tool_failed, unless it is an *Error, whose code is kept.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (any, error)
}

// ToolCallerFunc is a function that implements ToolCaller.
type ToolCallerFunc func(ctx context.Context, name string, args map[string]any) (any, error)

// CallTool calls f.
func (f ToolCallerFunc) CallTool(ctx context.Context, name string, args map[string]any) (any, error) {
	return f(ctx, name, args)
}

// gate is the parent-side check of every tool call: the allow-set, the
// call limit, and the dispatch to the ToolCaller. It records every call.
// It is used from one goroutine at a time.
//
// A call that fails (refused, over the limit, or failed in the tool) fails
// the run: the gate remembers it, refuses every later call, and the run's
// result is that failure whatever the block reports. A block cannot catch
// the error (Starlark has no try), so this only matters if the worker does
// not behave: it does not get to carry on and report success.
type gate struct {
	allowed  map[string]bool
	maxCalls int
	tools    ToolCaller
	check    ArgsChecker // nil: arguments are not checked
	calls    []Call
	failed   *Error
}

func newGate(allowed []string, maxCalls int, tools ToolCaller, check ArgsChecker) *gate {
	g := &gate{allowed: make(map[string]bool, len(allowed)), maxCalls: maxCalls, tools: tools, check: check, calls: []Call{}}
	for _, name := range allowed {
		g.allowed[name] = true
	}
	return g
}

// admit decides whether a call may be dispatched. A refused call or one over
// the limit is recorded as failed and never reaches the ToolCaller.
func (g *gate) admit(name string) *Error {
	var e *Error
	switch {
	case g.failed != nil:
		e = toolErrorf(ToolRefused, name, "tools.%s was called after the run failed", name)
	case !g.allowed[name]:
		e = toolErrorf(ToolRefused, name, "tools.%s is not in this run's allow-set", name)
	case len(g.calls) >= g.maxCalls:
		e = toolErrorf(CallLimit, name, "more than %d tool calls", g.maxCalls)
	default:
		return nil
	}
	g.calls = append(g.calls, Call{Tool: name})
	g.fail(e)
	return e
}

// checkArgs is the call-time check of an admitted call's arguments
// (Request.Check), beside the allow-set: a refused call is recorded as
// failed, fails the run and never reaches the ToolCaller.
func (g *gate) checkArgs(name string, args map[string]any) *Error {
	if g.check == nil {
		return nil
	}
	e := func() (e *Error) {
		defer func() {
			if p := recover(); p != nil {
				e = toolErrorf(RuntimeError, name, "the arguments of tools.%s could not be checked", name)
			}
		}()
		return g.check.CheckArgs(name, args)
	}()
	if e == nil {
		return nil
	}
	c := *e
	c.Tool = name
	g.record(name, false, 0)
	g.fail(&c)
	return &c
}

// fail remembers the run's first failure.
func (g *gate) fail(e *Error) {
	if e != nil && g.failed == nil {
		g.failed = e
	}
}

// outcome is the run's error: the gate's first failure wins over what the
// block reported.
func (g *gate) outcome(reported *Error) *Error {
	if g.failed != nil {
		return stopLine(g.failed, reported)
	}
	return reported
}

// call admits and performs one call with ctx (the run's context).
func (g *gate) call(ctx context.Context, name string, args map[string]any) (any, *Error) {
	if e := g.admit(name); e != nil {
		return nil, e
	}
	if e := g.checkArgs(name, args); e != nil {
		return nil, e
	}
	start := time.Now()
	res, e := dispatch(ctx, g.tools, name, args)
	g.record(name, e == nil, time.Since(start))
	g.fail(e)
	return res, e
}

func (g *gate) record(name string, ok bool, d time.Duration) {
	g.calls = append(g.calls, Call{Tool: name, OK: ok, DurationMS: d.Milliseconds()})
}

// dispatch calls the ToolCaller, recovering a panic, and classifies the
// outcome. It touches no gate state, so the pool may run it on its own
// goroutine.
func dispatch(ctx context.Context, tools ToolCaller, name string, args map[string]any) (res any, e *Error) {
	defer func() {
		if p := recover(); p != nil {
			res, e = nil, toolErrorf(RuntimeError, name, "tools.%s panicked", name)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, toolErrorf(Timeout, name, "%s before calling tools.%s", stopReason(ctx), name)
	}
	x, err := tools.CallTool(ctx, name, args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, toolErrorf(Timeout, name, "%s during tools.%s", stopReason(ctx), name)
		}
		var se *Error
		if errors.As(err, &se) {
			c := *se
			if c.Tool == "" {
				c.Tool = name
			}
			return nil, &c
		}
		return nil, toolErrorf(ToolFailed, name, "tools.%s failed: %s", name, clip(err.Error()))
	}
	x, err = jsonvalue.Normalize(x)
	if err != nil {
		return nil, toolErrorf(ToolFailed, name, "tools.%s returned a value that is not JSON: %v", name, err)
	}
	return x, nil
}

// stopReason says why ctx is done.
func stopReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the run timed out"
	}
	return "the run was cancelled"
}

// maxMessage bounds error messages, which may quote program values.
const maxMessage = 4 << 10

func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", truncateUTF8(s, maxMessage), len(s))
}
