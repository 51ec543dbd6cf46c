package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/auth"
	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/procedures"
)

// The fixed tools' names.
const (
	FindToolName    = "find_all_procedures"
	AutoRunToolName = "set_procedure_auto_run"
)

// findSchema is find_all_procedures' input: the HTTP API's find query
// parameters (api/query.go), with the page bound of procedures.
var findSchema = fmt.Sprintf(`{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 512, "description": "relevance search over causes, summaries, descriptions, trigger signals and tool names: only matching procedures, most relevant first, each with a score"},
    "limit": {"type": "integer", "minimum": 1, "maximum": %d, "description": "page size (default %d)"},
    "offset": {"type": "integer", "minimum": 0, "description": "page start"},
    "cause": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 512}, "maxItems": 50, "description": "linked to any of these causes"},
    "tool": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 512}, "maxItems": 50, "description": "signature contains all of these tools"},
    "min_tools": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "at least this many distinct tools"},
    "read_only": {"type": "boolean", "description": "recomputed read-only classification"},
    "exposed": {"type": "boolean", "description": "offered to planners as a proc__ tool"},
    "status": {"type": "string", "enum": ["succeeded", "failed"], "description": "current version's status"}
  }
}`, procedures.MaxFindLimit, procedures.DefaultFindLimit)

const autoRunSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["name", "enabled"],
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512, "description": "the procedure (proc__…)"},
    "enabled": {"type": "boolean", "description": "true grants durable auto-run to the current version; false revokes it"},
    "reason": {"type": "string", "maxLength": 2048, "description": "why, for the audit log"}
  }
}`

type findArgs struct {
	Query    string   `json:"query"`
	Limit    int      `json:"limit"`
	Offset   int      `json:"offset"`
	Cause    []string `json:"cause"`
	Tool     []string `json:"tool"`
	MinTools int      `json:"min_tools"`
	ReadOnly *bool    `json:"read_only"`
	Exposed  *bool    `json:"exposed"`
	Status   string   `json:"status"`
}

type autoRunArgs struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Reason  string `json:"reason"`
}

// addFixedTools registers find_all_procedures and, with auth on,
// set_procedure_auto_run.
func (h *Handler) addFixedTools() error {
	find, err := compile(findSchema)
	if err != nil {
		return err
	}
	autoRun, err := compile(autoRunSchema)
	if err != nil {
		return err
	}
	h.server.AddTool(&mcp.Tool{
		Name:        FindToolName,
		Description: "find_all_procedures: captured procedures with their recomputed classification, frequency desc (with query: by relevance, each with a score). Filters apply before the limit; the answer has the page and the total.",
		InputSchema: json.RawMessage(findSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, h.checked(find, auth.ScopeRead, h.find))
	if !h.cfg.Auth.Enabled() {
		return nil // without auth no caller holds grant (callerOf): the tool is not offered
	}
	h.server.AddTool(&mcp.Tool{
		Name:        AutoRunToolName,
		Description: "set_procedure_auto_run: grant (bound to the current code) or revoke durable auto-run of a procedure, audited with your name and reason. Needs the grant scope.",
		InputSchema: json.RawMessage(autoRunSchema),
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.checked(autoRun, auth.ScopeGrant, h.setAutoRun))
	return nil
}

// checked wraps a fixed tool: the caller must hold scope, and the arguments
// must match schema; any error is a tool error.
func (h *Handler) checked(schema *jsonschema.Schema, scope auth.Scope, f func(context.Context, caller, map[string]any) (*mcp.CallToolResult, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := h.callerOf(req)
		if !c.has(scope) {
			return h.toolError(auth.Forbidden(scope)), nil
		}
		args, err := decodeArguments(req.Params.Arguments)
		if err != nil {
			return h.toolError(err), nil
		}
		if err := schema.Validate(args); err != nil {
			return h.toolError(fault.Errorf(fault.CodeInvalid, "invalid arguments: %s", oneLine(err.Error()))), nil
		}
		res, err := f(ctx, c, args)
		if err != nil {
			return h.toolError(err), nil
		}
		return res, nil
	}
}

// find is find_all_procedures: GET /v1/procedures.
func (h *Handler) find(ctx context.Context, _ caller, args map[string]any) (*mcp.CallToolResult, error) {
	var a findArgs
	if err := remarshal(args, &a); err != nil {
		return nil, err
	}
	page, total, err := h.cfg.Service.Find(ctx, procedures.FindRequest{
		Q: a.Query, Causes: a.Cause, Tools: a.Tool, MinTools: a.MinTools, Status: procedures.Status(a.Status),
		ReadOnly: a.ReadOnly, Exposed: a.Exposed, Limit: a.Limit, Offset: a.Offset,
	})
	if err != nil {
		return nil, err
	}
	if page == nil {
		page = []*procedures.Procedure{}
	}
	return jsonResult(map[string]any{"procedures": page, "total": total}, nil)
}

// setAutoRun is set_procedure_auto_run: PUT or DELETE
// /v1/procedures/{name}/auto-run.
func (h *Handler) setAutoRun(ctx context.Context, c caller, args map[string]any) (*mcp.CallToolResult, error) {
	var a autoRunArgs
	if err := remarshal(args, &a); err != nil {
		return nil, err
	}
	p, d, err := h.cfg.Service.SetAutoRun(ctx, procedures.AutoRunRequest{Name: a.Name, Enabled: a.Enabled, Reason: a.Reason, Actor: c.name})
	if err != nil {
		return nil, err
	}
	h.log.Info().Str("procedure", p.Name).Str("decision", d.ID).Str("kind", string(d.Kind)).Str("actor", c.name).Msg("mcp: auto-run changed")
	// This handler's list is current before it answers; every other
	// subscriber learns of the change from the service's change feed.
	if _, err := h.Refresh(ctx); err != nil {
		h.log.Warn().Err(err).Msg("mcp: refreshing after an auto-run change failed")
	}
	return jsonResult(map[string]any{"procedure": p, "decision": d}, nil)
}

func compile(schema string) (*jsonschema.Schema, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(schema), &m); err != nil {
		return nil, fmt.Errorf("mcpserve: tool schema: %v", err)
	}
	s, err := procedures.CompileSchema(m)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: tool schema: %v", err)
	}
	return s, nil
}

// remarshal decodes validated arguments into a struct.
func remarshal(args map[string]any, dst any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return fault.Errorf(fault.CodeInvalid, "the arguments do not encode as JSON")
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fault.Errorf(fault.CodeInvalid, "invalid arguments: %s", oneLine(err.Error()))
	}
	return nil
}
