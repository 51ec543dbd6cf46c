// Package mcptest is a small MCP tool server for procgraph's tests: it serves
// a fixed set of tools, in process (over streamable HTTP) or as a stdio
// program (testdata/mcpserver), and records every call it receives.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one call the server received.
type Call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	PID  int            `json:"pid"`
}

// Recorder keeps the calls a server received: in memory, and appended as
// JSON lines to File when set (so a test can read a child process's calls).
type Recorder struct {
	File  string
	mu    sync.Mutex
	calls []Call
}

// Record keeps one call.
func (r *Recorder) Record(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if r.File == "" {
		return
	}
	f, err := os.OpenFile(r.File, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	b, _ := json.Marshal(c)
	_, _ = f.Write(append(b, '\n'))
}

// Calls returns the calls so far: the in-memory ones, or those in File.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.File == "" {
		return append([]Call(nil), r.calls...)
	}
	return ReadCalls(r.File)
}

// Tools returns the names of the calls so far.
func (r *Recorder) Tools() []string {
	var out []string
	for _, c := range r.Calls() {
		out = append(out, c.Tool)
	}
	return out
}

// ReadCalls reads a call log written by a Recorder with a File.
func ReadCalls(path string) []Call {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Call
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Call
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// LongError is the text of fail_job's error: longer than procgraph keeps.
var LongError = "job log unavailable: " + strings.Repeat("x", 2000)

func ptr[T any](v T) *T { return &v }

// NewServer returns the test server, recording into rec. Its tools:
// get_jobs (read-only, closed-world; structured content with an integer
// past 2^53, a decoy text, and the structured content as JSON text),
// fetch_logs (read-only; JSON text only), greet (plain text), kill_job
// (destructive), fail_job (isError with LongError), sleep (waits ms, or
// until cancelled), pid (the server's process id), crash (exits the process
// when stdio is true), bad-name (a kebab-case name, state-changing) and
// get-sum (a kebab-case name, read-only: {"sum": a + b, "server":
// $MCPTEST_NAME}, so a test can tell two of these servers apart).
func NewServer(rec *Recorder, stdio bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "v1"}, nil)
	add := func(name string, ann *mcp.ToolAnnotations, h func(ctx context.Context, args map[string]any) *mcp.CallToolResult) {
		s.AddTool(&mcp.Tool{Name: name, Description: "test tool " + name, Annotations: ann,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"}}}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args map[string]any
				if len(req.Params.Arguments) > 0 {
					dec := json.NewDecoder(strings.NewReader(string(req.Params.Arguments)))
					dec.UseNumber()
					_ = dec.Decode(&args)
				}
				rec.Record(Call{Tool: name, Args: args, PID: os.Getpid()})
				return h(ctx, args), nil
			})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add("get_jobs", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		sc := map[string]any{"jobs": []any{"a", "b"}, "task_id": args["task_id"], "big": int64(1)<<53 + 1}
		twin, _ := json.Marshal(sc)
		return &mcp.CallToolResult{
			StructuredContent: sc,
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"decoy": true}`}, &mcp.TextContent{Text: string(twin)}},
		}
	})
	add("fetch_logs", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		return text(fmt.Sprintf(`{"lines": ["started", "failed"], "task_id": %v}`, args["task_id"]))
	})
	add("greet", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		return text(fmt.Sprintf("hello %v", args["name"]))
	})
	add("kill_job", &mcp.ToolAnnotations{DestructiveHint: ptr(true)}, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		return text(`{"killed": true}`)
	})
	add("fail_job", nil, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		r := text(LongError)
		r.IsError = true
		return r
	})
	add("sleep", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(ctx context.Context, args map[string]any) *mcp.CallToolResult {
		n, _ := args["ms"].(json.Number)
		ms, _ := n.Int64()
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return text(`"slept"`)
		case <-ctx.Done():
			rec.Record(Call{Tool: "sleep:cancelled", Args: args, PID: os.Getpid()})
			return text(`"cancelled"`)
		}
	})
	add("wait", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(ctx context.Context, args map[string]any) *mcp.CallToolResult {
		path, _ := args["path"].(string)
		for {
			if _, err := os.Stat(path); err == nil {
				return text(`"released"`)
			}
			select {
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
				return text(`"cancelled"`)
			}
		}
	})
	s.AddTool(&mcp.Tool{Name: "strict", Description: "test tool strict", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"task_id":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			rec.Record(Call{Tool: "strict", Args: args, PID: os.Getpid()})
			if _, ok := args["task_id"]; !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "strict: task_id is required"}
			}
			return text(`"ok"`), nil
		})
	add("pid", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(context.Context, map[string]any) *mcp.CallToolResult {
		return text(fmt.Sprint(os.Getpid()))
	})
	add("crash", nil, func(context.Context, map[string]any) *mcp.CallToolResult {
		if stdio {
			os.Exit(3)
		}
		return text(`"not crashing in process"`)
	})
	add("bad-name", nil, func(context.Context, map[string]any) *mcp.CallToolResult { return text(`null`) })
	add("get-sum", &mcp.ToolAnnotations{ReadOnlyHint: true}, func(_ context.Context, args map[string]any) *mcp.CallToolResult {
		a, _ := args["a"].(json.Number)
		b, _ := args["b"].(json.Number)
		x, _ := a.Int64()
		y, _ := b.Int64()
		return text(fmt.Sprintf(`{"sum": %d, "server": %q}`, x+y, os.Getenv("MCPTEST_NAME")))
	})
	if accept := os.Getenv("MCPTEST_PROTOCOLS"); accept != "" {
		Accept(s, strings.Split(accept, ","))
	}
	return s
}

// Accept makes s refuse, with a JSON-RPC error, an initialize or a
// server/discover that offers a protocol revision outside accept (as a
// server that speaks only those would), answering the others as usual.
// The stdio server takes accept from MCPTEST_PROTOCOLS (comma-separated).
func Accept(s *mcp.Server, accept []string) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			offered := ""
			switch p := req.GetParams().(type) {
			case *mcp.InitializeParams:
				offered = p.ProtocolVersion
			case *mcp.DiscoverParams:
				offered, _ = p.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
			default:
				return next(ctx, method, req)
			}
			if !slices.Contains(accept, offered) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unsupported protocol version " + offered}
			}
			return next(ctx, method, req)
		}
	})
}
