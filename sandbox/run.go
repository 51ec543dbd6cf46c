package sandbox

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.starlark.net/starlark"

	"github.com/procgraph/procgraph/internal/blocksyntax"
)

// Call is one tool call a run asked for, allowed or not.
type Call struct {
	Tool       string `json:"tool"`
	OK         bool   `json:"ok"`
	DurationMS int64  `json:"duration_ms"`
}

// Result is the outcome of a run. Err is nil on success. Value is JSON-safe
// (nil, bool, int64, float64, string, []any, map[string]any) and is nil on
// failure. Output and Calls are kept on failure too.
type Result struct {
	Value  any
	Output string
	Calls  []Call
	Err    *Error
}

// Request is one run.
type Request struct {
	Filename string         // for positions, e.g. "proc__x.star"
	Source   string         // the Starlark block (already dialect-rewritten)
	Args     map[string]any // bound as predeclared globals (the block's parameters), JSON-safe
	Allowed  []string       // the allow-set: tool names the block may call
	Limits   Limits
	// Check, when set, checks each admitted call's arguments before it is
	// dispatched (the tool's input_schema): one it refuses is recorded as
	// failed, never reaches the ToolCaller, and fails the run.
	Check ArgsChecker
}

// ArgsChecker checks a tool call's arguments (JSON-safe) at call time, in
// the parent, after the allow-set and before the ToolCaller. A non-nil
// *Error refuses the call (its code kept: InvalidArguments for arguments
// that break the tool's schema); its message must not quote a value.
type ArgsChecker interface {
	CheckArgs(tool string, args map[string]any) *Error
}

// Runner runs requests. Implementations are safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, req Request, tools ToolCaller) Result
	Close() error
}

// outcome is what executing a block gives, before the calls are added.
type outcome struct {
	value  any
	raw    []byte // value encoded by appendJSON
	output string
	err    *Error
}

// runState is the per-run state the builtins share.
type runState struct {
	caller    caller
	fatal     *Error // the first error that ends the run (a failed tool call)
	stepLimit bool
	out       output
}

// fail records e as the reason the run ends (the first one wins) and returns it.
func (st *runState) fail(e *Error) error {
	if st.fatal == nil {
		st.fatal = e
	}
	return e
}

// execute runs req (limits already defaulted) on the calling goroutine.
// ctx bounds the run: when it is done the thread is cancelled.
func execute(ctx context.Context, req *Request, c caller) (res outcome) {
	lim := req.Limits
	st := &runState{caller: c, out: output{max: lim.MaxOutput}}
	defer func() {
		if p := recover(); p != nil {
			res = outcome{output: st.out.String(), err: internalError()}
		}
	}()
	fail := func(e *Error) outcome { return outcome{output: st.out.String(), err: e} }
	if ctx.Err() != nil {
		// The thread's cancellation (below) comes from another goroutine
		// and could come after the block ran: a run whose context is
		// done does not start.
		return fail(errorf(Timeout, "%s before it started", stopReason(ctx)))
	}

	predeclared, e := bindArgs(req.Args)
	if e != nil {
		return fail(e)
	}
	predeclared["tools"] = &toolsValue{st: st}
	prog, err := compile(req.Filename, req.Source, predeclared)
	if err != nil {
		return fail(errorf(RuntimeError, "%s", clip(err.Error())))
	}

	thread := &starlark.Thread{Name: "procedure", Print: st.out.print}
	thread.SetMaxExecutionSteps(lim.MaxSteps)
	thread.OnMaxSteps = func(t *starlark.Thread) {
		st.stepLimit = true
		t.Cancel("step limit exceeded")
	}
	stop := context.AfterFunc(ctx, func() { thread.Cancel(stopReason(ctx)) })
	defer stop()

	globals, err := prog.Init(thread, predeclared)
	var v starlark.Value
	if err == nil {
		v, err = starlark.Call(thread, globals[blocksyntax.FuncName], nil, nil)
	}
	if err != nil {
		return fail(st.classify(ctx, err, lim))
	}
	x, err := toJSON(v)
	if err != nil {
		return fail(errorf(RuntimeError, "the block's result is not JSON: %v", err))
	}
	raw, err := appendJSON(nil, x)
	if err != nil {
		return fail(errorf(RuntimeError, "the block's result is not JSON: %v", err))
	}
	if len(raw) > lim.MaxResult {
		return fail(errorf(RuntimeError, "the block's result is %d bytes of JSON, over the limit of %d", len(raw), lim.MaxResult))
	}
	return outcome{value: x, raw: raw, output: st.out.String()}
}

// classify turns the error a run ended with into an *Error.
func (st *runState) classify(ctx context.Context, err error, lim Limits) *Error {
	switch {
	case st.fatal != nil:
		return stoppedAt(st.fatal, err)
	case st.stepLimit:
		return errorf(StepLimit, "the run exceeded its limit of %d steps", lim.MaxSteps)
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errorf(Timeout, "the run exceeded its %s wall-clock limit", lim.Timeout)
		}
		return errorf(Timeout, "the run was cancelled")
	}
	return errorf(RuntimeError, "%s", clip(describe(err)))
}

// describe formats a Starlark error as "file:line:col: message", the
// position being the innermost one in the program.
func describe(err error) string {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return err.Error()
	}
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		fr := ee.CallStack[i]
		if fr.Pos.IsValid() && fr.Pos.Filename() != "<builtin>" {
			return fmt.Sprintf("%s: %s", fr.Pos, ee.Msg)
		}
	}
	return ee.Msg
}

// bindArgs converts the arguments to the predeclared globals.
func bindArgs(args map[string]any) (starlark.StringDict, *Error) {
	d := make(starlark.StringDict, len(args)+1)
	for name, x := range args {
		if !isIdent(name) || name == "tools" {
			return nil, errorf(RuntimeError, "argument name %q is not allowed", name)
		}
		v, err := fromJSON(x)
		if err != nil {
			return nil, errorf(RuntimeError, "argument %s: %v", name, err)
		}
		d[name] = v
	}
	return d, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// output is the bounded print buffer.
type output struct {
	buf       []byte
	max       int
	truncated bool
}

func (o *output) print(_ *starlark.Thread, msg string) {
	o.write(msg)
	o.write("\n")
}

func (o *output) write(s string) {
	if o.truncated {
		return
	}
	if room := o.max - len(o.buf); len(s) > room {
		o.buf = append(o.buf, truncateUTF8(s, room)...)
		o.truncated = true
		return
	}
	o.buf = append(o.buf, s...)
}

// String returns the output, marked with OutputTruncated if it was cut.
func (o *output) String() string {
	if o.truncated {
		return string(o.buf) + OutputTruncated
	}
	return string(o.buf)
}

// truncateUTF8 returns the longest prefix of s of at most n bytes that does
// not split a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
