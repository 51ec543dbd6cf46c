package mcpserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/replay"
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

// Refresh recomputes the exposed procedures (Replayer.Tools, up to
// Config.ToolLimit) and brings the proc__ tools in line: new or changed
// tools are added, vanished ones removed; the SDK then notifies connected
// clients (notifications/tools/list_changed, debounced). It reports whether
// anything changed. A failure changes nothing.
func (h *Handler) Refresh(ctx context.Context) (bool, error) {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	if sub := h.subscribeLocked(); sub != nil {
		sub.Take()
	}
	return h.refreshLocked(ctx)
}

// syncTools refreshes before a request when changes are waiting on the
// feed (or nothing was loaded yet), so a client whose write was answered
// sees it in its next MCP request: the service publishes before the write
// answers. A refresh under way (Run's) is waited for. Cheap otherwise. A
// closed handler refreshes no more.
func (h *Handler) syncTools(ctx context.Context) error {
	h.refreshMu.Lock()
	defer h.refreshMu.Unlock()
	sub := h.subscribeLocked()
	if h.refreshed.Load() && (sub == nil || len(sub.Take()) == 0) {
		return nil
	}
	_, err := h.refreshLocked(ctx)
	return err
}

// refreshLocked is Refresh with refreshMu held.
func (h *Handler) refreshLocked(ctx context.Context) (bool, error) {
	descs, err := h.cfg.Replayer.Tools(ctx, nil, h.cfg.ToolLimit)
	if err != nil {
		return false, err
	}
	next := make(map[string]string, len(descs))
	var add []*mcp.Tool
	for _, d := range descs {
		t, ok := procTool(d)
		if !ok {
			h.log.Error().Str("procedure", d.Name).Msg("mcp: the procedure's input schema is not an object schema; not offered")
			continue
		}
		fp := fingerprint(t)
		next[t.Name] = fp
		if h.current[t.Name] != fp {
			add = append(add, t)
		}
	}
	var remove []string
	for name := range h.current {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	sort.Strings(remove)
	if len(remove) > 0 {
		h.server.RemoveTools(remove...)
	}
	for _, t := range add {
		h.server.AddTool(t, h.invoke(t.Name))
	}
	h.current = next
	h.refreshed.Store(true)
	changed := len(add) > 0 || len(remove) > 0
	if changed {
		h.log.Info().Str("phase", string(h.cfg.Phase)).Int("tools", len(next)).Int("added_or_changed", len(add)).
			Int("removed", len(remove)).Msg("mcp: proc__ tools changed")
	}
	return changed, nil
}

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

// fingerprint identifies everything a client sees of t (not the frequency,
// which changes with every new usage and is not shown).
func fingerprint(t *mcp.Tool) string {
	b, err := json.Marshal(t)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// invoke is the handler of the proc__ tool name: one Replayer.Invoke in the
// handler's phase, as the token holder, under the MCP session's usage key (a stateless request's:
// "mcp:" and the caller's name).
func (h *Handler) invoke(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := h.callerOf(req)
		if !c.has(auth.ScopeInvoke) {
			return h.toolError(auth.Forbidden(auth.ScopeInvoke)), nil
		}
		args, err := decodeArguments(req.Params.Arguments)
		if err != nil {
			return h.toolError(err), nil
		}
		sessionID := usageKey(req, c)
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
// jsonResult), a tool error naming the run's error code on failure.
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
	return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(b)}, nil
}
