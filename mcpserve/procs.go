package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/replay"
	"github.com/procgraph/procgraph/usage"
)

// Meta keys procgraph sets on proc__ tools and their results.
const (
	MetaAutoRun   = "procgraph/auto_run"     // tool: a durable auto-run grant is active
	MetaSignature = "procgraph/signature"    // tool: the composed tools
	MetaRuns      = "procgraph/runs"         // tool: the current version's runs
	MetaSuccess   = "procgraph/success_rate" // tool: their success rate (null before the first)
	MetaDecision  = "procgraph/decision"     // result: the invoke decision's id
	MetaOutput    = "procgraph/output"       // result: printed output, when any
	MetaCalls     = "procgraph/calls"        // result: the tool calls made
	MetaStatus    = "procgraph/status"       // result: succeeded or failed
	MetaErrorCode = "procgraph/error_code"   // result: a failed run's error code
)

// procTool is the MCP tool of an exposed procedure. It is not ok when the
// input schema is not an object schema (the SDK requires one).
func procTool(d replay.ToolDescriptor) (*mcp.Tool, bool) {
	if d.InputSchema == nil || d.InputSchema["type"] != "object" {
		return nil, false
	}
	ann := &mcp.ToolAnnotations{ReadOnlyHint: d.ReadOnly, OpenWorldHint: new(d.ExternalAccess)}
	if !d.ReadOnly {
		ann.DestructiveHint = new(true)
	}
	return &mcp.Tool{
		Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, Annotations: ann,
		Meta: mcp.Meta{MetaAutoRun: d.AutoRun, MetaSignature: d.Signature, MetaRuns: d.Runs, MetaSuccess: d.SuccessRate},
	}, true
}

// invoke is the handler of the proc__ tool name: one Replayer.Invoke in the
// handler's phase, as the token holder, under the MCP session's usage key (a stateless request's:
// "mcp:" and the caller's name).
func (h *Handler) invoke(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := h.callerOf(req)
		if err := c.mayCall(name); err != nil {
			return h.toolError(err), nil
		}
		args, err := decodeArguments(req.Params.Arguments)
		if err != nil {
			return h.toolError(err), nil
		}
		sessionID := usage.MCPSession(mcpSessionID(req), c.name)
		res, err := h.cfg.Replayer.Invoke(ctx, replay.InvokeRequest{
			Name: name, Arguments: args, Phase: h.cfg.Phase, SessionID: sessionID,
			ReviewerHasGrantScope: c.has(auth.ScopeGrant), Actor: c.name,
		})
		if err != nil {
			return h.toolError(err), nil
		}
		return h.runResult(res)
	}
}

// runResult answers a replay that ran: the result on success (see
// jsonResult), a tool error naming the run's error code on failure (its
// text shown as errorText shows it: the message quotes the upstream).
func (h *Handler) runResult(res *replay.InvokeResult) (*mcp.CallToolResult, error) {
	code := res.ErrorCode()
	meta := mcp.Meta{MetaDecision: res.Decision.ID, MetaStatus: res.Status, MetaCalls: res.Calls}
	if res.Output != "" {
		meta[MetaOutput] = res.Output
	}
	if res.Status == replay.StatusSucceeded {
		return jsonResult(res.Result, meta)
	}
	meta[MetaErrorCode] = code
	text := code
	if res.Error != nil {
		text += ": " + res.Error.Message
		if res.Error.Tool != "" {
			text += " (tool " + res.Error.Tool + ")"
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: errorText(text)}}, StructuredContent: json.RawMessage(b)}, nil
}
