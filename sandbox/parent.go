package sandbox

import (
	"context"
	"time"
)

// toolReply is the outcome of one dispatched call.
type toolReply struct {
	id    uint64
	tool  string
	value any
	err   *Error
	took  time.Duration
}

// run performs req (limits defaulted) on the worker. It checks every call
// the worker asks for against the gate and dispatches the allowed ones. It
// reports whether the worker may be reused; a worker that is not healthy
// has been killed.
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
	if err := p.send(&message{Run: &runMsg{ID: id, Filename: req.Filename, Source: req.Source, Args: rawArgs, Limits: lim}}); err != nil {
		return result(p.death(maxMemory)), false
	}

	hard := time.NewTimer(lim.Timeout + grace)
	defer hard.Stop()
	ctxDone := runCtx.Done()
	replies := make(chan toolReply, 1)
	var inflight *callMsg
	var inflightStart time.Time
	endInflight := func() {
		if inflight != nil {
			g.record(inflight.Tool, false, time.Since(inflightStart))
			inflight = nil
		}
	}
	for {
		select {
		case m := <-p.frames:
			switch {
			case m.Call != nil && m.Call.Run == id:
				c := m.Call
				if inflight != nil {
					p.terminate()
					endInflight()
					return result(errorf(RuntimeError, "sandbox protocol violation")), false
				}
				if e := g.admit(c.Tool); e != nil {
					_ = p.send(&message{CallResult: &resultMsg{Run: id, ID: c.ID, Error: e}})
					continue
				}
				x, err := decodeJSON(c.Args)
				a, ok := x.(map[string]any)
				if err != nil || !ok {
					p.terminate()
					return result(errorf(RuntimeError, "sandbox protocol violation")), false
				}
				start := time.Now()
				inflight, inflightStart = c, start
				go func() {
					v, e := dispatch(runCtx, tools, c.Tool, a)
					replies <- toolReply{id: c.ID, tool: c.Tool, value: v, err: e, took: time.Since(start)}
				}()
			case m.Done != nil && m.Done.Run == id:
				endInflight()
				// A worker whose heap grew by a quarter of its limit is
				// replaced, so every run gets about the same headroom.
				p.grown = m.Done.Mapped > p.mapped0+uint64(maxMemory)/4
				res := Result{Output: m.Done.Output, Calls: g.calls, Err: m.Done.Error}
				if res.Err == nil {
					v, err := decodeJSON(m.Done.Value)
					if err != nil {
						res.Err = errorf(RuntimeError, "the block's result is not JSON: %v", err)
					}
					res.Value = v
				}
				return res, true
			}
		case r := <-replies:
			inflight = nil
			msg := &resultMsg{Run: id, ID: r.id, Error: r.err}
			if r.err == nil {
				raw, err := appendJSON(nil, r.value)
				if err == nil && len(raw) > maxFrame-1024 {
					r.err = toolErrorf(ToolFailed, r.tool, "tools.%s returned %d bytes, over the limit of %d", r.tool, len(raw), maxFrame-1024)
				} else if err != nil {
					r.err = toolErrorf(ToolFailed, r.tool, "tools.%s returned a value that is not JSON: %v", r.tool, err)
				}
				msg.Value, msg.Error = raw, r.err
				if r.err != nil {
					msg.Value = nil
				}
			}
			g.record(r.tool, r.err == nil, r.took)
			_ = p.send(&message{CallResult: msg}) // a failure shows as p.dead
		case <-ctxDone:
			ctxDone = nil
			if ctx.Err() != nil {
				// The caller gave up: tell the worker. At the run's own
				// deadline the worker stops by itself; hard stays armed.
				_ = p.send(&message{Cancel: &cancelMsg{Run: id}})
				hard.Reset(grace)
			}
		case <-hard.C:
			p.terminate()
			endInflight()
			return result(errorf(Timeout, "%s and did not stop in time; its worker was killed", stopReason(runCtx))), false
		case <-p.dead:
			endInflight()
			return result(p.death(maxMemory)), false
		}
	}
}
