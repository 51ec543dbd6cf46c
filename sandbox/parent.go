package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/procgraph/procgraph/internal/jsonvalue"
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
func (p *proc) run(ctx context.Context, req *Request, tools ToolCaller, cfg *PoolConfig) (Result, bool) {
	lim := req.Limits
	grace, maxMemory := cfg.Grace, cfg.MaxMemory
	g := newGate(req.Allowed, lim.MaxCalls, tools, req.Check)
	result := func(e *Error) Result { return Result{Calls: g.calls, Err: e} }

	args, err := jsonvalue.Normalize(req.Args)
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
	p.setRunning(id)
	defer p.setRunning(0)
	if err := p.send(&message{Run: &runMsg{ID: id, Filename: req.Filename, Source: req.Source, Args: rawArgs, Limits: lim}}); err != nil {
		return result(p.death(maxMemory)), false
	}
	// When the caller gives up, tell the worker and give it grace to stop.
	// At the run's own deadline the worker stops by itself. The cancel
	// goes after the run (a worker drops a cancel of a run it has not
	// started); a callback that comes late, once this run is over, does
	// nothing (cancelRun).
	stop := context.AfterFunc(ctx, func() { p.cancelRun(id, grace) })
	defer stop()
	for {
		// A call's arguments are checked against the per-call bound and
		// reserved in the budget before they are read: one that does not
		// fit is skipped unread and fails the run.
		n, head, err := p.in.peekCall()
		release := func() {}
		if err == nil && head != nil {
			var e *Error
			if release, e = reserveCall(n, head.Tool, cfg); e != nil {
				if err = p.in.discard(n); err == nil {
					if head.Run == id {
						p.refuseCall(g, head, e)
					}
					continue
				}
			}
		}
		var m *message
		if err == nil {
			m, err = p.in.read()
		}
		if err != nil {
			release()
		}
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
		if m.Call == nil || m.Call.Run != id {
			release()
		}
		switch {
		case m.Call != nil && m.Call.Run == id:
			ok := p.call(runCtx, g, m.Call, cfg)
			release()
			if !ok {
				p.terminate()
				return result(errorf(RuntimeError, "sandbox protocol violation")), false
			}
		case m.Done != nil && m.Done.Run == id:
			// A worker whose heap grew by a quarter of its limit is
			// replaced, so every run gets about the same headroom.
			p.grown = m.Done.Mapped > p.mapped0+uint64(maxMemory)/4
			res := Result{Output: m.Done.Output, Calls: g.calls, Err: g.outcome(m.Done.Error)}
			if res.Err == nil {
				v, err := jsonvalue.Decode(m.Done.Value)
				if err != nil {
					res.Err = errorf(RuntimeError, "the block's result is not JSON: %v", err)
				}
				res.Value = v
			}
			return res, true
		}
	}
}

// setRunning records which run the worker is running (0: none).
func (p *proc) setRunning(id uint64) {
	p.sendMu.Lock()
	p.running = id
	p.sendMu.Unlock()
}

// cancelRun tells the worker to cancel run id, whose caller gave up, and
// gives it grace to stop (the read and write deadlines). Once run id is
// over it does nothing: a cancellation that fires as a run ends must not
// shorten the deadlines of the worker's next run, someone else's.
func (p *proc) cancelRun(id uint64, grace time.Duration) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if p.running != id {
		return
	}
	_ = p.stdout.SetReadDeadline(time.Now().Add(grace))
	_ = p.stdin.SetWriteDeadline(time.Now().Add(grace))
	_ = p.out.write(&message{Cancel: &cancelMsg{Run: id}})
}

// call admits and dispatches one call from the worker and sends the answer.
// It returns false if the request is malformed.
func (p *proc) call(ctx context.Context, g *gate, c *callMsg, cfg *PoolConfig) bool {
	reply := &resultMsg{Run: c.Run, ID: c.ID}
	if e := g.admit(c.Tool); e != nil {
		reply.Error = e
		_ = p.send(&message{CallResult: reply}) // a failure shows at the next read
		return true
	}
	x, err := jsonvalue.Decode(c.Args)
	c.Args = nil // decoded: the raw copy can go
	args, ok := x.(map[string]any)
	if err != nil || !ok {
		return false
	}
	if e := g.checkArgs(c.Tool, args); e != nil {
		reply.Error = e
		_ = p.send(&message{CallResult: reply})
		return true
	}
	// The call also ends if the worker dies meanwhile.
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(p.life, cancel)
	start := time.Now()
	v, e := dispatch(ctx, g.tools, c.Tool, args)
	stop()
	cancel()
	release := func() {}
	if e == nil {
		raw, err := appendJSON(nil, v)
		v, args = nil, nil
		switch {
		case err != nil:
			e = toolErrorf(ToolFailed, c.Tool, "tools.%s returned a value that is not JSON: %v", c.Tool, err)
		case len(raw) > cfg.MaxCallBytes:
			e = toolErrorf(ToolFailed, c.Tool, "tools.%s returned %d bytes of JSON, over the per-call limit of %d", c.Tool, len(raw), cfg.MaxCallBytes)
		default:
			var fits bool
			if release, fits = cfg.Budget.reserve(int64(resultCopies * len(raw))); fits {
				reply.Value = raw
			} else {
				release = func() {}
				e = toolErrorf(ToolFailed, c.Tool, "the result of tools.%s (%d bytes) does not fit the server's in-flight memory budget now; try again later", c.Tool, len(raw))
			}
		}
	}
	reply.Error = e
	g.record(c.Tool, e == nil, time.Since(start))
	g.fail(e)
	_ = p.send(&message{CallResult: reply})
	release()
	return true
}

// reserveCall checks a tool call's frame of n bytes against the per-call
// bound and reserves it in the budget; it returns the function that gives
// the reservation back (never nil: a no-op when nothing was reserved, so
// the run loop may call it on any path, such as the worker dying while the
// refused frame is skipped), and the error that fails the call
// (runtime_error: the procedure asked for too much) or nil.
func reserveCall(n int, tool string, cfg *PoolConfig) (func(), *Error) {
	if args := n - 19 - len(tool); args > cfg.MaxCallBytes {
		return func() {}, toolErrorf(RuntimeError, tool, "the arguments of tools.%s are %d bytes of JSON, over the per-call limit of %d", tool, args, cfg.MaxCallBytes)
	}
	release, ok := cfg.Budget.reserve(int64(ArgsCopies * n))
	if !ok {
		return func() {}, toolErrorf(RuntimeError, tool, "the arguments of tools.%s (%d bytes) do not fit the server's in-flight memory budget now; try again later", tool, n)
	}
	return release, nil
}

// refuseCall answers a call that was not read (see reserveCall) with e:
// recorded as failed, it fails the run. A call the gate refuses anyway is
// answered with the gate's refusal.
func (p *proc) refuseCall(g *gate, c *callMsg, e *Error) {
	if ge := g.admit(c.Tool); ge != nil {
		e = ge
	} else {
		g.calls = append(g.calls, Call{Tool: c.Tool})
		g.fail(e)
	}
	_ = p.send(&message{CallResult: &resultMsg{Run: c.Run, ID: c.ID, Error: e}})
}
