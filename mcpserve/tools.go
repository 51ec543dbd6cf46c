package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/procgraph/procgraph/fault"
	"github.com/procgraph/procgraph/internal/fields"
	"github.com/procgraph/procgraph/procedures"
	"github.com/procgraph/procgraph/schemas"
)

// The fixed tools' names.
const (
	FindToolName    = "find_all_procedures"
	AutoRunToolName = "set_procedure_auto_run"
)

// findInput is find_all_procedures' input: the HTTP API's find query
// parameters (api/query.go), from the same declared fields.
var findInput = fields.Body(
	fields.Opt(fields.Search.Named("query").Described("relevance search over causes, summaries, descriptions, trigger signals and tool names: only matching procedures, most relevant first, each with a score")),
	fields.Opt(fields.Limit.Described(fmt.Sprintf("page size (default %d)", fields.DefaultFindLimit))),
	fields.Opt(fields.Offset),
	fields.Opt(filterList("cause", "linked to any of these causes")),
	fields.Opt(filterList("tool", "signature contains all of these tools")),
	fields.Opt(fields.MinTools),
	fields.Opt(fields.Field{Name: "read_only", Type: fields.Boolean, Doc: "recomputed read-only classification"}),
	fields.Opt(fields.Field{Name: "exposed", Type: fields.Boolean, Doc: "offered to planners as a proc__ tool"}),
	fields.Opt(fields.Status),
)

// findSchema is findInput's JSON Schema.
var findSchema = toolSchema(findInput)

// filterList is a find filter naming causes or tools.
func filterList(name, doc string) fields.Field {
	return fields.Field{Name: name, Type: fields.Array, Items: &fields.FilterValue, MaxItems: fields.MaxFilterValues, Doc: doc}
}

// autoRunInput is set_procedure_auto_run's input.
var autoRunInput = fields.Body(fields.Req(fields.ProcName),
	fields.Req(fields.Enabled.Described("true grants durable auto-run to the current version; false revokes it")),
	fields.Opt(fields.Reason))

var autoRunSchema = toolSchema(autoRunInput)

// toolSchema is a tool input's JSON Schema, with the fields' descriptions.
func toolSchema(in fields.Field) json.RawMessage { return in.Schema(fields.Options{Docs: true}) }

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
	find, err := compile(findInput)
	if err != nil {
		return err
	}
	autoRun, err := compile(autoRunInput)
	if err != nil {
		return err
	}
	h.server.AddTool(&mcp.Tool{
		Name:        FindToolName,
		Description: "find_all_procedures: captured procedures with their recomputed classification, frequency desc (with query: by relevance, each with a score). Filters apply before the limit; the answer has the page and the total.",
		InputSchema: findSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, h.checked(find, h.find))
	if !h.cfg.Auth.Enabled() {
		return nil // without auth no caller holds grant (callerOf): the tool is not offered
	}
	h.server.AddTool(&mcp.Tool{
		Name:        AutoRunToolName,
		Description: "set_procedure_auto_run: grant (bound to the current code) or revoke durable auto-run of a procedure, audited with your name and reason. Needs the grant scope.",
		InputSchema: autoRunSchema,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, h.checked(autoRun, h.setAutoRun))
	return nil
}

// checked wraps a fixed tool: the caller must hold the tool's scope
// (mayCall), and the arguments must match schema; any error is a tool
// error.
func (h *Handler) checked(schema *input, f func(context.Context, caller, map[string]any) (*mcp.CallToolResult, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := h.callerOf(req)
		if err := c.mayCall(req.Params.Name); err != nil {
			return h.toolError(err), nil
		}
		args, err := decodeArguments(req.Params.Arguments)
		if err != nil {
			return h.toolError(err), nil
		}
		if err := schema.compiled.Validate(args); err != nil {
			vs := schemas.SchemaViolations(err)
			return h.toolError(fault.Errorf(fault.CodeInvalid, "invalid arguments: %s", schemas.SchemaMessage(vs)).WithDetails("errors", vs)), nil
		}
		if err := schema.body.Check(args); err != nil {
			return h.toolError(err), nil
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

// input is a tool's declared input and its compiled JSON Schema: the
// schema checks types and bounds as JSON Schema counts them, the body's
// Check the byte bounds (fields.Field.Check).
type input struct {
	body     fields.Field
	compiled *jsonschema.Schema
}

func compile(body fields.Field) (*input, error) {
	var m map[string]any
	if err := json.Unmarshal(toolSchema(body), &m); err != nil {
		return nil, fmt.Errorf("mcpserve: tool schema: %v", err)
	}
	s, err := schemas.CompileSchema(m)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: tool schema: %v", err)
	}
	return &input{body: body, compiled: s}, nil
}

// remarshal decodes validated arguments into a struct; numbers decoded
// into an interface stay json.Number (as decodeArguments left them), so an
// integer past 2^53 in a tool's free-form arguments (run_code's) reaches
// the block exact, as through POST /v1/turns and a proc__ call.
func remarshal(args map[string]any, dst any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return fault.Errorf(fault.CodeInvalid, "the arguments do not encode as JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return fault.Errorf(fault.CodeInvalid, "invalid arguments: %s", oneLine(err.Error()))
	}
	return nil
}
