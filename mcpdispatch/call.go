package mcpdispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/procgraph/procgraph/internal/jsonvalue"
	"github.com/procgraph/procgraph/internal/text"
	"github.com/procgraph/procgraph/sandbox"
)

// Dispatch calls tool on the upstream with args and returns its result (see
// the package doc for the mapping). Every failure is an error whose message
// names the tool and the kind of failure, and which is a *sandbox.Error
// whose code is the run's failure class: upstream_unavailable
// when the server could not be reached or was lost before it answered,
// timeout when the call's own bound ended it, invalid_arguments when the
// server refused the arguments (JSON-RPC -32602), tool_failed for the
// tool's own error (isError, its text bounded to 512 bytes) and any other
// refusal. A call abandoned by its caller (the run's deadline, a client
// gone) is cancelled upstream (notifications/cancelled, sent by the SDK).
func (d *Dispatcher) Dispatch(ctx context.Context, tool string, args map[string]any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	parent := ctx
	timeout := d.callTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if d.slots != nil {
		select {
		case d.slots <- struct{}{}:
			defer func() { <-d.slots }()
		case <-ctx.Done():
			if e := deadline(parent, ctx, tool, timeout); e != nil {
				return nil, e
			}
			return nil, ctx.Err()
		}
	}
	for attempt := 0; ; attempt++ {
		c, err := d.sessionFor(ctx, true)
		if err != nil {
			if e := deadline(parent, ctx, tool, timeout); e != nil {
				return nil, e
			}
			if errors.Is(err, ErrClosed) {
				return nil, unavailable(ErrClosed, "tool %s: %v", tool, ErrClosed)
			}
			if bo, ok := errors.AsType[*backingOff](err); ok {
				return nil, unavailable(nil, "tool %s: the upstream MCP server is unavailable; next connection attempt in %s", tool, bo.wait.Round(time.Millisecond))
			}
			// The details (addresses, process errors) are in the log, not
			// in a message a caller sees.
			return nil, unavailable(nil, "tool %s: the upstream MCP server is unreachable", tool)
		}
		res, err := c.s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err == nil {
			d.release(c, true, false)
			return d.result(tool, res)
		}
		if e := deadline(parent, ctx, tool, timeout); e != nil {
			d.release(c, false, parent.Err() == nil)
			return nil, e
		}
		if werr, ok := errors.AsType[*jsonrpc.Error](err); ok && werr.Code != codeRejectedByTransport {
			// The upstream answered with a protocol error (invalid
			// arguments, an unknown tool): the session is fine.
			d.release(c, true, false)
			msg := text.Bounded(werr.Message, maxErrorBytes)
			if werr.Code == jsonrpc.CodeInvalidParams {
				return nil, &sandbox.CallFailure{Code: sandbox.InvalidArguments, Message: fmt.Sprintf("tool %s: the upstream MCP server refused the arguments: %s", tool, msg)}
			}
			return nil, fmt.Errorf("tool %s: the upstream MCP server refused the call: %s", tool, msg)
		}
		d.release(c, false, false)
		d.drop(c)
		if errors.Is(err, mcp.ErrSessionMissing) && attempt == 0 {
			// The upstream no longer knows the session (it restarted): it
			// did not run the call, so it is safe to send it once more.
			d.log.Info().Str("upstream", d.target).Msg("upstream MCP: session unknown upstream; reconnecting")
			continue
		}
		d.log.Warn().Str("upstream", d.target).Str("tool", tool).Str("error", text.Bounded(err.Error(), maxErrorBytes)).
			Msg("upstream MCP: the session broke during a call")
		return nil, unavailable(nil, "tool %s: the connection to the upstream MCP server broke during the call (the next call reconnects)", tool)
	}
}

// unavailable is the error of a call that could not reach the server, or
// lost it before an answer: upstream_unavailable.
func unavailable(cause error, format string, args ...any) error {
	return &sandbox.CallFailure{Code: sandbox.UpstreamUnavailable, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// withServer is err, a call's failure on server key, with its message
// naming the server and its class kept.
func withServer(key string, err error) error {
	if cf, ok := errors.AsType[*sandbox.CallFailure](err); ok {
		c := *cf
		c.Message = "server " + key + ": " + c.Message
		return &c
	}
	if se, ok := errors.AsType[*sandbox.Error](err); ok {
		c := *se
		c.Message = "server " + key + ": " + c.Message
		return &c
	}
	return fmt.Errorf("server %s: %w", key, err)
}

// codeRejectedByTransport is the JSON-RPC code go-sdk's streamable HTTP
// client gives a call whose request or answer its transport failed to
// carry (jsonrpc2.ErrRejected, "rejected by transport"): the connection
// broke, possibly after the upstream received the call. It is a broken
// call, never an upstream refusal.
const codeRejectedByTransport = -32005

// maxTimeouts is how many calls in a row may time out on one session before
// it is taken for hung and replaced (restarting a command) — its calls
// still in flight are left to end (Dispatcher.release).
const maxTimeouts = 3

// deadline explains a call that ran out of time or was abandoned; nil when
// neither happened. parent is the caller's context, ctx the one bounded by
// timeout. A call that ran out of its own time is timeout; one its caller
// abandoned keeps the caller's reason (the sandbox names it).
func deadline(parent, ctx context.Context, tool string, timeout time.Duration) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("tool %s: call abandoned: %w", tool, parent.Err())
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &sandbox.CallFailure{Code: sandbox.Timeout, Message: fmt.Sprintf("tool %s: upstream did not answer within %s", tool, timeout), Cause: context.DeadlineExceeded}
	}
	return nil
}

