package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// run performs req (limits defaulted) on the worker. It checks every call
// the worker asks for against the gate and dispatches the allowed ones on
// this goroutine, with the run's context. It reports whether the worker may
// be reused; a worker that is not healthy has been killed.
//
// Time limits are read deadlines on the worker's output: the run's Timeout
// plus grace, or grace after the caller's context is done (the worker is
// then told to cancel). A ToolCaller that ignores its context delays the
// end of the run until it returns.
func (p *proc) run(ctx context.Context, req *Request, tools ToolCaller, grace time.Duration, maxMemory int64) (Result, bool) {
	lim := req.Limits
	g := newGate(req.Allowed, lim.MaxCalls, tools)
	result := func(e *Error) Result { return Result{Calls: g.calls, Err: e} }

	args, err := normalize(req.Args)
	if err == nil && args != nil {
		if _, ok := args.(map[string]any); !ok {
			return result(errorf(RuntimeError, "arguments are not an object")), true
		}
	}
	var rawArgs []byte
	if err == nil {
		rawArgs, err = appendJSON(nil, args)
	}
	if err != nil {
		return result(errorf(RuntimeError, "arguments: %v", err)), true
	}

	runCtx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	p.stderr.reset()
	p.nextRun++
	id := p.nextRun
	hard := time.Now().Add(lim.Timeout + grace)
	_ = p.stdout.SetReadDeadline(hard)
	_ = p.stdin.SetWriteDeadline(hard)
	defer p.stdout.SetReadDeadline(time.Time{})
	defer p.stdin.SetWriteDeadline(time.Time{})
	// When the caller gives up, tell the worker and give it grace to stop.
	// At the run's own deadline the worker stops by itself.
	stop := context.AfterFunc(ctx, func() {
		_ = p.stdout.SetReadDeadline(time.Now().Add(grace))
		_ = p.stdin.SetWriteDeadline(time.Now().Add(grace))
		_ = p.send(&message{Cancel: &cancelMsg{Run: id}})
	})
	defer stop()

	if err := p.send(&message{Run: &runMsg{ID: id, Filename: req.Filename, Source: req.Source, Args: rawArgs, Limits: lim}}); err != nil {
		return result(p.death(maxMemory)), false
	}
	for {
		m, err := p.in.read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			p.terminate()
			return result(errorf(Timeout, "%s and did not stop in time; its worker was killed", stopReason(runCtx))), false
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
			return result(p.death(maxMemory)), false
		}
		if err != nil {
			p.terminate() // a bad frame: the worker is not to be trusted
			return result(errorf(RuntimeError, "sandbox protocol violation")), false
		}
		switch {
		case m.Call != nil && m.Call.Run == id:
			if !p.call(runCtx, g, m.Call) {
				p.terminate()
				return result(errorf(RuntimeError, "sandbox protocol violation")), false
			}
		case m.Done != nil && m.Done.Run == id:
			// A worker whose heap grew by a quarter of its limit is
			// replaced, so every run gets about the same headroom.
			p.grown = m.Done.Mapped > p.mapped0+uint64(maxMemory)/4
			res := Result{Output: m.Done.Output, Calls: g.calls, Err: g.outcome(m.Done.Error)}
			if res.Err == nil {
				v, err := decodeJSON(m.Done.Value)
				if err != nil {
					res.Err = errorf(RuntimeError, "the block's result is not JSON: %v", err)
				}
				res.Value = v
			}
			return res, true
		}
	}
}

// call admits and dispatches one call from the worker and sends the answer.
// It returns false if the request is malformed.
func (p *proc) call(ctx context.Context, g *gate, c *callMsg) bool {
	reply := &resultMsg{Run: c.Run, ID: c.ID}
	if e := g.admit(c.Tool); e != nil {
		reply.Error = e
		_ = p.send(&message{CallResult: reply}) // a failure shows at the next read
		return true
	}
	x, err := decodeJSON(c.Args)
	args, ok := x.(map[string]any)
	if err != nil || !ok {
		return false
	}
	// The call also ends if the worker dies meanwhile.
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.life, cancel)
	start := time.Now()
	v, e := dispatch(ctx, g.tools, c.Tool, args)
	stop()
	cancel()
	if e == nil {
		raw, err := appendJSON(nil, v)
		switch {
		case err != nil:
			e = toolErrorf(ToolFailed, c.Tool, "tools.%s returned a value that is not JSON: %v", c.Tool, err)
		case len(raw) > maxFrame-1024:
			e = toolErrorf(ToolFailed, c.Tool, "tools.%s returned %d bytes, over the limit of %d", c.Tool, len(raw), maxFrame-1024)
		default:
			reply.Value = raw
		}
	}
	reply.Error = e
	g.record(c.Tool, e == nil, time.Since(start))
	g.fail(e)
	_ = p.send(&message{CallResult: reply})
	return true
}