// result maps a tool result to a value or an error.
func (d *Dispatcher) result(tool string, res *mcp.CallToolResult) (any, error) {
	if res == nil {
		return nil, fmt.Errorf("tool %s: the upstream MCP server returned no result", tool)
	}
	if res.IsError {
		msg := strings.TrimSpace(contentText(res.Content))
		if msg == "" {
			msg = "(no message)"
		}
		return nil, &sandbox.CallFailure{Code: sandbox.ToolFailed, Message: fmt.Sprintf("tool %s failed upstream: %s", tool, text.Bounded(msg, maxErrorBytes))}
	}
	var v any
	if res.StructuredContent != nil {
		if exact, ok := exactTwin(res.Content, res.StructuredContent, d.opts.MaxResultBytes); ok {
			return exact, nil
		}
		v = res.StructuredContent
	} else {
		v = contentValue(res.Content)
	}
	// Re-encode: bounds the size and turns numbers into json.Number, so
	// integers stay integers in the sandbox.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tool %s: the upstream result does not encode as JSON", tool)
	}
	if int64(len(b)) > d.opts.MaxResultBytes {
		return nil, fmt.Errorf("tool %s: upstream result is larger than %d bytes", tool, d.opts.MaxResultBytes)
	}
	out, err := jsonvalue.DecodeNumbers(b)
	if err != nil {
		return nil, fmt.Errorf("tool %s: the upstream result is not JSON", tool)
	}
	return out, nil
}

// exactTwin returns the value of the text item of cs that carries the
// structured content sc as JSON (the MCP specification asks a server to
// send it, for clients that read no structured content), its numbers
// exact: the go-sdk decodes sc with numbers as float64, which rounds
// integers past 2^53 and decimals past float64's digits. ok is false when
// no text item of at most max bytes is sc.
func exactTwin(cs []mcp.Content, sc any, max int64) (any, bool) {
	for _, c := range cs {
		t, ok := c.(*mcp.TextContent)
		if !ok || int64(len(t.Text)) > max || !sameKind(t.Text, sc) {
			continue
		}
		if exact, err := jsonvalue.DecodeNumbers([]byte(t.Text)); err == nil && sameValue(exact, sc) {
			return exact, true
		}
	}
	return nil, false
}

// sameKind reports whether text may be the JSON of sc by its first
// character alone: an object's, an array's, or another value's; so a text
// that is prose (a log beside a summary) is not decoded.
func sameKind(text string, sc any) bool {
	trimmed := strings.TrimLeft(text, " \t\r\n")
	if trimmed == "" {
		return false
	}
	switch sc.(type) {
	case map[string]any:
		return trimmed[0] == '{'
	case []any:
		return trimmed[0] == '['
	}
	return trimmed[0] != '{' && trimmed[0] != '['
}

// sameValue reports whether x, decoded with json.Number numbers, is y,
// decoded with float64 ones: the same value up to float64's precision.
func sameValue(x, y any) bool {
	switch x := x.(type) {
	case json.Number:
		switch y := y.(type) {
		case float64:
			f, err := x.Float64()
			return err == nil && f == y
		case json.Number:
			return x == y
		}
		return false
	case map[string]any:
		m, ok := y.(map[string]any)
		if !ok || len(m) != len(x) {
			return false
		}
		for k, v := range x {
			if w, ok := m[k]; !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		s, ok := y.([]any)
		if !ok || len(s) != len(x) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], s[i]) {
				return false
			}
		}
		return true
	case string, bool, nil:
		return x == y
	}
	return false
}

// contentValue is the value of unstructured content: nothing is None, one
// text is its JSON value or the string, one other item is its JSON form,
// several are a list of those.
func contentValue(cs []mcp.Content) any {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return itemValue(cs[0])
	}
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, itemValue(c))
	}
	return out
}

func itemValue(c mcp.Content) any {
	if t, ok := c.(*mcp.TextContent); ok {
		if v, err := jsonvalue.DecodeNumbers([]byte(t.Text)); err == nil {
			return v
		}
		return t.Text
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	v, _ := jsonvalue.DecodeNumbers(b)
	return v
}

// contentText joins the texts of cs (a tool error's message).
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// lineLogger logs a command's standard error line by line, at most
// maxStderrLines lines a minute: past that, lines are counted, not logged,
// and the count is logged when the next minute's first line is, so a
// chatty server cannot flood procgraph's log.
type lineLogger struct {
	log zerolog.Logger
	cmd string
	mu  sync.Mutex
	buf []byte
	// now is the clock (time.Now when nil).
	now         func() time.Time
	windowStart time.Time
	logged      int // lines logged since windowStart
	dropped     int // lines not logged since windowStart
}

// maxStderrLine bounds one logged line of a server's stderr, in bytes.
const maxStderrLine = 2 << 10

// maxStderrLines is how many lines of a server's stderr are logged a
// minute.
const maxStderrLines = 100

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxStderrLine {
				l.emit(l.buf)
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

// emit logs one line, bounded and escaped (text.VisibleLine: a control
// character or an invalid byte cannot forge a record or a line).
func (l *lineLogger) emit(line []byte) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	if t := now(); t.Sub(l.windowStart) >= time.Minute {
		if l.dropped > 0 {
			l.log.Warn().Str("upstream", l.cmd).Int("dropped", l.dropped).Int("max_per_minute", maxStderrLines).Msg("upstream MCP command: stderr lines not logged")
		}
		l.windowStart, l.logged, l.dropped = t, 0, 0
	}
	if l.logged == maxStderrLines {
		l.dropped++
		return
	}
	l.logged++
	s := text.Bounded(strings.TrimRight(string(line), "\r"), maxStderrLine)
	l.log.Info().Str("upstream", l.cmd).Str("stderr", text.VisibleLine(s)).Msg("upstream MCP command")
}
